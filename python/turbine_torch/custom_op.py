# ===- custom_op.py - Custom ops defined in Python ------------------------=== #
#
# iree-turbine's CustomOp: a torch operator defined by a Python class with a
# `signature` (a torch schema), a `select` step (check the arguments, choose
# the result shapes and dtypes and the symbols the kernel is specialized on)
# and a `generate` step (the kernel for that selection):
#
#   @turbine_torch.CustomOp.register(library="my_ops")
#   class row_softmax(turbine_torch.CustomOp):
#       signature = "row_softmax(Tensor x) -> Tensor"
#       def select(self, ksel):
#           x = ksel.arg(0).require(rank=2, dtype=tk.f32)
#           ksel.return_tensor(x.shape, tk.f32)
#           ksel.specialize(BLOCK_N=next_power_of_two(x.shape[1]))
#       def generate(self, ksel):
#           return softmax_kernel          # a @tk.kernel (args, then results)
#
#   y = torch.ops.my_ops.row_softmax(x)    # eager: compiled on first call
#
# The op is registered with the PyTorch dispatcher (torch.library, CPU) and
# with Turbine's custom-op registry (kernels/ CustomOp.h) under
# "my_ops.row_softmax", so a model calling it and exported with
# turbine_torch.export compiles each call into the kernel's own dispatch (the
# TorchScript importer types the call with `select`). No C++ change is
# needed for a new op.
#
# Three kinds of body, by the method the class defines:
#   generate(ksel)             -> a kernel traced with turbine_torch.kernel
#   generate_mlir(ksel)        -> (text, grid): one hand-written kernel
#                                 function in the kernel ABI at the vector
#                                 level (kernels/ CustomOp.h MLIRKernelBody)
#   generate_tensor_mlir(ksel) -> the text of one func.func on tensors in
#                                 upstream dialects (linalg, tensor, arith,
#                                 math, tosa): inlined at each call in a
#                                 model, so the compiler fuses it with its
#                                 neighbours; compiled on its own eagerly.
# Number arguments of the schema (float, int, bool) are the op's attributes:
# ksel.attr("eps"). Errors raised in select (ValueError) become the op's
# error: "custom op 'my_ops.row_softmax': argument 'x': expected rank 2, got 3".
# ===---------------------------------------------------------------------=== #
import torch

from . import kernel as tk
from .runtime import native

_libraries = {}
_registered = {}


class TensorArg:
    """An argument (or result) of a selection: shape and dtype."""

    def __init__(self, name, shape, dtype):
        self.name = name
        self.shape = tuple(shape)
        self.dtype = tk.dtype_of(dtype)

    @property
    def rank(self):
        return len(self.shape)

    def require(self, rank=None, dtype=None):
        """Checks rank and dtype (one dtype or a list); raises ValueError
        naming the argument. Returns self."""
        if rank is not None and self.rank != rank:
            raise ValueError("argument '%s': expected rank %d, got %d (shape %s)"
                             % (self.name, rank, self.rank, list(self.shape)))
        if dtype is not None:
            allowed = [tk.dtype_of(d) for d in (dtype if isinstance(dtype, (list, tuple)) else [dtype])]
            if self.dtype not in allowed:
                raise ValueError("argument '%s': expected dtype %s, got %s"
                                 % (self.name, " or ".join(allowed), self.dtype))
        return self

    def __repr__(self):
        return "TensorArg(%s: %s%s)" % (self.name, self.dtype, list(self.shape))


class KernelSelection:
    """What select decides for one call, and what generate reads."""

    def __init__(self, op, args, attributes, results=(), symbols=None):
        names = op._tensor_names
        self.op = op
        self.args = [TensorArg(names[i] if i < len(names) else "#%d" % i, s, d)
                     for i, (s, d) in enumerate(args)]
        self.attributes = dict(attributes)
        self.results = [TensorArg("result %d" % i, s, d) for i, (s, d) in enumerate(results)]
        self.symbols = dict(symbols or {})

    def arg(self, index):
        if index >= len(self.args):
            raise ValueError("expects at least %d tensor arguments, got %d"
                             % (index + 1, len(self.args)))
        return self.args[index]

    def attr(self, name, default=None):
        """A number argument of the call (its schema default if not given)."""
        return self.attributes.get(name, default)

    def return_tensor(self, shape, dtype):
        self.results.append(TensorArg("result %d" % len(self.results), shape, dtype))
        return self.results[-1]

    def specialize(self, **symbols):
        """Symbol values the kernel is specialized on (tile sizes, ...)."""
        for name, value in symbols.items():
            self.symbols[name] = int(value)


