//===- InvocationSetup.cpp - Shared setup of `run` and `bench` ----------===//
//
// Option definitions, function selection, input parsing and device creation
// for the commands that invoke a function of a .tmod artifact.
//===----------------------------------------------------------------------===//
#include "InvocationSetup.h"

#include <CLI/CLI.hpp>

#include <optional>

namespace turbine::tools {

using namespace turbine::runtime;

void addInvocationOptions(CLI::App &command, InvocationOptions &options) {
  command.add_option("module", options.modulePath, "Artifact (.tmod) to load")
      ->required();
  command.add_option("--function", options.functionName,
                     "Function to invoke (default: the only one)");
  command
      .add_option("--input", options.inputs,
                  "Input value: '2x2xf32=1 2 3 4', 'f32=5', '2xi32=@raw.bin', "
                  "'@x.npy', or strings '2xstring=\"a b\" c' (repeat in argument order)")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  command
      .add_option("--parameters", options.parameterFiles,
                  "Parameter file (.irpa, .safetensors or .gguf; F32/F16/BF16 GGUF tensors) "
                  "holding the artifact's external parameters (repeatable; first match wins)")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  command.add_option("--parameter-name-map", options.parameterNameMap,
                     "File of 'FILE_NAME = MODULE_NAME' lines renaming the --parameters "
                     "files' tensors (one '*' per side matches any run: "
                     "'blk.*.attn_q.weight = layers.*.attention.wq.weight')");
  command.add_option("--device", options.device,
                     "local-sync, local-task, or cuda / cuda:N (NVIDIA GPU N; runs "
                     "artifacts compiled with --target=cuda)")
      ->capture_default_str();
  command
      .add_option("--task_workers", options.taskWorkers,
                  "local-task threads incl. the caller (0: all cores)")
      ->capture_default_str();
}

Result<std::shared_ptr<Module>> loadModule(const InvocationOptions &options) {
  std::optional<ParameterNameMap> names;
  if (!options.parameterNameMap.empty()) {
    auto loaded = ParameterNameMap::load(options.parameterNameMap);
    if (!loaded)
      return Status::error("--parameter-name-map: " + loaded.message());
    names = std::move(*loaded);
  }
  std::vector<ParameterIndex> files;
  for (const std::string &path : options.parameterFiles) {
    Result<ParameterIndex> file = ParameterIndex::open(path);
    if (!file)
      return Status::error("--parameters: " + file.message());
    if (names) {
      file = file->renamed(*names);
      if (!file)
        return Status::error("--parameter-name-map: " + file.message());
    }
    files.push_back(std::move(*file));
  }
  return Module::load(options.modulePath, files);
}

Result<Function> selectFunction(const Module &module, const std::string &name) {
  if (!name.empty())
    return module.lookupFunction(name);
  const std::vector<Function> &functions = module.functions();
  if (functions.size() == 1)
    return functions.front();
  if (functions.empty())
    return Status::error("'" + module.label() + "' has no functions");
  std::string names;
  for (const Function &f : functions)
    names += (names.empty() ? "'" : ", '") + f.name() + "'";
  return Status::error("'" + module.label() + "' has " +
                       std::to_string(functions.size()) +
                       " functions; choose one with --function (" + names + ")");
}

Result<std::vector<Tensor>> parseTensorSpecs(const std::vector<std::string> &specs,
                                             const std::string &optionName) {
  std::vector<Tensor> tensors;
  tensors.reserve(specs.size());
  for (size_t i = 0; i < specs.size(); ++i) {
    Result<Tensor> tensor = parseTensorSpec(specs[i]);
    if (!tensor)
      return Status::error(optionName + " " + std::to_string(i) + ": " +
                           tensor.message());
    tensors.push_back(std::move(*tensor));
  }
  return tensors;
}

Result<std::unique_ptr<Device>> createDevice(const InvocationOptions &options) {
  DeviceOptions deviceOptions;
  deviceOptions.taskWorkers = options.taskWorkers;
  return Device::create(options.device, deviceOptions);
}

} // namespace turbine::tools
