//===- ConvolutionReductionBlocking.h - Blocked reductions of late convs --===//
//
// Internal to the compiler library. Packed convolutions
// (ConvolutionFilterPacking.h) whose 32-channel filter slice is large and
// whose output image is small (ResNet-18's 7x7 x 512 stage: a 590 KB slice
// for 49 pixels, 9.4 MB of filter per convolution, and the model's 46 MB of
// weights do not fit the L3) ran ~15 % under the other 3x3 convolutions:
// the same convolutions with their filters in L3 ran at full speed, so the
// first pixel row of each channel tile, which pulls the slice from memory,
// was waiting for it. For those, dispatch formation gives a workgroup the
// whole output image of one channel tile (WorkgroupTiling.cpp), and codegen
// (ConvolutionCodegen.cpp) tiles the reduction into blocks (one kernel position,
// up to 64 input channels: 8 KB of filter) outside the pixel register
// tiles, so a block stays in L1 while every pixel row uses it; the
// accumulators wait between blocks in a contiguous scratch tile, and the
// epilogue (bias, ReLU, residual) runs once after the last block. Each
// filter read also prefetches the same position one block further on, so
// the next block arrives from memory while the rows of this one compute
// (blocks without the prefetch were slower than no blocks: the memory
// latency then hits the first row of every block).
//===----------------------------------------------------------------------===//
#ifndef TURBINE_COMPILER_CONVOLUTIONREDUCTIONBLOCKING_H
#define TURBINE_COMPILER_CONVOLUTIONREDUCTIONBLOCKING_H

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

#endif // TURBINE_COMPILER_CONVOLUTIONREDUCTIONBLOCKING_H
