#!/usr/bin/python3
"""make_seeds.py - seed corpora for the fuzz targets, from the test models.

Usage: /usr/bin/python3 fuzz/make_seeds.py BUILD_DIR OUT_DIR [--committed]

Writes OUT_DIR/<target>/ for every target of fuzz/README.md, using the normal
build's `turbine` tool and kernel examples and Debian's python3-onnx,
python3-numpy and python3-torch:
  onnx         the ONNX backend node tests' models (libonnx-testdata) under
               4 KiB, and the small models below
  tmod         those small models compiled (host programs with run-time
               shapes, asserts, loads, host loops, string ops, parameters)
  kernel_cache the disk-cache entries the kernel examples write
  irpa /       parameter files from `turbine params create` and
  safetensors  `turbine compile --externalize-params`, in both formats
  npy          NumPy arrays of every supported dtype, ranks 0-3, v1-v3
  input_spec   --input= values of every dtype and form
  torchscript  tiny traced and scripted modules, entries stored uncompressed,
               each prefixed with its input-spec line (torchscript_fuzzer.cpp)
Each seed is small (libFuzzer mutates small inputs faster). `make fuzz`
runs this into the build tree; fuzz/corpus/ holds a committed selection
(--committed: of the ONNX node tests only the smallest model per op), made
with `make_seeds.py build /tmp/seeds --committed` and copied over, next to
the inputs of past findings (regress-*), which stay.
"""
import glob
import io
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile

import numpy as np
import onnx
from onnx import TensorProto as T
from onnx import helper

MAX_SEED_BYTES = 64 << 10


def small_models():
    """(name, ModelProto) pairs that exercise the host program."""
    models = []

    def model(name, nodes, inputs, outputs, initializers=(), opset=17):
        g = helper.make_graph(nodes, name, inputs, outputs, list(initializers))
        models.append((name, helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])))

    vi = helper.make_tensor_value_info
    model("add", [helper.make_node("Add", ["x", "y"], ["z"])],
          [vi("x", T.FLOAT, ["n", 4]), vi("y", T.FLOAT, ["n", 4])], [vi("z", T.FLOAT, ["n", 4])])
    model("reshape_runtime", [helper.make_node("Reshape", ["x", "s"], ["y"], name="r")],
          [vi("x", T.FLOAT, [2, 3, 4]), vi("s", T.INT64, [3])], [vi("y", T.FLOAT, ["a", "b", "c"])],
          opset=14)
    w = helper.make_tensor("w", T.FLOAT, [4, 3], np.arange(12, dtype=np.float32).tolist())
    b = helper.make_tensor("b", T.FLOAT, [3], [0.5, -1.0, 2.0])
    model("gemm_relu", [helper.make_node("Gemm", ["x", "w", "b"], ["h"]),
                        helper.make_node("Relu", ["h"], ["y"])],
          [vi("x", T.FLOAT, ["batch", 4])], [vi("y", T.FLOAT, ["batch", 3])], [w, b])
    model("nonzero", [helper.make_node("NonZero", ["x"], ["y"])],
          [vi("x", T.FLOAT, [3, 4])], [vi("y", T.INT64, [2, "k"])])
    model("string_normalizer",
          [helper.make_node("StringNormalizer", ["x"], ["y"], case_change_action="UPPER",
                            stopwords=["monday"])],
          [vi("x", T.STRING, [3])], [vi("y", T.STRING, ["k"])], opset=10)
    model("string_normalizer_locale",
          [helper.make_node("StringNormalizer", ["x"], ["y"], case_change_action="LOWER",
                            is_case_sensitive=0, stopwords=["A"], locale="xx_YY")],
          [vi("x", T.STRING, [3])], [vi("y", T.STRING, ["k"])], opset=10)
    model("cast_to_string", [helper.make_node("Cast", ["x"], ["y"], to=T.STRING)],
          [vi("x", T.FLOAT, [4])], [vi("y", T.STRING, [4])])
    body = helper.make_graph(
        [helper.make_node("Identity", ["cond_in"], ["cond_out"]),
         helper.make_node("Add", ["v_in", "one"], ["v_out"])],
        "body", [vi("i", T.INT64, []), vi("cond_in", T.BOOL, []), vi("v_in", T.FLOAT, [2])],
        [vi("cond_out", T.BOOL, []), vi("v_out", T.FLOAT, [2])],
        [helper.make_tensor("one", T.FLOAT, [2], [1.0, 1.0])])
    model("loop_runtime_trip_count",
          [helper.make_node("Loop", ["n", "c", "v"], ["r"], body=body)],
          [vi("n", T.INT64, []), vi("c", T.BOOL, []), vi("v", T.FLOAT, [2])],
          [vi("r", T.FLOAT, [2])])
    model("slice_runtime",
          [helper.make_node("Slice", ["x", "s", "e"], ["y"])],
          [vi("x", T.FLOAT, [6]), vi("s", T.INT64, [1]), vi("e", T.INT64, [1])],
          [vi("y", T.FLOAT, ["k"])])
    model("reduce_mean", [helper.make_node("ReduceMean", ["x"], ["y"], axes=[1], keepdims=0)],
          [vi("x", T.FLOAT, [2, 5])], [vi("y", T.FLOAT, [2])])
    return models


