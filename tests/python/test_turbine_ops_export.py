# ===- test_turbine_ops_export.py - Turbine kernels inside exported models =#
#
# Models whose forward calls torch.ops.turbine.{softmax, layer_norm, matmul,
# attention}: traced and scripted, compiled in process (turbine_torch.export)
# and by the CLI (`turbine compile model.pt`, a process without the eager
# kernels), each call its kernel's own dispatch; compared with the same
# module run eagerly and with plain PyTorch (atol 1e-5, rtol 1e-4). Then
# externalized weights (.irpa and .safetensors) named after the module's
# state_dict, and the error paths (dynamic dim at a kernel call, wrong dtype
# or rank, externalize with compile_to). Environment (set by ctest):
# TURBINE_BIN, TURBINE_TORCH_LIBRARY, PYTHONPATH=python.
# ===---------------------------------------------------------------------=== #
import json
import os
import struct
import subprocess

import numpy as np
import pytest
import torch

import turbine_torch

TURBINE = os.environ.get("TURBINE_BIN")
ATOL, RTOL = 1e-5, 1e-4


@pytest.fixture(scope="module", autouse=True)
def library(tmp_path_factory):
    os.environ["TURBINE_CACHE_DIR"] = str(tmp_path_factory.mktemp("kernel-cache"))
    turbine_torch.load_library()


class Block(torch.nn.Module):
    """Every Turbine op once: projections by turbine.matmul, fused
    attention, layer_norm with a non-default eps, and a row softmax head."""

    def __init__(self, d=32, classes=10):
        super().__init__()
        self.q = torch.nn.Linear(d, d)
        self.k = torch.nn.Parameter(torch.randn(d, d) / d ** 0.5)
        self.norm = torch.nn.LayerNorm(d, eps=1e-3)
        self.head = torch.nn.Linear(d, classes)

    def forward(self, x):                      # x: [B, S, D]
        b, s, d = x.shape
        rows = x.reshape(b * s, d)
        k = torch.ops.turbine.matmul(rows, self.k).reshape(b, s, d)
        a = torch.ops.turbine.attention(self.q(x), k, x)
        y = torch.ops.turbine.layer_norm(a.reshape(b * s, d), self.norm.weight,
                                         self.norm.bias, 1e-3)
        return torch.ops.turbine.softmax(self.head(y))


def plain_torch(m, x):
    """The same computation without Turbine kernels."""
    b, s, d = x.shape
    k = (x.reshape(b * s, d) @ m.k).reshape(b, s, d)
    q = m.q(x)
    a = torch.softmax(q @ k.transpose(1, 2) / d ** 0.5, dim=-1) @ x
    y = torch.nn.functional.layer_norm(a.reshape(b * s, d), (d,), m.norm.weight,
                                       m.norm.bias, 1e-3)
    return torch.softmax(m.head(y), dim=-1)


@pytest.fixture(scope="module")
def block():
    torch.manual_seed(0)
    return Block().eval()


def check(got, m, x):
    with torch.no_grad():
        torch.testing.assert_close(got, m(x), atol=ATOL, rtol=RTOL)
        torch.testing.assert_close(got, plain_torch(m, x), atol=ATOL, rtol=RTOL)


@pytest.mark.parametrize("kind", ["traced", "scripted"])
def test_in_process(block, kind):
    x = torch.randn(2, 12, 32)
    module = torch.jit.script(block) if kind == "scripted" else block
    exported = turbine_torch.export(module, x)
    ir = exported.import_to("input")
    for op in ["softmax", "layer_norm", "matmul", "attention"]:
        assert 'turbine.custom_op = "turbine.%s"' % op in ir
    assert "turbine.custom_op_attributes = {eps = 1.000000e-03 : f64}" in ir
    dispatch = exported.import_to("dispatch")
    for op in ["softmax", "layer_norm", "matmul", "attention"]:
        assert "turbine.dispatch @turbine_%s_" % op in dispatch
    check(exported.compile()(x), block, x)


def test_cli_compile(block, tmp_path):
    """`turbine compile model.pt`: the CLI defines the turbine:: schemas in
    its TorchScript loader (no eager kernels in that process)."""
    x = torch.randn(3, 5, 32)
    with torch.no_grad():
        expected = block(x)
    for kind, module in [("traced", torch.jit.trace(block, x)),
                         ("scripted", torch.jit.script(block))]:
        pt = tmp_path / (kind + ".pt")
        module.save(str(pt))
        np.save(tmp_path / "x.npy", x.numpy())
        np.save(tmp_path / "expected.npy", expected.numpy())
        tmod = tmp_path / (kind + ".tmod")
        subprocess.run([TURBINE, "compile", str(pt), "--input-shape=3x5x32xf32",
                        "-o", str(tmod)], check=True)
        result = subprocess.run(
            [TURBINE, "run", str(tmod), "--input=@%s" % (tmp_path / "x.npy"),
             "--expected_output=@%s" % (tmp_path / "expected.npy"),
             "--atol=%g" % ATOL, "--rtol=%g" % RTOL], capture_output=True, text=True)
        assert result.returncode == 0, result.stdout + result.stderr
        check(turbine_torch.load(tmod)(x), block, x)


