//===- ConstantSlicing.cpp - Generics that read one slice of a constant ---===//
//
// See ConstantSlicing.h.
//===----------------------------------------------------------------------===//
#include "global-opt/ConstantSlicing.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"

using namespace mlir;

namespace turbine::compiler {
namespace {

/// An input of a linalg.generic that is a constant read at constant indices
/// along some of its dims becomes a rank-reduced extract_slice of it at
/// those indices, read through the map without the constant results.
struct SliceConstantInputs : OpRewritePattern<linalg::GenericOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(linalg::GenericOp op, PatternRewriter &rewriter) const override {
    SmallVector<AffineMap> maps = op.getIndexingMapsArray();
    for (OpOperand *operand : op.getDpsInputOperands()) {
      if (!matchPattern(operand->get(), m_Constant()))
        continue;
      auto type = dyn_cast<RankedTensorType>(operand->get().getType());
      if (!type || !type.hasStaticShape())
        continue;
      AffineMap map = maps[operand->getOperandNumber()];
      SmallVector<OpFoldResult> offsets, sizes, strides;
      SmallVector<AffineExpr> kept;
      SmallVector<int64_t> keptShape;
      bool sliced = false;
      for (auto [dim, expr] : llvm::enumerate(map.getResults())) {
        strides.push_back(rewriter.getIndexAttr(1));
        auto index = dyn_cast<AffineConstantExpr>(expr);
        if (index && index.getValue() >= 0 && index.getValue() < type.getDimSize(dim)) {
          offsets.push_back(rewriter.getIndexAttr(index.getValue()));
          sizes.push_back(rewriter.getIndexAttr(1));
          sliced = true;
          continue;
        }
        offsets.push_back(rewriter.getIndexAttr(0));
        sizes.push_back(rewriter.getIndexAttr(type.getDimSize(dim)));
        kept.push_back(expr);
        keptShape.push_back(type.getDimSize(dim));
      }
      if (!sliced)
        continue;
      auto slicedType = RankedTensorType::get(keptShape, type.getElementType());
      Value slice = tensor::ExtractSliceOp::create(rewriter, op.getLoc(), slicedType,
                                                   operand->get(), offsets, sizes, strides);
      maps[operand->getOperandNumber()] =
          AffineMap::get(map.getNumDims(), map.getNumSymbols(), kept, op.getContext());
      rewriter.modifyOpInPlace(op, [&] {
        operand->set(slice);
        op.setIndexingMapsAttr(rewriter.getAffineMapArrayAttr(maps));
      });
      return success();
    }
    return failure();
  }
};

} // namespace

void populateConstantSlicingPatterns(RewritePatternSet &patterns, int64_t maxFoldedElements) {
  patterns.add<SliceConstantInputs>(patterns.getContext());
  // Fold a slice only when every user of its constant is a slice: the whole
  // constant then goes away once all are folded, so nothing is stored twice.
  tensor::populateFoldConstantExtractSlicePatterns(
      patterns, [maxFoldedElements](tensor::ExtractSliceOp slice) {
        if (slice.getType().getNumElements() > maxFoldedElements)
          return false;
        return llvm::all_of(slice.getSource().getUsers(),
                            [](Operation *user) { return isa<tensor::ExtractSliceOp>(user); });
      });
}

} // namespace turbine::compiler
