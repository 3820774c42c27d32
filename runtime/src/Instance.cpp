//===- Instance.cpp - Per-sequence state of a loaded module ---------------===//
//
// Creates the storage of every mutable global at its initial value, runs
// functions with it (HostProgram.cpp's global_load / global_store read and
// write it), resets it, and gives copies of it to the caller. One call at a
// time per instance: a second concurrent call is an error, not a race.
//===----------------------------------------------------------------------===//
#include "turbine/runtime/Instance.h"
#include "turbine/runtime/Module.h"

#include "HostProgram.h"
#include "InstanceState.h"
#include "LoadedModule.h"

#include <cstring>
#include <exception>

namespace turbine::runtime {

namespace detail {

Status resetGlobal(const LoadedModule &module, InstanceState &state, size_t index) {
  const artifact::Global &g = module.artifact.globals[index];
  if (!g.isMutable)
    return Status::success();
  Tensor &storage = state.storage[index];
  // Storage the program adopted (a dispatch result) is the right size too;
  // anything else gets fresh memory.
  if (!storage.isValid() || storage.dtype() != g.dtype || storage.shape() != g.shape ||
      storage.isReadOnly()) {
    Result<Tensor> fresh = Tensor::allocate(g.dtype, g.shape);
    if (!fresh)
      return Status::error("global '" + g.name + "': " + fresh.message());
    storage = std::move(*fresh);
  }
  switch (g.init) {
  case artifact::GlobalInit::Parameter: {
    const Tensor &initial = module.parameters[static_cast<size_t>(g.parameter)];
    if (initial.byteSize() != storage.byteSize())
      return Status::error("global '" + g.name + "': initial value has " +
                           std::to_string(initial.byteSize()) + " bytes, expected " +
                           std::to_string(storage.byteSize()));
    if (storage.byteSize())
      std::memcpy(storage.data(), initial.data(), storage.byteSize());
    state.initialized[index] = true;
    break;
  }
  case artifact::GlobalInit::Zero:
  case artifact::GlobalInit::Uninitialized:
    if (storage.byteSize())
      std::memset(storage.data(), 0, storage.byteSize());
    state.initialized[index] = g.init == artifact::GlobalInit::Zero;
    break;
  }
  return Status::success();
}

Result<InstanceState> createInstanceState(const LoadedModule &module) {
  InstanceState state;
  size_t count = module.artifact.globals.size();
  state.storage.resize(count);
  state.initialized.assign(count, false);
  for (size_t i = 0; i < count; ++i)
    if (Status s = resetGlobal(module, state, i); !s)
      return s;
  return state;
}

bool usesModuleState(const LoadedModule &module, size_t functionIndex) {
  for (const artifact::Instruction &inst : module.artifact.functions[functionIndex].code)
    if (inst.op == artifact::Opcode::GlobalLoad || inst.op == artifact::Opcode::GlobalStore)
      return true;
  return false;
}

} // namespace detail

std::string GlobalSignature::typeString() const { return formatTensorType(dtype, shape); }

Instance::Instance(std::shared_ptr<const detail::LoadedModule> module,
                   std::unique_ptr<detail::InstanceState> state)
    : module_(std::move(module)), state_(std::move(state)) {}

Instance::~Instance() = default;

const std::string &Instance::label() const { return module_->label; }

Status Instance::enter(const std::string &what) {
  if (busy_.exchange(true, std::memory_order_acquire))
    return Status::error(what + ": the instance of '" + module_->label +
                         "' is running another call (an Instance runs one call at a time; "
                         "create one instance per thread or sequence)");
  return Status::success();
}

void Instance::leave() { busy_.store(false, std::memory_order_release); }

Result<std::vector<Tensor>> Instance::invoke(const Function &function, Device &device,
                                             const std::vector<Tensor> &inputs) {
  if (function.module_ != module_)
    return Status::error("function '" + function.name() + "' belongs to another module than "
                         "this instance's ('" + module_->label + "')");
  if (Status s = enter("function '" + function.name() + "'"); !s)
    return s;
  Result<std::vector<Tensor>> results = [&]() -> Result<std::vector<Tensor>> {
    try {
      if (Status s = function.validateInputs(inputs); !s)
        return s;
      return detail::runHostProgram(*module_, module_->artifact.functions[function.index_],
                                    device, inputs, state_.get());
    } catch (const std::exception &e) {
      return Status::error("function '" + function.name() + "': " + e.what());
    }
  }();
  leave();
  return results;
}

Result<std::vector<Tensor>> Instance::invoke(const std::string &functionName, Device &device,
                                             const std::vector<Tensor> &inputs) {
  const std::vector<artifact::Function> &functions = module_->artifact.functions;
  for (size_t i = 0; i < functions.size(); ++i)
    if (functions[i].name == functionName)
      return invoke(Function(module_, i), device, inputs);
  std::string available;
  for (const artifact::Function &f : functions)
    available += (available.empty() ? "'" : ", '") + f.name + "'";
  return Status::error("function '" + functionName + "' not found in '" + module_->label +
                       "' (available: " + (available.empty() ? "none" : available) + ")");
}

Status Instance::reset() {
  if (Status s = enter("reset"); !s)
    return s;
  Status result = Status::success();
  try {
    for (size_t i = 0; i < state_->storage.size() && result; ++i)
      result = detail::resetGlobal(*module_, *state_, i);
  } catch (const std::exception &e) {
    result = Status::error(std::string("reset: ") + e.what());
  }
  leave();
  return result;
}

Result<size_t> Instance::mutableGlobalIndex(const std::string &name) const {
  const std::vector<artifact::Global> &globals = module_->artifact.globals;
  std::string available;
  for (size_t i = 0; i < globals.size(); ++i) {
    if (!globals[i].isMutable)
      continue;
    if (globals[i].name == name)
      return i;
    available += (available.empty() ? "'" : ", '") + globals[i].name + "'";
  }
  for (const artifact::Global &g : globals)
    if (g.name == name)
      return Status::error("global '" + name + "' of '" + module_->label +
                           "' is immutable (a parameter), not instance state");
  return Status::error("no mutable global '" + name + "' in '" + module_->label +
                       "' (mutable globals: " + (available.empty() ? "none" : available) + ")");
}

Result<Tensor> Instance::readGlobal(const std::string &name) {
  Result<size_t> index = mutableGlobalIndex(name);
  if (!index)
    return index.status();
  if (Status s = enter("readGlobal('" + name + "')"); !s)
    return s;
  Result<Tensor> copy = [&]() -> Result<Tensor> {
    if (!state_->initialized[*index])
      return Status::error("global '" + name + "' is uninitialized: no call has stored it in "
                           "this instance yet");
    try {
      return state_->storage[*index].clone();
    } catch (const std::exception &e) {
      return Status::error("readGlobal('" + name + "'): " + e.what());
    }
  }();
  leave();
  return copy;
}

Status Instance::writeGlobal(const std::string &name, const Tensor &value) {
  Result<size_t> index = mutableGlobalIndex(name);
  if (!index)
    return index.status();
  const artifact::Global &g = module_->artifact.globals[*index];
  if (!value.isValid() || value.dtype() != g.dtype || value.shape() != g.shape)
    return Status::error("writeGlobal('" + name + "'): expected " +
                         formatTensorType(g.dtype, g.shape) + ", got " +
                         (value.isValid() ? value.typeString() : std::string("no tensor")));
  if (Status s = enter("writeGlobal('" + name + "')"); !s)
    return s;
  Status result = Status::success();
  try {
    Result<Tensor> copy = value.clone();
    if (copy) {
      state_->storage[*index] = std::move(*copy);
      state_->initialized[*index] = true;
    } else {
      result = Status::error("writeGlobal('" + name + "'): " + copy.message());
    }
  } catch (const std::exception &e) {
    result = Status::error("writeGlobal('" + name + "'): " + e.what());
  }
  leave();
  return result;
}

bool Instance::isInitialized(const std::string &name) const {
  const std::vector<artifact::Global> &globals = module_->artifact.globals;
  for (size_t i = 0; i < globals.size(); ++i)
    if (globals[i].name == name)
      return !globals[i].isMutable || state_->initialized[i];
  return false;
}

} // namespace turbine::runtime