def test_dynamic_dim_at_kernel_is_an_error(block, tmp_path):
    x = torch.randn(2, 12, 32)
    with pytest.raises(RuntimeError, match=r"TorchScript op 'turbine::\w+': argument '\w+' "
                                           r"\(tensor<\?x.*has dynamic dim 0; Turbine kernels"
                                           r"(.|\n)*at: .*test_turbine_ops_export.py:\d+"):
        # traced: the location is the caller's line, not torch/_ops.py
        turbine_torch.export(block, x, dynamic_dims={0: 0}).compile()
    pt = tmp_path / "block.pt"
    torch.jit.script(block).save(str(pt))
    result = subprocess.run([TURBINE, "compile", str(pt), "--input-shape=2x12x32xf32",
                             "--dynamic-dim=x:1", "-o", str(tmp_path / "b.tmod")],
                            capture_output=True, text=True)
    assert result.returncode == 1
    assert "has dynamic dim" in result.stderr and "turbine::" in result.stderr


def test_kernel_misuse_names_the_op():
    class WrongDtype(torch.nn.Module):
        def forward(self, x):
            return torch.ops.turbine.softmax(x.double())

    class WrongRank(torch.nn.Module):
        def forward(self, x):
            return torch.ops.turbine.softmax(x)

    with pytest.raises(RuntimeError, match=r"custom op 'turbine.softmax' at .*x must be f32, "
                                           r"got f64"):
        turbine_torch.export(torch.jit.script(WrongDtype()), torch.randn(2, 3)).compile()
    with pytest.raises(RuntimeError, match="x must have rank 2, got 3"):
        turbine_torch.export(torch.jit.script(WrongRank()), torch.randn(2, 3, 4)).compile()


class Mlp(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = torch.nn.Linear(32, 64)
        self.fc2 = torch.nn.Linear(64, 10)

    def forward(self, x):
        return torch.ops.turbine.softmax(self.fc2(torch.relu(self.fc1(x))))


def write_safetensors(path, tensors):
    """A minimal safetensors writer (f32 only): header length, JSON, data."""
    header, data = {}, b""
    for name, t in tensors.items():
        raw = t.numpy().astype("<f4").tobytes()
        header[name] = {"dtype": "F32", "shape": list(t.shape),
                        "data_offsets": [len(data), len(data) + len(raw)]}
        data += raw
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + data)


def params_list(path):
    out = subprocess.run([TURBINE, "params", "list", str(path)], capture_output=True,
                         text=True, check=True).stdout
    return {line.split()[0]: line.split()[-1] for line in out.splitlines()[2:-1]}


@pytest.mark.parametrize("suffix", [".irpa", ".safetensors"])
def test_externalize_params(tmp_path, suffix):
    torch.manual_seed(1)
    model = Mlp().eval()
    x = torch.randn(4, 32)
    exported = turbine_torch.export(model, x)
    inline = exported.compile(save_to=tmp_path / "inline.tmod")
    weights = tmp_path / ("mlp" + suffix)
    compiled = exported.compile(save_to=tmp_path / "mlp.tmod", externalize_params=weights,
                                externalize_min_bytes=1024)
    with torch.no_grad():
        expected = model(x)
    torch.testing.assert_close(compiled(x), expected, atol=ATOL, rtol=RTOL)
    torch.testing.assert_close(inline(x), expected, atol=ATOL, rtol=RTOL)
    # The two weight matrices (>= 1 KiB) moved out, named after the state_dict
    # (transposed at import: `.T`); the biases stayed in the artifact.
    # fc1's (N = 64) is also packed into 32-column panels at compile time.
    fc1 = "fc1.weight.T.reshape(32,2,32).permute(1,0,2)"
    assert params_list(weights) == {fc1: "2x32x32xf32", "fc2.weight.T": "64x10xf32"}
    sd = model.state_dict()
    assert (tmp_path / "mlp.tmod").stat().st_size + (32 * 64 + 64 * 10) * 4 <= \
        (tmp_path / "inline.tmod").stat().st_size + 256
    reloaded = turbine_torch.load(tmp_path / "mlp.tmod", parameters=[weights])
    torch.testing.assert_close(reloaded(x), expected, atol=ATOL, rtol=RTOL)
    # Each name is a torch expression over a state_dict key, so a file written
    # from a state_dict (here: other weights) can replace it without recompiling.
    assert torch.equal(turbine_torch.stored_tensor(fc1, sd),
                       sd["fc1.weight"].T.reshape(32, 2, 32).permute(1, 0, 2))
    if suffix == ".irpa":
        return
    other = Mlp().eval()
    write_safetensors(tmp_path / "other.safetensors",
                      turbine_torch.stored_tensors(params_list(weights), other.state_dict()))
    swapped = turbine_torch.load(tmp_path / "mlp.tmod",
                                 parameters=[tmp_path / "other.safetensors"])
    with torch.no_grad():
        mixed = torch.nn.functional.linear(
            torch.relu(torch.nn.functional.linear(x, other.fc1.weight, sd["fc1.bias"])),
            other.fc2.weight, sd["fc2.bias"])
    torch.testing.assert_close(swapped(x), torch.softmax(mixed, -1), atol=ATOL, rtol=RTOL)


