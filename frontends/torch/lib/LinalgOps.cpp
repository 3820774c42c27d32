//===- LinalgOps.cpp - matmul family, convolution, pooling, embedding -----===//
//
// aten::linear / addmm / mm / bmm / matmul (torch's broadcasting rules) / t,
// aten::_convolution / conv1d / conv2d (grouped and depthwise as a generic,
// padding as a gather-style generic like the ONNX frontend, no tensor.pad),
// conv_transpose1d/2d (a convolution over the zero-inserted input with the
// flipped filter), max_pool2d / avg_pool2d (per-window divisors where
// windows differ) / adaptive_avg_pool2d, and aten::embedding as a
// gather generic. Constant linear weights are transposed at import time so
// the matmul reads them in [K, N] order; such a weight is named
// `<state_dict key>.T` in the artifact (ImportContext::nameParameter).
//===----------------------------------------------------------------------===//
#include "ImportContext.h"

#include "mlir/Dialect/Utils/StaticValueUtils.h"

#include <cmath>
#include <cstring>

using namespace mlir;

namespace turbine::torch_frontend {
namespace {

Value zeroOf(ImportContext &ctx, Type t) { return ctx.scalarConstant(t, 0); }

Value matmul2D(ImportContext &ctx, Value a, Value b) {
  Type et = tensorType(a).getElementType();
  SmallVector<OpFoldResult> sizes{ctx.dim(a, 0), ctx.dim(b, 1)};
  Value init = ctx.filled(sizes, zeroOf(ctx, et));
  Value r = linalg::MatmulOp::create(ctx.builder, ctx.loc, ValueRange{a, b}, ValueRange{init}).getResult(0);
  ctx.recordDims(r, sizes);
  return r;
}

Value batchMatmul(ImportContext &ctx, Value a, Value b) {
  Type et = tensorType(a).getElementType();
  SmallVector<OpFoldResult> sizes{ctx.dim(a, 0), ctx.dim(a, 1), ctx.dim(b, 2)};
  Value init = ctx.filled(sizes, zeroOf(ctx, et));
  Value r = linalg::BatchMatmulOp::create(ctx.builder, ctx.loc, ValueRange{a, b}, ValueRange{init}).getResult(0);
  ctx.recordDims(r, sizes);
  return r;
}

/// W^T of a 2-D tensor input: transposed at import time when constant.
FailureOr<Value> transposedWeight(ImportContext &ctx, const TorchNode &node, size_t i) {
  TValue &w = ctx.input(node, i);
  if (w.isTensor() && !w.tensor && w.constant && w.constant->shape.size() == 2 &&
      w.constant->dtype != TorchDType::i1 && w.constant->dtype != TorchDType::unsupported) {
    const TorchConstant &c = *w.constant;
    int64_t rows = c.shape[0], cols = c.shape[1];
    Type et = elementTypeOf(ctx.context, c.dtype);
    size_t width = et.getIntOrFloatBitWidth() / 8;
    std::vector<char> out(c.data.size());
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t col = 0; col < cols; ++col)
        std::memcpy(&out[(col * rows + r) * width], &c.data[(r * cols + col) * width], width);
    auto type = RankedTensorType::get({cols, rows}, et);
    auto op = arith::ConstantOp::create(
        ctx.builder, ctx.loc, DenseElementsAttr::getFromRawBuffer(type, ArrayRef<char>(out.data(), out.size())));
    ctx.nameParameter(op, c.name.empty() ? "" : c.name + ".T");
    return (Value)op;
  }
  auto t = ctx.tensorInput(node, i);
  if (failed(t))
    return failure();
  if (tensorType(*t).getRank() != 2) {
    (void)ctx.fail(node, "weight must be 2-D");
    return failure();
  }
  return ctx.transpose(*t, {1, 0});
}

/// Adds `bias` (broadcast over leading dims) to `x`, scaled by beta/alpha.
FailureOr<Value> addBias(ImportContext &ctx, const TorchNode &node, Value x, Value bias,
                         double alpha = 1.0, double beta = 1.0) {
  Type et = tensorType(x).getElementType();
  return ctx.elementwiseTensors(node, ValueRange{x, bias}, et, [&](OpBuilder &b, Location l, ValueRange a) -> Value {
    Value v = a[0], c = ImportContext::castScalar(b, l, a[1], et);
    if (alpha != 1.0)
      v = arith::MulFOp::create(b, l, v, arith::ConstantOp::create(b, l, b.getFloatAttr(et, alpha)));
    if (beta != 1.0)
      c = arith::MulFOp::create(b, l, c, arith::ConstantOp::create(b, l, b.getFloatAttr(et, beta)));
    return arith::AddFOp::create(b, l, v, c);
  });
}

/// x [..., K] times wT [K, N] -> [..., N].
Value matmulLastDim(ImportContext &ctx, Value x, Value wT) {
  SmallVector<OpFoldResult> sizes = ctx.dims(x);
  int64_t rank = sizes.size();
  Value flat = x;
  if (rank != 2) {
    // Collapse leading dims into one.
    SmallVector<OpFoldResult> flatSizes;
    SymInt c = SymInt::of(1);
    Value dyn;
    int64_t constant = 1;
    for (int64_t d = 0; d + 1 < rank; ++d) {
      SymInt s = ctx.toSymDim(sizes[d]);
      if (s.isConstant())
        constant *= s.constant;
      else
        dyn = dyn ? (Value)arith::MulIOp::create(ctx.builder, ctx.loc, dyn, s.value) : s.value;
    }
    if (dyn && constant != 1)
      dyn = arith::MulIOp::create(ctx.builder, ctx.loc, dyn, ctx.indexConstant(constant));
    (void)c;
    flatSizes.push_back(dyn ? OpFoldResult(dyn) : OpFoldResult(ctx.builder.getIndexAttr(constant)));
    flatSizes.push_back(sizes.back());
    flat = ctx.reshape(x, flatSizes);
  }
  Value r = matmul2D(ctx, flat, wT);
  if (rank != 2) {
    SmallVector<OpFoldResult> outSizes(sizes.begin(), sizes.end() - 1);
    outSizes.push_back(ctx.dim(wT, 1));
    r = ctx.reshape(r, outSizes);
  }
  return r;
}

LogicalResult convertLinear(ImportContext &ctx, const TorchNode &node) {
  auto x = ctx.tensorInput(node, 0);
  if (failed(x))
    return failure();
  if (!isa<FloatType>(tensorType(*x).getElementType()))
    return ctx.unsupported(node, "only floating-point inputs are supported");
  if (tensorType(*x).getRank() < 1)
    return ctx.fail(node, "input must have rank >= 1");
  auto wT = transposedWeight(ctx, node, 1);
  if (failed(wT))
    return failure();
  Value x2 = *x;
  bool vector = tensorType(x2).getRank() == 1;
  if (vector)
    x2 = ctx.reshape(x2, {ctx.builder.getIndexAttr(1), ctx.dim(x2, 0)});
  Value r = matmulLastDim(ctx, x2, *wT);
  if (!ctx.isNoneInput(node, 2)) {
    auto bias = ctx.tensorInput(node, 2);
    if (failed(bias))
      return failure();
    auto withBias = addBias(ctx, node, r, *bias);
    if (failed(withBias))
      return failure();
    r = *withBias;
  }
  if (vector)
    r = ctx.reshape(r, {ctx.dim(r, 1)});
  ctx.setTensor(node, 0, r);
  return success();
}

LogicalResult convertT(ImportContext &ctx, const TorchNode &node) {
  auto x = ctx.tensorInput(node, 0);
  if (failed(x))
    return failure();
  int64_t rank = tensorType(*x).getRank();
  if (rank > 2)
    return ctx.fail(node, "t() expects a tensor of rank <= 2");
  ctx.setTensor(node, 0, rank == 2 ? ctx.transpose(*x, {1, 0}) : *x);
  return success();
}

/// torch.matmul with 1-D promotion and batch broadcasting; also mm and bmm.
/// torch.matmul of two tensor values (1-D promotion, batch broadcasting).
FailureOr<Value> matmulValues(ImportContext &ctx, const TorchNode &node, Value lhs, Value rhs) {
  Type et = tensorType(lhs).getElementType();
  if (!isa<FloatType>(et) || tensorType(rhs).getElementType() != et) {
    (void)ctx.unsupported(node, "only floating-point operands of one dtype are supported");
    return failure();
  }
  int64_t ra = tensorType(lhs).getRank(), rb = tensorType(rhs).getRank();
  if (ra == 0 || rb == 0) {
    (void)ctx.fail(node, "operands must have rank >= 1");
    return failure();
  }
  bool squeezeM = ra == 1, squeezeN = rb == 1;
  if (squeezeM)
    lhs = ctx.reshape(lhs, {ctx.builder.getIndexAttr(1), ctx.dim(lhs, 0)});
  if (squeezeN)
    rhs = ctx.reshape(rhs, {ctx.dim(rhs, 0), ctx.builder.getIndexAttr(1)});
  ra = tensorType(lhs).getRank();
  rb = tensorType(rhs).getRank();
  Value result;
  SmallVector<OpFoldResult> outSizes;
  if (rb == 2) {
    result = matmulLastDim(ctx, lhs, rhs);
    outSizes = ctx.dims(result);
  } else {
    // Broadcast batch dims.
    SmallVector<OpFoldResult> la = ctx.dims(lhs), lb = ctx.dims(rhs);
    int64_t batchRank = std::max(ra, rb) - 2;
    SmallVector<OpFoldResult> batch;
    for (int64_t d = 0; d < batchRank; ++d) {
      int64_t ka = d - (batchRank - (ra - 2)), kb = d - (batchRank - (rb - 2));
      SymInt sa = ka >= 0 ? ctx.toSymDim(la[ka]) : SymInt::of(1);
      SymInt sb = kb >= 0 ? ctx.toSymDim(lb[kb]) : SymInt::of(1);
      if (sa == SymInt::of(1))
        batch.push_back(ctx.toFoldResult(sb));
      else if (sb == SymInt::of(1) || sa == sb)
        batch.push_back(ctx.toFoldResult(sa));
      else if (!sa.isConstant())
        batch.push_back(ctx.toFoldResult(sa));
      else if (!sb.isConstant())
        batch.push_back(ctx.toFoldResult(sb));
      else {
        (void)ctx.fail(node, "batch dims are not broadcastable");
        return failure();
      }
    }
    auto full = [&](Value v, ArrayRef<OpFoldResult> dims) {
      SmallVector<OpFoldResult> s(batch);
      s.append(dims.end() - 2, dims.end());
      return ctx.broadcastTo(v, s);
    };
    lhs = full(lhs, la);
    rhs = full(rhs, lb);
    // Collapse batch dims into one.
    SymInt flat = SymInt::of(1);
    Value dyn;
    int64_t c = 1;
    for (OpFoldResult s : batch) {
      SymInt si = ctx.toSymDim(s);
      if (si.isConstant())
        c *= si.constant;
      else
        dyn = dyn ? (Value)arith::MulIOp::create(ctx.builder, ctx.loc, dyn, si.value) : si.value;
    }
    (void)flat;
    if (dyn && c != 1)
      dyn = arith::MulIOp::create(ctx.builder, ctx.loc, dyn, ctx.indexConstant(c));
    OpFoldResult flatSize = dyn ? OpFoldResult(dyn) : OpFoldResult(ctx.builder.getIndexAttr(c));
    Value l3 = ctx.reshape(lhs, {flatSize, la[ra - 2], la[ra - 1]});
    Value r3 = ctx.reshape(rhs, {flatSize, lb[rb - 2], lb[rb - 1]});
    Value bm = batchMatmul(ctx, l3, r3);
    outSizes = batch;
    outSizes.push_back(la[ra - 2]);
    outSizes.push_back(lb[rb - 1]);
    result = ctx.reshape(bm, outSizes);
  }
  if (squeezeM || squeezeN) {
    SmallVector<OpFoldResult> finalSizes(outSizes.begin(), outSizes.end() - 2);
    if (!squeezeM)
      finalSizes.push_back(outSizes[outSizes.size() - 2]);
    if (!squeezeN)
      finalSizes.push_back(outSizes.back());
    result = ctx.reshape(result, finalSizes);
  }
  return result;
}

LogicalResult convertMatmul(ImportContext &ctx, const TorchNode &node) {
  auto a = ctx.tensorInput(node, 0), b = ctx.tensorInput(node, 1);
  if (failed(a) || failed(b))
    return failure();
  int64_t ra = tensorType(*a).getRank(), rb = tensorType(*b).getRank();
  if (node.kind == "aten::mm" && (ra != 2 || rb != 2))
    return ctx.fail(node, "mm expects 2-D operands");
  if (node.kind == "aten::bmm" && (ra != 3 || rb != 3))
    return ctx.fail(node, "bmm expects 3-D operands");
  auto r = matmulValues(ctx, node, *a, *b);
  if (failed(r))
    return failure();
  ctx.setTensor(node, 0, *r);
  return success();
}

/// Rows [first, first + count) of a constant 2-D weight, transposed to
/// [cols, count] (null when the input is not such a constant).
Value constantRowsTransposed(ImportContext &ctx, const TValue &w, int64_t first, int64_t count) {
  if (!w.isTensor() || !w.constant || w.constant->shape.size() != 2)
    return nullptr;
  const TorchConstant &c = *w.constant;
  Type et = elementTypeOf(ctx.context, c.dtype);
  if (!et || !isa<FloatType>(et) || first + count > c.shape[0])
    return nullptr;
  int64_t cols = c.shape[1];
  size_t width = et.getIntOrFloatBitWidth() / 8;
  std::vector<char> out(count * cols * width);
  for (int64_t r = 0; r < count; ++r)
    for (int64_t col = 0; col < cols; ++col)
      std::memcpy(&out[(col * count + r) * width], &c.data[((first + r) * cols + col) * width], width);
  auto type = RankedTensorType::get({cols, count}, et);
  auto op = arith::ConstantOp::create(ctx.builder, ctx.loc,
                                      DenseElementsAttr::getFromRawBuffer(type, ArrayRef<char>(out.data(), out.size())));
  if (!c.name.empty())
    ctx.nameParameter(op, count == c.shape[0] ? c.name + ".T"
                                              : c.name + "[" + std::to_string(first) + ":" +
                                                    std::to_string(first + count) + "].T");
  return op;
}

/// Elements [first, first + count) of a constant 1-D tensor (null otherwise).
Value constantSlice1D(ImportContext &ctx, const TValue &b, int64_t first, int64_t count) {
  if (!b.isTensor() || !b.constant || b.constant->shape.size() != 1)
    return nullptr;
  const TorchConstant &c = *b.constant;
  Type et = elementTypeOf(ctx.context, c.dtype);
  if (!et || !isa<FloatType>(et) || first + count > c.shape[0])
    return nullptr;
  size_t width = et.getIntOrFloatBitWidth() / 8;
  auto type = RankedTensorType::get({count}, et);
  return arith::ConstantOp::create(
      ctx.builder, ctx.loc,
      DenseElementsAttr::getFromRawBuffer(type, ArrayRef<char>(c.data.data() + first * width, count * width)));
}

/// aten::_native_multi_head_attention (nn.MultiheadAttention's inference fast
/// path, batch-first): in-projection, per-head softmax(q k^T / sqrt(d)) v,
/// out-projection; constant weights, no mask.
LogicalResult convertNativeMha(ImportContext &ctx, const TorchNode &node) {
  auto q = ctx.tensorInput(node, 0), k = ctx.tensorInput(node, 1), v = ctx.tensorInput(node, 2);
  auto embed = ctx.intInput(node, 3), heads = ctx.intInput(node, 4);
  if (failed(q) || failed(k) || failed(v) || failed(embed) || failed(heads))
    return failure();
  if (!ctx.isNoneInput(node, 9))
    return ctx.unsupported(node, "an attention mask");
  int64_t e = *embed, h = *heads;
  if (h <= 0 || e % h != 0)
    return ctx.fail(node, "embed_dim must be a multiple of num_heads");
  for (Value t : {*q, *k, *v})
    if (tensorType(t).getRank() != 3)
      return ctx.unsupported(node, "only batched (3-D, batch-first) inputs");
  Type et = tensorType(*q).getElementType();
  const TValue &w = ctx.input(node, 5), &bias = ctx.input(node, 6);
  Value projected[3];
  Value inputs[3] = {*q, *k, *v};
  for (int i = 0; i < 3; ++i) {
    Value wT = constantRowsTransposed(ctx, w, i * e, e);
    Value b = constantSlice1D(ctx, bias, i * e, e);
    if (!wT || !b)
      return ctx.unsupported(node, "in-projection weights that are not constants");
    auto withBias = addBias(ctx, node, matmulLastDim(ctx, inputs[i], wT), b);
    if (failed(withBias))
      return failure();
    // [B, L, E] -> [B, L, H, D] -> [B, H, L, D]
    Value x = *withBias;
    Value split = ctx.reshape(x, {ctx.dim(x, 0), ctx.dim(x, 1), ctx.builder.getIndexAttr(h),
                                  ctx.builder.getIndexAttr(e / h)});
    projected[i] = ctx.transpose(split, i == 1 ? ArrayRef<int64_t>{0, 2, 3, 1} : ArrayRef<int64_t>{0, 2, 1, 3});
  }
  double scale = 1.0 / std::sqrt((double)(e / h));
  auto scaledQ = ctx.elementwiseTensors(node, ValueRange{projected[0]}, et, [&](OpBuilder &b, Location l, ValueRange a) -> Value {
    return arith::MulFOp::create(b, l, a[0], arith::ConstantOp::create(b, l, b.getFloatAttr(et, scale)));
  });
  if (failed(scaledQ))
    return failure();
  auto scores = matmulValues(ctx, node, *scaledQ, projected[1]); // [B, H, L, S]
  if (failed(scores))
    return failure();
  Value probs = softmaxOver(ctx, *scores, 3, /*isLog=*/false);
  auto attn = matmulValues(ctx, node, probs, projected[2]); // [B, H, L, D]
  if (failed(attn))
    return failure();
  Value merged = ctx.transpose(*attn, {0, 2, 1, 3});
  merged = ctx.reshape(merged, {ctx.dim(merged, 0), ctx.dim(merged, 1), ctx.builder.getIndexAttr(e)});
  Value pT = constantRowsTransposed(ctx, ctx.input(node, 7), 0, e);
  Value pb = constantSlice1D(ctx, ctx.input(node, 8), 0, e);
  if (!pT || !pb)
    return ctx.unsupported(node, "out-projection weights that are not constants");
  auto out = addBias(ctx, node, matmulLastDim(ctx, merged, pT), pb);
  if (failed(out))
    return failure();
  ctx.setTensor(node, 0, *out);
  bool needWeights = !ctx.isNoneInput(node, 10) && succeeded(ctx.boolInput(node, 10)) && *ctx.boolInput(node, 10);
  if (node.outputs.size() > 1) {
    if (needWeights)
      return ctx.unsupported(node, "need_weights=True");
    ctx.set(node.outputs[1], TValue::none());
  }
  return success();
}

LogicalResult convertAddmm(ImportContext &ctx, const TorchNode &node) {
  auto bias = ctx.tensorInput(node, 0), m1 = ctx.tensorInput(node, 1), m2 = ctx.tensorInput(node, 2);
  if (failed(bias) || failed(m1) || failed(m2))
    return failure();
  if (tensorType(*m1).getRank() != 2 || tensorType(*m2).getRank() != 2)
    return ctx.fail(node, "addmm expects 2-D matrices");
  double beta = 1.0, alpha = 1.0;
  if (node.inputs.size() > 3) {
    auto b = ctx.floatInput(node, 3);
    if (failed(b))
      return failure();
    beta = *b;
  }
  if (node.inputs.size() > 4) {
    auto a = ctx.floatInput(node, 4);
    if (failed(a))
      return failure();
    alpha = *a;
  }
  Value mm = matmul2D(ctx, *m1, *m2);
  auto r = addBias(ctx, node, mm, *bias, alpha, beta);
  if (failed(r))
    return failure();
  ctx.setTensor(node, 0, *r);
  return success();
}

//===--- windows: convolution and pooling ---------------------------------===//

/// Pads `input` by low/high per dim with `padValue`: clamped extract + select
/// (same technique as the ONNX frontend's padTensor).
Value padTensor(ImportContext &ctx, Value input, ArrayRef<int64_t> low, ArrayRef<int64_t> high,
                Value padValue) {
  int64_t rank = tensorType(input).getRank();
  bool any = false;
  for (int64_t d = 0; d < rank; ++d)
    any |= low[d] != 0 || high[d] != 0;
  if (!any)
    return input;
  SmallVector<OpFoldResult> inSizes = ctx.dims(input), outSizes;
  SmallVector<Value> inSizeValues;
  for (int64_t d = 0; d < rank; ++d) {
    SymInt s = ctx.toSymDim(inSizes[d]);
    int64_t extra = low[d] + high[d];
    if (extra == 0)
      outSizes.push_back(inSizes[d]);
    else if (s.isConstant())
      outSizes.push_back(ctx.builder.getIndexAttr(s.constant + extra));
    else
      outSizes.push_back((Value)arith::AddIOp::create(ctx.builder, ctx.loc, s.value, ctx.indexConstant(extra)));
    inSizeValues.push_back(low[d] || high[d] ? ctx.toIndexValue(inSizes[d]) : Value());
  }
  Value init = ctx.empty(outSizes, tensorType(input).getElementType());
  SmallVector<AffineMap> maps{ctx.builder.getMultiDimIdentityMap(rank)};
  SmallVector<utils::IteratorType> iterators(rank, utils::IteratorType::parallel);
  auto g = linalg::GenericOp::create(
      ctx.builder, ctx.loc, TypeRange{init.getType()}, ValueRange{}, ValueRange{init}, maps, iterators,
      [&](OpBuilder &b, Location l, ValueRange) {
        SmallVector<Value> idx;
        Value inside;
        Value zero = arith::ConstantIndexOp::create(b, l, 0);
        Value one = arith::ConstantIndexOp::create(b, l, 1);
        for (int64_t d = 0; d < rank; ++d) {
          Value i = linalg::IndexOp::create(b, l, d);
          if (!low[d] && !high[d]) {
            idx.push_back(i);
            continue;
          }
          Value shifted = low[d] ? (Value)arith::SubIOp::create(b, l, i, arith::ConstantIndexOp::create(b, l, low[d])) : i;
          Value geZero = arith::CmpIOp::create(b, l, arith::CmpIPredicate::sge, shifted, zero);
          Value ltSize = arith::CmpIOp::create(b, l, arith::CmpIPredicate::slt, shifted, inSizeValues[d]);
          Value ok = arith::AndIOp::create(b, l, geZero, ltSize);
          inside = inside ? (Value)arith::AndIOp::create(b, l, inside, ok) : ok;
          Value last = arith::SubIOp::create(b, l, inSizeValues[d], one);
          idx.push_back(arith::MinSIOp::create(b, l, arith::MaxSIOp::create(b, l, shifted, zero), last));
        }
        Value v = tensor::ExtractOp::create(b, l, input, idx);
        linalg::YieldOp::create(b, l, (Value)arith::SelectOp::create(b, l, inside, v, padValue));
      });
  ctx.recordDims(g.getResult(0), outSizes);
  return g.getResult(0);
}

using Window = frontends::PoolingWindow;

/// frontends::windowOutputSize, its refusal reported against `node`.
FailureOr<OpFoldResult> windowOutputSize(ImportContext &ctx, const TorchNode &node, OpFoldResult inSize,
                                         Window &w, int d) {
  frontends::WindowError kind = frontends::WindowError::None;
  std::string error;
  OpFoldResult out = frontends::windowOutputSize(ctx, inSize, w, d, kind, error);
  if (out)
    return out;
  return kind == frontends::WindowError::Unsupported ? ctx.unsupported(node, error)
                                                     : ctx.fail(node, error);
}

/// Reads an int list argument of 1 or n entries, widened to n.
FailureOr<SmallVector<int64_t>> spatialList(ImportContext &ctx, const TorchNode &node, size_t i,
                                            size_t n, int64_t def) {
  if (ctx.isNoneInput(node, i))
    return SmallVector<int64_t>(n, def);
  auto v = ctx.intListInput(node, i);
  if (failed(v))
    return failure();
  if (v->empty())
    return SmallVector<int64_t>(n, def);
  if (v->size() == 1)
    return SmallVector<int64_t>(n, (*v)[0]);
  if (v->size() != n) {
    (void)ctx.fail(node, "input " + std::to_string(i) + " must hold " + std::to_string(n) + " values");
    return failure();
  }
  return SmallVector<int64_t>(v->begin(), v->end());
}

Value addChannelBias(ImportContext &ctx, Value x, Value bias) {
  SmallVector<OpFoldResult> sizes = ctx.dims(x);
  int64_t rank = sizes.size();
  Value init = ctx.empty(sizes, tensorType(x).getElementType());
  SmallVector<AffineMap> maps{ctx.builder.getMultiDimIdentityMap(rank),
                              AffineMap::get(rank, 0, {ctx.builder.getAffineDimExpr(1)}, &ctx.context),
                              ctx.builder.getMultiDimIdentityMap(rank)};
  SmallVector<utils::IteratorType> iterators(rank, utils::IteratorType::parallel);
  auto g = linalg::GenericOp::create(ctx.builder, ctx.loc, TypeRange{init.getType()}, ValueRange{x, bias},
                                     ValueRange{init}, maps, iterators, [](OpBuilder &b, Location l, ValueRange a) {
                                       linalg::YieldOp::create(b, l, (Value)arith::AddFOp::create(b, l, a[0], a[1]));
                                     });
  ctx.recordDims(g.getResult(0), sizes);
  return g.getResult(0);
}

/// The convolution of NCHW `xv` with FCHW `wv` (`groups` groups) after
/// padding by padLow/padHigh (zeros), plus input 2 of `node` as bias when
/// present; `oneD` reshapes back to NCL. Sets output 0 of `node`.
LogicalResult emitConv(ImportContext &ctx, const TorchNode &node, Value xv, Value wv, int64_t groups,
                       SmallVector<int64_t> strides, SmallVector<int64_t> dilations,
                       SmallVector<int64_t> padLow, SmallVector<int64_t> padHigh, bool oneD) {
  auto xType = tensorType(xv), wType = tensorType(wv);
  if (xType.getRank() != 4 || wType.getRank() != 4)
    return ctx.unsupported(node, "only 1-D and 2-D convolutions (NCL/NCHW input) are supported");
  Type et = xType.getElementType();
  if (!isa<FloatType>(et) || wType.getElementType() != et)
    return ctx.unsupported(node, "only floating-point convolutions are supported");
  if (!wType.hasStaticShape())
    return ctx.unsupported(node, "weights must have a static shape");
  int64_t filters = wType.getDimSize(0), channelsPerGroup = wType.getDimSize(1);
  if (groups <= 0 || filters % groups != 0)
    return ctx.fail(node, "invalid groups " + std::to_string(groups));
  if (!xType.isDynamicDim(1) && xType.getDimSize(1) != channelsPerGroup * groups)
    return ctx.fail(node, "input has " + std::to_string(xType.getDimSize(1)) + " channels but the weights expect " +
                              std::to_string(channelsPerGroup * groups));
  Window win;
  win.kernel = {wType.getDimSize(2), wType.getDimSize(3)};
  win.strides = strides;
  win.dilations = dilations;
  win.padLow = padLow;
  win.padHigh = padHigh;
  SmallVector<OpFoldResult> outSizes{ctx.dim(xv, 0), ctx.builder.getIndexAttr(filters)};
  for (int d = 0; d < 2; ++d) {
    auto s = windowOutputSize(ctx, node, ctx.dim(xv, 2 + d), win, d);
    if (failed(s))
      return failure();
    outSizes.push_back(*s);
  }
  Value padded = padTensor(ctx, xv, {0, 0, win.padLow[0], win.padLow[1]}, {0, 0, win.padHigh[0], win.padHigh[1]},
                           zeroOf(ctx, et));
  Value init = ctx.filled(outSizes, zeroOf(ctx, et));
  Value result;
  if (groups == 1) {
    result = linalg::Conv2DNchwFchwOp::create(ctx.builder, ctx.loc, TypeRange{init.getType()}, ValueRange{padded, wv},
                                              ValueRange{init}, ctx.builder.getI64TensorAttr(win.strides),
                                              ctx.builder.getI64TensorAttr(win.dilations))
                 .getResult(0);
  } else {
    int64_t filtersPerGroup = filters / groups;
    auto dimExpr = [&](unsigned i) { return ctx.builder.getAffineDimExpr(i); };
    AffineExpr channel = dimExpr(1).floorDiv(filtersPerGroup) * channelsPerGroup + dimExpr(4);
    AffineMap inMap = AffineMap::get(7, 0,
                                     {dimExpr(0), channel, dimExpr(2) * win.strides[0] + dimExpr(5) * win.dilations[0],
                                      dimExpr(3) * win.strides[1] + dimExpr(6) * win.dilations[1]},
                                     &ctx.context);
    AffineMap wMap = AffineMap::get(7, 0, {dimExpr(1), dimExpr(4), dimExpr(5), dimExpr(6)}, &ctx.context);
    AffineMap outMap = AffineMap::get(7, 0, {dimExpr(0), dimExpr(1), dimExpr(2), dimExpr(3)}, &ctx.context);
    using IT = utils::IteratorType;
    SmallVector<IT> iterators{IT::parallel, IT::parallel, IT::parallel, IT::parallel, IT::reduction, IT::reduction, IT::reduction};
    result = linalg::GenericOp::create(ctx.builder, ctx.loc, TypeRange{init.getType()}, ValueRange{padded, wv},
                                       ValueRange{init}, SmallVector<AffineMap>{inMap, wMap, outMap}, iterators,
                                       [](OpBuilder &b, Location l, ValueRange a) {
                                         Value p = arith::MulFOp::create(b, l, a[0], a[1]);
                                         linalg::YieldOp::create(b, l, (Value)arith::AddFOp::create(b, l, a[2], p));
                                       })
                 .getResult(0);
  }
  ctx.recordDims(result, outSizes);
  if (!ctx.isNoneInput(node, 2)) {
    auto bias = ctx.tensorInput(node, 2);
    if (failed(bias))
      return failure();
    if (tensorType(*bias).getRank() != 1)
      return ctx.fail(node, "bias must be 1-D");
    result = addChannelBias(ctx, result, *bias);
  }
  if (oneD)
    result = ctx.reshape(result, {ctx.dim(result, 0), ctx.dim(result, 1), ctx.dim(result, 3)});
  ctx.setTensor(node, 0, result);
  return success();
}

/// NCL -> NC1L (1-D convolutions run as 2-D ones over a unit height).
Value unitHeight(ImportContext &ctx, Value v) {
  auto unit = ctx.builder.getIndexAttr(1);
  return ctx.reshape(v, {ctx.dim(v, 0), ctx.dim(v, 1), unit, ctx.dim(v, 2)});
}

/// `input` with stride-1 zeros between its elements along dims 2 and 3
/// (`strides`), then padded with zeros by low/high, which may be negative
/// (cropped): element [n, c, i, j] reads input[n, c, (i - low0) / s0, (j -
/// low1) / s1] where that divides exactly and is in bounds, else 0.
Value dilateAndPad(ImportContext &ctx, Value input, ArrayRef<int64_t> strides, ArrayRef<int64_t> low,
                   ArrayRef<int64_t> high) {
  SmallVector<OpFoldResult> inSizes = ctx.dims(input), outSizes{inSizes[0], inSizes[1]};
  SmallVector<Value> inSizeValues;
  for (int d = 0; d < 2; ++d) {
    SymInt s = ctx.toSymDim(inSizes[2 + d]);
    int64_t extra = low[d] + high[d] + 1 - strides[d];
    if (s.isConstant()) {
      outSizes.push_back(ctx.builder.getIndexAttr(s.constant * strides[d] + extra));
    } else {
      Value v = arith::MulIOp::create(ctx.builder, ctx.loc, s.value, ctx.indexConstant(strides[d]));
      outSizes.push_back((Value)arith::AddIOp::create(ctx.builder, ctx.loc, v, ctx.indexConstant(extra)));
    }
    inSizeValues.push_back(ctx.toIndexValue(inSizes[2 + d]));
  }
  Type et = tensorType(input).getElementType();
  Value init = ctx.empty(outSizes, et);
  SmallVector<AffineMap> maps{ctx.builder.getMultiDimIdentityMap(4)};
  SmallVector<utils::IteratorType> iterators(4, utils::IteratorType::parallel);
  auto g = linalg::GenericOp::create(
      ctx.builder, ctx.loc, TypeRange{init.getType()}, ValueRange{}, ValueRange{init}, maps, iterators,
      [&](OpBuilder &b, Location l, ValueRange) {
        Value zero = arith::ConstantIndexOp::create(b, l, 0);
        Value one = arith::ConstantIndexOp::create(b, l, 1);
        SmallVector<Value> idx{linalg::IndexOp::create(b, l, 0), linalg::IndexOp::create(b, l, 1)};
        Value inside;
        for (int d = 0; d < 2; ++d) {
          Value i = linalg::IndexOp::create(b, l, 2 + d);
          Value shifted = arith::SubIOp::create(b, l, i, arith::ConstantIndexOp::create(b, l, low[d]));
          Value stride = arith::ConstantIndexOp::create(b, l, strides[d]);
          Value q = arith::DivSIOp::create(b, l, shifted, stride);
          Value r = arith::RemSIOp::create(b, l, shifted, stride);
          Value ok = arith::AndIOp::create(
              b, l, arith::CmpIOp::create(b, l, arith::CmpIPredicate::sge, shifted, zero),
              arith::AndIOp::create(b, l, arith::CmpIOp::create(b, l, arith::CmpIPredicate::eq, r, zero),
                                    arith::CmpIOp::create(b, l, arith::CmpIPredicate::slt, q, inSizeValues[d])));
          inside = inside ? (Value)arith::AndIOp::create(b, l, inside, ok) : ok;
          Value last = arith::SubIOp::create(b, l, inSizeValues[d], one);
          idx.push_back(arith::MinSIOp::create(b, l, arith::MaxSIOp::create(b, l, q, zero), last));
        }
        Value v = tensor::ExtractOp::create(b, l, input, idx);
        Value z = arith::ConstantOp::create(b, l, b.getFloatAttr(et, 0.0));
        linalg::YieldOp::create(b, l, (Value)arith::SelectOp::create(b, l, inside, v, z));
      });
  ctx.recordDims(g.getResult(0), outSizes);
  return g.getResult(0);
}

/// A transposed convolution's filter [Cin, Cout/g, kh, kw] as the filter
/// [Cout, Cin/g, kh, kw] of the equivalent convolution: flipped spatially,
/// in and out channels swapped within each group. Done at import time for a
/// constant filter (named after the torch expression that computes it),
/// else by a generic.
Value transposedConvFilter(ImportContext &ctx, const TValue &w, Value wv, int64_t groups) {
  auto type = tensorType(wv);
  int64_t cin = type.getDimSize(0), cog = type.getDimSize(1), kh = type.getDimSize(2), kw = type.getDimSize(3);
  int64_t cig = cin / groups, cout = cog * groups;
  auto outType = RankedTensorType::get({cout, cig, kh, kw}, type.getElementType());
  if (w.isTensor() && w.constant && w.constant->dtype != TorchDType::i1) {
    const TorchConstant &c = *w.constant;
    size_t width = type.getElementType().getIntOrFloatBitWidth() / 8;
    std::vector<char> out(c.data.size());
    for (int64_t o = 0; o < cout; ++o)
      for (int64_t i = 0; i < cig; ++i)
        for (int64_t h = 0; h < kh; ++h)
          for (int64_t x = 0; x < kw; ++x) {
            int64_t src = (((o / cog) * cig + i) * cog + o % cog) * kh * kw + (kh - 1 - h) * kw + (kw - 1 - x);
            int64_t dst = ((o * cig + i) * kh + h) * kw + x;
            std::memcpy(&out[dst * width], &c.data[src * width], width);
          }
    auto op = arith::ConstantOp::create(
        ctx.builder, ctx.loc, DenseElementsAttr::getFromRawBuffer(outType, ArrayRef<char>(out.data(), out.size())));
    // No spaces: names are single words on the command line.
    std::string k = std::to_string(kh) + "," + std::to_string(kw);
    if (!c.name.empty())
      ctx.nameParameter(op, groups == 1 ? c.name + ".flip(2,3).transpose(0,1)"
                                        : c.name + ".flip(2,3).reshape(" + std::to_string(groups) + "," +
                                              std::to_string(cig) + "," + std::to_string(cog) + "," + k +
                                              ").transpose(1,2).reshape(" + std::to_string(cout) + "," +
                                              std::to_string(cig) + "," + k + ")");
    return op;
  }
  auto d = [&](unsigned i) { return ctx.builder.getAffineDimExpr(i); };
  AffineMap in = AffineMap::get(4, 0, {d(0).floorDiv(cog) * cig + d(1), d(0) % cog, kh - 1 - d(2), kw - 1 - d(3)},
                                &ctx.context);
  Value init = tensor::EmptyOp::create(ctx.builder, ctx.loc, outType.getShape(), outType.getElementType());
  SmallVector<utils::IteratorType> iterators(4, utils::IteratorType::parallel);
  return linalg::GenericOp::create(ctx.builder, ctx.loc, TypeRange{outType}, ValueRange{wv}, ValueRange{init},
                                   SmallVector<AffineMap>{in, ctx.builder.getMultiDimIdentityMap(4)}, iterators,
                                   [](OpBuilder &b, Location l, ValueRange a) { linalg::YieldOp::create(b, l, a[0]); })
      .getResult(0);
}

/// aten::conv_transpose1d/2d(x, w, bias, stride, padding, output_padding,
/// groups, dilation) and aten::_convolution with transposed=True: the
/// convolution (stride 1, same dilation) of the input with stride-1 zeros
/// inserted, padded by dilation*(k-1)-padding (plus output_padding at the
/// high end), with the flipped, channel-swapped filter.
LogicalResult convertTransposedConv(ImportContext &ctx, const TorchNode &node, Value x, Value w,
                                    size_t stridesAt, size_t padsAt, size_t outPadsAt, size_t groupsAt,
                                    size_t dilationsAt) {
  bool oneD = tensorType(x).getRank() == 3 && tensorType(w).getRank() == 3;
  size_t n = oneD ? 1 : 2;
  auto strides = spatialList(ctx, node, stridesAt, n, 1);
  auto pads = spatialList(ctx, node, padsAt, n, 0);
  auto outPads = spatialList(ctx, node, outPadsAt, n, 0);
  auto dilations = spatialList(ctx, node, dilationsAt, n, 1);
  auto groups = ctx.intInput(node, groupsAt);
  if (failed(strides) || failed(pads) || failed(outPads) || failed(dilations) || failed(groups))
    return failure();
  if (oneD) {
    x = unitHeight(ctx, x);
    w = unitHeight(ctx, w);
    strides->insert(strides->begin(), 1);
    pads->insert(pads->begin(), 0);
    outPads->insert(outPads->begin(), 0);
    dilations->insert(dilations->begin(), 1);
  }
  auto wType = tensorType(w);
  if (tensorType(x).getRank() != 4 || wType.getRank() != 4 || !wType.hasStaticShape())
    return ctx.unsupported(node, "transposed convolution needs 1-D or 2-D input and a static filter");
  if (*groups <= 0 || wType.getDimSize(0) % *groups != 0)
    return ctx.fail(node, "invalid groups " + std::to_string(*groups));
  SmallVector<int64_t> low, high;
  for (int d = 0; d < 2; ++d) {
    if ((*strides)[d] <= 0 || (*dilations)[d] <= 0)
      return ctx.fail(node, "stride and dilation must be positive");
    if ((*outPads)[d] >= std::max((*strides)[d], (*dilations)[d]))
      return ctx.fail(node, "output_padding must be smaller than stride or dilation");
    int64_t span = (*dilations)[d] * (wType.getDimSize(2 + d) - 1);
    low.push_back(span - (*pads)[d]);
    high.push_back(span - (*pads)[d] + (*outPads)[d]);
  }
  Value dilated = dilateAndPad(ctx, x, *strides, low, high);
  Value filter = transposedConvFilter(ctx, ctx.input(node, 1), w, *groups);
  return emitConv(ctx, node, dilated, filter, *groups, {1, 1}, *dilations, {0, 0}, {0, 0}, oneD);
}

/// aten::_convolution, conv2d, conv1d.
LogicalResult convertConv(ImportContext &ctx, const TorchNode &node) {
  auto x = ctx.tensorInput(node, 0), w = ctx.tensorInput(node, 1);
  if (failed(x) || failed(w))
    return failure();
  bool generic = node.kind == "aten::_convolution";
  int64_t groups = 1;
  if (generic) {
    auto transposed = ctx.boolInput(node, 6);
    if (failed(transposed))
      return failure();
    if (*transposed) // (x, w, bias, stride, padding, dilation, transposed, output_padding, groups, ...)
      return convertTransposedConv(ctx, node, *x, *w, 3, 4, 7, 8, 5);
    auto g = ctx.intInput(node, 8);
    if (failed(g))
      return failure();
    groups = *g;
  } else {
    auto g = ctx.intInput(node, 6);
    if (failed(g))
      return failure();
    groups = *g;
  }
  bool oneD = tensorType(*x).getRank() == 3 && tensorType(*w).getRank() == 3;
  size_t n = oneD ? 1 : 2;
  auto strides = spatialList(ctx, node, 3, n, 1);
  auto dilations = spatialList(ctx, node, 5, n, 1);
  if (failed(strides) || failed(dilations))
    return failure();
  SmallVector<int64_t> pads;
  if (ctx.input(node, 4).kind == TValue::Kind::String) {
    const std::string &mode = ctx.input(node, 4).text;
    if (mode == "valid") {
      pads.assign(n, 0);
    } else {
      // 'same' (stride 1): total = dilation * (k - 1), extra on the high side.
      SmallVector<int64_t> low, high;
      auto wType = tensorType(*w);
      for (size_t d = 0; d < n; ++d) {
        int64_t total = (*dilations)[d] * (wType.getDimSize(2 + d) - 1);
        low.push_back(total / 2);
        high.push_back(total - total / 2);
      }
      pads = low;
      if (low != high)
        return ctx.unsupported(node, "padding='same' with an even kernel");
    }
  } else {
    auto p = spatialList(ctx, node, 4, n, 0);
    if (failed(p))
      return failure();
    pads = *p;
  }
  Value xv = *x, wv = *w;
  if (oneD) {
    xv = unitHeight(ctx, xv);
    wv = unitHeight(ctx, wv);
    strides->insert(strides->begin(), 1);
    dilations->insert(dilations->begin(), 1);
    pads.insert(pads.begin(), 0);
  }
  return emitConv(ctx, node, xv, wv, groups, *strides, *dilations, pads, pads, oneD);
}

/// aten::conv_transpose2d / conv_transpose1d.
LogicalResult convertConvTranspose(ImportContext &ctx, const TorchNode &node) {
  auto x = ctx.tensorInput(node, 0), w = ctx.tensorInput(node, 1);
  if (failed(x) || failed(w))
    return failure();
  // (x, w, bias, stride, padding, output_padding, groups, dilation)
  return convertTransposedConv(ctx, node, *x, *w, 3, 4, 5, 6, 7);
}

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

void registerLinalgOps(OpRegistry &r) {
  r.add("aten::linear", convertLinear);
  r.add("aten::t", convertT);
  r.add("aten::matmul", convertMatmul);
  r.add("aten::mm", convertMatmul);
  r.add("aten::bmm", convertMatmul);
  r.add("aten::addmm", convertAddmm);
  r.add("aten::_convolution", convertConv);
  r.add("aten::conv2d", convertConv);
  r.add("aten::conv1d", convertConv);
  r.add("aten::conv_transpose2d", convertConvTranspose);
  r.add("aten::conv_transpose1d", convertConvTranspose);
  r.add("aten::max_pool2d", convertPool);
  r.add("aten::avg_pool2d", convertPool);
  r.add("aten::adaptive_avg_pool2d", convertAdaptivePool);
  r.add("aten::adaptive_max_pool2d", convertAdaptivePool);
  r.add("aten::embedding", convertEmbedding);
  r.add("aten::_native_multi_head_attention", convertNativeMha);
}

} // namespace turbine::torch_frontend
