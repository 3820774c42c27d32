//===- ConstantTransposes.h - Transposes of constants folded on bytes -----===//
//
// A pattern of the global-opt phase's elementwise fusion (ElementwiseFusion.cpp):
// a linalg.generic that only permutes the dims of a dense constant (an ONNX
// convolution's OIHW filter read channels-last, a Gemm's transposed weight)
// is folded into the permuted constant by moving its bytes. Upstream's linalg
// constant folder computes the same through an APFloat per element: about
// 100 ns each, 6.8 s of Wide ResNet-50-2's compile for 68 M weights.
//===----------------------------------------------------------------------===//
#ifndef TURBINE_COMPILER_GLOBALOPT_CONSTANTTRANSPOSES_H
#define TURBINE_COMPILER_GLOBALOPT_CONSTANTTRANSPOSES_H

#include <cstdint>

namespace mlir {
class RewritePatternSet;
} // namespace mlir

namespace turbine::compiler {

/// Folds permutations of constants of at most `maxFoldedElements` elements,
/// ahead of upstream's folder (a higher pattern benefit).
void populateConstantTransposeFoldingPatterns(mlir::RewritePatternSet &patterns,
                                              int64_t maxFoldedElements);

} // namespace turbine::compiler

#endif // TURBINE_COMPILER_GLOBALOPT_CONSTANTTRANSPOSES_H
