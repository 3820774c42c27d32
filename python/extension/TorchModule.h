//===- TorchModule.h - torch.classes.turbine.Module -----------------------===//
//
// A loaded .tmod artifact as a TorchScript custom class: construct it with a
// path and a device ("local-sync", "local-task"), list its functions, and call
// one on torch tensors. Inputs that are contiguous CPU tensors are passed
// without a copy; results are torch tensors aliasing the runtime's buffers.
// Errors (bad artifact, wrong shapes or dtypes) raise RuntimeError in Python
// with the runtime's message.
//
// Module state (mutable globals): each instance (runtime::Instance) is a
// handle, `create_instance()` -> int; `call_in(instance, name, inputs)` runs
// a function with that instance's state, `reset(instance)` restarts it,
// `read_global(instance, name)` copies a global out. `call` runs in the
// module's default instance (created on first use), so a stateful module
// works as `m.prefill(x); m.decode(t, pos)`. `globals()` describes the
// globals. One call at a time per instance (the runtime refuses a second).
//===----------------------------------------------------------------------===//
#ifndef TURBINE_PYTHON_EXTENSION_TORCHMODULE_H
#define TURBINE_PYTHON_EXTENSION_TORCHMODULE_H

#include "turbine/runtime/Runtime.h"

#include <torch/custom_class.h>

#include <memory>
#include <mutex>
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
  /// Invokes function `name` on `inputs` (in the default instance).
  std::vector<at::Tensor> call(const std::string &name, const std::vector<at::Tensor> &inputs);
  /// "name: 1x2x8x4xf32 mutable zero" per global.
  std::vector<std::string> globals() const;
  /// A new instance (every mutable global at its initial value): its handle.
  int64_t createInstance();
  std::vector<at::Tensor> callIn(int64_t instance, const std::string &name,
                                 const std::vector<at::Tensor> &inputs);
  void reset(int64_t instance);
  at::Tensor readGlobal(int64_t instance, const std::string &name);

private:
  runtime::Instance &instance(int64_t handle);
  std::vector<std::unique_ptr<runtime::Instance>> instances_;
  std::mutex instancesMutex_;
  runtime::Function function(const std::string &name) const;

  std::string path_;
  std::shared_ptr<runtime::Module> module_;
  std::unique_ptr<runtime::Device> device_;
};

} // namespace turbine::torch_ext

#endif // TURBINE_PYTHON_EXTENSION_TORCHMODULE_H
