# ===- test_kernel_language.py - Turbine Kernels written in Python -------=== #
#
# turbine_torch.kernel against the C++ kernel language and against torch:
#  * the library's kernels written in Python print the same graph as their
#    C++ definitions (KernelLibrary.h);
#  * compiled launches and the interpreter agree with torch (stated
#    tolerances) on shapes that are not multiples of the tiles; f16 buffers
#    with f32 compute; the Python flash attention (examples/pytorch), causal
#    and not, f32 and f16;
#  * caches: memory hits in process, a disk hit from a second process;
#    dynamic symbols: one compile for many shapes (the Launch.h counters);
#  * errors: wrong dtype or rank, a symbol that cannot be bound, Python
#    constructs that cannot be traced (named with their line), trace errors
#    naming the op's Python line.
# ===---------------------------------------------------------------------=== #
import math
import os
import subprocess
import sys

import pytest
import torch

import turbine_torch.kernel as tk

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "examples", "pytorch"))
import flash_attention  # noqa: E402  (the worked example)

LOG2E = math.log2(math.e)


@pytest.fixture(autouse=True)
def private_cache(tmp_path, monkeypatch):
    # Every test starts cold: its own disk cache, an empty memory cache.
    monkeypatch.setenv("TURBINE_CACHE_DIR", str(tmp_path / "cache"))
    tk.clear_launch_cache()
    tk.reset_launch_stats()


M, N, K = tk.symbols("M N K")
BLOCK_M, BLOCK_N, BLOCK_K = tk.symbols("BLOCK_M BLOCK_N BLOCK_K")


@tk.kernel(M)
def softmax(input: tk.InputBuffer[M, N, tk.f32], output: tk.OutputBuffer[M, N, tk.f32]):
    row = tk.program_id(0)
    x = tk.load(input, (row, 0), (1, BLOCK_N), tk.masked(-math.inf))
    numerator = tk.exp2((x - tk.max(x)) * LOG2E)
    tk.store(output, (row, 0), numerator / tk.sum(numerator), tk.masked())


def gemm_kernel(ab=tk.f32):
    @tk.kernel(tk.ceildiv(M, BLOCK_M), tk.ceildiv(N, BLOCK_N), name="gemm")
    def gemm(a: tk.InputBuffer[M, K, ab], b: tk.InputBuffer[K, N, ab],
             c: tk.OutputBuffer[M, N, tk.f32]):
        m, n = tk.program_id(0) * BLOCK_M, tk.program_id(1) * BLOCK_N

        @tk.for_loop(0, tk.ceildiv(K, BLOCK_K), init=[tk.constant(0.0, (BLOCK_M, BLOCK_N), tk.f32)])
        def acc(kk, acc):
            ta = tk.load(a, (m, kk * BLOCK_K), (BLOCK_M, BLOCK_K), tk.masked())
            tb = tk.load(b, (kk * BLOCK_K, n), (BLOCK_K, BLOCK_N), tk.masked())
            return tk.dot(ta, tb, acc)

        tk.store(c, (m, n), acc, tk.masked())

    return gemm


def layernorm_kernel(eps=1e-5):
    @tk.kernel(M, name="layernorm")
    def layernorm(input: tk.InputBuffer[M, N], weight: tk.InputBuffer[N],
                  bias: tk.InputBuffer[N], output: tk.OutputBuffer[M, N]):
        row = tk.program_id(0)
        x = tk.load(input, (row, 0), (1, BLOCK_N), tk.masked())
        w = tk.reshape(tk.load(weight, (0,), (BLOCK_N,), tk.masked()), (1, BLOCK_N))
        b = tk.reshape(tk.load(bias, (0,), (BLOCK_N,), tk.masked()), (1, BLOCK_N))
        mean = tk.sum(x) / N
        # (C++ evaluates these select arguments right to left)
        centered_value = x - mean
        centered = tk.select(tk.iota((1, BLOCK_N), 1) < N, centered_value, 0.0)
        variance = tk.sum(centered * centered) / N
        tk.store(output, (row, 0), centered * tk.rsqrt(variance + eps) * w + b, tk.masked())

    return layernorm


