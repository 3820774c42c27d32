//===- ReductionOps.cpp - ONNX Reduce* ops -> reduction linalg.generic ----===//
//
// ReduceSum/ReduceMean/ReduceMax/ReduceMin/ReduceProd/ReduceSumSquare with
// axes as an attribute (older opsets) or an input (ReduceSum >= 13, the rest
// >= 18), keepdims and noop_with_empty_axes; axes read at run time pick the
// reduced dims with run-time flags (a 2*rank-loop generic). Also the
// reduction helpers the normalization ops share.
//===----------------------------------------------------------------------===//
#include "ImportContext.h"

using namespace mlir;

namespace turbine::onnx_frontend {

Value reducedCount(ImportContext &ctx, Value input, ArrayRef<bool> mask, Type type) {
  int64_t constant = 1;
  Value dynamic;
  for (auto [d, reduced] : llvm::enumerate(mask)) {
    if (!reduced)
      continue;
    SymDim s = ctx.toSymDim(ctx.dim(input, d));
    if (s.isConstant())
      constant *= s.constant;
    else
      dynamic = dynamic ? (Value)arith::MulIOp::create(ctx.builder, ctx.loc, dynamic, s.value) : s.value;
  }
  if (!dynamic)
    return ctx.scalarConstant(type, (double)constant);
  if (constant != 1)
    dynamic = arith::MulIOp::create(ctx.builder, ctx.loc, dynamic, ctx.indexConstant(constant));
  Value asInt = arith::IndexCastOp::create(ctx.builder, ctx.loc, ctx.builder.getI64Type(), dynamic);
  return arith::SIToFPOp::create(ctx.builder, ctx.loc, type, asInt);
}

namespace {

/// Reduces `input` over the dims whose run-time flag `reduced[d]` (i1) is
/// set, keeping them as size-1 dims. Which dims are reduced is data, so the
/// generic has 2*rank loops: i (parallel, the result's index, 1 on reduced
/// dims) and k (reduction, the input dim's size on reduced dims, else 1);
/// the input is read at i + k. A shape-only operand of the k sizes gives the
/// k loops their bounds.
Value reduceDimsAtRunTime(ImportContext &ctx, Value input, ArrayRef<Value> reduced, Value initValue,
                          const CombineFn &combine) {
  int64_t rank = reduced.size();
  OpFoldResult one = ctx.builder.getIndexAttr(1);
  SmallVector<OpFoldResult> inDims = ctx.dims(input), outSizes, loopSizes;
  for (int64_t d = 0; d < rank; ++d) {
    outSizes.push_back(ctx.select(reduced[d], one, inDims[d]));
    loopSizes.push_back(ctx.select(reduced[d], inDims[d], one));
  }
  Value init = ctx.filled(outSizes, initValue);
  Value bounds = ctx.empty(loopSizes, ctx.builder.getI8Type());
  SmallVector<AffineExpr> read, outer, inner;
  for (int64_t d = 0; d < rank; ++d) {
    read.push_back(ctx.builder.getAffineDimExpr(d) + ctx.builder.getAffineDimExpr(rank + d));
    outer.push_back(ctx.builder.getAffineDimExpr(d));
    inner.push_back(ctx.builder.getAffineDimExpr(rank + d));
  }
  SmallVector<AffineMap> maps{AffineMap::get(2 * rank, 0, read, &ctx.context),
                              AffineMap::get(2 * rank, 0, inner, &ctx.context),
                              AffineMap::get(2 * rank, 0, outer, &ctx.context)};
  SmallVector<utils::IteratorType> iterators(rank, utils::IteratorType::parallel);
  iterators.append(rank, utils::IteratorType::reduction);
  Value result = linalg::GenericOp::create(ctx.builder, ctx.loc, TypeRange{init.getType()},
                                           ValueRange{input, bounds}, ValueRange{init}, maps, iterators,
                                           [&](OpBuilder &b, Location l, ValueRange a) {
                                             linalg::YieldOp::create(b, l, combine(b, l, a[2], a[0]));
                                           })
                     .getResult(0);
  ctx.recordDims(result, outSizes);
  return result;
}

enum class ReduceKind { Sum, Mean, Max, Min, Prod, SumSquare, L1, L2, LogSum, LogSumExp };

/// The accumulation step of `kind` (Sum, Mean, ... : acc op element).
CombineFn combineFor(ReduceKind kind, bool isFloat, bool isUnsigned = false) {
  return [=](OpBuilder &b, Location l, Value acc, Value e) -> Value {
    switch (kind) {
    case ReduceKind::L1: {
      Value a = isFloat ? (Value)math::AbsFOp::create(b, l, e) : (Value)math::AbsIOp::create(b, l, e);
      return isFloat ? (Value)arith::AddFOp::create(b, l, acc, a) : (Value)arith::AddIOp::create(b, l, acc, a);
    }
    case ReduceKind::L2:
      return arith::AddFOp::create(b, l, acc, arith::MulFOp::create(b, l, e, e));
    case ReduceKind::LogSum:
    case ReduceKind::LogSumExp:
      return arith::AddFOp::create(b, l, acc, e);
    case ReduceKind::Sum:
    case ReduceKind::Mean:
      return isFloat ? (Value)arith::AddFOp::create(b, l, acc, e) : (Value)arith::AddIOp::create(b, l, acc, e);
    case ReduceKind::SumSquare: {
      Value sq = isFloat ? (Value)arith::MulFOp::create(b, l, e, e) : (Value)arith::MulIOp::create(b, l, e, e);
      return isFloat ? (Value)arith::AddFOp::create(b, l, acc, sq) : (Value)arith::AddIOp::create(b, l, acc, sq);
    }
    case ReduceKind::Prod:
      return isFloat ? (Value)arith::MulFOp::create(b, l, acc, e) : (Value)arith::MulIOp::create(b, l, acc, e);
    case ReduceKind::Max:
      if (isFloat)
        return arith::MaximumFOp::create(b, l, acc, e);
      return isUnsigned ? (Value)arith::MaxUIOp::create(b, l, acc, e) : (Value)arith::MaxSIOp::create(b, l, acc, e);
    case ReduceKind::Min:
      if (isFloat)
        return arith::MinimumFOp::create(b, l, acc, e);
      return isUnsigned ? (Value)arith::MinUIOp::create(b, l, acc, e) : (Value)arith::MinSIOp::create(b, l, acc, e);
    }
    return acc;
  };
}

/// Reduce* whose axes input is read at run time. Its static length fixes
/// the result rank (rank - #axes without keepdims; the axes are checked to
/// be distinct and in range), the values pick the dims.
LogicalResult convertReduceRuntimeAxes(ImportContext &ctx, const onnx::NodeProto &node, ReduceKind kind,
                                       Value x, const ShapeTensor &axesTensor, bool keepDims, Value init) {
  auto type = cast<RankedTensorType>(x.getType());
  int64_t rank = type.getRank();
  Type et = type.getElementType();
  bool isFloat = isa<FloatType>(et);
  int64_t count = axesTensor.elements.size();
  if (count > rank)
    return ctx.fail(node, std::to_string(count) + " axes for a rank-" + std::to_string(rank) + " input");
  auto axes = ctx.distinctAxes(node, axesTensor, rank);
  if (failed(axes))
    return failure();
  SmallVector<Value> reduced = ctx.axisFlags(*axes, rank);
  SmallVector<OpFoldResult> inDims = ctx.dims(x);
  Value source = x, maxValue;
  if (kind == ReduceKind::LogSumExp) {
    double negInf = APFloat::getInf(cast<FloatType>(et).getFloatSemantics(), true).convertToDouble();
    maxValue = reduceDimsAtRunTime(ctx, x, reduced, ctx.scalarConstant(et, negInf),
                                   combineFor(ReduceKind::Max, true));
    // exp(x - max), reading max at the index with reduced dims set to 0.
    Value emptyFull = ctx.empty(inDims, et);
    SmallVector<AffineMap> maps(2, ctx.builder.getMultiDimIdentityMap(rank));
    SmallVector<utils::IteratorType> parallel(rank, utils::IteratorType::parallel);
    source = linalg::GenericOp::create(
                 ctx.builder, ctx.loc, TypeRange{emptyFull.getType()}, ValueRange{x}, ValueRange{emptyFull},
                 maps, parallel,
                 [&](OpBuilder &b, Location l, ValueRange a) {
                   Value zero = arith::ConstantIndexOp::create(b, l, 0);
                   SmallVector<Value> at;
                   for (int64_t d = 0; d < rank; ++d)
                     at.push_back(arith::SelectOp::create(b, l, reduced[d], zero, linalg::IndexOp::create(b, l, d)));
                   Value m = tensor::ExtractOp::create(b, l, maxValue, at);
                   linalg::YieldOp::create(b, l, (Value)math::ExpOp::create(b, l, arith::SubFOp::create(b, l, a[0], m)));
                 })
                 .getResult(0);
    ctx.recordDims(source, inDims);
  }
  Value result = reduceDimsAtRunTime(ctx, source, reduced, init,
                                     combineFor(kind, isFloat, ctx.isUnsigned(node.input(0))));
  if (kind == ReduceKind::L2 || kind == ReduceKind::LogSum || kind == ReduceKind::LogSumExp ||
      kind == ReduceKind::Mean) {
    Value countValue;
    if (kind == ReduceKind::Mean) {
      OpFoldResult n = ctx.builder.getIndexAttr(1);
      for (int64_t d = 0; d < rank; ++d)
        n = ctx.indexOp<arith::MulIOp>(n, ctx.select(reduced[d], inDims[d], ctx.builder.getIndexAttr(1)));
      Value asInt = arith::IndexCastOp::create(ctx.builder, ctx.loc, ctx.builder.getI64Type(), ctx.toIndexValue(n));
      countValue = arith::SIToFPOp::create(ctx.builder, ctx.loc, et, asInt);
    }
    SmallVector<Value> operands{result};
    if (maxValue)
      operands.push_back(maxValue);
    auto r = ctx.elementwise(node, operands, et, [&](OpBuilder &b, Location l, ValueRange a) -> Value {
      if (kind == ReduceKind::Mean)
        return arith::DivFOp::create(b, l, a[0], countValue);
      if (kind == ReduceKind::L2)
        return math::SqrtOp::create(b, l, a[0]);
      Value v = math::LogOp::create(b, l, a[0]);
      if (kind == ReduceKind::LogSumExp)
        v = arith::AddFOp::create(b, l, v, a[1]);
      return v;
    });
    if (failed(r))
      return failure();
    result = *r;
  }
  if (!keepDims)
    result = ctx.reshape(result, ctx.keptSizes(inDims, reduced, rank - count));
  ctx.setValue(node.output(0), result);
  return success();
}

LogicalResult convertReduce(ImportContext &ctx, const onnx::NodeProto &node, ReduceKind kind,
                            int axesInputSince) {
  auto x = ctx.getTensor(node, node.input(0));
  if (failed(x))
    return failure();
  auto type = cast<RankedTensorType>(x->getType());
  int64_t rank = type.getRank();
  Type et = type.getElementType();
  bool isFloat = isa<FloatType>(et);
  bool floatOnly = kind == ReduceKind::Mean || kind == ReduceKind::L2 || kind == ReduceKind::LogSum ||
                   kind == ReduceKind::LogSumExp;
  if (!isFloat && floatOnly)
    return ctx.unsupported(node, "only floating-point inputs are supported");
  std::optional<std::vector<int64_t>> axes;
  std::optional<ShapeTensor> runtimeAxes;
  if (ctx.opset >= axesInputSince) {
    if (ImportContext::hasInput(node, 1)) {
      auto a = ctx.getShapeOperand(node, 1, "axes");
      if (failed(a))
        return failure();
      if (a->isConstant()) {
        axes.emplace();
        for (const SymDim &d : a->elements)
          axes->push_back(d.constant);
      } else {
        runtimeAxes = *a;
      }
    }
  } else {
    axes = ctx.intsAttr(node, "axes");
  }
  // ONNX's shape inference keeps the dims only for 1: other values made the
  // importer and it disagree (regress-reduce-keepdims-65).
  int64_t keepDimsAttr = ctx.intAttr(node, "keepdims", 1);
  if (keepDimsAttr != 0 && keepDimsAttr != 1)
    return ctx.fail(node, "keepdims must be 0 or 1");
  bool keepDims = keepDimsAttr != 0;
  bool noop = ctx.intAttr(node, "noop_with_empty_axes", 0) != 0;
  SmallVector<bool> mask(rank, false);
  if (runtimeAxes) {
    // The dims are chosen at run time (convertReduceRuntimeAxes below).
  } else if (!axes || axes->empty()) {
    if (noop) {
      ctx.setValue(node.output(0), *x);
      return success();
    }
    mask.assign(rank, true);
  } else {
    for (int64_t a : *axes) {
      auto n = normalizeAxis(a, rank);
      if (!n)
        return ctx.fail(node, "axis " + std::to_string(a) + " is out of range");
      mask[*n] = true;
    }
  }
  double initial = 0;
  if (kind == ReduceKind::Prod)
    initial = 1;
  if (kind == ReduceKind::Max || kind == ReduceKind::Min) {
    bool neg = kind == ReduceKind::Max;
    if (isFloat)
      initial = APFloat::getInf(cast<FloatType>(et).getFloatSemantics(), neg).convertToDouble();
    else
      initial = neg ? (double)APInt::getSignedMinValue(et.getIntOrFloatBitWidth()).getSExtValue()
                    : (double)APInt::getSignedMaxValue(et.getIntOrFloatBitWidth()).getSExtValue();
  }
  Value init;
  bool isUnsigned = ctx.isUnsigned(node.input(0));
  if (!isFloat && (kind == ReduceKind::Max || kind == ReduceKind::Min)) {
    unsigned width = et.getIntOrFloatBitWidth();
    APInt v = kind == ReduceKind::Max
                  ? (isUnsigned ? APInt::getMinValue(width) : APInt::getSignedMinValue(width))
                  : (isUnsigned ? APInt::getMaxValue(width) : APInt::getSignedMaxValue(width));
    init = arith::ConstantOp::create(ctx.builder, ctx.loc, ctx.builder.getIntegerAttr(et, v));
  } else {
    init = ctx.scalarConstant(et, initial);
  }
  if (runtimeAxes)
    return convertReduceRuntimeAxes(ctx, node, kind, *x, *runtimeAxes, keepDims, init);
  // LogSumExp subtracts the max first for stability.
  Value source = *x, maxValue;
  if (kind == ReduceKind::LogSumExp) {
    double negInf = APFloat::getInf(cast<FloatType>(et).getFloatSemantics(), true).convertToDouble();
    maxValue = reduceDims(ctx, *x, mask, ctx.scalarConstant(et, negInf),
                          [](OpBuilder &b, Location l, Value acc, Value e) -> Value {
                            return arith::MaximumFOp::create(b, l, acc, e);
                          });
    SmallVector<OpFoldResult> sizes = ctx.dims(*x);
    Value emptyFull = ctx.empty(sizes, et);
    SmallVector<AffineMap> maps{ctx.builder.getMultiDimIdentityMap(rank),
                                droppedDimsMap(&ctx.context, mask),
                                ctx.builder.getMultiDimIdentityMap(rank)};
    SmallVector<utils::IteratorType> parallel(rank, utils::IteratorType::parallel);
    source = linalg::GenericOp::create(ctx.builder, ctx.loc, TypeRange{emptyFull.getType()},
                                       ValueRange{*x, maxValue}, ValueRange{emptyFull}, maps, parallel,
                                       [](OpBuilder &b, Location l, ValueRange a) {
                                         Value shifted = arith::SubFOp::create(b, l, a[0], a[1]);
                                         linalg::YieldOp::create(b, l, (Value)math::ExpOp::create(b, l, shifted));
                                       })
                 .getResult(0);
    ctx.recordDims(source, sizes);
  }
  Value reduced = reduceDims(ctx, source, mask, init, combineFor(kind, isFloat, isUnsigned));
  if (kind == ReduceKind::L2 || kind == ReduceKind::LogSum || kind == ReduceKind::LogSumExp) {
    SmallVector<Value> operands{reduced};
    if (maxValue)
      operands.push_back(maxValue);
    auto r = ctx.elementwise(node, operands, et, [&](OpBuilder &b, Location l, ValueRange a) -> Value {
      if (kind == ReduceKind::L2)
        return math::SqrtOp::create(b, l, a[0]);
      Value v = math::LogOp::create(b, l, a[0]);
      if (kind == ReduceKind::LogSumExp)
        v = arith::AddFOp::create(b, l, v, a[1]);
      return v;
    });
    if (failed(r))
      return failure();
    reduced = *r;
  }
  if (kind == ReduceKind::Mean) {
    Value count = reducedCount(ctx, *x, mask, et);
    auto r = ctx.elementwise(node, ValueRange{reduced}, et, [&](OpBuilder &b, Location l, ValueRange a) {
      return (Value)arith::DivFOp::create(b, l, a[0], count);
    });
    if (failed(r))
      return failure();
    reduced = *r;
  }
  if (keepDims) {
    SmallVector<OpFoldResult> sizes;
    for (int64_t d = 0; d < rank; ++d)
      sizes.push_back(mask[d] ? (OpFoldResult)ctx.builder.getIndexAttr(1) : ctx.dim(*x, d));
    reduced = ctx.reshape(reduced, sizes);
  }
  ctx.setValue(node.output(0), reduced);
  return success();
}

OpHandler reduce(ReduceKind kind, int axesInputSince) {
  return [=](ImportContext &ctx, const onnx::NodeProto &node) {
    return convertReduce(ctx, node, kind, axesInputSince);
  };
}

/// ArgMax / ArgMin along one axis: a generic with (value, index) outputs.
LogicalResult convertArgReduce(ImportContext &ctx, const onnx::NodeProto &node, bool isMax) {
  auto x = ctx.getTensor(node, node.input(0));
  if (failed(x))
    return failure();
  auto type = cast<RankedTensorType>(x->getType());
  int64_t rank = type.getRank();
  Type et = type.getElementType();
  auto axis = normalizeAxis(ctx.intAttr(node, "axis", 0), rank);
  if (!axis)
    return ctx.fail(node, "axis out of range");
  // ONNX's shape inference keeps the dims only for 1: other values made the
  // importer and it disagree (regress-reduce-keepdims-65).
  int64_t keepDimsAttr = ctx.intAttr(node, "keepdims", 1);
  if (keepDimsAttr != 0 && keepDimsAttr != 1)
    return ctx.fail(node, "keepdims must be 0 or 1");
  bool keepDims = keepDimsAttr != 0;
  bool selectLast = ctx.intAttr(node, "select_last_index", 0) != 0;
  bool isFloat = isa<FloatType>(et);
  bool isUnsigned = ctx.isUnsigned(node.input(0));
  SmallVector<bool> mask(rank, false);
  mask[*axis] = true;
  SmallVector<OpFoldResult> sizes;
  for (int64_t d = 0; d < rank; ++d)
    if (!mask[d])
      sizes.push_back(ctx.dim(*x, d));
  Value initValue;
  if (isFloat) {
    initValue = ctx.scalarConstant(
        et, APFloat::getInf(cast<FloatType>(et).getFloatSemantics(), isMax).convertToDouble());
  } else {
    unsigned width = et.getIntOrFloatBitWidth();
    initValue = arith::ConstantOp::create(
        ctx.builder, ctx.loc,
        ctx.builder.getIntegerAttr(et, isMax ? APInt::getSignedMinValue(width) : APInt::getSignedMaxValue(width)));
  }
  Value values = ctx.filled(sizes, initValue);
  Value indices = ctx.filled(sizes, ctx.scalarConstant(ctx.builder.getI64Type(), 0));
  AffineMap reducedMap = droppedDimsMap(&ctx.context, mask);
  SmallVector<AffineMap> maps{ctx.builder.getMultiDimIdentityMap(rank), reducedMap, reducedMap};
  SmallVector<utils::IteratorType> iterators;
  for (int64_t d = 0; d < rank; ++d)
    iterators.push_back(mask[d] ? utils::IteratorType::reduction : utils::IteratorType::parallel);
  int64_t axisDim = *axis;
  auto generic = linalg::GenericOp::create(
      ctx.builder, ctx.loc, TypeRange{values.getType(), indices.getType()}, ValueRange{*x},
      ValueRange{values, indices}, maps, iterators, [&](OpBuilder &b, Location l, ValueRange a) {
        Value position = arith::IndexCastOp::create(b, l, b.getI64Type(),
                                                    linalg::IndexOp::create(b, l, axisDim));
        Value better;
        if (isFloat)
          better = arith::CmpFOp::create(b, l,
                                         isMax ? (selectLast ? arith::CmpFPredicate::OGE : arith::CmpFPredicate::OGT)
                                               : (selectLast ? arith::CmpFPredicate::OLE : arith::CmpFPredicate::OLT),
                                         a[0], a[1]);
        else if (isUnsigned)
          better = arith::CmpIOp::create(b, l,
                                         isMax ? (selectLast ? arith::CmpIPredicate::uge : arith::CmpIPredicate::ugt)
                                               : (selectLast ? arith::CmpIPredicate::ule : arith::CmpIPredicate::ult),
                                         a[0], a[1]);
        else
          better = arith::CmpIOp::create(b, l,
                                         isMax ? (selectLast ? arith::CmpIPredicate::sge : arith::CmpIPredicate::sgt)
                                               : (selectLast ? arith::CmpIPredicate::sle : arith::CmpIPredicate::slt),
                                         a[0], a[1]);
        // The first element always wins so an all -inf row still gets index 0.
        Value first = arith::CmpIOp::create(b, l, arith::CmpIPredicate::eq, position,
                                            arith::ConstantOp::create(b, l, b.getI64IntegerAttr(0)));
        better = arith::OrIOp::create(b, l, better, first);
        Value v = arith::SelectOp::create(b, l, better, a[0], a[1]);
        Value i = arith::SelectOp::create(b, l, better, position, a[2]);
        linalg::YieldOp::create(b, l, ValueRange{v, i});
      });
  Value result = generic.getResult(1);
  ctx.recordDims(result, sizes);
  if (keepDims) {
    SmallVector<OpFoldResult> kept;
    for (int64_t d = 0; d < rank; ++d)
      kept.push_back(mask[d] ? (OpFoldResult)ctx.builder.getIndexAttr(1) : ctx.dim(*x, d));
    result = ctx.reshape(result, kept);
  }
  ctx.setValue(node.output(0), result);
  return success();
}

/// Cumulative sum of `x` along constant `axis`: a generic with one extra
/// reduction loop k over the axis; out[i] += x[i with i_axis := k] when k is
/// before (or, reversed, after) i_axis, inclusive unless `exclusive`.
Value cumulativeSum(ImportContext &ctx, Value x, int64_t axis, bool exclusive, bool reverse) {
  auto type = cast<RankedTensorType>(x.getType());
  int64_t rank = type.getRank();
  Type et = type.getElementType();
  bool isFloat = isa<FloatType>(et);
  SmallVector<OpFoldResult> sizes = ctx.dims(x);
  Value init = ctx.filled(sizes, ctx.scalarConstant(et, 0));
  SmallVector<AffineExpr> readExprs;
  for (int64_t d = 0; d < rank; ++d)
    readExprs.push_back(ctx.builder.getAffineDimExpr(d == axis ? rank : d));
  SmallVector<AffineExpr> outExprs;
  for (int64_t d = 0; d < rank; ++d)
    outExprs.push_back(ctx.builder.getAffineDimExpr(d));
  SmallVector<AffineMap> maps{AffineMap::get(rank + 1, 0, readExprs, &ctx.context),
                              AffineMap::get(rank + 1, 0, outExprs, &ctx.context)};
  SmallVector<utils::IteratorType> iterators(rank, utils::IteratorType::parallel);
  iterators.push_back(utils::IteratorType::reduction);
  arith::CmpIPredicate pred = reverse ? (exclusive ? arith::CmpIPredicate::sgt : arith::CmpIPredicate::sge)
                                      : (exclusive ? arith::CmpIPredicate::slt : arith::CmpIPredicate::sle);
  Value result = linalg::GenericOp::create(
                     ctx.builder, ctx.loc, TypeRange{init.getType()}, ValueRange{x}, ValueRange{init}, maps,
                     iterators,
                     [&](OpBuilder &b, Location l, ValueRange a) {
                       Value k = linalg::IndexOp::create(b, l, rank);
                       Value i = linalg::IndexOp::create(b, l, axis);
                       Value take = arith::CmpIOp::create(b, l, pred, k, i);
                       Value zero = arith::ConstantOp::create(b, l, isFloat ? (TypedAttr)b.getFloatAttr(et, 0)
                                                                            : (TypedAttr)b.getIntegerAttr(et, 0));
                       Value v = arith::SelectOp::create(b, l, take, a[0], zero);
                       Value sum = isFloat ? (Value)arith::AddFOp::create(b, l, a[1], v)
                                           : (Value)arith::AddIOp::create(b, l, a[1], v);
                       linalg::YieldOp::create(b, l, sum);
                     })
                     .getResult(0);
  ctx.recordDims(result, sizes);
  return result;
}

/// CumSum (opset 11/14). A constant axis gives one cumulative-sum generic; a
/// runtime axis (a graph input: it does not change the result shape) gives
/// one per possible axis and a final generic selecting by the axis value.
LogicalResult convertCumSum(ImportContext &ctx, const onnx::NodeProto &node) {
  if (node.input_size() < 2)
    return ctx.fail(node, "expects x and axis");
  auto x = ctx.getTensor(node, node.input(0));
  if (failed(x))
    return failure();
  auto type = cast<RankedTensorType>(x->getType());
  int64_t rank = type.getRank();
  Type et = type.getElementType();
  if (rank < 1)
    return ctx.fail(node, "input must have rank >= 1");
  if (!isa<FloatType>(et) && !isa<IntegerType>(et))
    return ctx.unsupported(node, "unsupported element type");
  bool exclusive = ctx.intAttr(node, "exclusive", 0) != 0;
  bool reverse = ctx.intAttr(node, "reverse", 0) != 0;
  auto axisShape = ctx.getShapeTensor(node.input(1));
  if (axisShape && axisShape->elements.size() == 1 && axisShape->elements[0].isConstant()) {
    auto axis = normalizeAxis(axisShape->elements[0].constant, rank);
    if (!axis)
      return ctx.fail(node, "axis out of range");
    ctx.setValue(node.output(0), cumulativeSum(ctx, *x, *axis, exclusive, reverse));
    return success();
  }
  auto axisTensor = ctx.getTensor(node, node.input(1));
  if (failed(axisTensor))
    return failure();
  auto axisType = cast<RankedTensorType>(axisTensor->getType());
  if (axisType.getRank() > 1 || (axisType.getRank() == 1 && axisType.getDimSize(0) != 1) ||
      !isa<IntegerType>(axisType.getElementType()))
    return ctx.fail(node, "axis must be an integer scalar");
  if (rank == 1) {
    // Only axis 0 (or -1) is valid.
    ctx.setValue(node.output(0), cumulativeSum(ctx, *x, 0, exclusive, reverse));
    return success();
  }
  SmallVector<Value> candidates;
  for (int64_t a = 0; a < rank; ++a)
    candidates.push_back(cumulativeSum(ctx, *x, a, exclusive, reverse));
  SmallVector<OpFoldResult> sizes = ctx.dims(*x);
  Value init = ctx.empty(sizes, et);
  SmallVector<Value> inputs(candidates);
  inputs.push_back(*axisTensor);
  AffineMap id = ctx.builder.getMultiDimIdentityMap(rank);
  SmallVector<AffineMap> maps(rank, id);
  SmallVector<AffineExpr> axisExprs;
  if (axisType.getRank() == 1)
    axisExprs.push_back(ctx.builder.getAffineConstantExpr(0));
  maps.push_back(AffineMap::get(rank, 0, axisExprs, &ctx.context));
  maps.push_back(id);
  SmallVector<utils::IteratorType> parallel(rank, utils::IteratorType::parallel);
  Type axisEt = axisType.getElementType();
  Value result = linalg::GenericOp::create(
                     ctx.builder, ctx.loc, TypeRange{init.getType()}, inputs, ValueRange{init}, maps, parallel,
                     [&](OpBuilder &b, Location l, ValueRange a) {
                       Value axis = a[rank];
                       Value zero = arith::ConstantOp::create(b, l, b.getIntegerAttr(axisEt, 0));
                       Value neg = arith::CmpIOp::create(b, l, arith::CmpIPredicate::slt, axis, zero);
                       Value wrapped = arith::AddIOp::create(
                           b, l, axis, arith::ConstantOp::create(b, l, b.getIntegerAttr(axisEt, rank)));
                       axis = arith::SelectOp::create(b, l, neg, wrapped, axis);
                       Value v = a[rank - 1];
                       for (int64_t c = rank - 2; c >= 0; --c) {
                         Value is = arith::CmpIOp::create(b, l, arith::CmpIPredicate::eq, axis,
                                                          arith::ConstantOp::create(b, l, b.getIntegerAttr(axisEt, c)));
                         v = arith::SelectOp::create(b, l, is, a[c], v);
                       }
                       linalg::YieldOp::create(b, l, v);
                     })
                     .getResult(0);
  ctx.recordDims(result, sizes);
  ctx.setValue(node.output(0), result);
  return success();
}

} // namespace

void registerReductionOps(OpRegistry &r) {
  r.add("ReduceL1", reduce(ReduceKind::L1, 18));
  r.add("ReduceL2", reduce(ReduceKind::L2, 18));
  r.add("ReduceLogSum", reduce(ReduceKind::LogSum, 18));
  r.add("ReduceLogSumExp", reduce(ReduceKind::LogSumExp, 18));
  r.add("ArgMax", [](ImportContext &c, const onnx::NodeProto &n) { return convertArgReduce(c, n, true); });
  r.add("ArgMin", [](ImportContext &c, const onnx::NodeProto &n) { return convertArgReduce(c, n, false); });
  r.add("ReduceSum", reduce(ReduceKind::Sum, 13));
  r.add("CumSum", convertCumSum, 11);
  r.add("ReduceMean", reduce(ReduceKind::Mean, 18));
  r.add("ReduceMax", reduce(ReduceKind::Max, 18));
  r.add("ReduceMin", reduce(ReduceKind::Min, 18));
  r.add("ReduceProd", reduce(ReduceKind::Prod, 18));
  r.add("ReduceSumSquare", reduce(ReduceKind::SumSquare, 18));
}

} // namespace turbine::onnx_frontend
