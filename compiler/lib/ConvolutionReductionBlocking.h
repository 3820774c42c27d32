//===- ConvolutionReductionBlocking.h - Blocked reductions of late convs --===//
//
// Internal to the compiler library. Packed convolutions
// (ConvolutionFilterPacking.h) whose 32-channel filter slice is large and
// whose output image is small (ResNet's 7x7 x 512 stage: a 590 KB slice for
// 49 pixels) do not reach the machine's peak with the plain register tiles:
// every row of pixels re-streams the whole slice from L2, and the first one
// from memory (the model's weights do not fit L3), so the stream comes in
// bursts the prefetchers cannot keep up with. For those, dispatch formation
// gives a workgroup the whole output image of one channel tile
// (WorkgroupTiling.cpp), and codegen (KernelCodegen.cpp) tiles the
// reduction into blocks (one kernel position, up to 64 input channels: 8 KB
// of filter) outside the pixel register tiles: a block stays in L1 while
// every pixel tile of the image uses it, the slice streams once, evenly,
// and the accumulators wait between blocks in a tile-sized buffer (L1); the
// epilogue (bias, ReLU, residual) runs once on that buffer after the last
// block.
//===----------------------------------------------------------------------===//
#ifndef TURBINE_COMPILER_LIB_CONVOLUTIONREDUCTIONBLOCKING_H
#define TURBINE_COMPILER_LIB_CONVOLUTIONREDUCTIONBLOCKING_H

#include "mlir/IR/Operation.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/IR/Value.h"

namespace turbine::compiler {

/// The packed convolution that computes `result`: its defining op, or the
/// one read by the elementwise generic defining it (an epilogue). Null if
/// there is none.
mlir::Operation *packedConvolutionBehind(mlir::Value result);

/// True if `op`, a packed convolution with its full (untiled) shape, gets
/// whole-image workgroup tiles and blocked reductions: filter slice per
/// 32-channel tile of at least 256 KiB, at most 64 output pixels per image,
/// static height, width, window and input channels.
bool blocksConvolutionReduction(mlir::Operation *op);

/// Input channels per reduction block for `channels` input channels: the
/// largest divisor up to 64, or all of them when that divisor is under 16.
int64_t reductionBlockChannels(int64_t channels);

/// Tiles a named NHWC convolution (one 32-channel tile of a packed one,
/// static but for the batch) into reduction blocks: loops over images (1),
/// kernel rows, kernel columns and blocks of input channels, outermost
/// first, carrying the accumulator tile; returns the block's convolution
/// (for the register tiles), or null if tiling failed (`op` is then left as
/// it was).
mlir::Operation *tileReductionBlocks(mlir::RewriterBase &rewriter, mlir::Operation *op);

/// Kernel attribute (i64) codegen sets on kernels with blocked reductions:
/// how many filter elements ahead of each filter read the prefetch goes.
inline constexpr llvm::StringLiteral kFilterPrefetchAttr = "turbine.filter_prefetch";

/// Filter elements ahead of a read that the next reduction block starts at
/// (`blockChannels` input channels of 32 output channels).
int64_t filterPrefetchDistance(int64_t blockChannels);

/// After bufferization, in kernels carrying kFilterPrefetchAttr: next to
/// each vector read of a packed filter (a memref [F/32][KH][KW][C][32] seen
/// through subviews), a prefetch of the filter lines that many elements
/// further on (the same position in a later block, clamped to the filter).
/// The blocks' first pixel row then finds its filter in cache instead of
/// waiting for memory, while the other rows compute.
void insertFilterPrefetches(mlir::ModuleOp kernels);

} // namespace turbine::compiler

#endif // TURBINE_COMPILER_LIB_CONVOLUTIONREDUCTIONBLOCKING_H
