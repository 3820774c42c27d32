//===- TorchModule.h - torch.classes.turbine.Module -----------------------===//
//
// A loaded .tmod artifact as a TorchScript custom class: construct it with a
// path and a device ("local-sync", "local-task"), list its functions, and call
// one on torch tensors. Inputs that are contiguous CPU tensors are passed
// without a copy; results are torch tensors aliasing the runtime's buffers.
// Errors (bad artifact, wrong shapes or dtypes) raise RuntimeError in Python
// with the runtime's message.
//===----------------------------------------------------------------------===//
#ifndef TURBINE_PYTHON_EXTENSION_TORCHMODULE_H
#define TURBINE_PYTHON_EXTENSION_TORCHMODULE_H

#include "turbine/runtime/Runtime.h"

#include <torch/custom_class.h>

#include <memory>
#include <string>
#include <vector>

namespace turbine::torch_ext {

class TorchModule : public torch::CustomClassHolder {
public:
  /// `parameterNameMap`: "" or a ParameterNameMap file applied to every
  /// parameter file.
  TorchModule(const std::string &path, const std::string &device,
              const std::vector<std::string> &parameterFiles,
              const std::string &parameterNameMap);

  /// Names of the artifact's functions.
  std::vector<std::string> functions() const;
  /// "(input: ?x256xf32) -> (output: ?x10xf32)" for function `name`.
  std::string signature(const std::string &name) const;
  /// Invokes function `name` on `inputs`.
  std::vector<at::Tensor> call(const std::string &name, const std::vector<at::Tensor> &inputs);

private:
  runtime::Function function(const std::string &name) const;

  std::string path_;
  std::shared_ptr<runtime::Module> module_;
  std::unique_ptr<runtime::Device> device_;
};

} // namespace turbine::torch_ext

#endif // TURBINE_PYTHON_EXTENSION_TORCHMODULE_H