def write(directory, name, data):
    if len(data) > MAX_SEED_BYTES:
        return
    os.makedirs(directory, exist_ok=True)
    with open(os.path.join(directory, name), "wb") as f:
        f.write(data)


def run(*args, **kwargs):
    subprocess.run(args, check=True, stdout=subprocess.DEVNULL, **kwargs)


def onnx_and_tmod(build, out, tmp):
    turbine = os.path.join(build, "bin", "turbine")
    for path in sorted(glob.glob("/usr/share/libonnx-testdata/data/node/*/model.onnx")):
        if os.path.getsize(path) <= 4096:
            with open(path, "rb") as f:
                write(os.path.join(out, "onnx"), os.path.basename(os.path.dirname(path)), f.read())
    for name, m in small_models():
        data = m.SerializeToString()
        write(os.path.join(out, "onnx"), name + ".onnx", data)
        src = os.path.join(tmp, name + ".onnx")
        with open(src, "wb") as f:
            f.write(data)
        tmod = os.path.join(tmp, name + ".tmod")
        run(turbine, "compile", src, "-o", tmod)
        shutil.copy(tmod, os.path.join(out, "tmod", name + ".tmod"))
        if name == "gemm_relu":  # parameters outside the artifact
            for fmt in ("irpa", "safetensors"):
                params = os.path.join(tmp, name + "." + fmt)
                run(turbine, "compile", src, "-o", os.path.join(tmp, "ext.tmod"),
                    "--externalize-params=" + params)
                shutil.copy(params, os.path.join(out, fmt, name + "." + fmt))


def parameter_files(build, out, tmp):
    turbine = os.path.join(build, "bin", "turbine")
    w = os.path.join(tmp, "w.npy")
    np.save(w, np.arange(6, dtype=np.float32).reshape(2, 3))
    i = os.path.join(tmp, "i.npy")
    np.save(i, np.array([1, -2, 3], dtype=np.int64))
    irpa = os.path.join(tmp, "p.irpa")
    run(turbine, "params", "create", "-o", irpa, "--data=w=@" + w, "--data=i=@" + i,
        "--splat=b=4xf32=0.5", "--splat=z=8xi8=0")
    shutil.copy(irpa, os.path.join(out, "irpa", "create.irpa"))
    st = os.path.join(tmp, "p.safetensors")
    run(turbine, "params", "convert", irpa, "-o", st)
    shutil.copy(st, os.path.join(out, "safetensors", "create.safetensors"))
    # An entry without Turbine's type metadata, as other tools write them.
    stripped = os.path.join(tmp, "stripped.irpa")
    run(turbine, "params", "convert", irpa, "-o", stripped, "--strip")
    shutil.copy(stripped, os.path.join(out, "irpa", "stripped.irpa"))


def kernel_cache(build, out, tmp):
    cache = os.path.join(tmp, "cache")
    env = dict(os.environ, TURBINE_CACHE_DIR=cache)
    for example in ("softmax", "layernorm"):
        exe = os.path.join(build, "bin", "kernels_" + example)
        if os.path.exists(exe):
            run(exe, env=env)
    for path in sorted(glob.glob(os.path.join(cache, "kernels", "*.tmod"))):
        with open(path, "rb") as f:
            write(os.path.join(out, "kernel_cache"), os.path.basename(path), f.read())


def npy(out):
    d = os.path.join(out, "npy")
    arrays = {
        "f32_2x3": np.arange(6, dtype=np.float32).reshape(2, 3),
        "f64_scalar": np.array(2.5),
        "f16_4": np.array([1, 2, 3, 4], dtype=np.float16),
        "i8_3": np.array([-1, 0, 1], dtype=np.int8),
        "i16_2x2": np.array([[1, 2], [3, 4]], dtype=np.int16),
        "i32_empty": np.zeros((0, 3), dtype=np.int32),
        "i64_1x1x2": np.array([[[5, 6]]], dtype=np.int64),
        "u8_4": np.array([0, 1, 254, 255], dtype=np.uint8),
        "u16_2": np.array([1, 65535], dtype=np.uint16),
        "u32_2": np.array([1, 2], dtype=np.uint32),
        "u64_2": np.array([1, 2 ** 64 - 1], dtype=np.uint64),
        "bool_3": np.array([True, False, True]),
        "fortran_1d": np.asfortranarray(np.arange(3, dtype=np.float32)),
    }
    for name, a in arrays.items():
        buf = io.BytesIO()
        np.save(buf, a)
        write(d, name + ".npy", buf.getvalue())
    for version in ((2, 0), (3, 0)):
        buf = io.BytesIO()
        np.lib.format.write_array(buf, np.arange(4, dtype=np.float32), version=version)
        write(d, "v%d.npy" % version[0], buf.getvalue())


