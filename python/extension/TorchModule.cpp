//===- TorchModule.cpp - torch.classes.turbine.Module ---------------------===//
#include "TorchModule.h"

#include "TensorInterop.h"

#include <c10/util/Exception.h>

#include <optional>

namespace turbine::torch_ext {

TorchModule::TorchModule(const std::string &path, const std::string &device,
                         const std::vector<std::string> &parameterFiles,
                         const std::string &parameterNameMap)
    : path_(path) {
  std::optional<runtime::ParameterNameMap> names;
  if (!parameterNameMap.empty()) {
    auto loaded = runtime::ParameterNameMap::load(parameterNameMap);
    TORCH_CHECK(loaded.ok(), "turbine: ", loaded.message());
    names = std::move(*loaded);
  }
  std::vector<runtime::ParameterIndex> parameters;
  for (const std::string &file : parameterFiles) {
    auto index = runtime::ParameterIndex::open(file);
    TORCH_CHECK(index.ok(), "turbine: ", index.message());
    if (names) {
      index = index->renamed(*names);
      TORCH_CHECK(index.ok(), "turbine: ", index.message());
    }
    parameters.push_back(std::move(*index));
  }
  auto module = runtime::Module::load(path, parameters);
  TORCH_CHECK(module.ok(), "turbine: ", module.message());
  module_ = std::move(*module);
  auto created = runtime::Device::create(device);
  TORCH_CHECK(created.ok(), "turbine: ", created.message());
  device_ = std::move(*created);
}

std::vector<std::string> TorchModule::functions() const {
  std::vector<std::string> names;
  for (const runtime::Function &f : module_->functions())
    names.push_back(f.name());
  return names;
}

runtime::Function TorchModule::function(const std::string &name) const {
  auto function = module_->lookupFunction(name);
  TORCH_CHECK(function.ok(), "turbine: ", function.message());
  return *function;
}

std::string TorchModule::signature(const std::string &name) const {
  return function(name).signatureString();
}

std::vector<at::Tensor> TorchModule::call(const std::string &name,
                                          const std::vector<at::Tensor> &inputs) {
  {
    std::lock_guard<std::mutex> lock(instancesMutex_);
    if (instances_.empty()) {
      auto created = module_->createInstance();
      TORCH_CHECK(created.ok(), "turbine: ", created.message());
      instances_.push_back(std::move(*created));
    }
  }
  return callIn(0, name, inputs);
}

std::vector<std::string> TorchModule::globals() const {
  std::vector<std::string> out;
  for (const runtime::GlobalSignature &g : module_->globals())
    out.push_back(g.name + ": " + g.typeString() +
                  (g.isMutable ? " mutable " + g.initialValue : std::string(" parameter")));
  return out;
}

int64_t TorchModule::createInstance() {
  auto created = module_->createInstance();
  TORCH_CHECK(created.ok(), "turbine: ", created.message());
  std::lock_guard<std::mutex> lock(instancesMutex_);
  if (instances_.empty()) // handle 0 is the default instance
    instances_.push_back(nullptr);
  instances_.push_back(std::move(*created));
  return static_cast<int64_t>(instances_.size()) - 1;
}

runtime::Instance &TorchModule::instance(int64_t handle) {
  std::lock_guard<std::mutex> lock(instancesMutex_);
  if (handle == 0 && (instances_.empty() || !instances_[0])) {
    auto created = module_->createInstance();
    TORCH_CHECK(created.ok(), "turbine: ", created.message());
    if (instances_.empty())
      instances_.push_back(nullptr);
    instances_[0] = std::move(*created);
  }
  TORCH_CHECK(handle >= 0 && handle < static_cast<int64_t>(instances_.size()) &&
                  instances_[static_cast<size_t>(handle)],
              "turbine: no instance ", handle);
  return *instances_[static_cast<size_t>(handle)];
}

void TorchModule::reset(int64_t handle) {
  runtime::Status s = instance(handle).reset();
  TORCH_CHECK(s.ok(), "turbine: ", s.message());
}

at::Tensor TorchModule::readGlobal(int64_t handle, const std::string &name) {
  auto value = instance(handle).readGlobal(name);
  TORCH_CHECK(value.ok(), "turbine: ", value.message());
  return toTorchTensor(*value, "turbine: global " + name);
}

std::vector<at::Tensor> TorchModule::callIn(int64_t handle, const std::string &name,
                                            const std::vector<at::Tensor> &inputs) {
  runtime::Instance &state = instance(handle);
  runtime::Function fn = function(name);
  std::vector<runtime::Tensor> args;
  args.reserve(inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i)
    args.push_back(toRuntimeTensor(inputs[i], "turbine: " + name + " input " + std::to_string(i)));
  auto results = state.invoke(fn, *device_, args);
  TORCH_CHECK(results.ok(), "turbine: ", results.message());
  std::vector<at::Tensor> outputs;
  for (size_t i = 0; i < results->size(); ++i)
    outputs.push_back(
        toTorchTensor((*results)[i], "turbine: " + name + " result " + std::to_string(i)));
  return outputs;
}

} // namespace turbine::torch_ext
