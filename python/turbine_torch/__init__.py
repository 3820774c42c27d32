# ===- turbine_torch - Turbine for PyTorch users ----------------------------=== #
#
#   import turbine_torch
#   import turbine_torch.kernel as tk         # kernels written in Python
#
#   @tk.kernel(M)                             # trace, print, interpret, launch
#   def softmax(x: tk.InputBuffer[M, N], y: tk.OutputBuffer[M, N]): ...
#
#   class my_op(turbine_torch.CustomOp): ... # torch ops with a Turbine kernel,
#                                             # eager and inside exported models
#   exported = turbine_torch.export(model, x, dynamic_dims={0: 0})
#   exported.print_readable(); m = exported.compile(save_to="m.tmod"); m(x)
#   m = turbine_torch.load("mlp.tmod", device="local-task")
#   from turbine_torch import aot              # stateful programs (prefill/decode
#   class P(aot.CompiledModule): ...           # over globals), as in iree-turbine
#
#   turbine_torch.save_module_parameters("w.irpa", model)
#   archive = turbine_torch.ParameterArchive("w.irpa")
#
# The native library (libturbine_torch.so, also the extension module
# turbine_torch._native) is loaded on first use; `kernel`, the custom-op
# and the parameter API load it when imported.
# ===---------------------------------------------------------------------=== #
import importlib

from .exporter import ExportedProgram, export
from .parameters import stored_tensor, stored_tensors
from .runtime import CompiledModule, library_path, load, load_library, native

_LAZY = {
    "aot": ("aot", None),
    "kernel": ("kernel", None),
    "CustomOp": ("custom_op", "CustomOp"),
    "KernelSelection": ("custom_op", "KernelSelection"),
    "register_custom_op": ("custom_op", "register_custom_op"),
    "ParameterArchive": ("params", "ParameterArchive"),
    "ParameterArchiveBuilder": ("params", "ParameterArchiveBuilder"),
    "ParameterEntry": ("params", "ParameterEntry"),
    "save_module_parameters": ("params", "save_module_parameters"),
}


def __getattr__(name):
    if name not in _LAZY:
        raise AttributeError("module 'turbine_torch' has no attribute '%s'" % name)
    module_name, attribute = _LAZY[name]
    module = importlib.import_module("." + module_name, __name__)
    return module if attribute is None else getattr(module, attribute)


__all__ = ["CompiledModule", "aot", "CustomOp", "ExportedProgram", "KernelSelection",
           "ParameterArchive", "ParameterArchiveBuilder", "ParameterEntry", "export",
           "kernel", "library_path", "load", "load_library", "native",
           "register_custom_op", "save_module_parameters", "stored_tensor", "stored_tensors"]
