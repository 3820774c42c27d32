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
// contiguous stream instead of rows N floats apart. A constant B whose N is
// not a multiple of 32 (from 256) is padded with zero columns to whole
// panels and the padded C sliced back (MatmulDataTiling.cpp). The contract's loops are
// ordered (nb, m, n0, k) so the register tiling walks all row tiles of a
// panel while the panel stays in L1.
//
// A run-time B that is not worth a pack dispatch of its own (small M) but
// whose rows are far apart (N >= 1024: rows 4 KiB or more apart, one page and
// one L1 set per k when the register tile walks K down a column) is instead
// marked for a pack inside its kernel (MatmulKernelPacking.h): each workgroup
// copies the (K tile x column tile) block of B it is about to use into a
// stack scratch laid out as panels, and runs the same contract on it.
//===----------------------------------------------------------------------===//
#ifndef TURBINE_COMPILER_CPU_MATMULDATATILING_H
#define TURBINE_COMPILER_CPU_MATMULDATATILING_H

#include "turbine/compiler/Options.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"

namespace turbine::compiler {

/// Width of a packed B panel (= the register tile's N: two zmm of f32).
inline constexpr int64_t kPackedPanelWidth = 32;

/// The turbine-data-tile-matmuls pass: rewrites the matmuls that profit from
/// a packed B (`mode`; see the heuristic in MatmulDataTiling.cpp), marks
/// those to pack B in their kernels (`kernelMode`), and propagates the
/// reshape of packed results through elementwise consumers, so those still
/// fuse with them.
void dataTileMatmuls(mlir::ModuleOp module, StrategyMode mode, StrategyMode kernelMode);

/// True if `op` is the linalg.contract that dataTileMatmuls creates:
/// loops (nb, m, n0, k), A (m, k), Bp (nb, k, n0), C3 (m, nb, n0).
bool isPackedMatmul(mlir::Operation *op);

/// C (M, N) = A (M, K) * Bp (N/32, K, 32), built as the packed contract on
/// `init` viewed as (M, N/32, 32); returns the result collapsed back to
/// (M, N), and the contract in `contract` if non-null.
mlir::Value createPackedMatmul(mlir::OpBuilder &builder, mlir::Location loc,
                               mlir::Value a, mlir::Value packedB,
                               mlir::Value init,
                               mlir::Operation **contract = nullptr);

/// True if `op` is a linalg.matmul that dataTileMatmuls marked for a pack of
/// B inside its kernel (see above; the attribute survives dispatch formation
/// and tiling, so both dispatch and codegen see it).
bool packsBInKernel(mlir::Operation *op);

/// True if `value` is the result of such a matmul, possibly through
/// elementwise consumers (a kernel's bias + activation).
bool comesFromMatmulPackingBInKernel(mlir::Value value);

/// True if `op` is the run-time pack of a B operand that dataTileMatmuls
/// creates: a generic copying B's (K, N/32, 32) view to (N/32, K, 32).
bool isPanelPack(mlir::Operation *op);

} // namespace turbine::compiler

#endif // TURBINE_COMPILER_CPU_MATMULDATATILING_H
