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

/// True for the linalg.generic turbine-pack-convolution-filters makes of a
/// linalg.conv_2d_nhwc_hwcf whose filter is a constant with F > 32 output
/// channels, F a multiple of 32: it reads the filter constant repacked at
/// compile time as [F/32][KH][KW][C][32].
bool isPackedConvolution(mlir::Operation *op);

/// Codegen of a packed convolution inside a workgroup tile: splits its
/// output channels into tiles of 32 (if it has more) and rewrites each tile
/// as a linalg.conv_2d_nhwc_hwcf on that tile's contiguous [KH][KW][C][32]
/// filter slice. Returns those convolutions (empty if `op` is not a packed
/// convolution with static output channels; it is then left as it is).
llvm::SmallVector<mlir::Operation *>
lowerPackedConvolutionTiles(mlir::RewriterBase &rewriter, mlir::Operation *op);

} // namespace turbine::compiler

#endif // TURBINE_COMPILER_CPU_CONVOLUTIONFILTERPACKING_H
