//===- PythonBindings.h - The turbine_torch._native Python module ---------===//
//
// libturbine_torch.so is also a Python extension module (pybind11, Debian's
// pybind11-dev): `turbine_torch` imports it as `turbine_torch._native`. Its
// parts, one file each:
//   KernelLanguageBindings.cpp  the kernel language (Language.h) traced from
//                               Python, the interpreter, eager launch on
//                               torch tensors, launch counters
//   CustomOpBindings.cpp        Python CustomOp classes as kernels/ custom
//                               ops (select / generate call back into Python)
//   ParameterBindings.cpp       parameter archives (.irpa, safetensors)
// The torch ops and classes (torch.ops.turbine.*, torch.classes.turbine.*)
// are registered by the same library when it is loaded (Registration.cpp,
// KernelOps.cpp).
//===----------------------------------------------------------------------===//
#ifndef TURBINE_PYTHON_EXTENSION_PYTHONBINDINGS_H
#define TURBINE_PYTHON_EXTENSION_PYTHONBINDINGS_H

#include <pybind11/pybind11.h>

namespace turbine::torch_ext {

void bindKernelLanguage(pybind11::module_ &m);
void bindCustomOps(pybind11::module_ &m);
void bindParameters(pybind11::module_ &m);

} // namespace turbine::torch_ext

#endif // TURBINE_PYTHON_EXTENSION_PYTHONBINDINGS_H
