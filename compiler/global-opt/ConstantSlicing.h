//===- ConstantSlicing.h - Generics that read one slice of a constant -----===//
//
// Patterns of the global-opt phase's elementwise fusion (ElementwiseFusion.cpp):
// a linalg.generic that reads a constant through an indexing map with
// constant results (a bidirectional RNN's weights [2, 4, H, I] read as
// `(d0, d1, d2) -> (1, d1, d2, d0)`, one direction's transpose) reads a
// tensor.extract_slice of it instead, and slices of constants whose every
// user is a slice are folded into constants, so the upstream linalg
// constant folder can fold the transpose at compile time instead of it
// running on every call.
//===----------------------------------------------------------------------===//
#ifndef TURBINE_COMPILER_GLOBALOPT_CONSTANTSLICING_H
#define TURBINE_COMPILER_GLOBALOPT_CONSTANTSLICING_H

#include <cstdint>

namespace mlir {
class RewritePatternSet;
} // namespace mlir

namespace turbine::compiler {

/// Slices are folded when they hold at most `maxFoldedElements` elements.
void populateConstantSlicingPatterns(mlir::RewritePatternSet &patterns,
                                     int64_t maxFoldedElements);

} // namespace turbine::compiler

#endif // TURBINE_COMPILER_GLOBALOPT_CONSTANTSLICING_H
