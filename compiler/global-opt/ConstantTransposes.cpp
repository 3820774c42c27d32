//===- ConstantTransposes.cpp - Transposes of constants folded on bytes ---===//
//
// See ConstantTransposes.h.
//===----------------------------------------------------------------------===//
#include "global-opt/ConstantTransposes.h"
#include "global-opt/ParameterNames.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/PatternMatch.h"

#include <cstring>

using namespace mlir;

namespace turbine::compiler {
namespace {

struct FoldConstantTranspose : OpRewritePattern<linalg::GenericOp> {
  FoldConstantTranspose(MLIRContext *context, int64_t maxFoldedElements)
      : OpRewritePattern(context, /*benefit=*/2), maxFoldedElements(maxFoldedElements) {}

  LogicalResult matchAndRewrite(linalg::GenericOp op, PatternRewriter &rewriter) const override {
    if (op.getNumDpsInputs() != 1 || op.getNumDpsInits() != 1 || op->getNumResults() != 1 ||
        op.getNumReductionLoops() != 0)
      return failure();
    auto yield = cast<linalg::YieldOp>(op.getBody()->getTerminator());
    if (yield->getNumOperands() != 1 || yield->getOperand(0) != op.getBody()->getArgument(0))
      return failure();
    auto constant = op.getDpsInputs()[0].getDefiningOp<arith::ConstantOp>();
    auto dense = constant ? dyn_cast<DenseElementsAttr>(constant.getValue()) : nullptr;
    auto inType = dyn_cast<RankedTensorType>(op.getDpsInputs()[0].getType());
    auto outType = dyn_cast<RankedTensorType>(op->getResult(0).getType());
    if (!dense || dense.isSplat() || !inType || !outType || !inType.hasStaticShape() ||
        !outType.hasStaticShape() || inType.getElementType() != outType.getElementType() ||
        inType.getElementTypeBitWidth() % 8 != 0 || inType.getRank() != outType.getRank() ||
        outType.getNumElements() > maxFoldedElements)
      return failure();
    AffineMap inMap = op.getIndexingMapsArray()[0], outMap = op.getIndexingMapsArray()[1];
    if (!inMap.isPermutation() || !outMap.isPermutation())
      return failure();
    int64_t rank = inType.getRank();
    int64_t bytes = inType.getElementTypeBitWidth() / 8;
    ArrayRef<char> raw = dense.getRawData();
    if (static_cast<int64_t>(raw.size()) != inType.getNumElements() * bytes)
      return failure();
    // Stride in the input (elements) of each loop, then of each output dim;
    // `perm[k]`: the input dim output dim k reads (torch's permute order).
    SmallVector<int64_t> loopStride(rank), outStride(rank), perm(rank);
    int64_t stride = 1;
    for (int64_t k = rank - 1; k >= 0; --k) {
      loopStride[inMap.getDimPosition(k)] = stride;
      stride *= inType.getDimSize(k);
    }
    for (int64_t k = 0; k < rank; ++k) {
      unsigned loop = outMap.getDimPosition(k);
      outStride[k] = loopStride[loop];
      perm[k] = *inMap.getResultPosition(getAffineDimExpr(loop, op.getContext()));
    }
    ArrayRef<int64_t> shape = outType.getShape();
    std::vector<char> permuted(raw.size());
    SmallVector<int64_t> index(rank, 0);
    int64_t from = 0;
    for (int64_t to = 0; to < outType.getNumElements(); ++to) {
      std::memcpy(permuted.data() + to * bytes, raw.data() + from * bytes, bytes);
      for (int64_t k = rank - 1; k >= 0; --k) {
        from += outStride[k];
        if (++index[k] < shape[k])
          break;
        from -= outStride[k] * shape[k];
        index[k] = 0;
      }
    }
    auto folded = arith::ConstantOp::create(
        rewriter, op.getLoc(), DenseElementsAttr::getFromRawBuffer(outType, permuted));
    std::string order;
    for (int64_t k = 0; k < rank; ++k)
      order += (k ? "," : "") + std::to_string(perm[k]);
    deriveParameterName(constant, folded, ".permute(" + order + ")");
    rewriter.replaceOp(op, folded.getResult());
    return success();
  }

  int64_t maxFoldedElements;
};

} // namespace

void populateConstantTransposeFoldingPatterns(RewritePatternSet &patterns,
                                              int64_t maxFoldedElements) {
  patterns.add<FoldConstantTranspose>(patterns.getContext(), maxFoldedElements);
}

} // namespace turbine::compiler
