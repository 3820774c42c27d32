//===- WorkgroupTiling.h - How a kernel's iteration space is distributed --===//
//
// Dispatch formation picks, for each kernel, tile sizes along the dims of its
// first result and which result dims the x/y/z workgroup axes walk; the host
// computes the workgroup count from them and codegen tiles accordingly. The
// choice travels on the kernel function as attributes. Kernels stride over
// their tiles, so any workgroup count is correct; these sizes only set the
// granularity of parallelism.
//===----------------------------------------------------------------------===//
#ifndef TURBINE_COMPILER_LIB_WORKGROUPTILING_H
#define TURBINE_COMPILER_LIB_WORKGROUPTILING_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Value.h"

namespace turbine::compiler {

/// Unit attribute on every kernel function.
inline constexpr llvm::StringLiteral kKernelAttr = "turbine.kernel";

struct WorkgroupTiling {
  /// Tile size per dim of the first result; 0 = the dim is not tiled.
  llvm::SmallVector<int64_t> tileSizes;
  /// The result dim walked by workgroup axis x, y, z; -1 = axis unused.
  int64_t gridDims[3] = {-1, -1, -1};
};

/// What dominates a region's work; selects its tile shape.
/// What a dispatch region's root is, for tile size choices. Convolution is an
/// NCHW convolution; ChannelsLastWindow an NHWC convolution or pooling;
/// PackedContraction a matmul on a packed B, PanelPack the run-time pack of
/// that B (MatmulDataTiling.h).
enum class RegionKind {
  Elementwise,
  Contraction,
  Convolution,
  ChannelsLastWindow,
  PackedContraction,
  PanelPack
};

/// Chooses tiles for a region whose first result is `result`.
WorkgroupTiling chooseWorkgroupTiling(mlir::Value result, RegionKind kind);

/// Largest divisor of `extent` that is at most `limit` (1 if none larger).
int64_t largestDivisorAtMost(int64_t extent, int64_t limit);
/// Largest power of two dividing `extent` that is at most `limit`.
int64_t largestPowerOfTwoDivisorAtMost(int64_t extent, int64_t limit);

void setWorkgroupTiling(mlir::func::FuncOp kernel, const WorkgroupTiling &t);
WorkgroupTiling getWorkgroupTiling(mlir::func::FuncOp kernel);

} // namespace turbine::compiler

#endif // TURBINE_COMPILER_LIB_WORKGROUPTILING_H
