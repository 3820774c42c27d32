//===- MathApproximations.h - exp and erf on f32 without libm -------------===//
//
// The CPU target's own approximations of math.exp and math.erf on f32
// (scalar or fixed-size vector), cheaper than upstream's polynomial
// approximations, which they precede (MathApproximations.cpp).
//===----------------------------------------------------------------------===//
#ifndef TURBINE_COMPILER_CPU_MATHAPPROXIMATIONS_H
#define TURBINE_COMPILER_CPU_MATHAPPROXIMATIONS_H

namespace mlir {
class RewritePatternSet;
} // namespace mlir

namespace turbine::compiler {

/// Adds the rewrites of f32 math.exp and math.erf, with a benefit above
/// upstream's populateMathPolynomialApproximationPatterns.
void populateMathApproximationPatterns(mlir::RewritePatternSet &patterns);

} // namespace turbine::compiler

#endif // TURBINE_COMPILER_CPU_MATHAPPROXIMATIONS_H
