//===- ConvolutionFilterPacking.h - Channel-tile-major conv filters ------===//
//
// Internal to the compiler library (ConvolutionFilterPacking.cpp): the
// global-opt step that stores constant NHWC convolution filters channel tile
// by channel tile, and the queries dispatch formation and codegen use to
// recognize and lower the resulting packed convolutions.
//===----------------------------------------------------------------------===//
#ifndef TURBINE_COMPILER_LIB_CONVOLUTIONFILTERPACKING_H
#define TURBINE_COMPILER_LIB_CONVOLUTIONFILTERPACKING_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/PatternMatch.h"

namespace turbine::compiler {

/// Output channels per filter tile: the width of the convolution register
/// tile (ConvolutionCodegen.cpp), so one tile's filter slice is contiguous.
inline constexpr int64_t kFilterTileChannels = 32;

/// Part of global-opt (its last step): every linalg.conv_2d_nhwc_hwcf whose
/// filter is a constant with F > 32 output channels, F a multiple of 32,
/// becomes a packed convolution: a linalg.generic that reads the filter
/// constant repacked at compile time as [F/32][KH][KW][C][32].
void packConvolutionFilters(mlir::ModuleOp module);

/// True for the linalg.generic packConvolutionFilters makes.
bool isPackedConvolution(mlir::Operation *op);

/// Codegen of a packed convolution inside a workgroup tile: splits its
/// output channels into tiles of 32 (if it has more) and rewrites each tile
/// as a linalg.conv_2d_nhwc_hwcf on that tile's contiguous [KH][KW][C][32]
/// filter slice. Returns those convolutions (empty if `op` is not a packed
/// convolution with static output channels; it is then left as it is).
llvm::SmallVector<mlir::Operation *>
lowerPackedConvolutionTiles(mlir::RewriterBase &rewriter, mlir::Operation *op);

} // namespace turbine::compiler

#endif // TURBINE_COMPILER_LIB_CONVOLUTIONFILTERPACKING_H
