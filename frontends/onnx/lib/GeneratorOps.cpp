//===- GeneratorOps.cpp - ONNX Range, EyeLike, OneHot, Trilu -------------===//
//
// Ops that compute their values from indices: Range (symbolic on shape
// tensors, bounds read at run time otherwise), EyeLike, OneHot and Trilu (a
// generic comparing the row and column index with k).
//===----------------------------------------------------------------------===//
#include "ImportContext.h"

#include <cmath>
#include <limits>

using namespace mlir;

namespace turbine::onnx_frontend {
namespace {

RankedTensorType tensorType(Value v) { return cast<RankedTensorType>(v.getType()); }

/// Range whose start/limit/delta are known only at run time: the length
/// max(ceil((limit - start) / delta), 0) is computed on the host (integers)
/// or by a one-element kernel the host then reads (floats), and a generic
/// writes start + i * delta.
LogicalResult runtimeRange(ImportContext &ctx, const onnx::NodeProto &node) {
  using P = arith::CmpIPredicate;
  OpBuilder &b = ctx.builder;
  Location loc = ctx.loc;
  SmallVector<Value> args;
  for (int i = 0; i < 3; ++i) {
    auto v = ctx.getTensor(node, node.input(i));
    if (failed(v))
      return failure();
    auto type = tensorType(*v);
    if (type.getRank() > 1 || !type.hasStaticShape() || type.getNumElements() != 1)
      return ctx.fail(node, "input '" + node.input(i) + "' must be a scalar");
    args.push_back(*v);
  }
  Type et = tensorType(args[0]).getElementType();
  for (Value v : args)
    if (tensorType(v).getElementType() != et)
      return ctx.fail(node, "start, limit and delta have different element types");
  if (!isa<FloatType>(et) && !isa<IntegerType>(et))
    return ctx.unsupported(node, "element type of start/limit/delta");
  OpFoldResult length;
  if (isa<IntegerType>(et)) {
    SmallVector<OpFoldResult> scalars;
    for (int i = 0; i < 3; ++i) {
      auto t = ctx.getShapeOperand(node, i, i == 0 ? "start" : i == 1 ? "limit" : "delta");
      if (failed(t))
        return failure();
      scalars.push_back(ctx.toFoldResult(t->elements[0]));
    }
    OpFoldResult zero = b.getIndexAttr(0);
    if (failed(ctx.check(node, ctx.compare(P::ne, scalars[2], zero), "delta is 0")))
      return failure();
    length = ctx.indexOp<arith::MaxSIOp>(
        zero, ctx.indexOp<arith::CeilDivSIOp>(ctx.indexOp<arith::SubIOp>(scalars[1], scalars[0]),
                                              scalars[2]));
  } else {
    // max(ceil((limit - start) / delta), 0) in the element type, as i64,
    // by a one-element kernel; delta == 0 gives -1 and fails the check.
    Value init = ctx.empty({}, b.getI64Type());
    SmallVector<AffineMap> maps;
    for (Value v : args)
      maps.push_back(AffineMap::get(0, 0, tensorType(v).getRank() == 1
                                               ? SmallVector<AffineExpr>{b.getAffineConstantExpr(0)}
                                               : SmallVector<AffineExpr>{},
                                    &ctx.context));
    maps.push_back(AffineMap::get(0, 0, {}, &ctx.context));
    Value count = linalg::GenericOp::create(
                      b, loc, TypeRange{init.getType()}, args, ValueRange{init}, maps,
                      ArrayRef<utils::IteratorType>{},
                      [&](OpBuilder &nb, Location l, ValueRange a) {
                        Value zeroF = arith::ConstantOp::create(nb, l, nb.getFloatAttr(et, 0));
                        Value n = math::CeilOp::create(
                            nb, l, arith::DivFOp::create(nb, l, arith::SubFOp::create(nb, l, a[1], a[0]), a[2]));
                        n = arith::MaximumFOp::create(nb, l, n, zeroF);
                        Value asInt = arith::FPToSIOp::create(nb, l, nb.getI64Type(), n);
                        Value isZero = arith::CmpFOp::create(nb, l, arith::CmpFPredicate::OEQ, a[2], zeroF);
                        Value minusOne = arith::ConstantOp::create(nb, l, nb.getI64IntegerAttr(-1));
                        linalg::YieldOp::create(nb, l, (Value)arith::SelectOp::create(nb, l, isZero, minusOne, asInt));
                      })
                      .getResult(0);
    Value n = tensor::ExtractOp::create(b, loc, count, ValueRange{});
    length = ctx.asFoldResult(arith::IndexCastOp::create(b, loc, b.getIndexType(), n));
    if (failed(ctx.check(node, ctx.compare(P::sge, length, b.getIndexAttr(0)), "delta is 0")))
      return failure();
  }
  // out[i] = start + i * delta in the element type.
  Value init = ctx.empty({length}, et);
  SmallVector<AffineMap> maps;
  for (int i : {0, 2})
    maps.push_back(AffineMap::get(1, 0, tensorType(args[i]).getRank() == 1
                                            ? SmallVector<AffineExpr>{b.getAffineConstantExpr(0)}
                                            : SmallVector<AffineExpr>{},
                                  &ctx.context));
  maps.push_back(b.getMultiDimIdentityMap(1));
  Value result = linalg::GenericOp::create(
                     b, loc, TypeRange{init.getType()}, ValueRange{args[0], args[2]}, ValueRange{init}, maps,
                     ArrayRef<utils::IteratorType>{utils::IteratorType::parallel},
                     [&](OpBuilder &nb, Location l, ValueRange a) {
                       Value i = linalg::IndexOp::create(nb, l, 0);
                       Value v;
                       if (isa<FloatType>(et)) {
                         Value fi = arith::SIToFPOp::create(
                             nb, l, et, arith::IndexCastOp::create(nb, l, nb.getI64Type(), i));
                         v = arith::AddFOp::create(nb, l, a[0], arith::MulFOp::create(nb, l, fi, a[1]));
                       } else {
                         Value ii = arith::IndexCastOp::create(nb, l, et, i);
                         v = arith::AddIOp::create(nb, l, a[0], arith::MulIOp::create(nb, l, ii, a[1]));
                       }
                       linalg::YieldOp::create(nb, l, v);
                     })
                     .getResult(0);
  ctx.recordDims(result, {length});
  ctx.setValue(node.output(0), result);
  return success();
}

/// Range with constant start/limit/delta becomes a constant; otherwise see
/// runtimeRange.
LogicalResult convertRange(ImportContext &ctx, const onnx::NodeProto &node) {
  if (node.input_size() != 3)
    return ctx.fail(node, "expects 3 inputs");
  SmallVector<DenseElementsAttr> args;
  for (int i = 0; i < 3; ++i) {
    auto c = ctx.getConstant(node.input(i));
    if (!c || c->getNumElements() != 1)
      return runtimeRange(ctx, node);
    args.push_back(*c);
  }
  Type et = args[0].getElementType();
  if (isa<FloatType>(et)) {
    double start = (*args[0].getValues<APFloat>().begin()).convertToDouble();
    double limit = (*args[1].getValues<APFloat>().begin()).convertToDouble();
    double delta = (*args[2].getValues<APFloat>().begin()).convertToDouble();
    if (delta == 0)
      return ctx.fail(node, "delta is 0");
    int64_t n = std::max<int64_t>(0, (int64_t)std::ceil((limit - start) / delta));
    std::vector<float> values;
    for (int64_t k = 0; k < n; ++k)
      values.push_back((float)(start + k * delta));
    if (!et.isF32())
      return ctx.unsupported(node, "only f32 floating-point ranges are supported");
    ctx.setConstant(node.output(0), DenseElementsAttr::get(RankedTensorType::get({n}, et), ArrayRef<float>(values)));
    return success();
  }
  int64_t start = (*args[0].getValues<APInt>().begin()).getSExtValue();
  int64_t limit = (*args[1].getValues<APInt>().begin()).getSExtValue();
  int64_t delta = (*args[2].getValues<APInt>().begin()).getSExtValue();
  if (delta == 0)
    return ctx.fail(node, "delta is 0");
  int64_t n = std::max<int64_t>(0, (limit - start + delta + (delta > 0 ? -1 : 1)) / delta);
  SmallVector<APInt> values;
  for (int64_t k = 0; k < n; ++k)
    values.push_back(APInt(et.getIntOrFloatBitWidth(), (uint64_t)(start + k * delta), true));
  ctx.setConstant(node.output(0), DenseElementsAttr::get(RankedTensorType::get({n}, et), values));
  return success();
}

/// Map from a rank-`rank` iteration space to a 0-D or one-element 1-D
/// "scalar" tensor, read as an ordinary generic input.
AffineMap scalarTensorMap(ImportContext &ctx, Value scalar, int64_t rank) {
  SmallVector<AffineExpr> exprs;
  if (tensorType(scalar).getRank() == 1)
    exprs.push_back(ctx.builder.getAffineConstantExpr(0));
  return AffineMap::get(rank, 0, exprs, &ctx.context);
}

LogicalResult convertTrilu(ImportContext &ctx, const onnx::NodeProto &node) {
  auto x = ctx.getTensor(node, node.input(0));
  if (failed(x))
    return failure();
  int64_t rank = tensorType(*x).getRank();
  if (rank < 2)
    return ctx.fail(node, "input must have rank >= 2");
  // k: absent (0), a constant, or a runtime scalar read inside the generic.
  int64_t k = 0;
  Value kTensor;
  if (ImportContext::hasInput(node, 1)) {
    auto kt = ctx.getShapeTensor(node.input(1));
    if (kt && kt->elements.size() == 1 && kt->elements[0].isConstant()) {
      k = kt->elements[0].constant;
    } else {
      auto kv = ctx.getTensor(node, node.input(1));
      if (failed(kv))
        return failure();
      auto kType = tensorType(*kv);
      if (kType.getRank() > 1 || (kType.getRank() == 1 && kType.getDimSize(0) != 1) ||
          !isa<IntegerType>(kType.getElementType()))
        return ctx.fail(node, "k must be an integer scalar");
      kTensor = *kv;
    }
  }
  bool upper = ctx.intAttr(node, "upper", 1) != 0;
  Type et = tensorType(*x).getElementType();
  SmallVector<OpFoldResult> sizes = ctx.dims(*x);
  Value init = ctx.empty(sizes, et);
  SmallVector<Value> inputs{*x};
  SmallVector<AffineMap> maps{ctx.builder.getMultiDimIdentityMap(rank)};
  if (kTensor) {
    inputs.push_back(kTensor);
    maps.push_back(scalarTensorMap(ctx, kTensor, rank));
  }
  maps.push_back(ctx.builder.getMultiDimIdentityMap(rank));
  SmallVector<utils::IteratorType> iterators(rank, utils::IteratorType::parallel);
  Value zero = ctx.scalarConstant(et, 0);
  auto g = linalg::GenericOp::create(
      ctx.builder, ctx.loc, TypeRange{init.getType()}, inputs, ValueRange{init}, maps, iterators,
      [&](OpBuilder &b, Location l, ValueRange a) {
        Value i = arith::IndexCastOp::create(b, l, b.getI64Type(), linalg::IndexOp::create(b, l, rank - 2));
        Value j = arith::IndexCastOp::create(b, l, b.getI64Type(), linalg::IndexOp::create(b, l, rank - 1));
        Value diff = arith::SubIOp::create(b, l, j, i);
        Value kv;
        if (kTensor) {
          kv = a[1];
          if (kv.getType() != b.getI64Type())
            kv = arith::ExtSIOp::create(b, l, b.getI64Type(), kv);
        } else {
          kv = arith::ConstantOp::create(b, l, b.getI64IntegerAttr(k));
        }
        Value keep = arith::CmpIOp::create(b, l, upper ? arith::CmpIPredicate::sge : arith::CmpIPredicate::sle,
                                           diff, kv);
        linalg::YieldOp::create(b, l, (Value)arith::SelectOp::create(b, l, keep, a[0], zero));
      });
  ctx.recordDims(g.getResult(0), sizes);
  ctx.setValue(node.output(0), g.getResult(0));
  return success();
}

/// EyeLike: a 2-D tensor of the input's shape with ones where
/// column - row == k; element type from `dtype` or the input.
LogicalResult convertEyeLike(ImportContext &ctx, const onnx::NodeProto &node) {
  auto x = ctx.getTensor(node, node.input(0));
  if (failed(x))
    return failure();
  if (tensorType(*x).getRank() != 2)
    return ctx.fail(node, "input must be 2-D");
  Type et = tensorType(*x).getElementType();
  if (const onnx::AttributeProto *dtype = ctx.attr(node, "dtype")) {
    et = convertElementType(ctx.context, static_cast<int>(dtype->i()));
    if (!et)
      return ctx.unsupported(node, "dtype " + std::to_string(dtype->i()));
  }
  int64_t k = ctx.intAttr(node, "k", 0);
  SmallVector<OpFoldResult> sizes = ctx.dims(*x);
  Value init = ctx.empty(sizes, et);
  Value one = ctx.scalarConstant(et, 1), zero = ctx.scalarConstant(et, 0);
  SmallVector<utils::IteratorType> parallel(2, utils::IteratorType::parallel);
  Value result = linalg::GenericOp::create(
                     ctx.builder, ctx.loc, TypeRange{init.getType()}, ValueRange{}, ValueRange{init},
                     SmallVector<AffineMap>{ctx.builder.getMultiDimIdentityMap(2)}, parallel,
                     [&](OpBuilder &b, Location l, ValueRange) {
                       Value i = arith::IndexCastOp::create(b, l, b.getI64Type(), linalg::IndexOp::create(b, l, 0));
                       Value j = arith::IndexCastOp::create(b, l, b.getI64Type(), linalg::IndexOp::create(b, l, 1));
                       Value diag = arith::CmpIOp::create(b, l, arith::CmpIPredicate::eq, arith::SubIOp::create(b, l, j, i),
                                                          arith::ConstantOp::create(b, l, b.getI64IntegerAttr(k)));
                       linalg::YieldOp::create(b, l, (Value)arith::SelectOp::create(b, l, diag, one, zero));
                     })
                     .getResult(0);
  ctx.recordDims(result, sizes);
  ctx.setValue(node.output(0), result);
  return success();
}

/// OneHot (opset 9/11): depth must be a constant (it is the size of the new
/// axis); values = [off, on] may be a runtime tensor. Negative indices wrap
/// by depth (opset 11); out-of-range indices give an all-off row.
LogicalResult convertOneHot(ImportContext &ctx, const onnx::NodeProto &node) {
  if (node.input_size() < 3)
    return ctx.fail(node, "expects indices, depth and values");
  auto indices = ctx.getTensor(node, node.input(0));
  auto values = ctx.getTensor(node, node.input(2));
  if (failed(indices) || failed(values))
    return failure();
  // depth: the size of the new axis; read at run time when not a constant.
  OpFoldResult depth;
  if (auto c = ctx.getConstant(node.input(1)); c && c->getNumElements() == 1) {
    if (isa<FloatType>(c->getElementType()))
      depth = ctx.builder.getIndexAttr((int64_t)(*c->getValues<APFloat>().begin()).convertToDouble());
    else
      depth = ctx.builder.getIndexAttr((*c->getValues<APInt>().begin()).getSExtValue());
  } else {
    auto st = ctx.getShapeOperand(node, 1, "depth", /*allowFloat=*/true);
    if (failed(st))
      return failure();
    if (st->elements.size() != 1)
      return ctx.fail(node, "depth must hold exactly one value");
    depth = ctx.toFoldResult(st->elements[0]);
  }
  if (failed(ctx.check(node, ctx.compare(arith::CmpIPredicate::sge, depth, ctx.builder.getIndexAttr(1)),
                       "depth must be positive")))
    return failure();
  Value depthValue = ctx.toIndexValue(depth);
  auto vType = tensorType(*values);
  if (vType.getRank() != 1 || vType.getDimSize(0) != 2)
    return ctx.fail(node, "values must be a 2-element 1-D tensor");
  Type it = tensorType(*indices).getElementType();
  if (!isa<IntegerType>(it) && !isa<FloatType>(it))
    return ctx.unsupported(node, "indices element type");
  int64_t inRank = tensorType(*indices).getRank(), rank = inRank + 1;
  auto axis = normalizeAxis(ctx.intAttr(node, "axis", -1), rank);
  if (!axis)
    return ctx.fail(node, "axis out of range");
  int64_t a = *axis;
  SmallVector<OpFoldResult> sizes;
  SmallVector<AffineExpr> inExprs;
  for (int64_t d = 0, k = 0; d < rank; ++d) {
    if (d == a) {
      sizes.push_back(depth);
      continue;
    }
    sizes.push_back(ctx.dim(*indices, k++));
    inExprs.push_back(ctx.builder.getAffineDimExpr(d));
  }
  Type et = vType.getElementType();
  Value init = ctx.empty(sizes, et);
  SmallVector<AffineMap> maps{AffineMap::get(rank, 0, inExprs, &ctx.context),
                              ctx.builder.getMultiDimIdentityMap(rank)};
  SmallVector<utils::IteratorType> parallel(rank, utils::IteratorType::parallel);
  bool wrap = ctx.opset >= 11;
  Value result = linalg::GenericOp::create(
                     ctx.builder, ctx.loc, TypeRange{init.getType()}, ValueRange{*indices}, ValueRange{init}, maps,
                     parallel,
                     [&](OpBuilder &b, Location l, ValueRange args) {
                       Value i = args[0];
                       if (isa<FloatType>(it))
                         i = arith::FPToSIOp::create(b, l, b.getI64Type(), i);
                       else if (it.getIntOrFloatBitWidth() < 64)
                         i = arith::ExtSIOp::create(b, l, b.getI64Type(), i);
                       Value zero = arith::ConstantOp::create(b, l, b.getI64IntegerAttr(0));
                       Value dep = arith::IndexCastOp::create(b, l, b.getI64Type(), depthValue);
                       if (wrap) {
                         Value neg = arith::CmpIOp::create(b, l, arith::CmpIPredicate::slt, i, zero);
                         i = arith::SelectOp::create(b, l, neg, arith::AddIOp::create(b, l, i, dep), i);
                       }
                       Value j = arith::IndexCastOp::create(b, l, b.getI64Type(), linalg::IndexOp::create(b, l, a));
                       Value hit = arith::CmpIOp::create(b, l, arith::CmpIPredicate::eq, i, j);
                       Value off = tensor::ExtractOp::create(b, l, *values, ValueRange{arith::ConstantIndexOp::create(b, l, 0)});
                       Value on = tensor::ExtractOp::create(b, l, *values, ValueRange{arith::ConstantIndexOp::create(b, l, 1)});
                       linalg::YieldOp::create(b, l, (Value)arith::SelectOp::create(b, l, hit, on, off));
                     })
                     .getResult(0);
  ctx.recordDims(result, sizes);
  ctx.setValue(node.output(0), result);
  return success();
}

} // namespace

void registerGeneratorOps(OpRegistry &r) {
  r.add("Range", convertRange);
  r.add("Trilu", convertTrilu);
  r.add("EyeLike", convertEyeLike, 9);
  r.add("OneHot", convertOneHot, 9);
}

} // namespace turbine::onnx_frontend
