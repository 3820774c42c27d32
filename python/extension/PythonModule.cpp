//===- PythonModule.cpp - PyInit of turbine_torch._native -----------------===//
//
// The module's entry point; the parts are in PythonBindings.h. Python loads
// libturbine_torch.so under the name `turbine_torch._native` (an
// ExtensionFileLoader on the library's path, see turbine_torch/runtime.py),
// which also registers the torch ops and classes of the library.
//===----------------------------------------------------------------------===//
#include "PythonBindings.h"

PYBIND11_MODULE(_native, m) {
  m.doc() = "Turbine's native module: the kernel language, custom ops, parameter archives";
  turbine::torch_ext::bindKernelLanguage(m);
  turbine::torch_ext::bindCustomOps(m);
  turbine::torch_ext::bindParameters(m);
}
