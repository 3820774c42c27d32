# ===- run_bf16_gemm_benchmark.py - bf16 vs f32 GEMM throughput ----------=== #
#
# y = x W^T with a constant W (a torch Linear without bias, scripted) at
# GEMM shapes: 1024^3, LLM prefill (M = 32 / 128 tokens, K = N = 768 /
# 3072 / 4096) and, with --large, 4096^3. Each shape is compiled by Turbine
# three ways: the model in f32; in bf16 for the host CPU (bf16 activations
# and weights, f32 accumulation: vdpbf16ps register tiles where the CPU has
# AVX512-BF16, Bf16MatmulCodegen.cpp); and in bf16 with --target-cpu=x86-64-v4
# (AVX-512 without AVX512-BF16: the f32 strategy on bf16 operands, each
# element extended to f32 in registers: what bf16 ran as before). Timed with
# `turbine bench` at 1 and 2 threads in interleaved rounds (every variant
# once per round, in turn); reports the median ms per call over rounds (each
# round's value is itself a median of `turbine bench` repetitions), GFLOP/s
# (2 M N K / time) and the ratios to f32 at the same thread count. A
# benchmark, not a test: it asserts nothing about speed.
#
#   /usr/bin/python3 benchmarks/run_bf16_gemm_benchmark.py BUILD_DIR [ROUNDS] [--large]
#       [--shapes=MxNxK,...]   (only these shapes)
# ===---------------------------------------------------------------------=== #
import os
import re
import statistics
import subprocess
import sys
import tempfile

import torch

SHAPES = [(1024, 1024, 1024),
          (32, 768, 768), (128, 768, 768),
          (32, 3072, 3072), (128, 3072, 3072),
          (32, 4096, 4096), (128, 4096, 4096)]
LARGE = [(4096, 4096, 4096)]
# (name, model dtype, --target-cpu)
VARIANTS = [("f32", "f32", "host"), ("bf16", "bf16", "host"), ("bf16@x86-64-v4", "bf16", "x86-64-v4")]
DTYPES = {"f32": torch.float32, "bf16": torch.bfloat16}


def median_ms(turbine, tmod, shape, dtype, threads, repetitions):
    m, _, k = shape
    out = subprocess.run([turbine, "bench", tmod, "--input=%dx%dx%s=0.5" % (m, k, dtype),
                          "--task_workers=%d" % threads, "--repetitions=%d" % repetitions,
                          "--warmup=3"], check=True, capture_output=True, text=True).stdout
    return float(re.search(r"median ms/call:\s*([0-9.]+)", out).group(1))


def main(build, rounds, large):
    turbine = os.path.join(build, "bin", "turbine")
    work = tempfile.mkdtemp(prefix="bf16-gemm-")
    shapes = SHAPES + (LARGE if large else [])
    for arg in sys.argv:
        if arg.startswith("--shapes="):
            shapes = [tuple(int(d) for d in s.split("x")) for s in arg[len("--shapes="):].split(",")]
    torch.manual_seed(0)
    tmods = {}
    for shape in shapes:
        m, n, k = shape
        linear = torch.nn.Linear(k, n, bias=False).eval()
        for dtype in DTYPES:
            pt = os.path.join(work, "%dx%dx%d.%s.pt" % (m, n, k, dtype))
            torch.jit.script(linear.to(DTYPES[dtype])).save(pt)
        for name, dtype, cpu in VARIANTS:
            tmod = os.path.join(work, "%dx%dx%d.%s.tmod" % (m, n, k, name))
            subprocess.run([turbine, "compile", os.path.join(work, "%dx%dx%d.%s.pt" % (m, n, k, dtype)),
                            "--input-shape=%dx%dx%s" % (m, k, dtype), "--target-cpu=" + cpu,
                            "-o", tmod], check=True)
            tmods[(shape, name)] = tmod
    times = {}
    for _ in range(rounds):
        for shape in shapes:
            flops = 2.0 * shape[0] * shape[1] * shape[2]
            # Enough repetitions for ~0.2 s per measurement at ~100 GFLOP/s.
            repetitions = max(3, min(200, int(0.2 / (flops / 100e9))))
            for threads in (1, 2):
                for name, dtype, _ in VARIANTS:
                    times.setdefault((shape, threads, name), []).append(
                        median_ms(turbine, tmods[(shape, name)], shape, dtype, threads, repetitions))
    load = os.getloadavg()[0]
    print("GEMM y = x W^T, W constant; %d interleaved rounds; load average %.1f" % (rounds, load))
    print("%-16s %7s  %9s %9s %9s  %9s %9s" % ("M x N x K", "threads", "f32", "bf16",
                                               "bf16@v4", "bf16/f32", "v4/f32"))
    for shape in shapes:
        flops = 2.0 * shape[0] * shape[1] * shape[2]
        for threads in (1, 2):
            g = {name: flops / statistics.median(times[(shape, threads, name)]) / 1e6
                 for name, _, _ in VARIANTS}
            print("%-16s %7d  %9.1f %9.1f %9.1f  %9.2f %9.2f" % (
                "%dx%dx%d" % shape, threads, g["f32"], g["bf16"], g["bf16@x86-64-v4"],
                g["bf16"] / g["f32"], g["bf16@x86-64-v4"] / g["f32"]))
    print("(GFLOP/s from the median ms per call)")
    return 0


if __name__ == "__main__":
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    if not args:
        sys.exit("usage: run_bf16_gemm_benchmark.py BUILD_DIR [ROUNDS] [--large]")
    sys.exit(main(args[0], int(args[1]) if len(args) > 1 else 5, "--large" in sys.argv))
