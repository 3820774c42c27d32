//===- MatmulDataTiling.h - Packed-B matmul: the layout and its predicate -===//
//
// Data tiling of matmul (IREE's mmt4d idea, for the right-hand side only):
// global-opt rewrites C[M,N] = A[M,K] * B[K,N] into
//
//   Bp[N/32, K, 32] = B packed into panels of 32 columns, each panel K rows
//                     of 32 contiguous floats (folded at compile time when B
//                     is a constant, else a transpose dispatch of its own);
//   C3[M, N/32, 32] = linalg.contract(A, Bp)   (C's memory, viewed 3-D);
//   C               = collapse_shape C3
//
// so that the register tile (8 rows x one 32-column panel) reads B as one
// contiguous stream instead of rows N floats apart. The contract's loops are
// ordered (nb, m, n0, k) so the register tiling walks all row tiles of a
// panel while the panel stays in L1.
//===----------------------------------------------------------------------===//
#ifndef TURBINE_COMPILER_LIB_MATMULDATATILING_H
#define TURBINE_COMPILER_LIB_MATMULDATATILING_H

#include "mlir/IR/BuiltinOps.h"

namespace turbine::compiler {

/// Width of a packed B panel (= the register tile's N: two zmm of f32).
inline constexpr int64_t kPackedPanelWidth = 32;

/// Part of global-opt: rewrites the matmuls that profit from a packed B (see
/// the heuristic in MatmulDataTiling.cpp) and propagates the reshape of their
/// result through elementwise consumers, so those still fuse with them.
void dataTileMatmuls(mlir::ModuleOp module);

/// True if `op` is the linalg.contract that dataTileMatmuls creates:
/// loops (nb, m, n0, k), A (m, k), Bp (nb, k, n0), C3 (m, nb, n0).
bool isPackedMatmul(mlir::Operation *op);

/// True if `op` is the run-time pack of a B operand that dataTileMatmuls
/// creates: a generic copying B's (K, N/32, 32) view to (N/32, K, 32).
bool isPanelPack(mlir::Operation *op);

} // namespace turbine::compiler

#endif // TURBINE_COMPILER_LIB_MATMULDATATILING_H
