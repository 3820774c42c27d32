//===- LossOps.cpp - NegativeLogLikelihoodLoss, SoftmaxCrossEntropyLoss ---===//
//
// NegativeLogLikelihoodLoss (opset >= 12): input (N, C, d1..dk), target
// (N, d1..dk), optional weight (C); loss[n, d] = -input[n, target[n, d], d] *
// weight[target[n, d]], 0 where target == ignore_index. One gather-style
// linalg.generic over the target shape (clamped tensor.extract, select for
// ignore_index) yields the per-element loss and its weight; reduction "none"
// returns the loss, "sum" sums it, "mean" divides that sum by the sum of the
// weights of the non-ignored elements (the ONNX reference semantics).
// SoftmaxCrossEntropyLoss (opset >= 12) is log-softmax over axis 1 followed
// by the same computation; its optional second output is the log-softmax.
//===----------------------------------------------------------------------===//
#include "ImportContext.h"

using namespace mlir;

namespace turbine::onnx_frontend {
namespace {

RankedTensorType tensorType(Value v) { return cast<RankedTensorType>(v.getType()); }

LogicalResult convertLoss(ImportContext &ctx, const onnx::NodeProto &node, bool withSoftmax) {
  if (node.input_size() < 2)
    return ctx.fail(node, "expects an input and a target");
  auto x = ctx.getTensor(node, node.input(0));
  auto target = ctx.getTensor(node, node.input(1));
  if (failed(x) || failed(target))
    return failure();
  int64_t rank = tensorType(*x).getRank();
  Type et = tensorType(*x).getElementType();
  Type targetType = tensorType(*target).getElementType();
  if (!isa<FloatType>(et))
    return ctx.unsupported(node, "only floating-point inputs are supported");
  if (!isa<IntegerType>(targetType))
    return ctx.fail(node, "target must be an integer tensor");
  if (rank < 2)
    return ctx.fail(node, "input must have rank >= 2 (N, C, ...)");
  if (tensorType(*target).getRank() != rank - 1)
    return ctx.fail(node, "target must have rank " + std::to_string(rank - 1));
  Value weight;
  if (ImportContext::hasInput(node, 2)) {
    auto w = ctx.getTensor(node, node.input(2));
    if (failed(w))
      return failure();
    if (tensorType(*w).getRank() != 1)
      return ctx.fail(node, "weight must be 1-D");
    // (Found by the onnx fuzzer: int8 weights made IR that did not verify.)
    if (tensorType(*w).getElementType() != et)
      return ctx.fail(node, "weight must have the input's element type");
    weight = *w;
  }
  std::string reduction = ctx.stringAttr(node, "reduction", "mean");
  if (reduction != "none" && reduction != "sum" && reduction != "mean")
    return ctx.fail(node, "unknown reduction '" + reduction + "'");
  std::optional<int64_t> ignoreIndex;
  if (ctx.attr(node, "ignore_index"))
    ignoreIndex = ctx.intAttr(node, "ignore_index", 0);

  Value logProb = *x;
  if (withSoftmax) {
    SmallVector<bool> mask(rank, false);
    mask[1] = true;
    logProb = softmaxOver(ctx, *x, mask, /*isLog=*/true);
    if (node.output_size() > 1 && !node.output(1).empty())
      ctx.setValue(node.output(1), logProb);
  }

  // Per-element loss and weight over the target shape.
  int64_t tRank = rank - 1;
  SmallVector<OpFoldResult> sizes = ctx.dims(*target);
  Value classes = ctx.toIndexValue(ctx.dim(logProb, 1));
  Value lossInit = ctx.empty(sizes, et);
  Value weightInit = ctx.empty(sizes, et);
  AffineMap id = ctx.builder.getMultiDimIdentityMap(tRank);
  SmallVector<utils::IteratorType> parallel(tRank, utils::IteratorType::parallel);
  auto g = linalg::GenericOp::create(
      ctx.builder, ctx.loc, TypeRange{lossInit.getType(), weightInit.getType()}, ValueRange{*target},
      ValueRange{lossInit, weightInit}, SmallVector<AffineMap>{id, id, id}, parallel,
      [&](OpBuilder &b, Location l, ValueRange a) {
        Value t = a[0];
        Value ti = arith::IndexCastOp::create(b, l, b.getIndexType(), t);
        Value zeroIdx = arith::ConstantIndexOp::create(b, l, 0);
        Value last = arith::SubIOp::create(b, l, classes, arith::ConstantIndexOp::create(b, l, 1));
        Value clamped = arith::MinSIOp::create(b, l, arith::MaxSIOp::create(b, l, ti, zeroIdx), last);
        SmallVector<Value> src;
        for (int64_t d = 0; d < tRank; ++d) {
          if (d == 1)
            src.push_back(clamped);
          src.push_back(linalg::IndexOp::create(b, l, d));
        }
        if (tRank == 1)
          src.push_back(clamped);
        Value v = tensor::ExtractOp::create(b, l, logProb, src);
        Value w = weight ? (Value)tensor::ExtractOp::create(b, l, weight, ValueRange{clamped})
                         : (Value)arith::ConstantOp::create(b, l, b.getFloatAttr(et, 1.0));
        Value loss = arith::MulFOp::create(b, l, arith::NegFOp::create(b, l, v), w);
        if (ignoreIndex) {
          Value ii = arith::ConstantOp::create(b, l, b.getIntegerAttr(targetType, *ignoreIndex));
          Value keep = arith::CmpIOp::create(b, l, arith::CmpIPredicate::ne, t, ii);
          Value zero = arith::ConstantOp::create(b, l, b.getFloatAttr(et, 0.0));
          loss = arith::SelectOp::create(b, l, keep, loss, zero);
          w = arith::SelectOp::create(b, l, keep, w, zero);
        }
        linalg::YieldOp::create(b, l, ValueRange{loss, w});
      });
  Value loss = g.getResult(0), weights = g.getResult(1);
  ctx.recordDims(loss, sizes);
  ctx.recordDims(weights, sizes);
  if (reduction == "none") {
    ctx.setValue(node.output(0), loss);
    return success();
  }
  SmallVector<bool> all(tRank, true);
  auto add = [](OpBuilder &b, Location l, Value acc, Value e) -> Value {
    return arith::AddFOp::create(b, l, acc, e);
  };
  Value sum = reduceDims(ctx, loss, all, ctx.scalarConstant(et, 0), add);
  if (reduction == "mean") {
    Value weightSum = reduceDims(ctx, weights, all, ctx.scalarConstant(et, 0), add);
    auto r = ctx.elementwise(node, ValueRange{sum, weightSum}, et, [](OpBuilder &b, Location l, ValueRange a) {
      return (Value)arith::DivFOp::create(b, l, a[0], a[1]);
    });
    if (failed(r))
      return failure();
    sum = *r;
  }
  ctx.setValue(node.output(0), sum);
  return success();
}

} // namespace

void registerLossOps(OpRegistry &r) {
  r.add("NegativeLogLikelihoodLoss",
        [](ImportContext &c, const onnx::NodeProto &n) { return convertLoss(c, n, false); }, 12);
  r.add("SoftmaxCrossEntropyLoss",
        [](ImportContext &c, const onnx::NodeProto &n) { return convertLoss(c, n, true); }, 12);
}

} // namespace turbine::onnx_frontend