def test_externalize_errors(tmp_path):
    exported = turbine_torch.export(Mlp().eval(), torch.randn(4, 32))
    exported.compile(save_to=tmp_path / "m.tmod", externalize_params=tmp_path / "m.irpa",
                     externalize_min_bytes=0)
    with pytest.raises(RuntimeError, match=r"external parameter '(fc\d\.(bias|weight\.T)[^']*)' "
                                           r".* needs a parameter file"):
        turbine_torch.load(tmp_path / "m.tmod")
    with pytest.raises(RuntimeError, match="externalize_params needs an artifact"):
        exported._compile("input", str(tmp_path / "x.irpa"))
    with pytest.raises(ValueError, match="externalize_min_bytes must be >= 0"):
        exported.compile(externalize_params=tmp_path / "y.irpa", externalize_min_bytes=-1)


def test_parameter_names_without_kernels(tmp_path):
    """Names for parameters the importer stores as they are (conv bias,
    embedding table, a buffer), `.T` for linear weights; weights that
    freezing computed (BatchNorm folded into a conv) keep constant_<n>."""

    class Net(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.emb = torch.nn.Embedding(50, 16)
            self.fc = torch.nn.Linear(16, 8)
            self.register_buffer("scale", torch.rand(8) + 0.5)

        def forward(self, ids):
            return self.fc(self.emb(ids)) * self.scale

    torch.manual_seed(2)
    net = Net().eval()
    ids = torch.randint(0, 50, (2, 5))
    exported = turbine_torch.export(net, ids)
    compiled = exported.compile(save_to=tmp_path / "net.tmod",
                                externalize_params=tmp_path / "net.irpa",
                                externalize_min_bytes=0)
    names = params_list(tmp_path / "net.irpa")
    assert names == {"emb.weight": "50x16xf32", "fc.weight.T": "16x8xf32",
                     "fc.bias": "8xf32", "scale": "8xf32"}, names
    with torch.no_grad():
        torch.testing.assert_close(compiled(ids), net(ids), atol=ATOL, rtol=RTOL)


def test_parameter_names_through_compiler_rewrites(tmp_path):
    """Weights the compiler rearranges keep derived names that
    turbine_torch.stored_tensor evaluates: fc1 reads the flattened NHWC pool
    output, so its rows are permuted to channels-last order, and it is then
    packed into 32-column panels; the name composes both. A safetensors file
    written from another state_dict through those names replaces them without
    recompiling."""

    class Net(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = torch.nn.Conv2d(3, 4, 3, padding=1)
            self.fc1 = torch.nn.Linear(4 * 4 * 4, 64)
            self.fc2 = torch.nn.Linear(64, 10)

        def forward(self, x):
            y = torch.flatten(torch.nn.functional.max_pool2d(torch.relu(self.conv(x)), 2), 1)
            return self.fc2(torch.relu(self.fc1(y)))

    torch.manual_seed(3)
    net = Net().eval()
    x = torch.randn(2, 3, 8, 8)
    exported = turbine_torch.export(net, x)
    weights = tmp_path / "net.safetensors"
    compiled = exported.compile(save_to=tmp_path / "net.tmod", externalize_params=weights,
                                externalize_min_bytes=1024)
    with torch.no_grad():
        torch.testing.assert_close(compiled(x), net(x), atol=ATOL, rtol=RTOL)
    names = params_list(weights)
    derived = [n for n in names if n.startswith("fc1.weight.T.")]
    assert derived == ["fc1.weight.T.reshape(4,4,4,64).permute(1,2,0,3).reshape(64,64)"
                       ".reshape(64,2,32).permute(1,0,2)"], names
    other = Net().eval()
    stored = turbine_torch.stored_tensors(names, other.state_dict())
    assert set(stored) == set(names), names
    write_safetensors(tmp_path / "other.safetensors", stored)
    swapped = turbine_torch.load(tmp_path / "net.tmod", parameters=[tmp_path / "other.safetensors"])
    sd, od = net.state_dict(), other.state_dict()
    with torch.no_grad():  # other's externalized weights, net's small ones (conv, biases)
        y = torch.flatten(torch.nn.functional.max_pool2d(torch.relu(net.conv(x)), 2), 1)
        y = torch.relu(torch.nn.functional.linear(y, od["fc1.weight"], sd["fc1.bias"]))
        expected = torch.nn.functional.linear(y, od["fc2.weight"], sd["fc2.bias"])
    torch.testing.assert_close(swapped(x), expected, atol=ATOL, rtol=RTOL)