class CustomOp:
    """Base class of Python-defined custom ops (see the module comment)."""

    signature = None

    def select(self, ksel):
        raise NotImplementedError("%s.select" % type(self).__name__)

    @classmethod
    def register(cls_or_none=None, *, library):
        """Class decorator: @CustomOp.register(library="my_ops")."""

        def wrap(cls):
            register_custom_op(cls, library)
            return cls

        return wrap

    # -- called by the native registry ------------------------------------

    def _select(self, args, attributes):
        attrs = dict(self._defaults)
        attrs.update(attributes)
        ksel = KernelSelection(self, args, attrs)
        self.select(ksel)
        if not ksel.results:
            raise ValueError("select chose no results (call ksel.return_tensor)")
        return ([(list(r.shape), str(r.dtype)) for r in ksel.results], ksel.symbols)

    def _generate(self, args, attributes, results, symbols):
        ksel = KernelSelection(self, args, attributes, results, symbols)
        if self._body == "kernel":
            kernel = self.generate(ksel)
            if isinstance(kernel, tk.Kernel):
                return kernel.graph
            return kernel
        if self._body == "mlir_kernel":
            text, grid = self.generate_mlir(ksel)
            return (text, list(grid))
        return self.generate_tensor_mlir(ksel)

    def _call(self, *args):
        schema = self._schema.arguments
        tensors, attributes = [], {}
        for i, a in enumerate(schema):
            value = args[i] if i < len(args) else a.default_value
            if isinstance(value, torch.Tensor):
                tensors.append(value)
            elif isinstance(value, (bool, int, float)):
                attributes[a.name] = float(value)
            else:
                raise TypeError("%s: argument '%s' must be a tensor or a number"
                                % (self.qualified_name, a.name))
        results = native().call_custom_op(self.qualified_name, tensors, attributes)
        return results[0] if len(results) == 1 else tuple(results)


def _body_kind(cls):
    kinds = [k for k, method in (("kernel", "generate"), ("mlir_kernel", "generate_mlir"),
                                 ("tensor", "generate_tensor_mlir"))
             if callable(getattr(cls, method, None))]
    if len(kinds) != 1:
        raise TypeError("custom op %s must define exactly one of generate, generate_mlir, "
                        "generate_tensor_mlir" % cls.__name__)
    return kinds[0]


def register_custom_op(cls, library):
    """Registers CustomOp subclass `cls` as torch.ops.<library>.<name> and as
    Turbine's custom op "<library>.<name>"; returns the op instance."""
    if not isinstance(cls.signature, str) or "(" not in cls.signature:
        raise TypeError("custom op %s needs a signature: \"name(Tensor x) -> Tensor\""
                        % cls.__name__)
    if library == "turbine":
        raise ValueError("the 'turbine' namespace holds Turbine's own ops; pick another library")
    op = cls()
    name = cls.signature.split("(", 1)[0].strip()
    op.name = name
    op.library = library
    op.qualified_name = "%s.%s" % (library, name)
    op._schema = torch._C.parse_schema("%s::%s" % (library, cls.signature.strip()))
    op._tensor_names = [a.name for a in op._schema.arguments if str(a.type) == "Tensor"]
    op._defaults = {a.name: float(a.default_value) for a in op._schema.arguments
                    if a.default_value is not None and isinstance(a.default_value, (bool, int, float))}
    op._body = _body_kind(cls)
    if op.qualified_name in _registered:
        raise ValueError("custom op '%s' is already registered (by %s)"
                         % (op.qualified_name, type(_registered[op.qualified_name]).__name__))
    native().register_custom_op(op.qualified_name, op._body, op._select, op._generate)
    if library not in _libraries:
        _libraries[library] = torch.library.Library(library, "DEF")
    lib = _libraries[library]
    lib.define(cls.signature)
    lib.impl(name, op._call, "CPU")
    _registered[op.qualified_name] = op
    cls.op = op
    return op


def next_power_of_two(n):
    p = 1
    while p < n:
        p *= 2
    return p
