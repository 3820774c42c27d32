# ===- flash_attention.py - Flash attention in the Python kernel language === #
#
# O = softmax(Q K^T / sqrt(D) [+ causal mask]) V for Q [B, S, D], K/V [B, T, D]
# in one pass over K/V (running max, running sum, rescaled accumulator), as
# a Turbine kernel written in Python: f32 or f16 buffers (f16 loads convert
# to f32, the output converts back), causal or not. The kernel itself is
# `attention_kernel` below (under 50 lines); running this file checks it
# against torch on shapes that are not multiples of the tiles:
#
#   /usr/bin/python3 examples/pytorch/flash_attention.py [--print]
# ===---------------------------------------------------------------------=== #
import math

import turbine_torch.kernel as tk

B, S, T, D, BLOCK_M, BLOCK_N = tk.symbols("B S T D BLOCK_M BLOCK_N")


def attention_kernel(dtype=tk.f32, causal=False):
    f32 = tk.f32

    @tk.kernel(tk.ceildiv(S, BLOCK_M), B, name="flash_attention")
    def attention(q: tk.InputBuffer[B, S, D, dtype], k: tk.InputBuffer[B, T, D, dtype],
                  v: tk.InputBuffer[B, T, D, dtype], o: tk.OutputBuffer[B, S, D, dtype]):
        b, m = tk.program_id(1), tk.program_id(0) * BLOCK_M
        qt = tk.to_dtype(tk.reshape(tk.load(q, (b, m, 0), (1, BLOCK_M, D), tk.masked()),
                                    (BLOCK_M, D)), f32) * tk.rsqrt(tk.constant(D, dtype=f32))
        # Causal: key blocks past the tile's last query row contribute nothing.
        stop = tk.ceildiv(tk.smin(T, m + BLOCK_M) if causal else T, BLOCK_N)

        @tk.for_loop(0, stop, init=[tk.constant(-math.inf, (BLOCK_M, 1), f32),
                                    tk.constant(0.0, (BLOCK_M, 1), f32),
                                    tk.constant(0.0, (BLOCK_M, D), f32)])
        def result(j, row_max, row_sum, acc):
            n = j * BLOCK_N
            kt = tk.to_dtype(tk.reshape(tk.load(k, (b, n, 0), (1, BLOCK_N, D), tk.masked()),
                                        (BLOCK_N, D)), f32)
            vt = tk.to_dtype(tk.reshape(tk.load(v, (b, n, 0), (1, BLOCK_N, D), tk.masked()),
                                        (BLOCK_N, D)), f32)
            s = tk.dot(qt, tk.transpose(kt), tk.constant(0.0, (BLOCK_M, BLOCK_N), f32))
            cols = tk.iota((BLOCK_M, BLOCK_N), 1) + n
            s = tk.select(cols < T, s, -math.inf)
            if causal:
                s = tk.select(cols <= tk.iota((BLOCK_M, BLOCK_N), 0) + m, s, -math.inf)
            new_max = tk.maximum(row_max, tk.max(s))
            p = tk.exp(s - new_max)
            rescale = tk.exp(row_max - new_max)
            return new_max, row_sum * rescale + tk.sum(p), tk.dot(p, vt, acc * rescale)

        _, row_sum, acc = result
        out = tk.to_dtype(tk.reshape(acc / row_sum, (1, BLOCK_M, D)), dtype)
        tk.store(o, (b, m, 0), out, tk.masked())

    return attention


def flash_attention(q, k, v, causal=False, block_m=32, block_n=64):
    """Runs the kernel on torch tensors; returns O (the inputs' dtype).
    Larger tiles run faster and compile slower (the first launch of 32x64
    tiles at D = 64 compiles for tens of seconds on a busy 2-core machine)."""
    import torch
    kernel = _kernels.setdefault((q.dtype, causal),
                                 attention_kernel(tk.dtype_of(q.dtype), causal))
    out = torch.empty_like(q)
    kernel(q, k, v, out, BLOCK_M=block_m, BLOCK_N=block_n)
    return out


_kernels = {}


def reference(q, k, v, causal=False):
    """torch's attention in f32 (the same f16 values, widened)."""
    import torch
    q, k, v = q.float(), k.float(), v.float()
    s = q @ k.transpose(1, 2) / math.sqrt(q.shape[-1])
    if causal:
        mask = torch.ones(s.shape[-2:], dtype=torch.bool).tril()
        s = s.masked_fill(~mask, -math.inf)
    return torch.softmax(s, dim=-1) @ v


def main():
    import sys

    import torch
    torch.manual_seed(0)
    if "--print" in sys.argv:
        attention_kernel(tk.f16, causal=True).print()
    for dtype, atol in ((torch.float32, 1e-5), (torch.float16, 2e-3)):
        for causal in (False, True):
            b, s, t, d = 3, 37, 37 if causal else 53, 32
            q, k, v = (torch.randn(b, n, d).to(dtype) for n in (s, t, t))
            got = flash_attention(q, k, v, causal, block_m=16, block_n=16)
            error = (got.float() - reference(q, k, v, causal)).abs().max().item()
            print("%-13s causal=%-5s max |error| %.2e (tolerance %.0e)"
                  % (dtype, causal, error, atol))
            assert got.dtype == dtype and error <= atol, "mismatch"


if __name__ == "__main__":
    main()
