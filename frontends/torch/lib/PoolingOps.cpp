//===- PoolingOps.cpp - aten pooling -------------------------------------===//
//
// max_pool2d / avg_pool2d (per-window divisors where windows differ:
// count_include_pad=False over padding, ceil_mode overhang; divisor_override)
// and adaptive_avg_pool2d / adaptive_max_pool2d (uneven bins as a generic
// with per-output bin bounds).
//===----------------------------------------------------------------------===//
#include "ImportContext.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"

#include <cmath>
#include <cstring>

using namespace mlir;

namespace turbine::torch_frontend {
namespace {

Value zeroOf(ImportContext &ctx, Type t) { return ctx.scalarConstant(t, 0); }

/// Pooling over NCHW with `kernel` etc.; isMax or sum then divide.
FailureOr<Value> pool2d(ImportContext &ctx, const TorchNode &node, Value x, Window win, bool isMax,
                        bool countIncludePad, std::optional<int64_t> divisorOverride = std::nullopt) {
  auto xType = tensorType(x);
  Type et = xType.getElementType();
  if (xType.getRank() != 4 || !isa<FloatType>(et)) {
    (void)ctx.unsupported(node, "only floating-point 2-D pooling over NCHW (or CHW) input is supported");
    return failure();
  }
  SmallVector<int64_t> userPadHigh = win.padHigh;
  SmallVector<OpFoldResult> outSizes{ctx.dim(x, 0), ctx.dim(x, 1)};
  for (int d = 0; d < 2; ++d) {
    auto s = windowOutputSize(ctx, node, ctx.dim(x, 2 + d), win, d);
    if (failed(s))
      return failure();
    outSizes.push_back(*s);
  }
  double lowest = APFloat::getLargest(cast<FloatType>(et).getFloatSemantics(), true).convertToDouble();
  Value padValue = isMax ? ctx.scalarConstant(et, lowest) : zeroOf(ctx, et);
  Value padded = padTensor(ctx, x, {0, 0, win.padLow[0], win.padLow[1]}, {0, 0, win.padHigh[0], win.padHigh[1]}, padValue);
  Value init = ctx.filled(outSizes, padValue);
  Value window = tensor::EmptyOp::create(ctx.builder, ctx.loc, win.kernel, et);
  auto strides = ctx.builder.getI64TensorAttr(win.strides);
  auto dilations = ctx.builder.getI64TensorAttr(win.dilations);
  Value result;
  if (isMax)
    result = linalg::PoolingNchwMaxOp::create(ctx.builder, ctx.loc, TypeRange{init.getType()}, ValueRange{padded, window},
                                              ValueRange{init}, strides, dilations)
                 .getResult(0);
  else
    result = linalg::PoolingNchwSumOp::create(ctx.builder, ctx.loc, TypeRange{init.getType()}, ValueRange{padded, window},
                                              ValueRange{init}, strides, dilations)
                 .getResult(0);
  ctx.recordDims(result, outSizes);
  if (isMax)
    return result;
  bool anyPad = win.padLow[0] || win.padLow[1] || userPadHigh[0] || userPadHigh[1];
  bool ceilExtended = win.padHigh != userPadHigh;
  if (divisorOverride || !((anyPad && !countIncludePad) || ceilExtended)) {
    double count = divisorOverride ? (double)*divisorOverride : (double)win.kernel[0] * (double)win.kernel[1];
    return ctx.elementwiseTensors(node, ValueRange{result}, et, [&](OpBuilder &b, Location l, ValueRange a) -> Value {
      return arith::DivFOp::create(b, l, a[0], arith::ConstantOp::create(b, l, b.getFloatAttr(et, count)));
    });
  }
  // Windows of different sizes (torch's avg_pool2d): per output position,
  // start = o * stride - pad, end = min(start + k, size + pad); the divisor
  // is (end - start) over the padded input, or with count_include_pad=False
  // the part inside the input, [max(start, 0), min(end, size)).
  SmallVector<Value> sizes{ctx.toIndexValue(ctx.dim(x, 2)), ctx.toIndexValue(ctx.dim(x, 3))};
  return ctx.elementwiseTensors(node, ValueRange{result}, et, [&](OpBuilder &b, Location l, ValueRange a) -> Value {
    Value count;
    for (int d = 0; d < 2; ++d) {
      auto c = [&](int64_t v) { return (Value)arith::ConstantIndexOp::create(b, l, v); };
      Value o = linalg::IndexOp::create(b, l, 2 + d);
      Value start = arith::SubIOp::create(b, l, arith::MulIOp::create(b, l, o, c(win.strides[d])), c(win.padLow[d]));
      Value end = arith::MinSIOp::create(b, l, arith::AddIOp::create(b, l, start, c(win.kernel[d])),
                                         arith::AddIOp::create(b, l, sizes[d], c(userPadHigh[d])));
      if (!countIncludePad) {
        start = arith::MaxSIOp::create(b, l, start, c(0));
        end = arith::MinSIOp::create(b, l, end, sizes[d]);
      }
      Value extent = arith::SubIOp::create(b, l, end, start);
      count = count ? (Value)arith::MulIOp::create(b, l, count, extent) : extent;
    }
    Value n = arith::SIToFPOp::create(b, l, et, arith::IndexCastOp::create(b, l, b.getI64Type(), count));
    return arith::DivFOp::create(b, l, a[0], n);
  });
}

/// max_pool2d(x, kernel, stride, padding, dilation, ceil_mode) and
/// avg_pool2d(x, kernel, stride, padding, ceil_mode, count_include_pad, divisor_override).
LogicalResult convertPool(ImportContext &ctx, const TorchNode &node) {
  bool isMax = node.kind == "aten::max_pool2d";
  auto x = ctx.tensorInput(node, 0);
  if (failed(x))
    return failure();
  auto kernel = spatialList(ctx, node, 1, 2, 1);
  if (failed(kernel))
    return failure();
  auto strides = spatialList(ctx, node, 2, 2, 0);
  auto pads = spatialList(ctx, node, 3, 2, 0);
  if (failed(strides) || failed(pads))
    return failure();
  Window win;
  win.kernel = *kernel;
  win.strides = *strides;
  for (int d = 0; d < 2; ++d)
    if (win.strides[d] == 0)
      win.strides[d] = win.kernel[d];
  win.padLow = *pads;
  win.padHigh = *pads;
  bool countIncludePad = true;
  std::optional<int64_t> divisorOverride;
  if (isMax) {
    auto dil = spatialList(ctx, node, 4, 2, 1);
    auto ceil = ctx.boolInput(node, 5);
    if (failed(dil) || failed(ceil))
      return failure();
    win.dilations = *dil;
    win.ceilMode = *ceil;
  } else {
    win.dilations = {1, 1};
    auto ceil = ctx.boolInput(node, 4);
    auto cip = ctx.boolInput(node, 5);
    if (failed(ceil) || failed(cip))
      return failure();
    win.ceilMode = *ceil;
    countIncludePad = *cip;
    if (!ctx.isNoneInput(node, 6)) {
      auto divisor = ctx.intInput(node, 6);
      if (failed(divisor))
        return failure();
      if (*divisor == 0)
        return ctx.fail(node, "divisor_override must not be zero");
      divisorOverride = *divisor;
    }
  }
  Value input = *x;
  bool chw = tensorType(input).getRank() == 3;
  if (chw)
    input = ctx.reshape(input, {ctx.builder.getIndexAttr(1), ctx.dim(input, 0), ctx.dim(input, 1), ctx.dim(input, 2)});
  auto r = pool2d(ctx, node, input, win, isMax, countIncludePad, divisorOverride);
  if (failed(r))
    return failure();
  Value result = *r;
  if (chw)
    result = ctx.reshape(result, {ctx.dim(result, 1), ctx.dim(result, 2), ctx.dim(result, 3)});
  ctx.setTensor(node, 0, result);
  return success();
}

/// Adaptive pooling where the bins have different sizes (torch's bins:
/// [floor(i*in/out), ceil((i+1)*in/out))): a generic over (n, c, oh, ow, kh,
/// kw) with kh/kw up to the largest bin, masking cells past a bin's end.
Value adaptivePoolUneven(ImportContext &ctx, Value x, ArrayRef<int64_t> out, bool isMax) {
  auto type = tensorType(x);
  Type et = type.getElementType();
  int64_t in[2] = {type.getDimSize(2), type.getDimSize(3)};
  int64_t maxBin[2];
  for (int d = 0; d < 2; ++d) {
    maxBin[d] = 1;
    for (int64_t i = 0; i < out[d]; ++i) {
      int64_t start = (i * in[d]) / out[d], end = ((i + 1) * in[d] + out[d] - 1) / out[d];
      maxBin[d] = std::max(maxBin[d], end - start);
    }
  }
  SmallVector<OpFoldResult> outSizes{ctx.dim(x, 0), ctx.dim(x, 1), ctx.builder.getIndexAttr(out[0]),
                                     ctx.builder.getIndexAttr(out[1])};
  double lowest = APFloat::getLargest(cast<FloatType>(et).getFloatSemantics(), true).convertToDouble();
  Value init = ctx.filled(outSizes, ctx.scalarConstant(et, isMax ? lowest : 0.0));
  Value window = ctx.empty({ctx.builder.getIndexAttr(maxBin[0]), ctx.builder.getIndexAttr(maxBin[1])}, et);
  auto dimExpr = [&](unsigned i) { return ctx.builder.getAffineDimExpr(i); };
  SmallVector<AffineMap> maps{AffineMap::get(6, 0, {dimExpr(4), dimExpr(5)}, &ctx.context),
                              AffineMap::get(6, 0, {dimExpr(0), dimExpr(1), dimExpr(2), dimExpr(3)}, &ctx.context)};
  using IT = utils::IteratorType;
  SmallVector<IT> iterators{IT::parallel, IT::parallel, IT::parallel, IT::parallel, IT::reduction, IT::reduction};
  auto g = linalg::GenericOp::create(
      ctx.builder, ctx.loc, TypeRange{init.getType()}, ValueRange{window}, ValueRange{init}, maps, iterators,
      [&](OpBuilder &b, Location l, ValueRange a) {
        auto cst = [&](int64_t v) -> Value { return arith::ConstantIndexOp::create(b, l, v); };
        SmallVector<Value> idx;
        for (int64_t d = 0; d < 6; ++d)
          idx.push_back(linalg::IndexOp::create(b, l, d));
        Value inside;
        SmallVector<Value> pos;
        Value count;
        for (int d = 0; d < 2; ++d) {
          Value start = arith::DivUIOp::create(b, l, arith::MulIOp::create(b, l, idx[2 + d], cst(in[d])), cst(out[d]));
          Value endNum = arith::AddIOp::create(b, l, arith::MulIOp::create(b, l, arith::AddIOp::create(b, l, idx[2 + d], cst(1)), cst(in[d])),
                                               cst(out[d] - 1));
          Value end = arith::DivUIOp::create(b, l, endNum, cst(out[d]));
          Value p = arith::AddIOp::create(b, l, start, idx[4 + d]);
          Value ok = arith::CmpIOp::create(b, l, arith::CmpIPredicate::ult, p, end);
          inside = inside ? (Value)arith::AndIOp::create(b, l, inside, ok) : ok;
          pos.push_back(arith::MinUIOp::create(b, l, p, cst(in[d] - 1)));
          Value n = arith::SubIOp::create(b, l, end, start);
          count = count ? (Value)arith::MulIOp::create(b, l, count, n) : n;
        }
        Value v = tensor::ExtractOp::create(b, l, x, ValueRange{idx[0], idx[1], pos[0], pos[1]});
        Value acc = a[1], next;
        if (isMax) {
          next = arith::MaximumFOp::create(b, l, acc, v);
        } else {
          Value c = arith::UIToFPOp::create(b, l, et, arith::IndexCastOp::create(b, l, b.getI64Type(), count));
          next = arith::AddFOp::create(b, l, acc, arith::DivFOp::create(b, l, v, c));
        }
        linalg::YieldOp::create(b, l, (Value)arith::SelectOp::create(b, l, inside, next, acc));
      });
  ctx.recordDims(g.getResult(0), outSizes);
  return g.getResult(0);
}

/// adaptive_avg_pool2d / adaptive_max_pool2d: a plain pool when the input
/// divides evenly (global when the output is 1x1), else per-bin windows.
LogicalResult convertAdaptivePool(ImportContext &ctx, const TorchNode &node) {
  bool isMax = node.kind == "aten::adaptive_max_pool2d";
  auto x = ctx.tensorInput(node, 0);
  auto out = ctx.intListInput(node, 1);
  if (failed(x) || failed(out))
    return failure();
  Value input = *x;
  bool chw = tensorType(input).getRank() == 3;
  if (chw)
    input = ctx.reshape(input, {ctx.builder.getIndexAttr(1), ctx.dim(input, 0), ctx.dim(input, 1), ctx.dim(input, 2)});
  auto type = tensorType(input);
  if (type.getRank() != 4 || out->size() != 2 || type.isDynamicDim(2) || type.isDynamicDim(3))
    return ctx.unsupported(node, "only 2-D adaptive pooling over static spatial dims is supported");
  Window win;
  bool even = true;
  for (int d = 0; d < 2; ++d) {
    int64_t in = type.getDimSize(2 + d), o = (*out)[d];
    if (o <= 0)
      return ctx.fail(node, "output size must be positive");
    even &= in % o == 0;
    win.kernel.push_back(even ? in / o : 0);
    win.strides.push_back(even ? in / o : 0);
  }
  if (!even) {
    Value result = adaptivePoolUneven(ctx, input, {(*out)[0], (*out)[1]}, isMax);
    if (chw)
      result = ctx.reshape(result, {ctx.dim(result, 1), ctx.dim(result, 2), ctx.dim(result, 3)});
    ctx.setTensor(node, 0, result);
    if (isMax && node.outputs.size() > 1)
      return ctx.unsupported(node, "the indices output");
    return success();
  }
  win.dilations = {1, 1};
  win.padLow = win.padHigh = {0, 0};
  auto r = pool2d(ctx, node, input, win, isMax, true);
  if (failed(r))
    return failure();
  Value result = *r;
  if (chw)
    result = ctx.reshape(result, {ctx.dim(result, 1), ctx.dim(result, 2), ctx.dim(result, 3)});
  ctx.setTensor(node, 0, result);
  if (isMax && node.outputs.size() > 1)
    return ctx.unsupported(node, "the indices output");
  return success();
}

} // namespace

void registerPoolingOps(OpRegistry &r) {
  r.add("aten::max_pool2d", convertPool);
  r.add("aten::avg_pool2d", convertPool);
  r.add("aten::adaptive_avg_pool2d", convertAdaptivePool);
  r.add("aten::adaptive_max_pool2d", convertAdaptivePool);
}

} // namespace turbine::torch_frontend
