//===- ClampedMaxPooling.h - Padded max pooling without its pad -----------===//
//
// Internal to the compiler library (KernelCodegen.cpp): a max pooling whose
// input is a pad gather (LowerPads.h) fused into its kernel reads the
// unpadded source at clamped indices instead (ClampedMaxPooling.cpp says why
// that is exact); ConvolutionCodegen.cpp tiles and vectorizes that reading the
// source directly: no padded scratch tile, no per-element bounds checks.
//===----------------------------------------------------------------------===//
#ifndef TURBINE_COMPILER_CLAMPEDMAXPOOLING_H
#define TURBINE_COMPILER_CLAMPEDMAXPOOLING_H

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

/// Replaces `op`, a tile of a clamped-window max pooling of one pixel by
/// one vector of channels (loop ranges 1, 1, 1, KH, KW, C with C static)
/// whose output tile holds the initial values, by vector code: the KH x KW
/// window's channel vectors read from the source (contiguous; indices from
/// the tile's own clamped index arithmetic) and max-ed with the initial
/// vector as a balanced tree, so the dependency chain is log2(KH*KW + 1)
/// maxima deep instead of KH*KW (each is several instructions on x86: NaN
/// and signed-zero handling). False (op left as it was) if `op` is not such
/// a tile.
bool lowerClampedMaxPoolingTile(mlir::RewriterBase &rewriter, mlir::Operation *op);

} // namespace turbine::compiler

#endif // TURBINE_COMPILER_CLAMPEDMAXPOOLING_H
