//===- EmbeddingOps.cpp - aten::embedding --------------------------------===//
//
// aten::embedding as a gather-style linalg.generic (indices clamped into
// the table, so the read is always in bounds).
//===----------------------------------------------------------------------===//
#include "ImportContext.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"

#include <cmath>
#include <cstring>

using namespace mlir;

namespace turbine::torch_frontend {
namespace {

/// embedding(weight [V, D], indices [...]) -> [..., D] (indices clamped to [0, V)).
LogicalResult convertEmbedding(ImportContext &ctx, const TorchNode &node) {
  auto weight = ctx.tensorInput(node, 0), indices = ctx.tensorInput(node, 1);
  if (failed(weight) || failed(indices))
    return failure();
  auto wType = tensorType(*weight);
  if (wType.getRank() != 2)
    return ctx.fail(node, "weight must be 2-D");
  if (!isa<IntegerType>(tensorType(*indices).getElementType()))
    return ctx.fail(node, "indices must be integers");
  SmallVector<OpFoldResult> outSizes = ctx.dims(*indices);
  outSizes.push_back(ctx.dim(*weight, 1));
  int64_t rank = outSizes.size();
  Value init = ctx.empty(outSizes, wType.getElementType());
  SmallVector<AffineExpr> idxExprs;
  for (int64_t d = 0; d + 1 < rank; ++d)
    idxExprs.push_back(ctx.builder.getAffineDimExpr(d));
  SmallVector<AffineMap> maps{AffineMap::get(rank, 0, idxExprs, &ctx.context), ctx.builder.getMultiDimIdentityMap(rank)};
  SmallVector<utils::IteratorType> iterators(rank, utils::IteratorType::parallel);
  Value vocabLast = ctx.toIndexValue(ctx.dim(*weight, 0));
  vocabLast = arith::SubIOp::create(ctx.builder, ctx.loc, vocabLast, ctx.indexConstant(1));
  Value w = *weight;
  auto g = linalg::GenericOp::create(
      ctx.builder, ctx.loc, TypeRange{init.getType()}, ValueRange{*indices}, ValueRange{init}, maps, iterators,
      [&](OpBuilder &b, Location l, ValueRange a) {
        Value row = arith::IndexCastOp::create(b, l, b.getIndexType(), a[0]);
        row = arith::MinSIOp::create(b, l, arith::MaxSIOp::create(b, l, row, arith::ConstantIndexOp::create(b, l, 0)),
                                     vocabLast);
        Value col = linalg::IndexOp::create(b, l, rank - 1);
        linalg::YieldOp::create(b, l, (Value)tensor::ExtractOp::create(b, l, w, ValueRange{row, col}));
      });
  ctx.recordDims(g.getResult(0), outSizes);
  ctx.setTensor(node, 0, g.getResult(0));
  return success();
}

} // namespace

void registerEmbeddingOps(OpRegistry &r) {
  r.add("aten::embedding", convertEmbedding);
}

} // namespace turbine::torch_frontend
