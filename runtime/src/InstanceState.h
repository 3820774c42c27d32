//===- InstanceState.h - Storage of an Instance's globals (internal) ------===//
//
// What the host-program interpreter sees of an Instance: one tensor per
// global of the artifact (only mutable globals have storage; immutable ones
// stay empty) and whether each has a value yet. Instance.cpp creates and
// resets it; HostProgram.cpp's global_load / global_store use it.
//===----------------------------------------------------------------------===//
#ifndef TURBINE_RUNTIME_SRC_INSTANCESTATE_H
#define TURBINE_RUNTIME_SRC_INSTANCESTATE_H

#include "turbine/runtime/Status.h"
#include "turbine/runtime/Tensor.h"

#include <vector>

namespace turbine::runtime::detail {

struct LoadedModule;

struct InstanceState {
  /// Indexed like artifact::Module::globals.
  std::vector<Tensor> storage;
  std::vector<bool> initialized;
};

/// Fresh storage for every mutable global of `module`, at initial values.
Result<InstanceState> createInstanceState(const LoadedModule &module);

/// Puts global `index` of `state` back to its initial value.
Status resetGlobal(const LoadedModule &module, InstanceState &state, size_t index);

/// True when a function's code loads or stores a mutable global.
bool usesModuleState(const LoadedModule &module, size_t functionIndex);

} // namespace turbine::runtime::detail

#endif // TURBINE_RUNTIME_SRC_INSTANCESTATE_H
