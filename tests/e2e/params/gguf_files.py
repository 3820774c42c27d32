# ===- gguf_files.py - GGUF test files from a safetensors file --------------=== #
#
# The GGUF end-to-end tests' fixture and checker, with NumPy only (GGUF v3
# layout of ggml/docs/gguf.md; Q8_0 / Q4_0 quantized as ggml's reference
# quantizers do, quantize_row_q8_0_ref / quantize_row_q4_0_ref):
#
#   gguf_files.py make WEIGHTS.safetensors OUTDIR
#       writes OUTDIR/mlp.gguf (every tensor F32, renamed "gguf.NAME"),
#       OUTDIR/mlp.names (the name map "gguf.* = *"), mlp_f16.gguf (F16),
#       mlp_q8.gguf / mlp_q4.gguf (2-D weights whose rows are a multiple of 32
#       quantized, the rest F32), and OUTDIR/ref_q8.npy / ref_q4.npy: the first
#       quantized weight dequantized by NumPy (ggml's formulas), the reference
#       the runtime's decoder is checked against.
#   gguf_files.py check-dequant TURBINE OUTDIR q8|q4
#       extracts that weight with `turbine params dump --extract` and compares
#       it with the reference bit for bit.
# ===---------------------------------------------------------------------=== #
import json
import os
import struct
import subprocess
import sys

import numpy as np

F32, F16, Q4_0, Q8_0 = 0, 1, 2, 8
ST_DTYPES = {"F32": "<f4", "F16": "<f2", "I64": "<i8", "I32": "<i4"}


def read_safetensors(path):
    data = open(path, "rb").read()
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + n])
    tensors = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        begin, end = info["data_offsets"]
        raw = data[8 + n + begin:8 + n + end]
        tensors[name] = np.frombuffer(raw, ST_DTYPES[info["dtype"]]).reshape(info["shape"])
    return tensors


def quantize_q8_0(x):
    blocks = x.astype(np.float32).reshape(-1, 32)
    amax = np.abs(blocks).max(axis=1)
    d = amax / np.float32(127)
    inv = np.where(d != 0, np.float32(1) / np.where(d != 0, d, 1), 0).astype(np.float32)
    v = blocks * inv[:, None]
    q = (np.sign(v) * np.floor(np.abs(v) + np.float32(0.5))).astype(np.int8)  # roundf
    d16 = d.astype("<f2")
    out = np.empty((blocks.shape[0], 34), np.uint8)
    out[:, :2] = d16.view(np.uint8).reshape(-1, 2)
    out[:, 2:] = q.view(np.uint8)
    ref = d16.astype(np.float32)[:, None] * q.astype(np.float32)
    return out.reshape(-1), ref.reshape(x.shape)


def quantize_q4_0(x):
    blocks = x.astype(np.float32).reshape(-1, 32)
    idx = np.abs(blocks).argmax(axis=1)  # first of equal magnitudes
    m = blocks[np.arange(blocks.shape[0]), idx]
    d = m / np.float32(-8)
    inv = np.where(d != 0, np.float32(1) / np.where(d != 0, d, 1), 0).astype(np.float32)
    q = np.minimum(15, (blocks * inv[:, None] + np.float32(8.5)).astype(np.int32)).astype(np.uint8)
    d16 = d.astype("<f2")
    out = np.empty((blocks.shape[0], 18), np.uint8)
    out[:, :2] = d16.view(np.uint8).reshape(-1, 2)
    out[:, 2:] = q[:, :16] | (q[:, 16:] << 4)
    ref = d16.astype(np.float32)[:, None] * (q.astype(np.float32) - 8)
    return out.reshape(-1), ref.reshape(x.shape)


def gguf_string(s):
    b = s.encode()
    return struct.pack("<Q", len(b)) + b


