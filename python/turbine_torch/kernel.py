# ===- kernel.py - Turbine Kernels written in Python --------------------=== #
#
# The kernel language of kernels/ (Language.h) from Python, with the same
# semantics: the functions below are the C++ ones (bound in
# extension/KernelLanguageBindings.cpp), so a kernel traced here is the same
# graph the C++ form gives, printed the same way.
#
#   import math
#   import turbine_torch.kernel as tk
#   M, N, BLOCK_N = tk.symbols("M N BLOCK_N")
#
#   @tk.kernel(M)                                   # the grid: one axis of M
#   def softmax(x: tk.InputBuffer[M, N, tk.f32], y: tk.OutputBuffer[M, N, tk.f32]):
#       row = tk.program_id(0)
#       t = tk.load(x, (row, 0), (1, BLOCK_N), tk.masked(-math.inf))
#       e = tk.exp2((t - tk.max(t)) * math.log2(math.e))
#       tk.store(y, (row, 0), e / tk.sum(e), tk.masked())
#
#   print(softmax)                      # the traced graph
#   softmax(x, y, BLOCK_N=128)          # compiled on first launch, cached
#   softmax.interpret(x, y, BLOCK_N=128)  # the reference interpreter
#
# Tracing runs the function once with symbolic tiles, at decoration time.
# Python control flow on tiles or symbols is not traced: an `if` on a tile,
# a `range` over a symbol, a torch function applied to a tile are errors
# naming the kernel and the Python line (KernelError); loops are
# tk.for_loop, choices tk.select. Errors of the language name the op and its
# Python line too ("op #4 'add' at softmax.py:9: shape mismatch ...").
#
# Symbols bound by a buffer's shape come from the tensors; the others (tile
# sizes) are keyword arguments of the launch. Symbols listed in
# `dynamic=` stay dynamic: one compiled kernel serves every value.
# ===---------------------------------------------------------------------=== #
import inspect
import linecache
import os
import sys
import traceback

import torch

from .runtime import native as _load_native

_native = _load_native()

KernelError = _native.KernelError
Expr = _native.Expr
Tile = _native.Tile
Buffer = _native.Buffer


class DType(str):
    """A kernel dtype: its name ("f32") with the matching torch dtype."""

    def __new__(cls, name, torch_dtype):
        self = str.__new__(cls, name)
        self.torch = torch_dtype
        return self

    def __repr__(self):
        return "tk." + str(self)


f16 = DType("f16", torch.float16)
bf16 = DType("bf16", torch.bfloat16)
f32 = DType("f32", torch.float32)
f64 = DType("f64", torch.float64)
i1 = DType("i1", torch.bool)
i8 = DType("i8", torch.int8)
i16 = DType("i16", torch.int16)
i32 = DType("i32", torch.int32)
i64 = DType("i64", torch.int64)
_DTYPES = {str(d): d for d in (f16, bf16, f32, f64, i1, i8, i16, i32, i64)}
_TORCH_DTYPES = {d.torch: d for d in _DTYPES.values()}


def dtype_of(value):
    """A DType from a DType, its name or a torch.dtype."""
    if isinstance(value, torch.dtype):
        if value not in _TORCH_DTYPES:
            raise ValueError("torch dtype %s has no kernel dtype" % value)
        return _TORCH_DTYPES[value]
    if str(value) not in _DTYPES:
        raise ValueError("unknown dtype %r (%s)" % (value, ", ".join(_DTYPES)))
    return _DTYPES[str(value)]


# ---- symbols ------------------------------------------------------------


class _Symbols:
    """`tk.sym.M` is the symbol M (as iree-turbine's `tkl.sym.M`)."""

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return _native.symbol(name)


sym = _Symbols()


def symbols(names):
    """`M, N = tk.symbols("M N")` (names separated by spaces or commas)."""
    return tuple(_native.symbol(n) for n in names.replace(",", " ").split())


ceildiv = _native.ceildiv
floordiv = _native.floordiv
smin = _native.smin  # min of two symbolic integers
smax = _native.smax

