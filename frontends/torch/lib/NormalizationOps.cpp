//===- NormalizationOps.cpp - batch_norm, layer_norm, softmax, reductions -===//
//
// aten::batch_norm in eval mode (running statistics; usually already folded
// into the convolution by torch::jit::freeze), aten::layer_norm over the
// trailing dims, softmax / log_softmax (max-subtracted), and the mean / sum
// reductions (all dims or a dim list, keepdim), each built from reduction
// generics and broadcasting elementwise generics.
//===----------------------------------------------------------------------===//
#include "ImportContext.h"

using namespace mlir;

namespace turbine::torch_frontend {
namespace {

Value fconst(OpBuilder &b, Location l, Type t, double v) {
  return arith::ConstantOp::create(b, l, b.getFloatAttr(t, v));
}

/// Number of elements over `mask` as a float scalar of type `t`.
Value countOver(ImportContext &ctx, Value x, ArrayRef<bool> mask, Type t) {
  int64_t c = 1;
  Value dyn;
  for (size_t d = 0; d < mask.size(); ++d) {
    if (!mask[d])
      continue;
    SymInt s = ctx.dimSym(x, d);
    if (s.isConstant())
      c *= s.constant;
    else
      dyn = dyn ? (Value)arith::MulIOp::create(ctx.builder, ctx.loc, dyn, s.value) : s.value;
  }
  if (!dyn)
    return ctx.scalarConstant(t, (double)c);
  if (c != 1)
    dyn = arith::MulIOp::create(ctx.builder, ctx.loc, dyn, ctx.indexConstant(c));
  return ImportContext::castScalar(ctx.builder, ctx.loc, dyn, t);
}

/// Generic over x's shape reading x (identity) and `reduced` (dims not in mask).
Value mapWithReduced(ImportContext &ctx, Value x, ArrayRef<Value> reduced, ArrayRef<bool> mask,
                     const std::function<Value(OpBuilder &, Location, ValueRange)> &body) {
  int64_t rank = tensorType(x).getRank();
  SmallVector<OpFoldResult> sizes = ctx.dims(x);
  Value init = ctx.empty(sizes, tensorType(x).getElementType());
  SmallVector<AffineMap> maps{ctx.builder.getMultiDimIdentityMap(rank)};
  SmallVector<Value> inputs{x};
  for (Value r : reduced) {
    maps.push_back(droppedDimsMap(&ctx.context, mask));
    inputs.push_back(r);
  }
  maps.push_back(ctx.builder.getMultiDimIdentityMap(rank));
  SmallVector<utils::IteratorType> iterators(rank, utils::IteratorType::parallel);
  auto g = linalg::GenericOp::create(ctx.builder, ctx.loc, TypeRange{init.getType()}, inputs, ValueRange{init},
                                     maps, iterators, [&](OpBuilder &b, Location l, ValueRange a) {
                                       linalg::YieldOp::create(b, l, body(b, l, a.drop_back()));
                                     });
  ctx.recordDims(g.getResult(0), sizes);
  return g.getResult(0);
}

/// Reshapes a per-channel [C] tensor to [C, 1, ..., 1] for an NC... input.
Value channelParam(ImportContext &ctx, Value p, int64_t rank) {
  SmallVector<OpFoldResult> sizes{ctx.dim(p, 0)};
  for (int64_t d = 2; d < rank; ++d)
    sizes.push_back(ctx.builder.getIndexAttr(1));
  return ctx.reshape(p, sizes);
}

LogicalResult convertBatchNorm(ImportContext &ctx, const TorchNode &node) {
  auto x = ctx.tensorInput(node, 0);
  if (failed(x))
    return failure();
  auto training = ctx.boolInput(node, 5);
  auto eps = ctx.floatInput(node, 7);
  if (failed(training) || failed(eps))
    return failure();
  if (*training)
    return ctx.unsupported(node, "batch_norm in training mode (call model.eval() before saving)");
  if (ctx.isNoneInput(node, 3) || ctx.isNoneInput(node, 4))
    return ctx.unsupported(node, "batch_norm without running statistics");
  int64_t rank = tensorType(*x).getRank();
  Type et = tensorType(*x).getElementType();
  if (rank < 2 || !isa<FloatType>(et))
    return ctx.fail(node, "expects a floating-point input of rank >= 2");
  SmallVector<Value> params;
  for (size_t i : {1, 2, 3, 4}) {
    if (ctx.isNoneInput(node, i)) {
      params.push_back(nullptr);
      continue;
    }
    auto p = ctx.tensorInput(node, i);
    if (failed(p))
      return failure();
    params.push_back(channelParam(ctx, *p, rank));
  }
  SmallVector<Value> operands{*x, params[2], params[3]};
  if (params[0]) operands.push_back(params[0]);
  if (params[1]) operands.push_back(params[1]);
  bool hasW = params[0] != nullptr, hasB = params[1] != nullptr;
  double e = *eps;
  auto r = ctx.elementwiseTensors(node, operands, et, [&](OpBuilder &b, Location l, ValueRange a) -> Value {
    auto cv = [&](Value v) { return ImportContext::castScalar(b, l, v, et); };
    Value inv = math::RsqrtOp::create(b, l, arith::AddFOp::create(b, l, cv(a[2]), fconst(b, l, et, e)));
    Value y = arith::MulFOp::create(b, l, arith::SubFOp::create(b, l, a[0], cv(a[1])), inv);
    size_t k = 3;
    if (hasW) y = arith::MulFOp::create(b, l, y, cv(a[k++]));
    if (hasB) y = arith::AddFOp::create(b, l, y, cv(a[k++]));
    return y;
  });
  if (failed(r))
    return failure();
  ctx.setTensor(node, 0, *r);
  return success();
}

/// layer_norm(x, normalized_shape, weight?, bias?, eps, cudnn_enable).
LogicalResult convertLayerNorm(ImportContext &ctx, const TorchNode &node) {
  auto x = ctx.tensorInput(node, 0);
  auto shape = ctx.intListInput(node, 1);
  auto eps = ctx.floatInput(node, 4);
  if (failed(x) || failed(shape) || failed(eps))
    return failure();
  int64_t rank = tensorType(*x).getRank(), k = shape->size();
  Type et = tensorType(*x).getElementType();
  if (!isa<FloatType>(et) || k == 0 || k > rank)
    return ctx.fail(node, "expects a floating-point input whose trailing dims match normalized_shape");
  std::vector<bool> maskV(rank, false);
  for (int64_t d = rank - k; d < rank; ++d)
    maskV[d] = true;
  SmallVector<bool> mask(maskV.begin(), maskV.end());
  Value zero = ctx.scalarConstant(et, 0.0);
  Value n = countOver(ctx, *x, mask, et);
  Value sum = reduceDims(ctx, *x, mask, zero, [](OpBuilder &b, Location l, Value acc, Value v) -> Value {
    return arith::AddFOp::create(b, l, acc, v);
  });
  Value centered = mapWithReduced(ctx, *x, {sum}, mask, [&](OpBuilder &b, Location l, ValueRange a) -> Value {
    return arith::SubFOp::create(b, l, a[0], arith::DivFOp::create(b, l, a[1], n));
  });
  Value sq = reduceDims(ctx, centered, mask, zero, [](OpBuilder &b, Location l, Value acc, Value v) -> Value {
    return arith::AddFOp::create(b, l, acc, arith::MulFOp::create(b, l, v, v));
  });
  double e = *eps;
  Value normalized = mapWithReduced(ctx, centered, {sq}, mask, [&](OpBuilder &b, Location l, ValueRange a) -> Value {
    Value var = arith::DivFOp::create(b, l, a[1], n);
    return arith::MulFOp::create(b, l, a[0], math::RsqrtOp::create(b, l, arith::AddFOp::create(b, l, var, fconst(b, l, et, e))));
  });
  SmallVector<Value> operands{normalized};
  bool hasW = !ctx.isNoneInput(node, 2), hasB = !ctx.isNoneInput(node, 3);
  for (size_t i : {2, 3}) {
    if (ctx.isNoneInput(node, i))
      continue;
    auto p = ctx.tensorInput(node, i);
    if (failed(p))
      return failure();
    operands.push_back(*p);
  }
  if (hasW || hasB) {
    auto r = ctx.elementwiseTensors(node, operands, et, [&](OpBuilder &b, Location l, ValueRange a) -> Value {
      Value y = a[0];
      size_t j = 1;
      if (hasW) y = arith::MulFOp::create(b, l, y, ImportContext::castScalar(b, l, a[j++], et));
      if (hasB) y = arith::AddFOp::create(b, l, y, ImportContext::castScalar(b, l, a[j++], et));
      return y;
    });
    if (failed(r))
      return failure();
    normalized = *r;
  }
  ctx.setTensor(node, 0, normalized);
  return success();
}

/// softmax / log_softmax(x, dim, dtype?).
LogicalResult convertSoftmax(ImportContext &ctx, const TorchNode &node) {
  bool isLog = node.kind == "aten::log_softmax";
  auto x = ctx.tensorInput(node, 0);
  auto d = ctx.intInput(node, 1);
  if (failed(x) || failed(d))
    return failure();
  Value input = *x;
  if (node.inputs.size() > 2 && !ctx.isNoneInput(node, 2)) {
    auto code = ctx.intInput(node, 2);
    if (failed(code))
      return failure();
    Type t = elementTypeOfDtypeCode(ctx.context, *code);
    if (!t)
      return ctx.unsupported(node, "dtype code " + std::to_string(*code));
    input = ctx.castTensor(input, t);
  }
  Type et = tensorType(input).getElementType();
  if (!isa<FloatType>(et))
    return ctx.fail(node, "expects a floating-point input");
  int64_t rank = tensorType(input).getRank();
  if (rank == 0) {
    ctx.setTensor(node, 0, ctx.filled({}, ctx.scalarConstant(et, isLog ? 0.0 : 1.0)));
    return success();
  }
  auto dim = normalizeDim(*d, rank);
  if (!dim)
    return ctx.fail(node, "dim out of range");
  ctx.setTensor(node, 0, softmaxOver(ctx, input, *dim, isLog));
  return success();
}

} // namespace

Value softmaxOver(ImportContext &ctx, Value input, int64_t dim, bool isLog) {
  Type et = tensorType(input).getElementType();
  int64_t rank = tensorType(input).getRank();
  SmallVector<bool> mask(rank, false);
  mask[dim] = true;
  double lowest = APFloat::getInf(cast<FloatType>(et).getFloatSemantics(), true).convertToDouble();
  Value maxv = reduceDims(ctx, input, mask, ctx.scalarConstant(et, lowest),
                          [](OpBuilder &b, Location l, Value acc, Value v) -> Value {
                            return arith::MaximumFOp::create(b, l, acc, v);
                          });
  Value shifted = mapWithReduced(ctx, input, {maxv}, mask, [&](OpBuilder &b, Location l, ValueRange a) -> Value {
    return arith::SubFOp::create(b, l, a[0], a[1]);
  });
  Value sum = reduceDims(ctx, shifted, mask, ctx.scalarConstant(et, 0.0),
                         [](OpBuilder &b, Location l, Value acc, Value v) -> Value {
                           return arith::AddFOp::create(b, l, acc, math::ExpOp::create(b, l, v));
                         });
  Value result = mapWithReduced(ctx, shifted, {sum}, mask, [&](OpBuilder &b, Location l, ValueRange a) -> Value {
    if (isLog)
      return arith::SubFOp::create(b, l, a[0], math::LogOp::create(b, l, a[1]));
    return arith::DivFOp::create(b, l, math::ExpOp::create(b, l, a[0]), a[1]);
  });
  return result;
}

namespace {

/// mean / sum over all dims (x, dtype?) or a dim list (x, dims, keepdim, dtype?).
LogicalResult convertReduce(ImportContext &ctx, const TorchNode &node) {
  bool isMean = node.kind == "aten::mean";
  auto x = ctx.tensorInput(node, 0);
  if (failed(x))
    return failure();
  int64_t rank = tensorType(*x).getRank();
  SmallVector<bool> mask(rank, true);
  bool keepdim = false;
  size_t dtypeIndex = 1;
  const TValue &dimsArg = ctx.input(node, 1);
  if (node.inputs.size() >= 3 && (dimsArg.kind == TValue::Kind::List || dimsArg.kind == TValue::Kind::Int ||
                                  dimsArg.isNone())) {
    if (!dimsArg.isNone()) {
      auto dims = ctx.intListInput(node, 1);
      if (failed(dims))
        return failure();
      if (!dims->empty()) {
        mask.assign(rank, false);
        for (int64_t d : *dims) {
          auto n = normalizeDim(d, rank);
          if (!n)
            return ctx.fail(node, "dim out of range");
          mask[*n] = true;
        }
      }
    }
    auto k = ctx.boolInput(node, 2);
    if (failed(k))
      return failure();
    keepdim = *k;
    dtypeIndex = 3;
  }
  Value input = *x;
  if (dtypeIndex < node.inputs.size() && !ctx.isNoneInput(node, dtypeIndex)) {
    auto code = ctx.intInput(node, dtypeIndex);
    if (failed(code))
      return failure();
    Type t = elementTypeOfDtypeCode(ctx.context, *code);
    if (!t)
      return ctx.unsupported(node, "dtype code " + std::to_string(*code));
    input = ctx.castTensor(input, t);
  }
  Type et = tensorType(input).getElementType();
  if (isMean && !isa<FloatType>(et))
    return ctx.fail(node, "mean expects a floating-point input");
  if (!isMean && et.isInteger(1))
    input = ctx.castTensor(input, ctx.builder.getI64Type()), et = ctx.builder.getI64Type();
  bool f = isa<FloatType>(et);
  Value sum = reduceDims(ctx, input, mask, ctx.scalarConstant(et, 0.0), [f](OpBuilder &b, Location l, Value acc, Value v) -> Value {
    return f ? (Value)arith::AddFOp::create(b, l, acc, v) : (Value)arith::AddIOp::create(b, l, acc, v);
  });
  if (isMean) {
    Value n = countOver(ctx, input, mask, et);
    auto r = ctx.elementwiseTensors(node, ValueRange{sum}, et, [&](OpBuilder &b, Location l, ValueRange a) -> Value {
      return arith::DivFOp::create(b, l, a[0], n);
    });
    if (failed(r))
      return failure();
    sum = *r;
  }
  if (keepdim) {
    SmallVector<OpFoldResult> sizes;
    for (int64_t d = 0; d < rank; ++d)
      sizes.push_back(mask[d] ? OpFoldResult(ctx.builder.getIndexAttr(1)) : ctx.dim(input, d));
    sum = ctx.reshape(sum, sizes);
  }
  ctx.setTensor(node, 0, sum);
  return success();
}

} // namespace

void registerNormalizationOps(OpRegistry &r) {
  r.add("aten::batch_norm", convertBatchNorm);
  r.add("aten::layer_norm", convertLayerNorm);
  r.add("aten::softmax", convertSoftmax);
  r.add("aten::log_softmax", convertSoftmax);
  r.add("aten::mean", convertReduce);
  r.add("aten::sum", convertReduce);
}

} // namespace turbine::torch_frontend
