//===- TransposeElimination.h - Reading through transposes ----------------===//
//
// Patterns of the global-opt phase's elementwise fusion (ElementwiseFusion.cpp):
// gathers (lowered pads) read function arguments through their transposes
// instead of a transposed copy; a matmul by a constant whose rows are a
// flattened transpose reads the untransposed rows, the constant's rows
// permuted at compile time.
//===----------------------------------------------------------------------===//
#ifndef TURBINE_COMPILER_GLOBALOPT_TRANSPOSEELIMINATION_H
#define TURBINE_COMPILER_GLOBALOPT_TRANSPOSEELIMINATION_H

namespace mlir {
class RewritePatternSet;
} // namespace mlir

namespace turbine::compiler {

void populateTransposeEliminationPatterns(mlir::RewritePatternSet &patterns);

} // namespace turbine::compiler

#endif // TURBINE_COMPILER_GLOBALOPT_TRANSPOSEELIMINATION_H
