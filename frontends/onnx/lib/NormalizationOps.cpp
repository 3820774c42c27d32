//===- NormalizationOps.cpp - Softmax, LayerNorm, BatchNorm ---------------===//
//
// Softmax/LogSoftmax (opset < 13: coerced-to-2-D semantics over all dims from
// `axis`; >= 13: one axis), numerically stable (max, exp(x - max), sum,
// divide); LayerNormalization (opset 17, axis and epsilon); inference
// BatchNormalization, folded into per-channel scale/shift constants when its
// parameters are constants.
//===----------------------------------------------------------------------===//
#include "ImportContext.h"

#include <cmath>

using namespace mlir;

namespace turbine::onnx_frontend {
namespace {

RankedTensorType tensorType(Value v) { return cast<RankedTensorType>(v.getType()); }

/// Generic over the shape of `full` whose inputs are `full` plus tensors
/// read through `maps` (one per extra input).
Value mapOver(ImportContext &ctx, Value full, ArrayRef<Value> extras, ArrayRef<AffineMap> extraMaps,
              const std::function<Value(OpBuilder &, Location, ValueRange)> &body) {
  SmallVector<OpFoldResult> sizes = ctx.dims(full);
  int64_t rank = sizes.size();
  SmallVector<Value> inputs{full};
  inputs.append(extras.begin(), extras.end());
  SmallVector<AffineMap> maps{ctx.builder.getMultiDimIdentityMap(rank)};
  maps.append(extraMaps.begin(), extraMaps.end());
  maps.push_back(ctx.builder.getMultiDimIdentityMap(rank));
  Value init = ctx.empty(sizes, tensorType(full).getElementType());
  SmallVector<utils::IteratorType> iterators(rank, utils::IteratorType::parallel);
  Value r = linalg::GenericOp::create(ctx.builder, ctx.loc, TypeRange{init.getType()}, inputs,
                                      ValueRange{init}, maps, iterators,
                                      [&](OpBuilder &b, Location l, ValueRange a) {
                                        linalg::YieldOp::create(b, l, body(b, l, a.drop_back()));
                                      })
                .getResult(0);
  ctx.recordDims(r, sizes);
  return r;
}

} // namespace

/// Numerically stable (log-)softmax of float tensor `x` over the dims in `mask`.
Value softmaxOver(ImportContext &ctx, Value x, ArrayRef<bool> mask, bool isLog) {
  Type et = cast<RankedTensorType>(x.getType()).getElementType();
  AffineMap reducedMap = droppedDimsMap(&ctx.context, mask);
  double negInf = APFloat::getInf(cast<FloatType>(et).getFloatSemantics(), true).convertToDouble();
  Value max = reduceDims(ctx, x, mask, ctx.scalarConstant(et, negInf),
                         [](OpBuilder &b, Location l, Value acc, Value e) -> Value {
                           return arith::MaximumFOp::create(b, l, acc, e);
                         });
  // shifted = x - max; e = exp(shifted)
  Value shifted = mapOver(ctx, x, {max}, {reducedMap}, [](OpBuilder &b, Location l, ValueRange a) -> Value {
    return arith::SubFOp::create(b, l, a[0], a[1]);
  });
  Value exps = mapOver(ctx, shifted, {}, {}, [](OpBuilder &b, Location l, ValueRange a) -> Value {
    return math::ExpOp::create(b, l, a[0]);
  });
  Value sum = reduceDims(ctx, exps, mask, ctx.scalarConstant(et, 0),
                         [](OpBuilder &b, Location l, Value acc, Value e) -> Value {
                           return arith::AddFOp::create(b, l, acc, e);
                         });
  if (isLog)
    return mapOver(ctx, shifted, {sum}, {reducedMap}, [](OpBuilder &b, Location l, ValueRange a) -> Value {
      return arith::SubFOp::create(b, l, a[0], math::LogOp::create(b, l, a[1]));
    });
  return mapOver(ctx, exps, {sum}, {reducedMap}, [](OpBuilder &b, Location l, ValueRange a) -> Value {
    return arith::DivFOp::create(b, l, a[0], a[1]);
  });
}

namespace {

/// The dims Softmax, LogSoftmax and Hardmax reduce over: before opset 13 the
/// input is coerced to 2-D at `axis` (default 1), so every dim from `axis`
/// on; from opset 13 only `axis` (default -1). Null after reporting a bad
/// axis.
std::optional<SmallVector<bool>> softmaxReducedDims(ImportContext &ctx,
                                                     const onnx::NodeProto &node,
                                                     int64_t rank) {
  bool coerced = ctx.opset < 13;
  auto axis = normalizeAxis(ctx.intAttr(node, "axis", coerced ? 1 : -1), rank);
  if (!axis) {
    (void)ctx.fail(node, "axis out of range");
    return std::nullopt;
  }
  SmallVector<bool> mask(rank, false);
  for (int64_t d = 0; d < rank; ++d)
    mask[d] = coerced ? d >= *axis : d == *axis;
  return mask;
}

LogicalResult convertSoftmax(ImportContext &ctx, const onnx::NodeProto &node, bool isLog) {
  auto x = ctx.getTensor(node, node.input(0));
  if (failed(x))
    return failure();
  int64_t rank = tensorType(*x).getRank();
  Type et = tensorType(*x).getElementType();
  if (!isa<FloatType>(et))
    return ctx.unsupported(node, "only floating-point inputs are supported");
  std::optional<SmallVector<bool>> reduced = softmaxReducedDims(ctx, node, rank);
  if (!reduced)
    return failure();
  SmallVector<bool> mask = std::move(*reduced);
  ctx.setValue(node.output(0), softmaxOver(ctx, *x, mask, isLog));
  return success();
}

/// Hardmax: 1 at the first maximum over the reduced dims (opset < 13: all
/// dims from `axis`, row-major order; >= 13: the single `axis`), 0 elsewhere.
/// NaN counts as the maximum, like numpy's argmax in the ONNX reference.
LogicalResult convertHardmax(ImportContext &ctx, const onnx::NodeProto &node) {
  auto x = ctx.getTensor(node, node.input(0));
  if (failed(x))
    return failure();
  int64_t rank = tensorType(*x).getRank();
  Type et = tensorType(*x).getElementType();
  if (!isa<FloatType>(et))
    return ctx.unsupported(node, "only floating-point inputs are supported");
  std::optional<SmallVector<bool>> reduced = softmaxReducedDims(ctx, node, rank);
  if (!reduced)
    return failure();
  SmallVector<bool> mask = std::move(*reduced);
  AffineMap reducedMap = droppedDimsMap(&ctx.context, mask);
  double negInf = APFloat::getInf(cast<FloatType>(et).getFloatSemantics(), true).convertToDouble();
  Value max = reduceDims(ctx, *x, mask, ctx.scalarConstant(et, negInf),
                         [](OpBuilder &b, Location l, Value acc, Value e) -> Value {
                           return arith::MaximumFOp::create(b, l, acc, e);
                         });
  // Row-major linear position over the reduced dims.
  SmallVector<Value> dimSizes;
  for (int64_t d = 0; d < rank; ++d)
    dimSizes.push_back(mask[d] ? ctx.toIndexValue(ctx.dim(*x, d)) : Value());
  auto linearPosition = [&](OpBuilder &b, Location l) {
    Value pos = arith::ConstantIndexOp::create(b, l, 0);
    for (int64_t d = 0; d < rank; ++d) {
      if (!mask[d])
        continue;
      pos = arith::AddIOp::create(b, l, arith::MulIOp::create(b, l, pos, dimSizes[d]),
                                  linalg::IndexOp::create(b, l, d));
    }
    return arith::IndexCastOp::create(b, l, b.getI64Type(), pos);
  };
  SmallVector<OpFoldResult> reducedSizes;
  for (int64_t d = 0; d < rank; ++d)
    if (!mask[d])
      reducedSizes.push_back(ctx.dim(*x, d));
  Value first = ctx.filled(reducedSizes, arith::ConstantOp::create(ctx.builder, ctx.loc,
                                                                  ctx.builder.getI64IntegerAttr(INT64_MAX)));
  SmallVector<utils::IteratorType> iterators;
  for (int64_t d = 0; d < rank; ++d)
    iterators.push_back(mask[d] ? utils::IteratorType::reduction : utils::IteratorType::parallel);
  AffineMap id = ctx.builder.getMultiDimIdentityMap(rank);
  first = linalg::GenericOp::create(
              ctx.builder, ctx.loc, TypeRange{first.getType()}, ValueRange{*x, max}, ValueRange{first},
              SmallVector<AffineMap>{id, reducedMap, reducedMap}, iterators,
              [&](OpBuilder &b, Location l, ValueRange a) {
                Value eq = arith::CmpFOp::create(b, l, arith::CmpFPredicate::OEQ, a[0], a[1]);
                Value nan = arith::CmpFOp::create(b, l, arith::CmpFPredicate::UNO, a[0], a[0]);
                Value match = arith::OrIOp::create(b, l, eq, nan);
                Value candidate = arith::MinSIOp::create(b, l, a[2], linearPosition(b, l));
                linalg::YieldOp::create(b, l, (Value)arith::SelectOp::create(b, l, match, candidate, a[2]));
              })
              .getResult(0);
  ctx.recordDims(first, reducedSizes);
  Value one = ctx.scalarConstant(et, 1), zero = ctx.scalarConstant(et, 0);
  Value result = mapOver(ctx, *x, {first}, {reducedMap}, [&](OpBuilder &b, Location l, ValueRange a) -> Value {
    Value hit = arith::CmpIOp::create(b, l, arith::CmpIPredicate::eq, a[1], linearPosition(b, l));
    return arith::SelectOp::create(b, l, hit, one, zero);
  });
  ctx.setValue(node.output(0), result);
  return success();
}

/// LRN: square_sum over the channel window [c - floor((size-1)/2),
/// c + ceil((size-1)/2)] (one generic with a reduction loop over the window,
/// clamped tensor.extract masked outside [0, C)), then
/// y = x / (bias + alpha / size * square_sum)^beta.
LogicalResult convertLRN(ImportContext &ctx, const onnx::NodeProto &node) {
  auto x = ctx.getTensor(node, node.input(0));
  if (failed(x))
    return failure();
  auto type = tensorType(*x);
  int64_t rank = type.getRank();
  Type et = type.getElementType();
  if (!isa<FloatType>(et))
    return ctx.unsupported(node, "only floating-point inputs are supported");
  if (rank < 3)
    return ctx.fail(node, "input must have rank >= 3");
  int64_t size = ctx.intAttr(node, "size", 0);
  if (size <= 0)
    return ctx.fail(node, "size must be positive");
  double alpha = ctx.floatAttr(node, "alpha", 1e-4f), beta = ctx.floatAttr(node, "beta", 0.75f),
         bias = ctx.floatAttr(node, "bias", 1.0f);
  int64_t before = (size - 1) / 2;
  SmallVector<OpFoldResult> sizes = ctx.dims(*x);
  Value channels = ctx.toIndexValue(ctx.dim(*x, 1));
  Value init = ctx.filled(sizes, ctx.scalarConstant(et, 0));
  Value window = ctx.empty({ctx.builder.getIndexAttr(size)}, ctx.builder.getI1Type());
  SmallVector<AffineExpr> outExprs;
  for (int64_t d = 0; d < rank; ++d)
    outExprs.push_back(ctx.builder.getAffineDimExpr(d));
  SmallVector<AffineMap> maps{AffineMap::get(rank + 1, 0, {ctx.builder.getAffineDimExpr(rank)}, &ctx.context),
                              AffineMap::get(rank + 1, 0, outExprs, &ctx.context)};
  SmallVector<utils::IteratorType> iterators(rank, utils::IteratorType::parallel);
  iterators.push_back(utils::IteratorType::reduction);
  Value source = *x;
  Value squareSum = linalg::GenericOp::create(
                        ctx.builder, ctx.loc, TypeRange{init.getType()}, ValueRange{window}, ValueRange{init}, maps,
                        iterators,
                        [&](OpBuilder &b, Location l, ValueRange a) {
                          Value zero = arith::ConstantIndexOp::create(b, l, 0);
                          Value c = arith::SubIOp::create(
                              b, l,
                              arith::AddIOp::create(b, l, linalg::IndexOp::create(b, l, 1),
                                                    linalg::IndexOp::create(b, l, rank)),
                              arith::ConstantIndexOp::create(b, l, before));
                          Value valid = arith::AndIOp::create(
                              b, l, arith::CmpIOp::create(b, l, arith::CmpIPredicate::sge, c, zero),
                              arith::CmpIOp::create(b, l, arith::CmpIPredicate::slt, c, channels));
                          Value last = arith::SubIOp::create(b, l, channels, arith::ConstantIndexOp::create(b, l, 1));
                          SmallVector<Value> idx;
                          for (int64_t d = 0; d < rank; ++d)
                            idx.push_back(d == 1 ? (Value)arith::MinSIOp::create(
                                                       b, l, arith::MaxSIOp::create(b, l, c, zero), last)
                                                 : (Value)linalg::IndexOp::create(b, l, d));
                          Value v = tensor::ExtractOp::create(b, l, source, idx);
                          Value sum = arith::AddFOp::create(b, l, a[1], arith::MulFOp::create(b, l, v, v));
                          linalg::YieldOp::create(b, l, (Value)arith::SelectOp::create(b, l, valid, sum, a[1]));
                        })
                        .getResult(0);
  ctx.recordDims(squareSum, sizes);
  AffineMap id = ctx.builder.getMultiDimIdentityMap(rank);
  Value result = mapOver(ctx, *x, {squareSum}, {id}, [&](OpBuilder &b, Location l, ValueRange a) -> Value {
    auto cst = [&](double v) -> Value { return arith::ConstantOp::create(b, l, b.getFloatAttr(et, v)); };
    Value scaled = arith::AddFOp::create(b, l, cst(bias), arith::MulFOp::create(b, l, cst(alpha / size), a[1]));
    return arith::DivFOp::create(b, l, a[0], math::PowFOp::create(b, l, scaled, cst(beta)));
  });
  ctx.setValue(node.output(0), result);
  return success();
}

/// MeanVarianceNormalization (opset 9/13) following its ONNX function body:
/// (x - mean) / (sqrt(mean(x^2) - mean^2) + 1e-9) over `axes` (default
/// [0, 2, 3]).
LogicalResult convertMVN(ImportContext &ctx, const onnx::NodeProto &node) {
  auto x = ctx.getTensor(node, node.input(0));
  if (failed(x))
    return failure();
  int64_t rank = tensorType(*x).getRank();
  Type et = tensorType(*x).getElementType();
  if (!isa<FloatType>(et))
    return ctx.unsupported(node, "only floating-point inputs are supported");
  std::vector<int64_t> axes = ctx.intsAttr(node, "axes").value_or(std::vector<int64_t>{0, 2, 3});
  SmallVector<bool> mask(rank, false);
  for (int64_t a : axes) {
    auto n = normalizeAxis(a, rank);
    if (!n)
      return ctx.fail(node, "axis " + std::to_string(a) + " is out of range");
    mask[*n] = true;
  }
  AffineMap reducedMap = droppedDimsMap(&ctx.context, mask);
  auto add = [](OpBuilder &b, Location l, Value acc, Value e) -> Value { return arith::AddFOp::create(b, l, acc, e); };
  Value count = reducedCount(ctx, *x, mask, et);
  Value sum = reduceDims(ctx, *x, mask, ctx.scalarConstant(et, 0), add);
  Value squares = mapOver(ctx, *x, {}, {}, [](OpBuilder &b, Location l, ValueRange a) -> Value {
    return arith::MulFOp::create(b, l, a[0], a[0]);
  });
  Value sumSquares = reduceDims(ctx, squares, mask, ctx.scalarConstant(et, 0), add);
  Value result = mapOver(ctx, *x, {sum, sumSquares}, {reducedMap, reducedMap},
                         [&](OpBuilder &b, Location l, ValueRange a) -> Value {
                           Value mean = arith::DivFOp::create(b, l, a[1], count);
                           Value meanSq = arith::DivFOp::create(b, l, a[2], count);
                           Value variance = arith::SubFOp::create(b, l, meanSq, arith::MulFOp::create(b, l, mean, mean));
                           Value std = math::SqrtOp::create(b, l, variance);
                           Value denom = arith::AddFOp::create(
                               b, l, std, arith::ConstantOp::create(b, l, b.getFloatAttr(et, 1e-9)));
                           return arith::DivFOp::create(b, l, arith::SubFOp::create(b, l, a[0], mean), denom);
                         });
  ctx.setValue(node.output(0), result);
  return success();
}

/// Map reading a parameter right-aligned against rank `rank` (size-1 dims broadcast).
AffineMap broadcastParamMap(ImportContext &ctx, Value param, int64_t rank) {
  auto type = tensorType(param);
  SmallVector<AffineExpr> exprs;
  for (int64_t k = 0; k < type.getRank(); ++k) {
    int64_t d = k + rank - type.getRank();
    bool one = !type.isDynamicDim(k) && type.getDimSize(k) == 1;
    exprs.push_back(one ? ctx.builder.getAffineConstantExpr(0) : ctx.builder.getAffineDimExpr(d));
  }
  return AffineMap::get(rank, 0, exprs, &ctx.context);
}

LogicalResult convertLayerNorm(ImportContext &ctx, const onnx::NodeProto &node) {
  if (node.input_size() < 2)
    return ctx.fail(node, "expects X and Scale");
  auto x = ctx.getTensor(node, node.input(0));
  auto scale = ctx.getTensor(node, node.input(1));
  if (failed(x) || failed(scale))
    return failure();
  int64_t rank = tensorType(*x).getRank();
  Type et = tensorType(*x).getElementType();
  if (!isa<FloatType>(et))
    return ctx.unsupported(node, "only floating-point inputs are supported");
  auto axis = normalizeAxis(ctx.intAttr(node, "axis", -1), rank);
  if (!axis)
    return ctx.fail(node, "axis out of range");
  double epsilon = ctx.floatAttr(node, "epsilon", 1e-5f);
  // Scale and B: X's element type, each dim 1 or X's (checked at run time
  // where dynamic); other shapes or types made IR that did not verify.
  auto checkParam = [&](Value param, const std::string &name) -> LogicalResult {
    auto type = tensorType(param);
    if (type.getElementType() != et)
      return ctx.fail(node, name + " must have X's element type");
    if (type.getRank() > rank - *axis)
      return ctx.fail(node, name + " has a higher rank than the normalized dims");
    for (int64_t k = 0; k < type.getRank(); ++k) {
      if (!type.isDynamicDim(k) && type.getDimSize(k) == 1)
        continue;
      int64_t d = k + rank - type.getRank();
      if (failed(ctx.check(node, ctx.compare(arith::CmpIPredicate::eq, ctx.dim(param, k), ctx.dim(*x, d)),
                           name + " does not broadcast to X's normalized dims")))
        return failure();
    }
    return success();
  };
  if (failed(checkParam(*scale, "Scale")))
    return failure();
  SmallVector<bool> mask(rank, false);
  for (int64_t d = *axis; d < rank; ++d)
    mask[d] = true;
  AffineMap reducedMap = droppedDimsMap(&ctx.context, mask);
  auto addF = [](OpBuilder &b, Location l, Value acc, Value e) -> Value {
    return arith::AddFOp::create(b, l, acc, e);
  };
  Value count = reducedCount(ctx, *x, mask, et);
  Value sum = reduceDims(ctx, *x, mask, ctx.scalarConstant(et, 0), addF);
  Value centered = mapOver(ctx, *x, {sum}, {reducedMap}, [&](OpBuilder &b, Location l, ValueRange a) -> Value {
    return arith::SubFOp::create(b, l, a[0], arith::DivFOp::create(b, l, a[1], count));
  });
  Value sumSquares = reduceDims(ctx, centered, mask, ctx.scalarConstant(et, 0),
                                [](OpBuilder &b, Location l, Value acc, Value e) -> Value {
                                  return arith::AddFOp::create(b, l, acc, arith::MulFOp::create(b, l, e, e));
                                });
  SmallVector<Value> extras{sumSquares, *scale};
  SmallVector<AffineMap> maps{reducedMap, broadcastParamMap(ctx, *scale, rank)};
  bool hasBias = ImportContext::hasInput(node, 2);
  if (hasBias) {
    auto bias = ctx.getTensor(node, node.input(2));
    if (failed(bias) || failed(checkParam(*bias, "B")))
      return failure();
    extras.push_back(*bias);
    maps.push_back(broadcastParamMap(ctx, *bias, rank));
  }
  Value result = mapOver(ctx, centered, extras, maps, [&](OpBuilder &b, Location l, ValueRange a) -> Value {
    Value variance = arith::DivFOp::create(b, l, a[1], count);
    Value eps = arith::ConstantOp::create(b, l, b.getFloatAttr(et, epsilon));
    Value invStd = math::RsqrtOp::create(b, l, arith::AddFOp::create(b, l, variance, eps));
    Value v = arith::MulFOp::create(b, l, arith::MulFOp::create(b, l, a[0], invStd), a[2]);
    if (hasBias)
      v = arith::AddFOp::create(b, l, v, a[3]);
    return v;
  });
  ctx.setValue(node.output(0), result);
  // Optional Mean and InvStdDev outputs: reduced dims kept as 1.
  bool wantMean = node.output_size() > 1 && !node.output(1).empty();
  bool wantInvStd = node.output_size() > 2 && !node.output(2).empty();
  if (wantMean || wantInvStd) {
    SmallVector<OpFoldResult> keptSizes;
    for (int64_t d = 0; d < rank; ++d)
      keptSizes.push_back(mask[d] ? (OpFoldResult)ctx.builder.getIndexAttr(1) : ctx.dim(*x, d));
    if (wantMean) {
      Value mean = mapOver(ctx, sum, {}, {}, [&](OpBuilder &b, Location l, ValueRange a) -> Value {
        return arith::DivFOp::create(b, l, a[0], count);
      });
      ctx.setValue(node.output(1), ctx.reshape(mean, keptSizes));
    }
    if (wantInvStd) {
      Value invStd = mapOver(ctx, sumSquares, {}, {}, [&](OpBuilder &b, Location l, ValueRange a) -> Value {
        Value variance = arith::DivFOp::create(b, l, a[0], count);
        Value eps = arith::ConstantOp::create(b, l, b.getFloatAttr(et, epsilon));
        return math::RsqrtOp::create(b, l, arith::AddFOp::create(b, l, variance, eps));
      });
      ctx.setValue(node.output(2), ctx.reshape(invStd, keptSizes));
    }
  }
  return success();
}

/// A per-channel parameter of a batch or instance normalization (input
/// `i`: scale, B, mean, var) has one value per channel of the input
/// (`channels`, dim 1) where both sizes are static (found by the onnx
/// fuzzer: a var of size 1 for 3 channels, a scale of 44 for 2, made IR
/// that did not verify).
LogicalResult checkChannelParameter(ImportContext &ctx, const onnx::NodeProto &node, int i,
                                    Value parameter, int64_t channels) {
  int64_t size = tensorType(parameter).getDimSize(0);
  if (ShapedType::isDynamic(size) || ShapedType::isDynamic(channels) || size == channels)
    return success();
  return ctx.fail(node, "input " + std::to_string(i) + " has " + std::to_string(size) +
                            " values, the input has " + std::to_string(channels) + " channels");
}

LogicalResult convertInstanceNorm(ImportContext &ctx, const onnx::NodeProto &node) {
  if (node.input_size() != 3)
    return ctx.fail(node, "expects 3 inputs");
  auto x = ctx.getTensor(node, node.input(0));
  auto scale = ctx.getTensor(node, node.input(1));
  auto bias = ctx.getTensor(node, node.input(2));
  if (failed(x) || failed(scale) || failed(bias))
    return failure();
  int64_t rank = tensorType(*x).getRank();
  Type et = tensorType(*x).getElementType();
  if (rank < 3 || !isa<FloatType>(et))
    return ctx.unsupported(node, "expects a floating-point input of rank >= 3");
  const Value parameters[] = {*scale, *bias};
  for (int i = 0; i < 2; ++i) {
    if (tensorType(parameters[i]).getElementType() != et || tensorType(parameters[i]).getRank() != 1)
      return ctx.fail(node, "scale and B must be 1-D with the input's element type");
    if (failed(checkChannelParameter(ctx, node, i + 1, parameters[i], tensorType(*x).getDimSize(1))))
      return failure();
  }
  double epsilon = ctx.floatAttr(node, "epsilon", 1e-5f);
  SmallVector<bool> mask(rank, false);
  for (int64_t d = 2; d < rank; ++d)
    mask[d] = true;
  AffineMap reducedMap = droppedDimsMap(&ctx.context, mask);
  AffineMap channelMap = AffineMap::get(rank, 0, {ctx.builder.getAffineDimExpr(1)}, &ctx.context);
  Value count = reducedCount(ctx, *x, mask, et);
  Value sum = reduceDims(ctx, *x, mask, ctx.scalarConstant(et, 0),
                         [](OpBuilder &b, Location l, Value acc, Value e) -> Value {
                           return arith::AddFOp::create(b, l, acc, e);
                         });
  Value centered = mapOver(ctx, *x, {sum}, {reducedMap}, [&](OpBuilder &b, Location l, ValueRange a) -> Value {
    return arith::SubFOp::create(b, l, a[0], arith::DivFOp::create(b, l, a[1], count));
  });
  Value sumSquares = reduceDims(ctx, centered, mask, ctx.scalarConstant(et, 0),
                                [](OpBuilder &b, Location l, Value acc, Value e) -> Value {
                                  return arith::AddFOp::create(b, l, acc, arith::MulFOp::create(b, l, e, e));
                                });
  Value result = mapOver(ctx, centered, {sumSquares, *scale, *bias}, {reducedMap, channelMap, channelMap},
                         [&](OpBuilder &b, Location l, ValueRange a) -> Value {
                           Value variance = arith::DivFOp::create(b, l, a[1], count);
                           Value eps = arith::ConstantOp::create(b, l, b.getFloatAttr(et, epsilon));
                           Value invStd = math::RsqrtOp::create(b, l, arith::AddFOp::create(b, l, variance, eps));
                           Value v = arith::MulFOp::create(b, l, arith::MulFOp::create(b, l, a[0], invStd), a[2]);
                           return arith::AddFOp::create(b, l, v, a[3]);
                         });
  ctx.setValue(node.output(0), result);
  return success();
}

/// Reads a 1-D float constant as doubles.
std::optional<std::vector<double>> floatConstant(ImportContext &ctx, const std::string &name) {
  auto c = ctx.getConstant(name);
  if (!c || !isa<FloatType>(c->getElementType()) || c->getType().getRank() != 1)
    return std::nullopt;
  std::vector<double> values;
  for (const APFloat &v : c->getValues<APFloat>())
    values.push_back(v.convertToDouble());
  return values;
}

/// BatchNormalization with training_mode=1 (opsets 14, 15): normalizes with
/// the batch statistics (mean and population variance over every dim but
/// the channel), and outputs the running statistics
/// running = input_running * momentum + batch * (1 - momentum), as ONNX's
/// reference does.
LogicalResult convertBatchNormTraining(ImportContext &ctx, const onnx::NodeProto &node) {
  SmallVector<Value> in;
  for (int i = 0; i < 5; ++i) {
    auto v = ctx.getTensor(node, node.input(i));
    if (failed(v))
      return failure();
    in.push_back(*v);
  }
  int64_t rank = tensorType(in[0]).getRank();
  Type et = tensorType(in[0]).getElementType();
  if (rank < 2 || !isa<FloatType>(et))
    return ctx.unsupported(node, "expects a floating-point input of rank >= 2");
  for (int i = 1; i < 5; ++i) {
    if (tensorType(in[i]).getElementType() != et || tensorType(in[i]).getRank() != 1)
      return ctx.unsupported(node, "parameters must be 1-D with the input's element type");
    if (failed(checkChannelParameter(ctx, node, i, in[i], tensorType(in[0]).getDimSize(1))))
      return failure();
  }
  double epsilon = ctx.floatAttr(node, "epsilon", 1e-5f);
  double momentum = ctx.floatAttr(node, "momentum", 0.9f);
  SmallVector<bool> mask(rank, true);
  mask[1] = false;
  AffineMap channelMap = AffineMap::get(rank, 0, {ctx.builder.getAffineDimExpr(1)}, &ctx.context);
  Value count = reducedCount(ctx, in[0], mask, et);
  auto add = [](OpBuilder &b, Location l, Value acc, Value e) -> Value { return arith::AddFOp::create(b, l, acc, e); };
  Value sum = reduceDims(ctx, in[0], mask, ctx.scalarConstant(et, 0), add);
  auto mean = ctx.elementwise(node, {sum}, et, [&](OpBuilder &b, Location l, ValueRange a) -> Value {
    return arith::DivFOp::create(b, l, a[0], count);
  });
  if (failed(mean))
    return failure();
  Value centered = mapOver(ctx, in[0], {*mean}, {channelMap}, [&](OpBuilder &b, Location l, ValueRange a) -> Value {
    return arith::SubFOp::create(b, l, a[0], a[1]);
  });
  Value sumSquares = reduceDims(ctx, centered, mask, ctx.scalarConstant(et, 0),
                                [](OpBuilder &b, Location l, Value acc, Value e) -> Value {
                                  return arith::AddFOp::create(b, l, acc, arith::MulFOp::create(b, l, e, e));
                                });
  auto var = ctx.elementwise(node, {sumSquares}, et, [&](OpBuilder &b, Location l, ValueRange a) -> Value {
    return arith::DivFOp::create(b, l, a[0], count);
  });
  if (failed(var))
    return failure();
  Value y = mapOver(ctx, centered, {*var, in[1], in[2]}, {channelMap, channelMap, channelMap},
                    [&](OpBuilder &b, Location l, ValueRange a) -> Value {
                      Value eps = arith::ConstantOp::create(b, l, b.getFloatAttr(et, epsilon));
                      Value invStd = math::RsqrtOp::create(b, l, arith::AddFOp::create(b, l, a[1], eps));
                      Value v = arith::MulFOp::create(b, l, arith::MulFOp::create(b, l, a[0], invStd), a[2]);
                      return arith::AddFOp::create(b, l, v, a[3]);
                    });
  ctx.setValue(node.output(0), y);
  Value batchStats[] = {*mean, *var};
  for (int k = 0; k < 2; ++k) {
    if (node.output_size() <= k + 1 || node.output(k + 1).empty())
      continue;
    auto running = ctx.elementwise(node, {in[3 + k], batchStats[k]}, et,
                                   [&](OpBuilder &b, Location l, ValueRange a) -> Value {
                                     Value m = arith::ConstantOp::create(b, l, b.getFloatAttr(et, momentum));
                                     Value rest = arith::ConstantOp::create(b, l, b.getFloatAttr(et, 1 - momentum));
                                     return arith::AddFOp::create(b, l, arith::MulFOp::create(b, l, a[0], m),
                                                                  arith::MulFOp::create(b, l, a[1], rest));
                                   });
    if (failed(running))
      return failure();
    ctx.setValue(node.output(k + 1), *running);
  }
  return success();
}

LogicalResult convertBatchNorm(ImportContext &ctx, const onnx::NodeProto &node) {
  if (node.input_size() != 5)
    return ctx.fail(node, "expects 5 inputs");
  if (ctx.intAttr(node, "training_mode", 0) != 0) {
    if (ctx.opset < 14)
      return ctx.unsupported(node, "training_mode=1 before opset 14");
    return convertBatchNormTraining(ctx, node);
  }
  for (int i = 1; i < node.output_size(); ++i)
    if (!node.output(i).empty())
      return ctx.unsupported(node, "running mean/var outputs (training) are not supported");
  auto x = ctx.getTensor(node, node.input(0));
  if (failed(x))
    return failure();
  int64_t rank = tensorType(*x).getRank();
  Type et = tensorType(*x).getElementType();
  if (rank < 2 || !isa<FloatType>(et))
    return ctx.unsupported(node, "expects a floating-point input of rank >= 2");
  double epsilon = ctx.floatAttr(node, "epsilon", 1e-5f);
  AffineMap channelMap = AffineMap::get(rank, 0, {ctx.builder.getAffineDimExpr(1)}, &ctx.context);
  auto scale = floatConstant(ctx, node.input(1)), bias = floatConstant(ctx, node.input(2));
  auto mean = floatConstant(ctx, node.input(3)), var = floatConstant(ctx, node.input(4));
  const int64_t channels = tensorType(*x).getDimSize(1);
  if (scale && bias && mean && var && scale->size() == bias->size() &&
      scale->size() == mean->size() && scale->size() == var->size() &&
      (ShapedType::isDynamic(channels) || static_cast<int64_t>(scale->size()) == channels)) {
    // Fold into y = x * a + b at import time.
    std::vector<float> a(scale->size()), b(scale->size());
    for (size_t c = 0; c < scale->size(); ++c) {
      a[c] = static_cast<float>((*scale)[c] / std::sqrt((*var)[c] + epsilon));
      b[c] = static_cast<float>((*bias)[c] - (*mean)[c] * a[c]);
    }
    auto type = RankedTensorType::get({(int64_t)a.size()}, ctx.builder.getF32Type());
    Value aT = arith::ConstantOp::create(ctx.builder, ctx.loc, DenseElementsAttr::get(type, ArrayRef<float>(a)));
    Value bT = arith::ConstantOp::create(ctx.builder, ctx.loc, DenseElementsAttr::get(type, ArrayRef<float>(b)));
    Value result = mapOver(ctx, *x, {aT, bT}, {channelMap, channelMap},
                           [&](OpBuilder &bb, Location l, ValueRange v) -> Value {
                             Value s = v[1], t = v[2];
                             if (et != s.getType()) {
                               s = arith::TruncFOp::create(bb, l, et, s);
                               t = arith::TruncFOp::create(bb, l, et, t);
                             }
                             return arith::AddFOp::create(bb, l, arith::MulFOp::create(bb, l, v[0], s), t);
                           });
    ctx.setValue(node.output(0), result);
    return success();
  }
  SmallVector<Value> params;
  for (int i = 1; i < 5; ++i) {
    auto p = ctx.getTensor(node, node.input(i));
    if (failed(p))
      return failure();
    if (tensorType(*p).getElementType() != et || tensorType(*p).getRank() != 1)
      return ctx.unsupported(node, "parameters must be 1-D with the input's element type");
    if (failed(checkChannelParameter(ctx, node, i, *p, channels)))
      return failure();
    params.push_back(*p);
  }
  Value result = mapOver(ctx, *x, params, {channelMap, channelMap, channelMap, channelMap},
                         [&](OpBuilder &b, Location l, ValueRange v) -> Value {
                           Value eps = arith::ConstantOp::create(b, l, b.getFloatAttr(et, epsilon));
                           Value invStd = math::RsqrtOp::create(b, l, arith::AddFOp::create(b, l, v[4], eps));
                           Value centered = arith::SubFOp::create(b, l, v[0], v[3]);
                           Value scaled = arith::MulFOp::create(b, l, arith::MulFOp::create(b, l, centered, invStd), v[1]);
                           return arith::AddFOp::create(b, l, scaled, v[2]);
                         });
  ctx.setValue(node.output(0), result);
  return success();
}

} // namespace

void registerNormalizationOps(OpRegistry &r) {
  r.add("Softmax", [](ImportContext &c, const onnx::NodeProto &n) { return convertSoftmax(c, n, false); });
  r.add("LogSoftmax", [](ImportContext &c, const onnx::NodeProto &n) { return convertSoftmax(c, n, true); });
  r.add("Hardmax", convertHardmax);
  r.add("LRN", convertLRN);
  r.add("MeanVarianceNormalization", convertMVN, 9);
  r.add("LayerNormalization", convertLayerNorm, 17);
  r.add("BatchNormalization", convertBatchNorm);
  r.add("InstanceNormalization", convertInstanceNorm);
}

} // namespace turbine::onnx_frontend
