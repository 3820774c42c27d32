//===- KernelOps.cpp - Turbine Kernels as eager torch ops -----------------===//
//
// Turbine's torch operators (the list and schemas: frontends/torch
// TurbineTorchOps.h) with eager CPU implementations: each calls the custom op
// "turbine.<name>" of the kernel library (kernels/ LibraryOps.h), compiled
// for each new specialization on first call and cached (in memory and on
// disk; kernels/ Launch.h):
//   torch.ops.turbine.softmax(x: [M, N] f32) -> [M, N]           (rows)
//   torch.ops.turbine.layer_norm(x: [M, N], weight: [N], bias: [N], eps) -> [M, N]
//   torch.ops.turbine.matmul(a: [M, K], b: [K, N]) -> [M, N]     (f32 or f16 in, f32 out)
//   torch.ops.turbine.attention(q: [B, S, D], k: [B, T, D], v: [B, T, D]) -> [B, S, D]
// The same custom ops compile into models that call these torch ops
// (frontends/torch lib/TurbineOps.cpp), so eager and compiled share one
// kernel and one select step. One boxed implementation serves all: tensor
// arguments are passed to the custom op, number arguments are its attributes
// by schema name. Misuse (rank, dtype, shapes) raises RuntimeError naming the
// op ("custom op 'turbine.softmax': x must be f32, got f64").
//===----------------------------------------------------------------------===//
#include "TensorInterop.h"

#include "turbine/frontends/torch/TurbineTorchOps.h"
#include "turbine/kernels/LibraryOps.h"

#include <ATen/core/dispatch/Dispatcher.h>
#include <torch/library.h>
#include <torch/types.h>

#include <map>
#include <memory>

namespace turbine::torch_ext {
namespace {

void runTurbineOp(const c10::OperatorHandle &handle, torch::jit::Stack *stack) {
  static const kernels::Status registered = kernels::registerLibraryOps();
  TORCH_CHECK(registered.ok(), "turbine: ", registered.message());
  const c10::FunctionSchema &schema = handle.schema();
  std::string customOp = "turbine." + schema.name().substr(std::string("turbine::").size());
  size_t count = schema.arguments().size();
  std::vector<runtime::Tensor> tensors;
  std::map<std::string, double> attributes;
  for (size_t i = 0; i < count; ++i) {
    const c10::IValue &v = torch::jit::peek(*stack, i, count);
    const std::string &name = schema.arguments()[i].name();
    if (v.isTensor())
      tensors.push_back(toRuntimeTensor(v.toTensor(), customOp + " argument '" + name + "'"));
    else if (v.isDouble())
      attributes[name] = v.toDouble();
    else if (v.isInt())
      attributes[name] = static_cast<double>(v.toInt());
    else if (v.isBool())
      attributes[name] = v.toBool();
    else
      TORCH_CHECK(false, customOp, ": argument '", name, "' must be a tensor or a number");
  }
  torch::jit::drop(*stack, count);
  kernels::Result<std::vector<runtime::Tensor>> results =
      kernels::callCustomOp(customOp, tensors, nullptr, attributes);
  TORCH_CHECK(results.ok(), results.message());
  for (const runtime::Tensor &r : *results)
    torch::jit::push(*stack, toTorchTensor(r, customOp + " result"));
}

/// Defines the ops (unless the TorchScript loader module defined their
/// schemas first) and registers the CPU implementation, at load time.
struct Registrar {
  std::unique_ptr<torch::Library> definitions, implementations;
  Registrar() {
    implementations = std::make_unique<torch::Library>(
        torch::Library::IMPL, "turbine", c10::DispatchKey::CPU, __FILE__, __LINE__);
    for (const torch_frontend::TurbineTorchOp &op : torch_frontend::turbineTorchOps()) {
      std::string name = std::string("turbine::") + op.name;
      if (!c10::Dispatcher::singleton().findSchema({name, ""})) {
        if (!definitions)
          definitions = std::make_unique<torch::Library>(torch::Library::FRAGMENT, "turbine",
                                                         c10::nullopt, __FILE__, __LINE__);
        definitions->def(op.schema);
      }
      implementations->impl(op.name,
                             torch::CppFunction::makeFromBoxedFunction<&runTurbineOp>());
    }
  }
};
const Registrar registrar;

} // namespace
} // namespace turbine::torch_ext
