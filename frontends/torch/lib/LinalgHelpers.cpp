//===- LinalgHelpers.cpp - helpers of the aten linalg files --------------===//
//
// What the matmul, attention, convolution and pooling handlers share
// (declared in ImportContext.h).
//===----------------------------------------------------------------------===//
#include "ImportContext.h"

#include "mlir/Dialect/Utils/StaticValueUtils.h"

#include <cmath>
#include <cstring>

using namespace mlir;

namespace turbine::torch_frontend {
namespace {

Value zeroOf(ImportContext &ctx, Type t) { return ctx.scalarConstant(t, 0); }

Value batchMatmul(ImportContext &ctx, Value a, Value b) {
  Type et = tensorType(a).getElementType();
  SmallVector<OpFoldResult> sizes{ctx.dim(a, 0), ctx.dim(a, 1), ctx.dim(b, 2)};
  Value init = ctx.filled(sizes, zeroOf(ctx, et));
  Value r = linalg::BatchMatmulOp::create(ctx.builder, ctx.loc, ValueRange{a, b}, ValueRange{init}).getResult(0);
  ctx.recordDims(r, sizes);
  return r;
}

} // namespace

Value matmul2D(ImportContext &ctx, Value a, Value b) {
  Type et = tensorType(a).getElementType();
  SmallVector<OpFoldResult> sizes{ctx.dim(a, 0), ctx.dim(b, 1)};
  Value init = ctx.filled(sizes, zeroOf(ctx, et));
  Value r = linalg::MatmulOp::create(ctx.builder, ctx.loc, ValueRange{a, b}, ValueRange{init}).getResult(0);
  ctx.recordDims(r, sizes);
  return r;
}

/// Adds `bias` (broadcast over leading dims) to `x`, scaled by beta/alpha.
FailureOr<Value> addBias(ImportContext &ctx, const TorchNode &node, Value x, Value bias,
                         double alpha, double beta) {
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

//===--- windows: convolution and pooling ---------------------------------===//

/// Pads `input` by low/high per dim with `padValue`: clamped extract + select
/// (the ONNX frontend emits tensor.pad instead).
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

/// frontends::windowOutputSize, its refusal reported against `node`.
FailureOr<OpFoldResult> windowOutputSize(ImportContext &ctx, const TorchNode &node, OpFoldResult inSize,
                                         Window &w, int d) {
  frontends::WindowError kind = frontends::WindowError::None;
  Result<OpFoldResult> out = frontends::windowOutputSize(ctx, inSize, w, d, kind);
  if (out)
    return *out;
  return kind == frontends::WindowError::Unsupported ? ctx.unsupported(node, out.message())
                                                     : ctx.fail(node, out.message());
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

} // namespace turbine::torch_frontend
