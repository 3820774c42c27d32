# ===- quantized_mlp.py - --quantize-weights=int8/int4 on the MLP benchmark model === #
#
# Compiles the MLP benchmark model (benchmarks/models/benchmark_models.py:
# 256-512-512-10 with ReLU, its fixed random weights, batch 64) traced with
# torch, once in f32 and once per bit width (int8, int4) and group size with
# --quantize-weights, plus int8 with --quantize-exclude=^fc3[.], runs each
# on one random batch, and compares:
#   * the quantized model vs the reference with no tolerance games: torch
#     eager on the *dequantized* weights (quantized here in NumPy with the
#     pass's formula: per output column, groups of G input elements; int8
#     s = max|w| / 127, int4 s = m / -8 for the group's value m of largest
#     magnitude; q = round(w / s) half away from zero, clamped to the range)
#     — must agree to atol 1e-4, rtol 1e-3 (f32 accumulation order only);
#   * quantized vs f32 (the accuracy cost of quantizing): max |error|,
#     relative L2 error and the share of rows whose argmax agrees — printed,
#     the numbers docs/performance.md reports.
#
#   /usr/bin/python3 tests/e2e/quantize/quantized_mlp.py TURBINE WORKDIR [GROUP...]
# Exit status 1 when a quantized artifact disagrees with its reference.
# ===---------------------------------------------------------------------=== #
import os
import subprocess
import sys

import numpy as np
import torch

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "benchmarks", "models"))
sys.path.insert(0, os.path.join(ROOT, "tests", "models"))
from benchmark_models import build  # noqa: E402

BATCH = 64


def dequantized(w: np.ndarray, group: int, bits: int = 8) -> np.ndarray:
    """torch Linear weight [out, in] (B = w.T: K = in, N = out) through int8
    (s = max|w| / 127) or int4 (s = m / -8, m the group's value of largest
    magnitude, q clamped to [-8, 7], as llama.cpp's Q4_0)."""
    out_features, k = w.shape
    result = np.empty_like(w)
    for g0 in range(0, k, group):
        block = w[:, g0:g0 + group].astype(np.float32)
        if bits == 8:
            scale = (np.abs(block).max(axis=1) / np.float32(127)).astype(np.float32)
            lo, hi = -127, 127
        else:
            m = block[np.arange(out_features), np.abs(block).argmax(axis=1)]
            scale = (m / np.float32(-8)).astype(np.float32)
            lo, hi = -8, 7
        inverse = np.where(scale != 0, np.float32(1) / np.where(scale != 0, scale, 1),
                           0).astype(np.float32)
        v = (block * inverse[:, None]).astype(np.float32).astype(np.float64)
        q = np.clip(np.sign(v) * np.floor(np.abs(v) + 0.5), lo, hi).astype(np.float32)
        result[:, g0:g0 + group] = q * scale[:, None]
    return result


def run(turbine, args):
    subprocess.run([turbine] + args, check=True, stdout=subprocess.DEVNULL)


def main(turbine, workdir, groups):
    os.makedirs(workdir, exist_ok=True)
    model = build("mlp")
    torch.manual_seed(1)
    x = torch.randn(BATCH, 256)
    traced = os.path.join(workdir, "mlp.pt")
    torch.jit.trace(model, x).save(traced)
    np.save(os.path.join(workdir, "x.npy"), x.numpy())
    with torch.no_grad():
        y32 = model(x).numpy()

    def compile_and_run(name, extra):
        tmod = os.path.join(workdir, name + ".tmod")
        out = os.path.join(workdir, name + ".npy")
        run(turbine, ["compile", traced, "-o", tmod, "--input-shape=%dx256xf32" % BATCH] + extra)
        run(turbine, ["run", tmod, "--input=@" + os.path.join(workdir, "x.npy"),
                      "--output=@" + out])
        return np.load(out)

    turbine_f32 = compile_and_run("f32", [])
    ok = np.allclose(turbine_f32, y32, atol=1e-4, rtol=1e-3)
    print("f32: Turbine vs torch max |diff| %.2e %s" % (np.abs(turbine_f32 - y32).max(),
                                                      "ok" if ok else "FAIL"))
    failed = not ok
    print("bits group  vs-dequant-ref  vs-f32: max|err|  rel-L2   argmax-agree  "
          "weight-bytes(f32->q+scales)")
    f32_bytes = sum(p.numel() * 4 for n, p in model.named_parameters() if n.endswith("weight"))

    def check(name, flags, bits, group, quantized_layers):
        nonlocal failed
        reference = build("mlp")
        with torch.no_grad():
            for layer in quantized_layers(reference):
                layer.weight.copy_(torch.from_numpy(dequantized(layer.weight.numpy(), group,
                                                                bits)))
            y_ref = reference(x).numpy()
        yq = compile_and_run(name, flags)
        diff = np.abs(yq - y_ref).max()
        ok = np.allclose(yq, y_ref, atol=1e-4, rtol=1e-3)
        failed |= not ok
        err = np.abs(yq - y32).max()
        rel = np.linalg.norm(yq - y32) / np.linalg.norm(y32)
        agree = (yq.argmax(axis=1) == y32.argmax(axis=1)).mean()
        return diff, ok, err, rel, agree

    for bits in (8, 4):
        for group in groups:
            diff, ok, err, rel, agree = check(
                "int%d_g%d" % (bits, group),
                ["--quantize-weights=int%d" % bits, "--group-size=%d" % group], bits, group,
                lambda m: (m.fc1, m.fc2, m.fc3))
            q_bytes = sum(p.numel() * bits // 8 + -(-p.shape[1] // group) * p.shape[0] * 4
                          for n, p in model.named_parameters() if n.endswith("weight"))
            print("%4d %5d  %.2e %-4s     %.2e    %.2e  %5.1f%%        %d -> %d (%.2fx)" % (
                bits, group, diff, "ok" if ok else "FAIL", err, rel, 100 * agree, f32_bytes,
                q_bytes, f32_bytes / q_bytes))
    # --quantize-exclude: fc3 (named fc3.weight... by the TorchScript
    # importer) stays f32, fc1 and fc2 are int8.
    diff, ok, _, _, _ = check("int8_exclude_fc3",
                              ["--quantize-weights=int8", "--group-size=32",
                               "--quantize-exclude=^fc3[.]"], 8, 32, lambda m: (m.fc1, m.fc2))
    print("int8 with --quantize-exclude=^fc3[.] vs reference (fc3 f32): %.2e %s" % (
        diff, "ok" if ok else "FAIL"))
    print("output scale: max |f32 output| %.3f" % np.abs(y32).max())
    return 1 if failed else 0


if __name__ == "__main__":
    if len(sys.argv) < 3:
        sys.exit("usage: quantized_mlp.py TURBINE WORKDIR [GROUP...]")
    groups = [int(g) for g in sys.argv[3:]] or [32, 64, 128]
    sys.exit(main(sys.argv[1], sys.argv[2], groups))
