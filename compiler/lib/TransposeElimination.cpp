//===- TransposeElimination.cpp - Gathers read through argument transposes ===//
//
// A tensor.extract (inside a lowered pad: the graph input's transpose to
// NHWC feeding the first convolution's zero padding) of a transpose of a
// function argument extracts from the argument at permuted indices, so the
// transpose is no longer materialized. A transpose of a computed value is
// left alone: fusion composes it into its producer, which is better.
// (Residual streams are kept NHWC by ChannelsLastConvolutions.cpp.)
//===----------------------------------------------------------------------===//
#include "Phases.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/AffineMap.h"
#include "mlir/IR/PatternMatch.h"

using namespace mlir;

namespace turbine::compiler {
namespace {

bool allParallel(linalg::GenericOp op) {
  return llvm::all_of(op.getIteratorTypesArray(), [](utils::IteratorType t) {
    return t == utils::IteratorType::parallel;
  });
}

/// A generic that only permutes its single input: the permutation (from the
/// iteration space to the input's indices), or null.
AffineMap pureTransposeMap(linalg::GenericOp op) {
  if (op.getNumDpsInputs() != 1 || op.getNumDpsInits() != 1 || !allParallel(op))
    return {};
  Block &body = op.getRegion().front();
  if (body.getOperations().size() != 1)
    return {};
  auto yield = cast<linalg::YieldOp>(body.getTerminator());
  if (yield.getNumOperands() != 1 || yield.getOperand(0) != body.getArgument(0))
    return {};
  AffineMap in = op.getIndexingMapsArray()[0];
  AffineMap out = op.getIndexingMapsArray()[1];
  if (!out.isIdentity() || !in.isPermutation() || in.isIdentity())
    return {};
  return in;
}

/// extract(T(x), i) -> extract(x, toSource(i)) for an argument x.
struct ExtractThroughTranspose : OpRewritePattern<tensor::ExtractOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(tensor::ExtractOp extract,
                                PatternRewriter &rewriter) const override {
    auto transpose = extract.getTensor().getDefiningOp<linalg::GenericOp>();
    if (!transpose)
      return failure();
    AffineMap toSource = pureTransposeMap(transpose);
    if (!toSource || !isa<BlockArgument>(transpose.getDpsInputOperand(0)->get()))
      return failure();
    // Source index k is the extract's index at toSource's k-th result.
    SmallVector<Value> indices;
    for (unsigned k = 0; k < toSource.getNumResults(); ++k)
      indices.push_back(extract.getIndices()[toSource.getDimPosition(k)]);
    rewriter.replaceOpWithNewOp<tensor::ExtractOp>(
        extract, transpose.getDpsInputOperand(0)->get(), indices);
    return success();
  }
};

} // namespace

void populateTransposeEliminationPatterns(RewritePatternSet &patterns) {
  patterns.add<ExtractThroughTranspose>(
      patterns.getContext());
}

} // namespace turbine::compiler
