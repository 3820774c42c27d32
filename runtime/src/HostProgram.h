//===- HostProgram.h - Interpreter of a function's host program ----------===//
//
// Runs the register machine of artifact::Function (see artifact/Module.h) on
// already validated inputs.
//===----------------------------------------------------------------------===//
#ifndef TURBINE_RUNTIME_SRC_HOSTPROGRAM_H
#define TURBINE_RUNTIME_SRC_HOSTPROGRAM_H

#include "turbine/artifact/Module.h"
#include "turbine/runtime/Device.h"
#include "turbine/runtime/Function.h"
#include "turbine/runtime/Status.h"
#include "turbine/runtime/Tensor.h"

#include <vector>

namespace turbine::runtime::detail {

struct LoadedModule;
struct InstanceState;

/// Interprets `function`'s code with buffer registers 0..N-1 bound to
/// `inputs` and the globals of `state` (null for a stateless call: then a
/// global_load / global_store is an error); returns the Return operands,
/// copied where they alias inputs, parameters, globals or each other.
/// `observer`, when not null, is called after every dispatch.
Result<std::vector<Tensor>> runHostProgram(const LoadedModule &module,
                                           const artifact::Function &function,
                                           Device &device,
                                           const std::vector<Tensor> &inputs,
                                           InstanceState *state,
                                           const DispatchObserver *observer = nullptr);

} // namespace turbine::runtime::detail

#endif // TURBINE_RUNTIME_SRC_HOSTPROGRAM_H
