# ===- aot.py - iree-turbine's CompiledModule: programs with state ------=== #
#
# A program of several procedures over module globals, declared the way
# iree-turbine's `aot.CompiledModule` declares one:
#
#   from turbine_torch import aot
#
#   class LlamaProgram(aot.CompiledModule):
#       model = aot.export_parameters(llama)       # weights: immutable globals
#       seen = aot.export_global(torch.zeros(1, 64), mutable=True)
#
#       def prefill(self, tokens=aot.AbstractTensor(1, None, dtype=torch.int64)):
#           return self.model.prefill(tokens)      # writes llama's KV-cache buffers
#
#       def decode(self, token=aot.AbstractTensor(1, 1, dtype=torch.int64),
#                  pos=aot.AbstractIndex):
#           self.seen[:, pos:pos + 1] = 1.0
#           return self.model.decode(token, pos)
#
#   exported = aot.export(LlamaProgram)            # an ExportedProgram
#   exported.print_readable()
#   m = exported.compile(save_to="llama.tmod", externalize_params="llama.irpa")
#   m.prefill(tokens); m.decode(token, torch.tensor(5)); m.globals()
#   seq = m.create_instance()                      # independent state
#
# Each procedure (a method whose every argument has an abstract default) is
# an entry point of the artifact; AbstractTensor dims given as None are
# dynamic. Globals: the exported module's parameters and buffers are named
# "<attribute>.<state_dict key>" ("model.layers.0.attention.k_cache"), an
# export_global by its attribute; those a procedure writes (slice
# assignment or copy_) become mutable globals of each instance, initial
# value the tensor's (a zero tensor is zero-filled, not stored); the rest
# are constants. Writing an export_global(mutable=False) is an error at
# compile().
#
# torch 1.13 has no torch.export or dynamo: the procedures are compiled by
# TorchScript (torch.jit.script), so their bodies are TorchScript code, and
# the exported modules must be scriptable. The abstract defaults are turned
# into the annotations TorchScript reads (Tensor, int) on a copy of each
# procedure's source.
# ===---------------------------------------------------------------------=== #
import ast
import inspect
import io
import linecache
import textwrap

import torch

from .exporter import ExportedProgram, dtype_name


class AbstractTensor:
    """A tensor argument of a procedure: dims (None = dynamic) and dtype."""

    def __init__(self, *dims, dtype=torch.float32):
        for d in dims:
            if d is not None and (not isinstance(d, int) or d < 0):
                raise ValueError("AbstractTensor dims are ints >= 0 or None, got %r" % (d,))
        self.dims = tuple(dims)
        self.dtype = dtype
        dtype_name(dtype)  # refuses a dtype Turbine does not support

    def spec(self):
        """The IREE-style shape text, a dynamic dim as its example size 2."""
        return "x".join([str(2 if d is None else d) for d in self.dims] + [dtype_name(self.dtype)])

    def dynamic_dims(self):
        return [i for i, d in enumerate(self.dims) if d is None]

    def __repr__(self):
        return "AbstractTensor(%s, dtype=%s)" % (", ".join(map(str, self.dims)), self.dtype)


class _AbstractIndex:
    """An integer argument of a procedure (a position, a length): a 64-bit
    int; call with a Python int or a 0-d int64 tensor."""

    def spec(self):
        return "i64"

    def dynamic_dims(self):
        return []

    def __repr__(self):
        return "AbstractIndex"


AbstractIndex = _AbstractIndex()
AbstractI64 = AbstractIndex


class export_parameters:
    """The parameters and buffers of `module` (an nn.Module, scriptable) as
    globals of the program; the procedures call it and its methods through
    the class attribute it is assigned to. With external=True, the weights
    go to the parameter file given to compile(externalize_params=...)."""

    def __init__(self, module, external=False):
        if not isinstance(module, torch.nn.Module):
            raise TypeError("export_parameters takes an nn.Module, not %s" % type(module).__name__)
        self.module = module
        self.external = external


class export_global:
    """One tensor as a global of the program: mutable=True lets procedures
    write it (each instance holds its own copy, starting at this value)."""

    def __init__(self, value, mutable=False):
        if not isinstance(value, torch.Tensor):
            raise TypeError("export_global takes a tensor, not %s" % type(value).__name__)
        self.value = value
        self.mutable = mutable


