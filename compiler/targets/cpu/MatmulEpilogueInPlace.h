//===- MatmulEpilogueInPlace.h - Matmul epilogues on the result in place --===//
//
// Internal to the compiler library (KernelCodegen.cpp): a matmul (plain,
// batch, packed-B contract) whose result is read only by one elementwise
// epilogue (bias, activation, scale, residual add) gets that epilogue
// rewritten to read and write the matmul's result in place (its destination
// operand), so that the matmul accumulates straight into the kernel's output
// tile and no temporary tile is allocated per workgroup tile.
//===----------------------------------------------------------------------===//
#ifndef TURBINE_COMPILER_MATMULEPILOGUEINPLACE_H
#define TURBINE_COMPILER_MATMULEPILOGUEINPLACE_H

#include "mlir/IR/PatternMatch.h"

namespace mlir::func {
class FuncOp;
} // namespace mlir::func

namespace turbine::compiler {

/// Rewrites each all-parallel linalg.generic of `kernel` with one result
/// that reads, through an identity map, the result of a matmul-like op
/// (linalg.matmul, linalg.batch_matmul, a packed matmul) of the same type
/// used nowhere else, and that does not read its own destination: the
/// matmul's result becomes the generic's destination (the block argument it
/// read becomes the output one). Bufferized, the matmul then writes the
/// buffer the epilogue writes, which empty-tensor elimination maps onto the
/// output binding, and the epilogue updates it element for element in
/// place. Returns how many it rewrote.
int makeMatmulEpiloguesInPlace(mlir::RewriterBase &rewriter, mlir::func::FuncOp kernel);

} // namespace turbine::compiler

#endif // TURBINE_COMPILER_MATMULEPILOGUEINPLACE_H
