#!/usr/bin/env python3
"""torch on the lent GPU: the reference timings run_device_checks.sh prints
next to Turbine's (cuBLAS through torch.matmul; TF32 off for f32, as the
cuda target computes f32 in f32).

    torch_reference.py gemm M K N f32|f16|bf16   -> "X ms (Y TFLOP/s)"
"""
import sys

import torch


def gemm(m, k, n, dtype):
    torch.backends.cuda.matmul.allow_tf32 = False
    t = {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16}[dtype]
    a = torch.full((m, k), 0.5, dtype=t, device="cuda")
    b = torch.full((k, n), 0.25, dtype=t, device="cuda")
    for _ in range(3):
        torch.matmul(a, b)
    torch.cuda.synchronize()
    times = []
    for _ in range(20):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        torch.matmul(a, b)
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    ms = sorted(times)[len(times) // 2]
    print("%.4f ms (%.1f TFLOP/s)" % (ms, 2.0 * m * k * n / ms / 1e9))


if __name__ == "__main__":
    if len(sys.argv) == 6 and sys.argv[1] == "gemm":
        gemm(int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), sys.argv[5])
    else:
        sys.exit(__doc__)