class CompiledModule:
    """Base of a program declaration (see the file comment). The class is
    never instantiated: aot.export(cls) compiles what it declares."""

    def __init__(self, *args, **kwargs):
        raise TypeError("%s is a program declaration: pass the class to turbine_torch.aot.export"
                        % type(self).__name__)


def _is_abstract(value):
    return isinstance(value, (AbstractTensor, _AbstractIndex))


def _procedures(cls):
    """{name: (function, [abstract argument])} of the declared procedures."""
    out = {}
    for klass in reversed(cls.__mro__):
        if klass in (CompiledModule, object):
            continue
        for name, fn in vars(klass).items():
            if not inspect.isfunction(fn) or name.startswith("_"):
                continue
            params = list(inspect.signature(fn).parameters.values())[1:]
            defaults = [p.default for p in params]
            if not all(_is_abstract(d) for d in defaults):
                missing = [p.name for p in params if not _is_abstract(p.default)]
                raise TypeError("procedure %s.%s: argument(s) %s need an abstract default "
                                "(aot.AbstractTensor(...) or aot.AbstractIndex)"
                                % (cls.__name__, name, ", ".join(missing)))
            out[name] = (fn, defaults)
    if not out:
        raise TypeError("%s declares no procedure (a method whose arguments have abstract "
                        "defaults)" % cls.__name__)
    return out


def _scriptable_copy(fn, abstract, filename):
    """`fn` recompiled from its source with TorchScript annotations in place
    of the abstract defaults, its closure's values turned into globals."""
    tree = ast.parse(textwrap.dedent(inspect.getsource(fn)))
    definition = tree.body[0]
    definition.decorator_list = []
    for arg, value in zip(definition.args.args[1:], abstract):
        arg.annotation = ast.Name(id="int" if isinstance(value, _AbstractIndex) else "Tensor",
                                  ctx=ast.Load())
    definition.args.defaults = []
    source = ast.unparse(tree) + "\n"
    # inspect.getsource (which TorchScript uses) finds the copy's source here.
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    namespace = dict(fn.__globals__)
    for name, cell in zip(fn.__code__.co_freevars, fn.__closure__ or ()):
        namespace[name] = cell.cell_contents
    namespace["Tensor"] = torch.Tensor
    exec(compile(source, filename, "exec"), namespace)
    return namespace[fn.__name__]


def export(cls):
    """Compiles the declaration `cls` (a CompiledModule subclass) to an
    ExportedProgram: its procedures scripted as methods of one module that
    holds the exported parameters and globals."""
    if not (isinstance(cls, type) and issubclass(cls, CompiledModule)):
        raise TypeError("aot.export takes a subclass of turbine_torch.aot.CompiledModule")
    procedures = _procedures(cls)
    members = {}
    for klass in reversed(cls.__mro__):
        for name, value in vars(klass).items():
            if isinstance(value, (export_parameters, export_global)):
                members[name] = value

    program_class = type(cls.__name__, (torch.nn.Module,), {})
    for name, (fn, abstract) in procedures.items():
        filename = "<turbine_torch.aot %s.%s>" % (cls.__name__, name)
        setattr(program_class, name, torch.jit.export(_scriptable_copy(fn, abstract, filename)))
    program = program_class()
    external = []
    for name, member in members.items():
        if isinstance(member, export_parameters):
            setattr(program, name, member.module.eval())
            if member.external:
                external.append(name)  # everything derived from "name." moves
        else:
            program.register_buffer(name, member.value.detach().clone())
    scripted = torch.jit.script(program)
    buffer = io.BytesIO()
    torch.jit.save(scripted, buffer)

    function_shapes, dynamic_dims = [], []
    for name, (_, abstract) in procedures.items():
        function_shapes.append("%s:%s" % (name, ",".join(a.spec() for a in abstract)))
        for index, argument in enumerate(abstract):
            dynamic_dims += ["%s:%d:%d" % (name, index, d) for d in argument.dynamic_dims()]
    immutable = [name for name, m in members.items()
                 if isinstance(m, export_global) and not m.mutable]
    return ExportedProgram(buffer.getvalue(), [], dynamic_dims,
                           dict(program.state_dict(keep_vars=True)),
                           function_shapes=function_shapes, externalize=external,
                           immutable_globals=immutable)