# ---- the language (the C++ functions themselves) -------------------------

program_id = _native.program_id
masked = _native.masked
load = _native.load
store = _native.store
constant = _native.constant
iota = _native.iota
exp = _native.exp
exp2 = _native.exp2
log = _native.log
sqrt = _native.sqrt
rsqrt = _native.rsqrt
tanh = _native.tanh
abs = _native.abs
maximum = _native.maximum
minimum = _native.minimum
select = _native.select
max = _native.max
min = _native.min
sum = _native.sum
broadcast = _native.broadcast
transpose = _native.transpose
reshape = _native.reshape
to_dtype = _native.to_dtype
dot = _native.dot


def _location(depth):
    frame = sys._getframe(depth + 1)
    return "%s:%d" % (os.path.basename(frame.f_code.co_filename), frame.f_lineno)


def for_loop(start, stop, step=1, init=(), body=None, *, init_args=None):
    """for (k = start; k < stop; k += step) carrying the tiles `init`.

    As a decorator (iree-turbine's form) the name it decorates becomes the
    final values (one tile, or a tuple for several):

        @tk.for_loop(0, tk.ceildiv(K, BLOCK_K), init=[acc0])
        def acc(k, acc):
            return tk.dot(load_a(k), load_b(k), acc)

    or called with the body: `acc = tk.for_loop(0, n, 1, [acc0], body)`.
    The body returns the next value of each carried tile.
    """
    carried = list(init_args if init_args is not None else init)

    def run(fn, location):
        results = _native.for_loop(start, stop, step, carried, fn, location)
        return results[0] if len(results) == 1 else tuple(results)

    if body is not None:
        return run(body, _location(1))
    location = _location(1)
    return lambda fn: run(fn, location)


# ---- buffers and the kernel decorator -----------------------------------


class _BufferType:
    def __init__(self, kind, shape, dtype):
        self.kind, self.shape, self.dtype = kind, shape, dtype

    def __repr__(self):
        return "%sBuffer[%s, %s]" % (self.kind.capitalize(),
                                     ", ".join(str(d) for d in self.shape), self.dtype)


class _BufferKind:
    def __init__(self, kind):
        self.kind = kind

    def __getitem__(self, dims):
        dims = dims if isinstance(dims, tuple) else (dims,)
        dtype = f32
        if dims and (isinstance(dims[-1], (str, torch.dtype))):
            dtype, dims = dtype_of(dims[-1]), dims[:-1]
        if not dims:
            raise KernelError("a buffer needs at least one dim: %sBuffer[M, N, tk.f32]"
                              % self.kind.capitalize())
        return _BufferType(self.kind, dims, dtype)


InputBuffer = _BufferKind("input")
OutputBuffer = _BufferKind("output")
InOutBuffer = _BufferKind("inout")


class dynamic:
    """A symbol kept dynamic, optionally bounded (`max`) or declared a
    multiple of a tile (`multiple_of`): @tk.kernel(M, dynamic=[tk.dynamic(N,
    multiple_of=16)]). A plain symbol in `dynamic=` has no bounds."""

    def __init__(self, symbol, max=0, multiple_of=1):
        self.symbol, self.max, self.multiple_of = symbol, max, multiple_of


_HINTS = [
    ("cannot be interpreted as an integer",
     "a Python loop over a symbolic bound is not traced: use tk.for_loop"),
    ("._native.Tile", "torch functions do not take tiles: use tk.exp, tk.max, ..."),
    ("has no truth value", ""),
]


def _unsupported(name, fn, error):
    """A KernelError for a Python exception raised while tracing `fn`: it
    names the innermost line of the kernel's source file."""
    source = fn.__code__.co_filename
    where = None
    for frame, line in traceback.walk_tb(error.__traceback__):
        if frame.f_code.co_filename == source:
            where = (frame.f_code.co_filename, line)
    if where is None:
        where = (source, fn.__code__.co_firstlineno)
    text = linecache.getline(where[0], where[1]).strip()
    message = "%s: %s" % (type(error).__name__, error)
    for needle, hint in _HINTS:
        if needle in str(error) and hint:
            message += " (%s)" % hint
    return KernelError("kernel '%s': %s:%d: unsupported construct in a kernel body (`%s`): %s"
                       % (name, os.path.basename(where[0]), where[1], text, message))


