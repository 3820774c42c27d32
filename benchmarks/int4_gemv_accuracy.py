# ===- int4_gemv_accuracy.py - What int8 activations cost the int4 GEMV ---=== #
#
# One torch Linear(4096, 4096, bias=False) (default init, seed 0), traced at
# batch 1 and compiled three ways: f32 weights; --quantize-weights=int4
# (group 32) for this host (with AVX512-VNNI: activations rounded to int8
# per group, vpdpbusd); the same for --target-cpu=skylake-avx512 (no VNNI:
# f32 activations, the path whose results equal torch on the dequantized
# weights up to f32 summation, QuantizedMatmulTest). For 8 random inputs
# (randn, seed 1) prints the difference the activation rounding makes (host
# vs skylake-avx512) next to what int4 weights cost (each vs f32 weights).
# A measurement, not a test. On a host without VNNI both int4 artifacts
# compute the same thing and the first difference is 0.
#
#   /usr/bin/python3 benchmarks/int4_gemv_accuracy.py BUILD_DIR
# ===---------------------------------------------------------------------=== #
import os
import subprocess
import sys
import tempfile

import numpy as np
import torch


def main(build):
    turbine = os.path.join(build, "bin", "turbine")
    work = tempfile.mkdtemp(prefix="int4-acc-")
    torch.manual_seed(0)
    model = os.path.join(work, "linear.pt")
    torch.jit.trace(torch.nn.Linear(4096, 4096, bias=False).eval(),
                    torch.randn(1, 4096)).save(model)
    variants = {"f32": [], "host": ["--quantize-weights=int4"],
                "novnni": ["--quantize-weights=int4", "--target-cpu=skylake-avx512"]}
    for name, flags in variants.items():
        subprocess.run([turbine, "compile", model, "--input-shape=1x4096xf32",
                        "-o", os.path.join(work, name + ".tmod")] + flags, check=True)

    def run(name, x):
        np.save(os.path.join(work, "x.npy"), x)
        subprocess.run([turbine, "run", os.path.join(work, name + ".tmod"),
                        "--input=@" + os.path.join(work, "x.npy"),
                        "--output=@" + os.path.join(work, "y.npy")], check=True,
                       capture_output=True)
        return np.load(os.path.join(work, "y.npy")).astype(np.float64)

    torch.manual_seed(1)
    print("input  max|y|   host vs no-VNNI: max abs  rel L2   | vs f32 weights rel L2: host  no-VNNI")
    for i in range(8):
        x = torch.randn(1, 4096).numpy()
        y, h, s = run("f32", x), run("host", x), run("novnni", x)
        rel = lambda a, b: np.linalg.norm(a - b) / np.linalg.norm(b)
        print("%5d  %6.3f   %21.2e  %8.2e |  %27.3e  %.3e" % (
            i, np.abs(y).max(), np.abs(h - s).max(), rel(h, s), rel(h, y), rel(s, y)))
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: int4_gemv_accuracy.py BUILD_DIR")
    sys.exit(main(sys.argv[1]))
