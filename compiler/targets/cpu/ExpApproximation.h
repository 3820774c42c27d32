//===- ExpApproximation.h - exp on f32 without libm -----------------------===//
//
// The CPU target's own approximation of math.exp on f32 (scalar or fixed-size
// vector): a magic-bias rounding, a two-constant range reduction and a
// degree-5 polynomial (ExpApproximation.cpp), ahead of upstream's.
//===----------------------------------------------------------------------===//
#ifndef TURBINE_COMPILER_CPU_EXPAPPROXIMATION_H
#define TURBINE_COMPILER_CPU_EXPAPPROXIMATION_H

namespace mlir {
class RewritePatternSet;
} // namespace mlir

namespace turbine::compiler {

/// Adds the rewrite of f32 math.exp, with a benefit above upstream's
/// populateMathPolynomialApproximationPatterns.
void populateExpApproximationPatterns(mlir::RewritePatternSet &patterns);

} // namespace turbine::compiler

#endif // TURBINE_COMPILER_CPU_EXPAPPROXIMATION_H