def attention_kernel():
    B, S, T, D = tk.symbols("B S T D")

    @tk.kernel(tk.ceildiv(S, BLOCK_M), B, name="attention")
    def attention(q: tk.InputBuffer[B, S, D], k: tk.InputBuffer[B, T, D],
                  v: tk.InputBuffer[B, T, D], o: tk.OutputBuffer[B, S, D]):
        batch, m = tk.program_id(1), tk.program_id(0) * BLOCK_M
        # (C++ evaluates the right operand of this * first)
        scale = tk.rsqrt(tk.constant(D, dtype=tk.f32))
        qt = tk.reshape(tk.load(q, (batch, m, 0), (1, BLOCK_M, D), tk.masked()), (BLOCK_M, D)) * scale

        @tk.for_loop(0, tk.ceildiv(T, BLOCK_N),
                     init=[tk.constant(-math.inf, (BLOCK_M, 1)), tk.constant(0.0, (BLOCK_M, 1)),
                           tk.constant(0.0, (BLOCK_M, D))])
        def loop(j, row_max, row_sum, acc):
            n = j * BLOCK_N
            kt = tk.reshape(tk.load(k, (batch, n, 0), (1, BLOCK_N, D), tk.masked()), (BLOCK_N, D))
            vt = tk.reshape(tk.load(v, (batch, n, 0), (1, BLOCK_N, D), tk.masked()), (BLOCK_N, D))
            # (C++ evaluates dot's and +'s operands right to left)
            zero = tk.constant(0.0, (BLOCK_M, BLOCK_N))
            s = tk.dot(qt, tk.transpose(kt), zero)
            s = tk.select(tk.iota((BLOCK_M, BLOCK_N), 1) + n < T, s, -math.inf)
            new_max = tk.maximum(row_max, tk.max(s))
            p = tk.exp(s - new_max)
            rescale = tk.exp(row_max - new_max)
            block_sum = tk.sum(p)
            row_sum = row_sum * rescale + block_sum
            scaled = acc * rescale
            return new_max, row_sum, tk.dot(p, vt, scaled)

        _, row_sum, acc = loop
        tk.store(o, (batch, m, 0), tk.reshape(acc / row_sum, (1, BLOCK_M, D)), tk.masked())

    return attention


@pytest.mark.parametrize("name, make", [
    ("softmax", lambda: softmax),
    ("gemm", gemm_kernel),
    ("gemm_f16", lambda: gemm_kernel(tk.f16)),
    ("layernorm", layernorm_kernel),
    ("attention", attention_kernel),
])
def test_same_graph_as_cpp(name, make):
    python = str(make())
    cpp = tk.library_kernel(name).print()
    assert python == cpp, "Python:\n%s\nC++:\n%s" % (python, cpp)


def test_print_and_mlir():
    text = str(softmax)
    assert text.startswith("kernel softmax grid[M] (\n    input: input f32[M, N]\n")
    assert "load input[pid0, 0] masked(pad=-inf) : f32[1, BLOCK_N]" in text
    mlir = softmax.mlir(([5, 100], "f32"), ([5, 100], "f32"), BLOCK_N=128)
    assert "turbine.dispatch @softmax" in mlir and "vector.multi_reduction" in mlir


def test_softmax_compiled_and_interpreted_vs_torch():
    torch.manual_seed(0)
    for shape in [(37, 100), (5, 128), (1, 3)]:
        x = torch.randn(*shape) * 4
        expected = torch.softmax(x, -1)
        compiled, interpreted = torch.empty_like(x), torch.empty_like(x)
        softmax(x, compiled, BLOCK_N=128)
        softmax.interpret(x, interpreted, BLOCK_N=128)
        torch.testing.assert_close(compiled, expected, atol=1e-6, rtol=1e-5)
        torch.testing.assert_close(interpreted, expected, atol=1e-6, rtol=1e-5)


