# ===- turbine_torch - Turbine for PyTorch users ----------------------------=== #
#
# Runs compiled Turbine artifacts (.tmod) on torch tensors through the
# TorchScript extension library libturbine_torch.so:
#
#   import turbine_torch
#   m = turbine_torch.load("mlp.tmod", device="local-task")
#   y = m(torch.randn(3, 256))          # the artifact's only function
#   y = m.main(x)                        # or by name
#
# Contiguous CPU inputs are passed without a copy; results are torch tensors
# over the runtime's buffers. And, like iree-turbine's aot.export:
#
#   exported = turbine_torch.export(model, x, dynamic_dims={0: 0})
#   exported.print_readable(); m = exported.compile(save_to="m.tmod"); m(x)
# ===---------------------------------------------------------------------=== #
from .exporter import ExportedProgram, export
from .parameters import stored_tensor, stored_tensors
from .runtime import CompiledModule, library_path, load, load_library

__all__ = ["CompiledModule", "ExportedProgram", "export", "library_path", "load",
           "load_library", "stored_tensor", "stored_tensors"]