class Kernel:
    """A traced kernel: print it, run it in the interpreter, launch it."""

    def __init__(self, fn, grid, name=None, dynamic=()):
        self.name = name or fn.__name__
        self._fn = fn
        params = list(inspect.signature(fn).parameters.values())
        annotations = inspect.get_annotations(fn, eval_str=True)
        buffers = []
        for p in params:
            t = annotations.get(p.name)
            if not isinstance(t, _BufferType):
                raise KernelError(
                    "kernel '%s': %s:%d: parameter '%s' needs a buffer annotation "
                    "(tk.InputBuffer[M, N, tk.f32], tk.OutputBuffer[...] or tk.InOutBuffer[...])"
                    % (self.name, os.path.basename(fn.__code__.co_filename),
                       fn.__code__.co_firstlineno, p.name))
            buffers.append((p.name, t))
        specs = [d if isinstance(d, globals()["dynamic"]) else globals()["dynamic"](d)
                 for d in dynamic]

        def body(kb):
            for d in specs:
                kb.dynamic(d.symbol, d.max, d.multiple_of)
            handles = [getattr(kb, t.kind)(n, list(t.shape), str(t.dtype)) for n, t in buffers]
            fn(*handles)

        try:
            self.graph = _native.trace(self.name, list(grid), body)
        except KernelError:
            raise
        except Exception as error:  # noqa: BLE001 - reported as a kernel error
            raise _unsupported(self.name, fn, error) from error
        self._launch = self.graph.launch
        self._interpret = self.graph.interpret

    def __call__(self, *tensors, **symbols):
        """Launches the compiled kernel on torch tensors (buffer order;
        outputs are written in place). Keyword arguments bind symbols that no
        buffer dim binds (tile sizes)."""
        self._launch(tensors, symbols)

    def launch(self, *tensors, **symbols):
        self._launch(tensors, symbols)

    def interpret(self, *tensors, **symbols):
        """Runs the reference interpreter (kernels/ Interpreter.h): every op
        in double, rounded to its dtype; out-of-bounds accesses are errors."""
        self._interpret(tensors, symbols)

    def mlir(self, *buffers, **symbols):
        """The module compiled for these buffers (tensors, or (shape, dtype)
        pairs) and symbols, as MLIR text."""
        return self.graph.emit_mlir(list(buffers), symbols)

    def specialization_key(self, *buffers, **symbols):
        return self.graph.specialization_key(list(buffers), symbols)

    def print(self):
        print(self.graph.print())

    def __str__(self):
        return self.graph.print()

    @property
    def buffers(self):
        return self.graph.buffers

    def symbols(self):
        return self.graph.symbols()


def kernel(*grid, name=None, dynamic=(), **kwargs):
    """Decorator tracing a kernel over `grid` (1 to 3 symbolic axes):
    @tk.kernel(M) or @tk.kernel(grid=(ceildiv(M, BLOCK_M), N))."""
    if "grid" in kwargs:
        if grid:
            raise TypeError("give the grid either positionally or as grid=")
        grid = kwargs.pop("grid")
        grid = grid if isinstance(grid, (tuple, list)) else (grid,)
    if kwargs:
        raise TypeError("unknown arguments: %s" % ", ".join(kwargs))
    return lambda fn: Kernel(fn, grid, name, dynamic)


def library_kernel(name):
    """A kernel of the C++ kernel library (softmax, gemm, gemm_f16,
    layernorm, attention), as its graph: for comparing with Python ones."""
    return _native.library_kernel(name)


def launch_stats():
    """Compile-cache counters (kernels/ Launch.h): memory_hits, disk_hits,
    misses (compiles), corrupt_entries, compile_ms."""
    return _native.launch_stats()


reset_launch_stats = _native.reset_launch_stats
clear_launch_cache = _native.clear_launch_cache