def test_gemm_f32_and_f16_inputs():
    torch.manual_seed(1)
    for ab, dtype in ((tk.f32, torch.float32), (tk.f16, torch.float16)):
        gemm = gemm_kernel(ab)
        a, b = torch.randn(33, 70).to(dtype), torch.randn(70, 45).to(dtype)
        c = torch.empty(33, 45)
        gemm(a, b, c, BLOCK_M=16, BLOCK_N=16, BLOCK_K=8)
        torch.testing.assert_close(c, a.float() @ b.float(), atol=1e-4, rtol=1e-4)


def test_layernorm_vs_torch():
    torch.manual_seed(2)
    x, w, b = torch.randn(9, 50) * 3 + 1, torch.randn(50), torch.randn(50)
    y = torch.empty_like(x)
    layernorm_kernel(1e-3)(x, w, b, y, BLOCK_N=64)
    torch.testing.assert_close(y, torch.nn.functional.layer_norm(x, (50,), w, b, 1e-3),
                               atol=1e-5, rtol=1e-4)


@pytest.mark.parametrize("dtype, atol", [(torch.float32, 1e-5), (torch.float16, 2e-3)])
@pytest.mark.parametrize("causal", [False, True])
def test_flash_attention_example(dtype, atol, causal):
    torch.manual_seed(3)
    # Small tiles and head dim: compile time grows quickly with them.
    b, s, t, d = 2, 37, (37 if causal else 53), 32
    q, k, v = (torch.randn(b, n, d).to(dtype) for n in (s, t, t))
    got = flash_attention.flash_attention(q, k, v, causal, block_m=16, block_n=16)
    assert got.dtype == dtype
    # torch's own attention in f32 on the same (f16) values; the f16 output
    # adds one rounding (half an f16 ulp of |o| < 4: 1e-3).
    torch.testing.assert_close(got.float(), flash_attention.reference(q, k, v, causal),
                               atol=atol, rtol=atol)


def test_flash_attention_kernel_is_under_50_lines():
    import inspect
    lines = inspect.getsource(flash_attention.attention_kernel).splitlines()
    assert len(lines) < 50, len(lines)


def test_memory_cache_and_counters():
    x, y = torch.randn(4, 10), torch.empty(4, 10)
    softmax(x, y, BLOCK_N=16)
    softmax(x, y, BLOCK_N=16)
    stats = tk.launch_stats()
    assert stats["misses"] == 1 and stats["memory_hits"] == 1
    softmax(torch.randn(5, 10), torch.empty(5, 10), BLOCK_N=16)  # M is specialized
    assert tk.launch_stats()["misses"] == 2


def test_disk_cache_across_processes(tmp_path):
    script = """
import math, os, sys, torch
import turbine_torch.kernel as tk
M, N, BLOCK_N = tk.symbols("M N BLOCK_N")
@tk.kernel(M)
def scale(x: tk.InputBuffer[M, N], y: tk.OutputBuffer[M, N]):
    t = tk.load(x, (tk.program_id(0), 0), (1, BLOCK_N), tk.masked())
    tk.store(y, (tk.program_id(0), 0), t * 3.0, tk.masked())
x = torch.arange(12.0).reshape(3, 4); y = torch.empty(3, 4)
scale(x, y, BLOCK_N=4)
assert torch.equal(y, x * 3)
s = tk.launch_stats()
print(s["misses"], s["disk_hits"])
"""
    env = dict(os.environ, TURBINE_CACHE_DIR=str(tmp_path / "shared"))
    runs = [subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                           text=True, timeout=300) for _ in range(2)]
    for r in runs:
        assert r.returncode == 0, r.stderr
    assert runs[0].stdout.split() == ["1", "0"]   # compiled
    assert runs[1].stdout.split() == ["0", "1"]   # loaded from disk


