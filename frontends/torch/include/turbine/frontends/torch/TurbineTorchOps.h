//===- TurbineTorchOps.h - the `turbine::` torch operators ----------------===//
//
// The one list of the torch operators Turbine defines (torch.ops.turbine.*),
// shared by everything that must agree on them; no libtorch or MLIR here:
//  * the TorchScript loader module (loader/TorchScriptLoader.cpp) defines
//    their schemas before torch::jit::load, so that `turbine compile` can
//    read a .pt whose graph calls them without the eager kernels loaded;
//  * libturbine_torch.so (python/extension/KernelOps.cpp) defines them with
//    eager implementations (the kernel library's custom ops, callCustomOp);
//  * the importer (lib/TurbineOps.cpp) turns a `turbine::<name>` node into a
//    call of the custom op "turbine.<name>" (kernels/ LibraryOps.h), which
//    the compiler expands into the kernel's own dispatch.
// Tensor arguments become the custom op's arguments, number arguments its
// attributes (by the schema's argument name). The result shape rule lets the
// importer type the call; the custom op's select step checks it agrees.
//===----------------------------------------------------------------------===//
#ifndef TURBINE_FRONTENDS_TORCH_TURBINETORCHOPS_H
#define TURBINE_FRONTENDS_TORCH_TURBINETORCHOPS_H

#include <vector>

namespace turbine::torch_frontend {

/// Dim `dim` of tensor argument `input` (counting tensor arguments only).
struct TurbineOpResultDim {
  int input;
  int dim;
};

struct TurbineTorchOp {
  const char *name;   ///< `softmax`: torch op turbine::softmax, custom op turbine.softmax
  const char *schema; ///< torch's schema, without the namespace
  std::vector<TurbineOpResultDim> resultShape; ///< the one f32 result's dims
};

inline const std::vector<TurbineTorchOp> &turbineTorchOps() {
  static const std::vector<TurbineTorchOp> ops = {
      {"softmax", "softmax(Tensor x) -> Tensor", {{0, 0}, {0, 1}}},
      {"layer_norm", "layer_norm(Tensor x, Tensor weight, Tensor bias, float eps=1e-05) -> Tensor",
       {{0, 0}, {0, 1}}},
      {"matmul", "matmul(Tensor a, Tensor b) -> Tensor", {{0, 0}, {1, 1}}},
      {"attention", "attention(Tensor q, Tensor k, Tensor v) -> Tensor", {{0, 0}, {0, 1}, {0, 2}}},
  };
  return ops;
}

} // namespace turbine::torch_frontend

#endif // TURBINE_FRONTENDS_TORCH_TURBINETORCHOPS_H