def write_gguf(path, tensors, alignment=32):
    """tensors: [(name, torch-order shape, ggml type, bytes)]."""
    kv = gguf_string("general.alignment") + struct.pack("<II", 4, alignment)
    kv += gguf_string("general.architecture") + struct.pack("<I", 8) + gguf_string("mlp")
    infos, offset = b"", 0
    for name, shape, t, data in tensors:
        ne = list(reversed(shape))
        infos += gguf_string(name) + struct.pack("<I", len(ne)) + struct.pack(
            "<%dQ" % len(ne), *ne) + struct.pack("<IQ", t, offset)
        offset += -(-len(data) // alignment) * alignment
    head = b"GGUF" + struct.pack("<IQQ", 3, len(tensors), 2) + kv + infos
    with open(path, "wb") as f:
        f.write(head + b"\0" * (-len(head) % alignment))
        for _, _, _, data in tensors:
            f.write(data + b"\0" * (-len(data) % alignment))


def make(weights, outdir):
    tensors = read_safetensors(weights)
    write_gguf(os.path.join(outdir, "mlp.gguf"),
               [("gguf." + n, list(a.shape), F32, a.astype("<f4").tobytes())
                for n, a in tensors.items()])
    write_gguf(os.path.join(outdir, "mlp_f16.gguf"),
               [("gguf." + n, list(a.shape), F16, a.astype("<f2").tobytes())
                for n, a in tensors.items()])
    with open(os.path.join(outdir, "mlp.names"), "w") as f:
        f.write("# GGUF test files: tensor 'gguf.NAME' is the module's NAME\ngguf.* = *\n")
    for kind, t, quantize in (("q8", Q8_0, quantize_q8_0), ("q4", Q4_0, quantize_q4_0)):
        entries, ref_written = [], False
        for n, a in tensors.items():
            if a.ndim == 2 and a.shape[1] % 32 == 0:
                data, ref = quantize(a)
                entries.append(("gguf." + n, list(a.shape), t, data.tobytes()))
                if not ref_written:
                    np.save(os.path.join(outdir, "ref_%s.npy" % kind), ref)
                    with open(os.path.join(outdir, "ref_%s.name" % kind), "w") as f:
                        f.write("gguf." + n)
                    ref_written = True
            else:
                entries.append(("gguf." + n, list(a.shape), F32, a.astype("<f4").tobytes()))
        if not ref_written:
            sys.exit("no 2-D weight with rows a multiple of 32 in %s" % weights)
        write_gguf(os.path.join(outdir, "mlp_%s.gguf" % kind), entries)
    print("wrote GGUF files for %d tensors to %s" % (len(tensors), outdir))


def check_dequant(turbine, outdir, kind):
    name = open(os.path.join(outdir, "ref_%s.name" % kind)).read()
    out = os.path.join(outdir, "got_%s.npy" % kind)
    subprocess.run([turbine, "params", "dump", os.path.join(outdir, "mlp_%s.gguf" % kind),
                    "--extract=%s=%s" % (name, out)], check=True)
    got, ref = np.load(out), np.load(os.path.join(outdir, "ref_%s.npy" % kind))
    if got.shape != ref.shape or got.dtype != np.float32:
        sys.exit("FAIL: %s is %s %s, expected %s float32" % (name, got.shape, got.dtype,
                                                             ref.shape))
    bad = np.flatnonzero(got.view(np.uint32) != ref.view(np.uint32))
    if bad.size:
        i = bad[0]
        sys.exit("FAIL: %d of %d elements differ; first at %d: got %r, expected %r" % (
            bad.size, got.size, i, got.flat[i], ref.flat[i]))
    print("OK: %s (%s, %s) decodes to NumPy's reference bit for bit" % (name, kind,
                                                                       "x".join(map(str, got.shape))))


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "make":
        make(sys.argv[2], sys.argv[3])
    elif len(sys.argv) == 5 and sys.argv[1] == "check-dequant":
        check_dequant(sys.argv[2], sys.argv[3], sys.argv[4])
    else:
        sys.exit(__doc__ if __doc__ else "usage: gguf_files.py make|check-dequant ...")