def test_dynamic_dims_compile_once():
    @tk.kernel(M, dynamic=[M, tk.dynamic(N, max=256)])
    def softmax_dyn(x: tk.InputBuffer[M, N], y: tk.OutputBuffer[M, N]):
        row = tk.program_id(0)
        t = tk.load(x, (row, 0), (1, BLOCK_N), tk.masked(-math.inf))
        e = tk.exp(t - tk.max(t))
        tk.store(y, (row, 0), e / tk.sum(e), tk.masked())

    assert "dynamic[M, N max 256]" in str(softmax_dyn)
    torch.manual_seed(4)
    shapes = [(3, 5), (7, 100), (1, 128), (64, 33), (10, 1), (2, 77)]
    for shape in shapes:
        x = torch.randn(*shape)
        y = torch.empty_like(x)
        softmax_dyn(x, y, BLOCK_N=128)
        torch.testing.assert_close(y, torch.softmax(x, -1), atol=1e-6, rtol=1e-5)
    stats = tk.launch_stats()
    assert stats["misses"] == 1, stats
    assert stats["memory_hits"] == len(shapes) - 1, stats
    with pytest.raises(tk.KernelError, match=r"dynamic symbol 'N' = 300 .* exceeds its bound"):
        softmax_dyn(torch.randn(2, 300), torch.empty(2, 300), BLOCK_N=512)


def test_dynamic_multiple_of_drops_masks():
    @tk.kernel(tk.ceildiv(N, BLOCK_N), dynamic=[tk.dynamic(N, multiple_of=16)])
    def double(x: tk.InputBuffer[N], y: tk.OutputBuffer[N]):
        n = tk.program_id(0) * BLOCK_N
        tk.store(y, (n,), tk.load(x, (n,), (BLOCK_N,), tk.masked()) * 2.0, tk.masked())

    assert "scf.if" not in double.mlir(([64], "f32"), ([64], "f32"), BLOCK_N=16)
    assert "scf.if" in double.mlir(([64], "f32"), ([64], "f32"), BLOCK_N=32)
    for n in (16, 48, 160, 0, 512):
        x = torch.randn(n)
        y = torch.empty(n)
        double(x, y, BLOCK_N=16)
        assert torch.equal(y, x * 2)
    assert tk.launch_stats()["misses"] == 1
    with pytest.raises(tk.KernelError, match="'N' = 20 .* is not a multiple of its multiple_of"):
        double(torch.randn(20), torch.empty(20), BLOCK_N=16)


def test_errors_wrong_dtype_rank_and_binding():
    x = torch.randn(4, 8)
    with pytest.raises(tk.KernelError, match="buffer 'input' is f64, the kernel declares f32"):
        softmax(x.double(), torch.empty(4, 8, dtype=torch.float64), BLOCK_N=8)
    with pytest.raises(tk.KernelError, match="buffer 'input' has rank 3, the kernel declares"):
        softmax(torch.randn(2, 4, 8), torch.empty(2, 4, 8), BLOCK_N=8)
    with pytest.raises(tk.KernelError, match="unbound symbol 'BLOCK_N'"):
        softmax(x, torch.empty(4, 8))
    with pytest.raises(tk.KernelError, match="symbol 'N' is 9 from buffer 'output' dim 1 "
                                             "but 8 from buffer 'input' dim 1"):
        softmax(x, torch.empty(4, 9), BLOCK_N=8)
    with pytest.raises(tk.KernelError, match="takes 2 buffers \\(input, output\\), got 1"):
        softmax(x, BLOCK_N=8)
    with pytest.raises(tk.KernelError, match="output buffer 'output' must be contiguous"):
        softmax(x, torch.empty(8, 4).t(), BLOCK_N=8)
    with pytest.raises(TypeError, match="symbol 'BLOCK_N' must be bound to an int"):
        softmax(x, torch.empty(4, 8), BLOCK_N=8.0)


