//===- LowerPads.h - Recognizing the gathers LowerPads.cpp makes ----------===//
//
// Internal to the compiler library: dispatch formation fuses the pad gathers
// in front of NHWC pooling and depthwise convolutions into their dispatch and
// has the producer of what a full convolution's pad pads write it padded
// (PaddedResults.cpp, which reads the pad back with matchPadGather); codegen
// vectorizes the gathers (a pad's gather is contiguous along the innermost
// dim).
//===----------------------------------------------------------------------===//
#ifndef TURBINE_COMPILER_LOWERPADS_H
#define TURBINE_COMPILER_LOWERPADS_H

#include "mlir/IR/Operation.h"
#include "mlir/IR/Value.h"
#include "llvm/ADT/SmallVector.h"

#include <optional>

namespace mlir {
class IRRewriter;
namespace tensor {
class PadOp;
} // namespace tensor
} // namespace mlir

namespace turbine::compiler {

/// Replaces `pad` (a constant padding value) by the gather generic
/// lowerPadsToGathers makes of it (also used by turbine-quantize-weights to
/// pad activations to whole groups after LowerPads ran). Returns the
/// gather's result.
mlir::FailureOr<mlir::Value> lowerPad(mlir::IRRewriter &rewriter, mlir::tensor::PadOp pad);

/// True for a linalg.generic that lowerPadsToGathers made of a tensor.pad: no
/// inputs, yields select(in bounds, tensor.extract(source, clamped indices),
/// pad value).
bool isPadGather(mlir::Operation *op);

/// What a pad gather pads: `source` with `low[d]` elements before and
/// `high[d]` after it along each dim d (static), filled with `padValue`.
struct PadGatherInfo {
  mlir::Value source;
  llvm::SmallVector<int64_t> low, high;
  mlir::Value padValue;
};

/// The pad a gather of lowerPadsToGathers computes, read back from its body
/// (index = clamp(i - low), selected where every padded index is inside the
/// source), or nullopt if `op` is not exactly such a gather or a padded dim
/// of the source or of the result is dynamic.
std::optional<PadGatherInfo> matchPadGather(mlir::Operation *op);

} // namespace turbine::compiler

#endif // TURBINE_COMPILER_LOWERPADS_H
