# ===- python_kernels_benchmark.py - Python-launched Turbine kernels ------=== #
#
# Two measurements, one process, one thread (torch.set_num_threads(1); the
# kernels run on the local-sync device):
#
# 1. Overhead of an eager launch from Python. A tiny kernel (y = x + 1 on 16
#    f32 elements, one workgroup) is launched `kernel(x, y, BLOCK=16)`
#    from Python; the same launch from C++ (kernels::launchBuffers) and the
#    compiled kernel's dispatch alone (Device::dispatch on the prepared
#    state: the kernel's own time) are timed in the extension. Overhead =
#    Python per call - dispatch alone, at 16, 4096 and 65536 elements.
#    torch's `torch.add(x, 1, out=y)` on the same tensors is shown for scale.
# 2. The Python flash attention (examples/pytorch/flash_attention.py) vs
#    torch's attention on CPU (q @ k^T / sqrt(d), softmax, @ v: torch 1.13
#    has no fused CPU attention), f32, causal and not, at a few shapes.
#
# Every number is the median over batches, rounds interleaved.
#
#   OPENBLAS_CORETYPE=Cooperlake OPENBLAS_NUM_THREADS=1 \
#   TURBINE_TORCH_LIBRARY=build/lib/libturbine_torch.so PYTHONPATH=python \
#       /usr/bin/python3 benchmarks/python_kernels_benchmark.py
# ===---------------------------------------------------------------------=== #
import math
import os
import statistics
import sys
import time

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "examples", "pytorch"))

import flash_attention  # noqa: E402
import turbine_torch.kernel as tk  # noqa: E402


def median_per_call(fn, calls=2000, batches=15):
    means = []
    for _ in range(batches):
        start = time.perf_counter()
        for _ in range(calls // batches):
            fn()
        means.append((time.perf_counter() - start) / (calls // batches))
    return statistics.median(means)


def launch_overhead():
    N, BLOCK = tk.symbols("N BLOCK")

    @tk.kernel(tk.ceildiv(N, BLOCK))
    def add_one(x: tk.InputBuffer[N], y: tk.OutputBuffer[N]):
        n = tk.program_id(0) * BLOCK
        tk.store(y, (n,), tk.load(x, (n,), (BLOCK,), tk.masked()) + 1.0, tk.masked())

    print("eager launch of y = x + 1 (16-element tiles), us per call (median of 5 rounds):")
    print("  %-8s %8s %8s %10s %9s %10s" % ("elements", "Python", "C++", "kernel's", "overhead",
                                            "torch.add"))
    print("  %-8s %8s %8s %10s %9s %10s" % ("", "launch", "launch", "own time", "(Python)",
                                            "(out=y)"))
    for n in (16, 4096, 65536):
        x, y = torch.randn(n), torch.empty(n)
        add_one(x, y, BLOCK=16)  # compile
        assert torch.equal(y, x + 1)
        calls = 30000 if n <= 4096 else 3000
        rounds = []
        for _ in range(5):
            python = median_per_call(lambda: add_one(x, y, BLOCK=16), calls=calls)
            native = add_one.graph.time_launches([x, y], {"BLOCK": 16}, calls)
            torch_add = median_per_call(lambda: torch.add(x, 1, out=y), calls=calls)
            rounds.append((python, native["launch_s"], native["dispatch_s"], torch_add))
        python, cpp, dispatch, torch_add = (statistics.median(r[i] for r in rounds)
                                            for i in range(4))
        print("  %-8d %8.2f %8.2f %10.2f %9.2f %10.2f" % (
            n, python * 1e6, cpp * 1e6, dispatch * 1e6, (python - dispatch) * 1e6,
            torch_add * 1e6))
    print("  (overhead = Python launch - the kernel's own time; target <= 10 us)")


def torch_attention(q, k, v, causal):
    s = q @ k.transpose(1, 2) / math.sqrt(q.shape[-1])
    if causal:
        mask = torch.ones(s.shape[-2:], dtype=torch.bool).tril()
        s = s.masked_fill(~mask, -math.inf)
    return torch.softmax(s, dim=-1) @ v


def attention():
    print("\nflash attention (Python kernel) vs torch attention, f32, ms per call:")
    print("  %-22s %-7s %9s %9s %7s" % ("B x S x T x D", "causal", "turbine", "torch", "ratio"))
    for b, s, d in ((8, 256, 64), (8, 512, 64), (4, 1024, 64), (16, 128, 32)):
        for causal in (False, True):
            torch.manual_seed(0)
            q, k, v = (torch.randn(b, s, d) for _ in range(3))
            ours = flash_attention.flash_attention(q, k, v, causal)
            torch.testing.assert_close(ours, torch_attention(q, k, v, causal),
                                       atol=2e-5, rtol=1e-4)
            calls = max(5, int(2e8 / (b * s * s * d)))
            tt, tr = [], []
            for _ in range(5):
                tt.append(median_per_call(lambda: flash_attention.flash_attention(q, k, v, causal),
                                          calls=calls, batches=3))
                tr.append(median_per_call(lambda: torch_attention(q, k, v, causal),
                                          calls=calls, batches=3))
            t, r = statistics.median(tt), statistics.median(tr)
            print("  %-22s %-7s %9.3f %9.3f %6.2fx" % ("%dx%dx%dx%d" % (b, s, s, d), causal,
                                                       t * 1e3, r * 1e3, r / t))


if __name__ == "__main__":
    torch.set_num_threads(1)
    os.environ.setdefault("TURBINE_CACHE_DIR", "")
    launch_overhead()
    attention()
