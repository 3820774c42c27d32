//===- ConvolutionFilterPacking.h - Channel-tile-major conv filters ------===//
//
// Part of the CPU target (ConvolutionFilterPacking.cpp): the global-opt pass
// turbine-pack-convolution-filters stores constant NHWC convolution filters
// channel tile by channel tile; these are the queries workgroup tiling and
// codegen use to recognize and lower the resulting packed convolutions.
//===----------------------------------------------------------------------===//
#ifndef TURBINE_COMPILER_CPU_CONVOLUTIONFILTERPACKING_H
#define TURBINE_COMPILER_CPU_CONVOLUTIONFILTERPACKING_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/PatternMatch.h"

namespace turbine::compiler {

/// Output channels per filter tile: the width of the convolution register
/// tile (ConvolutionCodegen.cpp), so one tile's filter slice is contiguous.
inline constexpr int64_t kFilterTileChannels = 32;

/// Output channels per filter tile T of an ungrouped convolution with
/// `channels` (F) output channels, or 0 if its filter stays HWCF: 32 when
/// it divides F; else, for F a multiple of 8, the workgroup channel tile
/// of such a convolution (splitChannelsWorkgroupTile: 40 for 1000, 24 for
/// 888), or 16 (912), or 8 (488), so that each workgroup reads one
/// contiguous filter tile. F must hold more than one tile.
int64_t filterTileChannels(int64_t channels);

/// True for the linalg.generic turbine-pack-convolution-filters makes of a
/// linalg.conv_2d_nhwc_hwcf whose filter is a constant with F output
/// channels, more than one filter tile T (filterTileChannels): it reads
/// the filter constant repacked at compile time as [F/T][KH][KW][C][T].
bool isPackedConvolution(mlir::Operation *op);

/// Output channels per filter tile of a packed convolution (T, or Fg for a
/// grouped one), 0 for any other op.
int64_t packedConvolutionTile(mlir::Operation *op);

/// True for a grouped packed convolution: the linalg.generic
/// turbine-pack-convolution-filters makes of a grouped NHWC convolution
/// (turbine-convert-to-channels-last) with a constant filter, stored per
/// group as [G][KH][KW][Cg][Fg]; it reads input channel
/// (f floordiv Fg) * Cg + c.
bool isGroupedPackedConvolution(mlir::Operation *op);

/// Channels of a packed convolution's register tile: the largest power of
/// two dividing its filter tile, at most 32 (0 for any other op).
int64_t packedConvolutionRegisterChannels(mlir::Operation *op);

/// Codegen of a packed convolution inside a workgroup tile: splits its
/// output channels into filter tiles (32, or one group; if it has more) and
/// rewrites each as a linalg.conv_2d_nhwc_hwcf on that tile's contiguous
/// [KH][KW][C][T] filter slice (a part of one group's tile, when the op's
/// channels divide T). Returns those convolutions (empty if `op` is not a packed
/// convolution with static output channels; it is then left as it is).
llvm::SmallVector<mlir::Operation *>
lowerPackedConvolutionTiles(mlir::RewriterBase &rewriter, mlir::Operation *op);

} // namespace turbine::compiler

#endif // TURBINE_COMPILER_CPU_CONVOLUTIONFILTERPACKING_H
