//===- TransposeElimination.cpp - Elementwise ops produce what consumers use ===//
//
// After ChannelsLastConvolutions.cpp, a value that feeds both an NHWC
// convolution and another elementwise op (a residual connection: relu(conv +
// bias + skip) is the next block's input and its skip) is still computed in
// NCHW: its elementwise producer G has two uses, so global-opt's fusion
// (single-use producers only) cannot move the transpose T to NHWC into it,
// and the graph materializes G's NCHW result, then T's NHWC copy, on every
// residual block. This pattern makes G produce T's layout directly:
//   r = G(ins...)          (iteration space = r's dims, output map O)
//   t = T(r)               (a pure transpose generic)
//   uses: t by layout-bound ops, r by elementwise generics
// becomes
//   t' = G'(ins...)        (G iterated in t's dims: input maps composed)
//   r' = T^-1(t')          (one per elementwise use; each fuses into its user)
// so the residual values stay in NHWC and the elementwise users read them
// with a permuted indexing map. It applies only when every other use of r is
// an elementwise generic that can absorb the transpose by fusion and t has a
// user that needs its concrete layout (a convolution, a gather, a pad): that
// asymmetry is what keeps the rewrite from undoing itself.
//
// A second pattern reads through transposes of function arguments that
// gathers use: a tensor.extract (inside a lowered pad: the graph input's
// transpose to NHWC feeding the first convolution's zero padding) of such a
// transpose's result extracts from the argument at permuted indices, so the
// transpose is no longer materialized. A transpose of a computed value is
// left alone: fusion composes it into its producer, which is better.
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

/// An elementwise generic with one result whose value depends only on the
/// element's inputs (no linalg.index, output not read) and whose maps are
/// permutations or projections of its iteration space.
bool isElementwiseProducer(linalg::GenericOp op) {
  if (op.getNumResults() != 1 || op.getNumDpsInits() != 1 || !allParallel(op))
    return false;
  if (!op.getIndexingMapsArray().back().isPermutation())
    return false;
  if (op.payloadUsesValueFromOperand(op.getDpsInitOperand(0)))
    return false;
  bool usesIndex = false;
  op.getRegion().walk([&](linalg::IndexOp) { usesIndex = true; });
  if (usesIndex)
    return false;
  return llvm::all_of(op.getIndexingMapsArray(), [](AffineMap m) {
    return m.isProjectedPermutation();
  });
}

/// A user that can take a permuted copy of its operand and fuse it away: an
/// elementwise generic reading `operand` through a projected permutation.
bool absorbsTranspose(OpOperand &use) {
  auto generic = dyn_cast<linalg::GenericOp>(use.getOwner());
  if (!generic || !allParallel(generic) || !generic.isDpsInput(&use))
    return false;
  return generic.getMatchingIndexingMap(&use).isProjectedPermutation();
}

struct ProduceInTransposedLayout : OpRewritePattern<linalg::GenericOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(linalg::GenericOp transpose,
                                PatternRewriter &rewriter) const override {
    AffineMap toSource = pureTransposeMap(transpose);
    if (!toSource)
      return failure();
    Value source = transpose.getDpsInputOperand(0)->get();
    auto producer = source.getDefiningOp<linalg::GenericOp>();
    if (!producer || source.hasOneUse() || !isElementwiseProducer(producer))
      return failure();
    // Every other use must be able to absorb a transpose back.
    for (OpOperand &use : source.getUses())
      if (use.getOwner() != transpose && !absorbsTranspose(use))
        return failure();
    // Something must need the transposed value as it is; otherwise fusing
    // the transpose into its users is the better move.
    Value transposed = transpose.getResult(0);
    if (transposed.use_empty() ||
        llvm::all_of(transposed.getUses(), absorbsTranspose))
      return failure();

    Location loc = producer.getLoc();
    auto sourceType = cast<RankedTensorType>(source.getType());
    auto transposedType = cast<RankedTensorType>(transposed.getType());
    int64_t rank = sourceType.getRank();
    rewriter.setInsertionPoint(producer);
    // t dim j is source dim k where toSource maps iteration dim j to index k.
    Value producerInit = producer.getDpsInitOperand(0)->get();
    SmallVector<OpFoldResult> sourceSizes =
        tensor::getMixedSizes(rewriter, loc, producerInit);
    SmallVector<OpFoldResult> sizes(rank);
    for (int64_t k = 0; k < rank; ++k)
      sizes[toSource.getDimPosition(k)] = sourceSizes[k];
    Value init = tensor::EmptyOp::create(rewriter, loc, sizes,
                                         transposedType.getElementType());

    // G iteration d relates to t's index e by O(d) = toSource(e).
    AffineMap outputMap = producer.getIndexingMapsArray().back();
    AffineMap iterationFromT = inversePermutation(outputMap).compose(toSource);
    SmallVector<AffineMap> maps;
    for (OpOperand *input : producer.getDpsInputOperands())
      maps.push_back(producer.getMatchingIndexingMap(input).compose(iterationFromT));
    maps.push_back(rewriter.getMultiDimIdentityMap(rank));
    SmallVector<utils::IteratorType> iterators(rank, utils::IteratorType::parallel);
    auto produced = linalg::GenericOp::create(
        rewriter, loc, TypeRange{transposedType}, producer.getDpsInputs(),
        ValueRange{init}, maps, iterators);
    rewriter.inlineRegionBefore(producer.getRegion(), produced.getRegion(),
                                produced.getRegion().begin());

    // One transpose back per remaining use, so each has one use and fuses.
    AffineMap back = inversePermutation(toSource);
    SmallVector<OpOperand *> others;
    for (OpOperand &use : source.getUses())
      if (use.getOwner() != transpose)
        others.push_back(&use);
    for (OpOperand *use : others) {
      auto restored = linalg::GenericOp::create(
          rewriter, loc, TypeRange{sourceType}, ValueRange{produced.getResult(0)},
          ValueRange{producerInit},
          SmallVector<AffineMap>{back, rewriter.getMultiDimIdentityMap(rank)},
          iterators, [](OpBuilder &b, Location l, ValueRange args) {
            linalg::YieldOp::create(b, l, args[0]);
          });
      rewriter.modifyOpInPlace(use->getOwner(),
                               [&] { use->set(restored.getResult(0)); });
    }
    rewriter.replaceOp(transpose, produced.getResult(0));
    rewriter.eraseOp(producer);
    return success();
  }
};

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
  patterns.add<ProduceInTransposedLayout, ExtractThroughTranspose>(
      patterns.getContext());
}

} // namespace turbine::compiler