def _line_of(fn, text):
    import inspect
    lines, first = inspect.getsourcelines(fn)
    return first + next(i for i, line in enumerate(lines) if text in line)


def test_unsupported_python_constructs_name_the_line():
    def branch(x: tk.InputBuffer[N], y: tk.OutputBuffer[N]):
        t = tk.load(x, (0,), (BLOCK_N,))
        if t > 0.0:  # <- not traceable
            t = -t
        tk.store(y, (0,), t)

    with pytest.raises(tk.KernelError) as e:
        tk.kernel(1)(branch)
    line = _line_of(branch, "if t > 0.0")
    assert ("kernel 'branch': test_kernel_language.py:%d: unsupported construct in a kernel "
            "body (`if t > 0.0:  # <- not traceable`)" % line) in str(e.value)
    assert "has no truth value" in str(e.value)

    def python_loop(x: tk.InputBuffer[N], y: tk.OutputBuffer[N]):
        for i in range(N):  # <- a symbolic bound
            pass

    with pytest.raises(tk.KernelError, match="test_kernel_language.py:%d: .*use tk.for_loop"
                       % _line_of(python_loop, "range(N)")):
        tk.kernel(1)(python_loop)

    def torch_call(x: tk.InputBuffer[N], y: tk.OutputBuffer[N]):
        tk.store(y, (0,), torch.exp(tk.load(x, (0,), (BLOCK_N,))))

    with pytest.raises(tk.KernelError, match="test_kernel_language.py:%d: .*use tk.exp"
                       % _line_of(torch_call, "torch.exp")):
        tk.kernel(1)(torch_call)

    def missing(x):
        pass

    with pytest.raises(tk.KernelError, match="parameter 'x' needs a buffer annotation"):
        tk.kernel(1)(missing)


def test_trace_errors_name_the_op_and_line():
    def bad_add(a: tk.InputBuffer[M, N], out: tk.OutputBuffer[M, N]):
        x = tk.load(a, (0, 0), (2, 4))
        y = tk.load(a, (0, 0), (2, 8))
        tk.store(out, (0, 0), x + y)

    with pytest.raises(tk.KernelError) as e:
        tk.kernel(1)(bad_add)
    assert ("kernel 'bad_add': op #2 'add' at test_kernel_language.py:%d: shape mismatch: "
            "dim 1 of [2, 4] vs [2, 8]: 4 vs 8" % _line_of(bad_add, "x + y")) in str(e.value)

    def store_input(a: tk.InputBuffer[N], out: tk.OutputBuffer[N]):
        tk.store(a, (0,), tk.load(a, (0,), (4,)))

    with pytest.raises(tk.KernelError, match="op #1 'store' on buffer 'a' at "
                       "test_kernel_language.py:%d: cannot store into input buffer"
                       % _line_of(store_input, "tk.store")):
        tk.kernel(1)(store_input)

    def tile_in_dynamic(x: tk.InputBuffer[N], y: tk.OutputBuffer[N]):
        tk.store(y, (0,), tk.load(x, (0,), (N,)))

    with pytest.raises(tk.KernelError, match="tile shapes must be static"):
        tk.kernel(1, dynamic=[N])(tile_in_dynamic)

    with pytest.raises(tk.KernelError, match="only while a kernel is traced"):
        tk.constant(1.0, (4,))


def test_for_loop_body_errors():
    def wrong_count(x: tk.InputBuffer[N], y: tk.OutputBuffer[N]):
        @tk.for_loop(0, 4, init=[tk.constant(0.0, (4,)), tk.constant(0.0, (4,))])
        def r(i, a, b):
            return a

    with pytest.raises(tk.KernelError, match="returned 1 values for 2 carried tiles"):
        tk.kernel(1)(wrong_count)
