# ===- runtime.py - the native library; .tmod artifacts on torch tensors --=== #
#
# libturbine_torch.so is both a TorchScript extension library (torch.ops /
# torch.classes.turbine) and the Python extension module
# turbine_torch._native. It is found, in order, at $TURBINE_TORCH_LIBRARY,
# inside this package (an installed copy: `cmake --install`), or in the
# source tree's build/lib (a developer checkout).
# ===---------------------------------------------------------------------=== #
import importlib.machinery
import importlib.util
import os
import sys

import torch

_LIBRARY_NAME = "libturbine_torch.so"
_native = []


def _candidates():
    explicit = os.environ.get("TURBINE_TORCH_LIBRARY")
    if explicit:
        return [explicit]
    here = os.path.dirname(os.path.abspath(__file__))
    return [os.path.join(here, _LIBRARY_NAME),
            os.path.normpath(os.path.join(here, "..", "..", "build", "lib", _LIBRARY_NAME))]


def library_path():
    """libturbine_torch.so: $TURBINE_TORCH_LIBRARY, else the copy inside this
    package, else the source tree's build/lib."""
    candidates = _candidates()
    for path in candidates:
        if os.path.exists(path):
            return path
    return candidates[0]


def native():
    """The extension module turbine_torch._native (loaded once; loading it
    also registers torch.ops.turbine.* and torch.classes.turbine.*)."""
    if not _native:
        path = library_path()
        if not os.path.exists(path):
            raise RuntimeError(
                "turbine_torch: %s not found (build it with `make build`, install with "
                "`cmake --install build --prefix P`, or set TURBINE_TORCH_LIBRARY)" % path)
        name = __package__ + "._native"
        loader = importlib.machinery.ExtensionFileLoader(name, path)
        spec = importlib.util.spec_from_file_location(name, path, loader=loader)
        module = importlib.util.module_from_spec(spec)
        loader.exec_module(module)
        sys.modules[name] = module
        _native.append(module)
    return _native[0]


def as_tensors(inputs):
    """Call arguments as tensors: a Python int (an index argument, e.g. a
    decode position) becomes a 0-d int64 tensor, a float a 0-d f32 one."""
    out = []
    for value in inputs:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            out.append(value)
        else:
            out.append(torch.tensor(value, dtype=torch.int64 if isinstance(value, int)
                                    else torch.float32))
    return out


def load_library():
    """Loads the native library once (the torch ops and classes)."""
    native()


class CompiledModule:
    """A loaded artifact; call it like the module it was compiled from.

    Module state (a stateful module's mutable globals, e.g. a KV cache) lives
    in instances (instances.py): calls on the CompiledModule itself use its
    default instance (`m.prefill(x); m.decode(t, pos)`); `create_instance()`
    gives independent ones (one per sequence; usable from several threads,
    one call at a time each); `globals()` describes the globals."""

    def __init__(self, path, device="local-task", parameters=(), parameter_name_map=None):
        load_library()
        self._module = torch.classes.turbine.Module(
            os.fspath(path), device, [os.fspath(p) for p in parameters],
            os.fspath(parameter_name_map) if parameter_name_map else "")

    def functions(self):
        return list(self._module.functions())

    def globals(self):
        """[GlobalInfo(name, type, mutable, initial)] of the module's globals."""
        from .instances import parse_globals
        return parse_globals(self._module.globals())

    def create_instance(self):
        """A new Instance: every mutable global at its initial value."""
        from .instances import Instance
        return Instance(self, self._module.create_instance())

    def reset(self):
        """Puts the default instance's globals back to their initial values."""
        self._module.reset(0)

    def read_global(self, name):
        """A copy of mutable global `name` of the default instance."""
        return self._module.read_global(0, name)

    def signature(self, function=None):
        return self._module.signature(self._function_name(function))

    def call(self, function, *inputs):
        results = self._module.call(function, as_tensors(inputs))
        return results[0] if len(results) == 1 else tuple(results)

    def __call__(self, *inputs):
        return self.call(self._function_name(None), *inputs)

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)
        if name not in self.functions():
            raise AttributeError("artifact has no function '%s' (functions: %s)"
                                 % (name, ", ".join(self.functions())))
        return lambda *inputs: self.call(name, *inputs)

    def _function_name(self, function):
        if function is not None:
            return function
        names = self.functions()
        if len(names) != 1:
            raise RuntimeError("artifact has %d functions (%s); name one"
                               % (len(names), ", ".join(names)))
        return names[0]


def load(path, device="local-task", parameters=(), parameter_name_map=None):
    """Loads a .tmod artifact; `parameters` lists .irpa/.safetensors/.gguf files
    for its external parameters; `parameter_name_map` is an optional file of
    'FILE_NAME = MODULE_NAME' lines renaming their tensors (see
    runtime/include/turbine/runtime/ParameterArchive.h)."""
    return CompiledModule(path, device, parameters, parameter_name_map)
