//===- ChannelBias.h - A per-channel bias added to an NC... tensor ---------===//
//
// What both frontends do after a convolution with a bias (ONNX Conv's B,
// aten::_convolution's bias): one elementwise generic adding bias[c] along
// dim 1. Shared here so the two importers build the same IR.
//===----------------------------------------------------------------------===//
#ifndef TURBINE_FRONTENDS_CHANNELBIAS_H
#define TURBINE_FRONTENDS_CHANNELBIAS_H

#include "turbine/frontends/TensorBuilder.h"

namespace turbine::frontends {

/// x + bias broadcast along dim 1 (x: [N, C, ...] float, bias: [C]).
mlir::Value addChannelBias(TensorBuilder &ctx, mlir::Value x, mlir::Value bias);

} // namespace turbine::frontends

#endif // TURBINE_FRONTENDS_CHANNELBIAS_H
