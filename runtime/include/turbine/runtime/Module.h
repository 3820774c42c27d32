//===- Module.h - A loaded .tmod artifact ---------------------------------===//
//
// Loading validates the artifact, maps its kernel library into the process
// (from memory, via memfd + dlopen, so nothing is written to disk), resolves
// every kernel symbol, copies embedded parameters into aligned, read-only
// storage and binds external parameters by name to the parameter files given
// (.irpa / .safetensors, memory-mapped; see ParameterArchive.h).
//===----------------------------------------------------------------------===//
#ifndef TURBINE_RUNTIME_MODULE_H
#define TURBINE_RUNTIME_MODULE_H

#include "turbine/artifact/KernelABI.h"
#include "turbine/runtime/Function.h"
#include "turbine/runtime/ParameterArchive.h"
#include "turbine/runtime/Status.h"

#include <memory>
#include <string>
#include <vector>

namespace turbine::runtime {

/// A loaded artifact and its entry functions.
class Module {
public:
  /// Loads a .tmod file. External parameters are looked up by name in
  /// `parameterFiles`, first match wins; each must be found with the type
  /// the artifact expects.
  static Result<std::shared_ptr<Module>>
  load(const std::string &path, const std::vector<ParameterIndex> &parameterFiles = {});
  /// Loads an artifact from bytes; `label` names it in error messages.
  static Result<std::shared_ptr<Module>>
  loadFromBytes(const std::string &bytes, const std::string &label = "<memory>",
                const std::vector<ParameterIndex> &parameterFiles = {});

  /// Where the module came from (path or label).
  const std::string &label() const;
  const std::vector<Function> &functions() const { return functions_; }
  /// The function named `name`, or an error listing the available ones.
  Result<Function> lookupFunction(const std::string &name) const;
  /// The entry point of the kernel named `name` (kernel ABI, KernelABI.h),
  /// for callers that dispatch it themselves with Device::dispatch (the
  /// eager launch of Turbine Kernels); valid while this module lives.
  Result<turbine_kernel_fn_t> lookupKernel(const std::string &name) const;

private:
  explicit Module(std::shared_ptr<const detail::LoadedModule> state);
  /// Maps kernels and parameters of a deserialized artifact.
  static Result<std::shared_ptr<Module>>
  finishLoading(std::shared_ptr<detail::LoadedModule> state,
                const std::vector<ParameterIndex> &parameterFiles);
  std::shared_ptr<const detail::LoadedModule> state_;
  std::vector<Function> functions_;
};

} // namespace turbine::runtime

#endif // TURBINE_RUNTIME_MODULE_H
