//===- Runtime.h - The Turbine runtime, one include -----------------------===//
//
// Load a .tmod artifact, pick a Device, invoke a Function on Tensors:
//
//   auto device = Device::create("local-task");
//   auto module = Module::load("model.tmod");
//   auto fn = (*module)->lookupFunction("main");
//   auto results = fn->invoke(**device, {input});
//
// Stateful modules (mutable globals: a KV cache) run through an Instance:
//   auto instance = (*module)->createInstance();
//   auto logits = (*instance)->invoke("decode", **device, {token, position});
//
// The runtime links no compiler: only libc, libstdc++, libdl and pthreads.
//===----------------------------------------------------------------------===//
#ifndef TURBINE_RUNTIME_RUNTIME_H
#define TURBINE_RUNTIME_RUNTIME_H

#include "turbine/runtime/Device.h"
#include "turbine/runtime/Ggml.h"
#include "turbine/runtime/Function.h"
#include "turbine/runtime/Instance.h"
#include "turbine/runtime/Memory.h"
#include "turbine/runtime/Module.h"
#include "turbine/runtime/Profiling.h"
#include "turbine/runtime/Status.h"
#include "turbine/runtime/Tensor.h"
#include "turbine/runtime/TensorCompare.h"
#include "turbine/runtime/TensorFormat.h"

#endif // TURBINE_RUNTIME_RUNTIME_H
