//===- ChannelsLastInputGather.h - NCHW image into padded NHWC, by rows ---===//
//
// Internal to the compiler library (KernelCodegen.cpp): the pad gather
// (LowerPads.h) that builds a network's padded NHWC input from its NCHW
// image (a few channels: 3 for RGB), read along the image's contiguous
// width and interleaved in registers (ChannelsLastInputGather.cpp).
//===----------------------------------------------------------------------===//
#ifndef TURBINE_COMPILER_CHANNELSLASTINPUTGATHER_H
#define TURBINE_COMPILER_CHANNELSLASTINPUTGATHER_H

#include "mlir/IR/Operation.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::func {
class FuncOp;
} // namespace mlir::func

namespace turbine::compiler {

/// Marks each pad gather of `kernel` (before workgroup tiling) that writes
/// an NHWC tensor (n, h, w, c) from a source read at (n, c, h', w') (any
/// order whose innermost source dim is the output's w), with static width,
/// padding in W and few (<= 8) static channels.
void markChannelsLastInputGathers(mlir::func::FuncOp kernel);

/// Replaces `op`, a workgroup tile of a marked gather covering whole output
/// rows (all of W and C), by vector code: per output row, the interior in
/// blocks of 16 pixels (one contiguous 16-float load per channel, selected
/// against the padding value where the row is padding, interleaved into
/// NHWC order with shuffles and stored as contiguous 16-float vectors), the
/// left and right padding as constant vectors. False (op left as it was) if
/// `op` is not such a tile.
bool lowerChannelsLastInputGather(mlir::RewriterBase &rewriter, mlir::Operation *op);

} // namespace turbine::compiler

#endif // TURBINE_COMPILER_CHANNELSLASTINPUTGATHER_H
