//===- InvocationSetup.h - Shared setup of `run` and `bench` ------------===//
//
// `turbine run` and `turbine bench` both load an artifact, pick one function,
// parse `--input` values and create a local device. The option definitions
// (so both commands document them identically) and the steps that turn them
// into runtime objects live here; each command keeps its own error prefix.
//===----------------------------------------------------------------------===//
#ifndef TURBINE_TOOLS_INVOCATIONSETUP_H
#define TURBINE_TOOLS_INVOCATIONSETUP_H

#include "turbine/runtime/Runtime.h"

#include <memory>
#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace turbine::tools {

/// The options that say what to invoke and where.
struct InvocationOptions {
  std::string modulePath;
  std::string functionName;
  std::vector<std::string> inputs;
  std::vector<std::string> parameterFiles;
  std::string parameterNameMap; ///< --parameter-name-map FILE (applies to every file)
  std::string device = "local-task";
  int taskWorkers = 0;
};

/// Adds the positional `module` and --function, --input, --parameters,
/// --device and --task_workers to `command`, bound to `options`.
void addInvocationOptions(CLI::App &command, InvocationOptions &options);

/// Opens the --parameters files and loads the module with them bound.
runtime::Result<std::shared_ptr<runtime::Module>>
loadModule(const InvocationOptions &options);

/// Picks `name`, or the module's only function when `name` is empty.
runtime::Result<runtime::Function>
selectFunction(const runtime::Module &module, const std::string &name);

/// Parses every spec with runtime::parseTensorSpec. Errors name the option and
/// the spec's index: "--input 1: invalid f32 value 'abc'".
runtime::Result<std::vector<runtime::Tensor>>
parseTensorSpecs(const std::vector<std::string> &specs,
                 const std::string &optionName);

/// Creates the device named by `options`.
runtime::Result<std::unique_ptr<runtime::Device>>
createDevice(const InvocationOptions &options);

} // namespace turbine::tools

#endif // TURBINE_TOOLS_INVOCATIONSETUP_H
