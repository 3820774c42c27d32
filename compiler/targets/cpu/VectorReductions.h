//===- VectorReductions.h - Inner reductions as one vector.reduction ------===//
//
// Part of the CPU target's vector lowering (turbine-cpu-lower-vectors): see
// VectorReductions.cpp for why.
//===----------------------------------------------------------------------===//
#ifndef TURBINE_COMPILER_CPU_VECTORREDUCTIONS_H
#define TURBINE_COMPILER_CPU_VECTORREDUCTIONS_H

namespace mlir {
class RewritePatternSet;
} // namespace mlir

namespace turbine::compiler {

/// Reductions of one innermost dim by an order-independent kind become
/// vector.reduction.
void populateInnerReductionPatterns(mlir::RewritePatternSet &patterns);

} // namespace turbine::compiler

#endif // TURBINE_COMPILER_CPU_VECTORREDUCTIONS_H
