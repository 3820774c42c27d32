//===- Registration.cpp - The `turbine` TorchScript library ---------------===//
//
// What torch.ops.load_library("libturbine_torch.so") registers:
//   torch.classes.turbine.Module(path, device, parameter_files)
//       .functions() -> List[str]
//       .signature(name) -> str
//       .call(name, inputs: List[Tensor]) -> List[Tensor]
//===----------------------------------------------------------------------===//
#include "TorchModule.h"

#include <torch/library.h>

using turbine::torch_ext::TorchModule;

TORCH_LIBRARY(turbine, m) {
  m.class_<TorchModule>("Module")
      .def(torch::init<std::string, std::string, std::vector<std::string>>())
      .def("functions", &TorchModule::functions)
      .def("signature", &TorchModule::signature)
      .def("call", &TorchModule::call);
}
