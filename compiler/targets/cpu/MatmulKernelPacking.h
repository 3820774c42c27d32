//===- MatmulKernelPacking.h - Pack a matmul's B block inside its kernel ---===//
//
// Codegen for the matmuls that global-opt marked `turbine.pack_b_in_kernel`
// (MatmulDataTiling.h): inside the workgroup's K-tile loop, the B block the
// tile is about to use, B[k0:k0+kt, n0:n0+nt] (kt <= 256, nt a multiple of
// 32), is copied into a stack scratch laid out as panels,
// Bp[nt/32][256][32], and the matmul tile becomes the packed contract on it
// (the same contract, register tiles and vectorization as a matmul whose B
// was packed by global-opt). This is OpenBLAS's packing of B: the register
// tile then reads B as one contiguous 32 KiB panel per 32 columns, which
// stays in L1 while all row tiles use it, instead of walking K down rows N
// floats apart (with N = 3072, rows 12 KiB apart: every k in one L1 set and
// in another page).
//===----------------------------------------------------------------------===//
#ifndef TURBINE_COMPILER_MATMULKERNELPACKING_H
#define TURBINE_COMPILER_MATMULKERNELPACKING_H

#include "mlir/IR/PatternMatch.h"

namespace turbine::compiler {

/// Deepest K tile the scratch holds (the matmul's K tile in codegen).
inline constexpr int64_t kKernelPackMaxDepth = 256;
/// Widest column tile the scratch holds (the workgroup tile's N).
inline constexpr int64_t kKernelPackMaxColumns = 128;
/// Rows of the workgroup tile (all of a small M: B is read once), so one
/// packed block serves 16 register tiles of 8 rows.
inline constexpr int64_t kKernelPackRows = 128;

/// The kernel's panel scratch (one memref.alloca of Bp[panels][256][32]
/// elements at the kernel's entry) as a writable tensor taken just before
/// `op`, sliced to Bp[panels][depth][32] (depth <= 256): the destination of
/// a pack written per K tile. Null if `op` is not in a kernel function or
/// the panels are wider than kKernelPackMaxColumns.
mlir::Value panelScratchAt(mlir::RewriterBase &rewriter, mlir::Operation *op,
                           mlir::Type elementType, int64_t panels,
                           mlir::OpFoldResult depth);

/// Rewrites `matmul` (a linalg.matmul tile on tensors with at most
/// kKernelPackMaxDepth rows of B and a static multiple of 32, at most
/// kKernelPackMaxColumns, columns) into a copy of its B into the kernel's
/// scratch and the packed contract reading it. Returns the pack (a
/// linalg.generic, to be tiled and vectorized) and the contract, or nulls
/// when `matmul` does not fit (left unchanged).
struct KernelPackedMatmul {
  mlir::Operation *pack = nullptr;
  mlir::Operation *contract = nullptr;
};
KernelPackedMatmul packMatmulBInKernel(mlir::RewriterBase &rewriter,
                                       mlir::Operation *matmul);

} // namespace turbine::compiler

#endif // TURBINE_COMPILER_MATMULKERNELPACKING_H