def input_spec(out):
    d = os.path.join(out, "input_spec")
    values = [
        "2x2xf32=1 2 3 4", "f32=5", "2x2xf32", "4xi64=-1 0 1 9223372036854775807",
        "2x2xf16=[1.5 2][3 4]", "3xbf16=1,2,3", "2xf64=1e308 -inf", "3xi1=true 0 1",
        "2xi8=-128 127", "2xu8=0 255", "2xi16=1 2", "2xu16=65535 0", "2xi32=7 8",
        "2xu32=1 4294967295", "2xu64=0x10 18446744073709551615", "1000xf32=0.5",
        '3xstring="a b" plain ""', '2xstring="\\x41\\n\\"" \\t', "@x.npy", "2x3xf32=@x.bin",
        "0x3xf32=", "1x1x1x1xi32=1",
    ]
    for i, v in enumerate(values):
        write(d, "value_%02d" % i, v.encode())


def torchscript(out, tmp):
    import torch

    class Linear(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = torch.nn.Linear(4, 3)

        def forward(self, x):
            return torch.relu(self.fc(x))

    class Conv(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = torch.nn.Conv2d(2, 3, 3, padding=1)
            self.bn = torch.nn.BatchNorm2d(3)

        def forward(self, x):
            return torch.nn.functional.max_pool2d(self.bn(self.conv(x)), 2).flatten(1)

    class Control(torch.nn.Module):
        def forward(self, x):
            y = x
            for _ in range(3):
                y = y * 2
            if x.dim() == 2:
                y = y.softmax(-1)
            return y.sum(0), y.view(-1)

    class Attention(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.mha = torch.nn.MultiheadAttention(8, 2, batch_first=True)

        def forward(self, x):
            return self.mha(x, x, x, need_weights=False)[0]

    torch.manual_seed(0)
    cases = [
        ("linear_traced", torch.jit.trace(Linear().eval(), torch.randn(2, 4)), "2x4xf32 0:0"),
        ("linear_scripted", torch.jit.script(Linear().eval()), "2x4xf32"),
        ("conv_traced", torch.jit.trace(Conv().eval(), torch.randn(1, 2, 4, 4)), "1x2x4x4xf32"),
        ("control_scripted", torch.jit.script(Control().eval()), "2x3xf32"),
        ("attention_scripted", torch.jit.script(Attention().eval()), "1x3x8xf32"),
    ]
    for name, module, spec in cases:
        path = os.path.join(tmp, name + ".pt")
        module.save(path)
        stored = io.BytesIO()
        with zipfile.ZipFile(path) as src, zipfile.ZipFile(stored, "w", zipfile.ZIP_STORED) as dst:
            for info in src.infolist():
                dst.writestr(info.filename, src.read(info.filename))
        write(os.path.join(out, "torchscript"), name, spec.encode() + b"\n" + stored.getvalue())


def select_committed(out):
    """Keeps what fuzz/corpus commits: of the ONNX node tests one model per op
    (the smallest), everything else as generated."""
    d = os.path.join(out, "onnx")
    smallest = {}
    for name in sorted(os.listdir(d)):
        if not name.startswith("test_"):
            continue
        path = os.path.join(d, name)
        m = onnx.load(path)
        op = m.graph.node[0].op_type if m.graph.node else ""
        if op not in smallest or os.path.getsize(path) < os.path.getsize(smallest[op]):
            smallest[op] = path
    keep = set(smallest.values())
    for name in os.listdir(d):
        path = os.path.join(d, name)
        if name.startswith("test_") and path not in keep:
            os.remove(path)


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    if len(args) != 2:
        sys.exit(__doc__)
    build, out = os.path.abspath(args[0]), os.path.abspath(args[1])
    for target in ("onnx", "tmod", "kernel_cache", "irpa", "safetensors", "gguf", "npy", "input_spec",
                   "torchscript"):
        os.makedirs(os.path.join(out, target), exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        onnx_and_tmod(build, out, tmp)
        parameter_files(build, out, tmp)
        kernel_cache(build, out, tmp)
        npy(out)
        input_spec(out)
        torchscript(out, tmp)
    if "--committed" in sys.argv:
        select_committed(out)
    for target in sorted(os.listdir(out)):
        files = os.listdir(os.path.join(out, target))
        print("%-13s %4d seeds" % (target, len(files)))


if __name__ == "__main__":
    main()
