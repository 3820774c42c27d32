//===- ClampedMaxPooling.h - Padded max pooling without its pad -----------===//
//
// Internal to the compiler library (KernelCodegen.cpp): a max pooling whose
// input is a pad gather (LowerPads.h) fused into its kernel reads the
// unpadded source at clamped indices instead (ClampedMaxPooling.cpp says why
// that is exact); KernelCodegen.cpp tiles and vectorizes that reading the
// source directly: no padded scratch tile, no per-element bounds checks.
//===----------------------------------------------------------------------===//
#ifndef TURBINE_COMPILER_LIB_CLAMPEDMAXPOOLING_H
#define TURBINE_COMPILER_LIB_CLAMPEDMAXPOOLING_H

#include "mlir/IR/Operation.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::func {
class FuncOp;
} // namespace mlir::func

namespace turbine::compiler {

/// Rewrites each NHWC max pooling of `kernel` whose input is a pad gather
/// padding H and W with the pooling's own initial value (the usual -inf or
/// lowest float), dilation 1, where every window overlaps the source, into a
/// clamped-window max pooling (isClampedMaxPooling). Others stay as they are.
void rewritePaddedMaxPoolings(mlir::RewriterBase &rewriter, mlir::func::FuncOp kernel);

/// True for the linalg.generic rewritePaddedMaxPoolings makes: loops (n, oh,
/// ow, kh, kw, c), the window tensor as its one input, out = max(out,
/// source[n, clamp(oh*sh + kh - ph), clamp(ow*sw + kw - pw), c]).
bool isClampedMaxPooling(mlir::Operation *op);

} // namespace turbine::compiler

#endif // TURBINE_COMPILER_LIB_CLAMPEDMAXPOOLING_H
