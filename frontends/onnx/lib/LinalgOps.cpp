//===- LinalgOps.cpp - ONNX Gemm/MatMul/Conv/Pool/Pad -> linalg -----------===//
//
// Contractions and windowed ops: Gemm and MatMul become linalg.matmul /
// linalg.batch_matmul (constant B operands are transposed at import time so
// no runtime transpose is needed), Conv becomes linalg.conv_2d_nchw_fchw
// (grouped convolutions a linalg.generic), pooling becomes
// linalg.pooling_nchw_max/sum, and padding is a gather-style linalg.generic.
//===----------------------------------------------------------------------===//
#include "ImportContext.h"

#include <limits>

using namespace mlir;

namespace turbine::onnx_frontend {
namespace {

RankedTensorType tensorType(Value v) { return cast<RankedTensorType>(v.getType()); }

/// Transposes a 2-D constant at import time.
DenseElementsAttr transposeConstant2D(DenseElementsAttr attr) {
  auto type = attr.getType();
  int64_t rows = type.getDimSize(0), cols = type.getDimSize(1);
  auto newType = RankedTensorType::get({cols, rows}, type.getElementType());
  if (attr.isSplat())
    return DenseElementsAttr::get(newType, attr.getSplatValue<Attribute>());
  if (type.getElementType().isInteger(1)) {
    SmallVector<bool> src(attr.getValues<bool>()), dst(src.size());
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t c = 0; c < cols; ++c)
        dst[c * rows + r] = src[r * cols + c];
    return DenseElementsAttr::get(newType, dst);
  }
  ArrayRef<char> raw = attr.getRawData();
  size_t width = type.getElementType().getIntOrFloatBitWidth() / 8;
  std::vector<char> out(raw.size());
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c)
      std::memcpy(&out[(c * rows + r) * width], &raw[(r * cols + c) * width], width);
  return DenseElementsAttr::getFromRawBuffer(newType, ArrayRef<char>(out.data(), out.size()));
}

/// Zero of the element type of `v`.
Value zeroOf(ImportContext &ctx, Type elementType) { return ctx.scalarConstant(elementType, 0); }

/// linalg.matmul of 2-D a [M,K] and b [K,N] into a zero-filled init.
Value matmul2D(ImportContext &ctx, Value a, Value b) {
  Type et = tensorType(a).getElementType();
  SmallVector<OpFoldResult> sizes{ctx.dim(a, 0), ctx.dim(b, 1)};
  Value init = ctx.filled(sizes, zeroOf(ctx, et));
  Value r = linalg::MatmulOp::create(ctx.builder, ctx.loc, ValueRange{a, b}, ValueRange{init})
                .getResult(0);
  ctx.recordDims(r, sizes);
  return r;
}

LogicalResult convertGemm(ImportContext &ctx, const onnx::NodeProto &node) {
  if (node.input_size() < 2)
    return ctx.fail(node, "expects at least 2 inputs");
  float alpha = ctx.floatAttr(node, "alpha", 1.0f), beta = ctx.floatAttr(node, "beta", 1.0f);
  bool transA = ctx.intAttr(node, "transA", 0), transB = ctx.intAttr(node, "transB", 0);
  auto a = ctx.getTensor(node, node.input(0));
  if (failed(a))
    return failure();
  Value bValue;
  if (auto constB = ctx.getConstant(node.input(1)); constB && transB && constB->getType().getRank() == 2) {
    bValue = arith::ConstantOp::create(ctx.builder, ctx.loc, transposeConstant2D(*constB));
    transB = false;
  } else {
    auto b = ctx.getTensor(node, node.input(1));
    if (failed(b))
      return failure();
    bValue = *b;
  }
  if (tensorType(*a).getRank() != 2 || tensorType(bValue).getRank() != 2)
    return ctx.fail(node, "A and B must be 2-D");
  if (!isa<FloatType>(tensorType(*a).getElementType()))
    return ctx.unsupported(node, "only floating-point Gemm is supported");
  Value aValue = transA ? ctx.transpose(*a, {1, 0}) : *a;
  if (transB)
    bValue = ctx.transpose(bValue, {1, 0});
  Value acc = matmul2D(ctx, aValue, bValue);
  bool hasC = ImportContext::hasInput(node, 2) && beta != 0.0f;
  if (!hasC && alpha == 1.0f) {
    ctx.setValue(node.output(0), acc);
    return success();
  }
  SmallVector<Value> operands{acc};
  if (hasC) {
    auto c = ctx.getTensor(node, node.input(2));
    if (failed(c))
      return failure();
    operands.push_back(*c);
  }
  Type et = tensorType(acc).getElementType();
  auto r = ctx.elementwise(node, operands, et, [&](OpBuilder &b, Location l, ValueRange args) {
    Value v = args[0];
    if (alpha != 1.0f)
      v = arith::MulFOp::create(b, l, v, arith::ConstantOp::create(b, l, b.getFloatAttr(et, alpha)));
    if (args.size() > 1) {
      Value c = args[1];
      if (beta != 1.0f)
        c = arith::MulFOp::create(b, l, c, arith::ConstantOp::create(b, l, b.getFloatAttr(et, beta)));
      v = arith::AddFOp::create(b, l, v, c);
    }
    return v;
  });
  if (failed(r))
    return failure();
  ctx.setValue(node.output(0), *r);
  return success();
}

/// Broadcasts `input` to `sizes` (NumPy rules) with a generic.
Value broadcastTensor(ImportContext &ctx, Value input, ArrayRef<OpFoldResult> sizes) {
  auto type = tensorType(input);
  int64_t rank = sizes.size();
  SmallVector<AffineExpr> exprs;
  bool needed = type.getRank() != rank;
  for (int64_t k = 0; k < type.getRank(); ++k) {
    int64_t d = k + rank - type.getRank();
    bool one = !type.isDynamicDim(k) && type.getDimSize(k) == 1 &&
               ctx.toSymDim(sizes[d]) != SymDim::of(1);
    needed |= one;
    exprs.push_back(one ? ctx.builder.getAffineConstantExpr(0) : ctx.builder.getAffineDimExpr(d));
  }
  if (!needed)
    return input;
  Value init = ctx.empty(sizes, type.getElementType());
  SmallVector<AffineMap> maps{AffineMap::get(rank, 0, exprs, &ctx.context),
                              ctx.builder.getMultiDimIdentityMap(rank)};
  SmallVector<utils::IteratorType> iterators(rank, utils::IteratorType::parallel);
  auto g = linalg::GenericOp::create(ctx.builder, ctx.loc, TypeRange{init.getType()},
                                     ValueRange{input}, ValueRange{init}, maps, iterators,
                                     [](OpBuilder &b, Location l, ValueRange args) {
                                       linalg::YieldOp::create(b, l, args[0]);
                                     });
  ctx.recordDims(g.getResult(0), sizes);
  return g.getResult(0);
}

LogicalResult convertMatMul(ImportContext &ctx, const onnx::NodeProto &node) {
  if (node.input_size() != 2)
    return ctx.fail(node, "expects 2 inputs");
  auto a = ctx.getTensor(node, node.input(0));
  auto b = ctx.getTensor(node, node.input(1));
  if (failed(a) || failed(b))
    return failure();
  Value lhs = *a, rhs = *b;
  Type et = tensorType(lhs).getElementType();
  if (!isa<FloatType>(et) || tensorType(rhs).getElementType() != et)
    return ctx.unsupported(node, "only floating-point operands of one type are supported");
  int64_t ra = tensorType(lhs).getRank(), rb = tensorType(rhs).getRank();
  if (ra == 0 || rb == 0)
    return ctx.fail(node, "operands must have rank >= 1");
  // 1-D operands are promoted to matrices and the unit dim removed after.
  bool squeezeM = false, squeezeN = false;
  if (ra == 1) {
    lhs = ctx.reshape(lhs, {ctx.builder.getIndexAttr(1), ctx.dim(lhs, 0)});
    squeezeM = true;
    ra = 2;
  }
  if (rb == 1) {
    rhs = ctx.reshape(rhs, {ctx.dim(rhs, 0), ctx.builder.getIndexAttr(1)});
    squeezeN = true;
    rb = 2;
  }
  SmallVector<OpFoldResult> aDims = ctx.dims(lhs), bDims = ctx.dims(rhs);
  OpFoldResult m = aDims[ra - 2], k = aDims[ra - 1], n = bDims[rb - 1];
  SmallVector<OpFoldResult> aBatch(aDims.begin(), aDims.end() - 2);
  SmallVector<OpFoldResult> bBatch(bDims.begin(), bDims.end() - 2);
  Value result;
  SmallVector<OpFoldResult> outSizes;
  if (rb == 2) {
    // [..., M, K] x [K, N]: fold the batch dims into M and use one matmul.
    SmallVector<OpFoldResult> rows(aBatch);
    rows.push_back(m);
    OpFoldResult flatRows = rows.size() == 1 ? rows[0] : OpFoldResult();
    if (!flatRows) {
      int64_t c = 1;
      Value dyn;
      for (OpFoldResult r : rows) {
        SymDim d = ctx.toSymDim(r);
        if (d.isConstant())
          c *= d.constant;
        else
          dyn = dyn ? (Value)arith::MulIOp::create(ctx.builder, ctx.loc, dyn, d.value) : d.value;
      }
      if (!dyn)
        flatRows = ctx.builder.getIndexAttr(c);
      else
        flatRows = c == 1 ? (OpFoldResult)dyn
                          : (OpFoldResult)(Value)arith::MulIOp::create(ctx.builder, ctx.loc, dyn,
                                                                       ctx.indexConstant(c));
    }
    Value flat = ctx.reshape(lhs, {flatRows, k});
    result = matmul2D(ctx, flat, rhs);
    outSizes = rows;
    outSizes.push_back(n);
    result = ctx.reshape(result, outSizes);
  } else {
    // Broadcast the batch dims, collapse them to one and use batch_matmul.
    int64_t batchRank = std::max(aBatch.size(), bBatch.size());
    SmallVector<OpFoldResult> batch;
    for (int64_t d = 0; d < batchRank; ++d) {
      int64_t ia = d - (batchRank - (int64_t)aBatch.size());
      int64_t ib = d - (batchRank - (int64_t)bBatch.size());
      std::optional<SymDim> da, db;
      if (ia >= 0)
        da = ctx.toSymDim(aBatch[ia]);
      if (ib >= 0)
        db = ctx.toSymDim(bBatch[ib]);
      if (!da || (da->isConstant() && da->constant == 1 && db))
        batch.push_back(ctx.toFoldResult(*db));
      else if (!db || (db->isConstant() && db->constant == 1))
        batch.push_back(ctx.toFoldResult(*da));
      else if (da->isConstant() && db->isConstant() && da->constant != db->constant)
        return ctx.fail(node, "batch dims are not broadcastable");
      else
        batch.push_back(ctx.toFoldResult(da->isConstant() ? *da : *db));
    }
    SmallVector<OpFoldResult> aFull(batch), bFull(batch);
    aFull.append({m, k});
    bFull.append({k, n});
    lhs = broadcastTensor(ctx, lhs, aFull);
    rhs = broadcastTensor(ctx, rhs, bFull);
    int64_t bc = 1;
    Value dyn;
    for (OpFoldResult r : batch) {
      SymDim d = ctx.toSymDim(r);
      if (d.isConstant())
        bc *= d.constant;
      else
        dyn = dyn ? (Value)arith::MulIOp::create(ctx.builder, ctx.loc, dyn, d.value) : d.value;
    }
    OpFoldResult flatBatch =
        !dyn ? (OpFoldResult)ctx.builder.getIndexAttr(bc)
             : (bc == 1 ? (OpFoldResult)dyn
                        : (OpFoldResult)(Value)arith::MulIOp::create(ctx.builder, ctx.loc, dyn,
                                                                     ctx.indexConstant(bc)));
    Value a3 = ctx.reshape(lhs, {flatBatch, m, k});
    Value b3 = ctx.reshape(rhs, {flatBatch, k, n});
    SmallVector<OpFoldResult> sizes3{flatBatch, m, n};
    Value init = ctx.filled(sizes3, zeroOf(ctx, et));
    result = linalg::BatchMatmulOp::create(ctx.builder, ctx.loc, ValueRange{a3, b3},
                                           ValueRange{init})
                 .getResult(0);
    ctx.recordDims(result, sizes3);
    outSizes = batch;
    outSizes.append({m, n});
    result = ctx.reshape(result, outSizes);
  }
  if (squeezeM || squeezeN) {
    SmallVector<OpFoldResult> finalSizes(outSizes.begin(), outSizes.end() - 2);
    if (!squeezeM)
      finalSizes.push_back(outSizes[outSizes.size() - 2]);
    if (!squeezeN)
      finalSizes.push_back(outSizes.back());
    result = ctx.reshape(result, finalSizes);
  }
  ctx.setValue(node.output(0), result);
  return success();
}

/// Pads `input` by `low`/`high` per dim with `padValue` using a gather-style
/// generic (no tensor.pad): clamped extract, then select.
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
    SymDim s = ctx.toSymDim(inSizes[d]);
    int64_t extra = low[d] + high[d];
    if (extra == 0)
      outSizes.push_back(inSizes[d]);
    else if (s.isConstant())
      outSizes.push_back(ctx.builder.getIndexAttr(s.constant + extra));
    else
      outSizes.push_back((Value)arith::AddIOp::create(ctx.builder, ctx.loc, s.value,
                                                      ctx.indexConstant(extra)));
    inSizeValues.push_back(low[d] || high[d] ? ctx.toIndexValue(inSizes[d]) : Value());
  }
  Value init = ctx.empty(outSizes, tensorType(input).getElementType());
  SmallVector<AffineMap> maps{ctx.builder.getMultiDimIdentityMap(rank)};
  SmallVector<utils::IteratorType> iterators(rank, utils::IteratorType::parallel);
  auto g = linalg::GenericOp::create(
      ctx.builder, ctx.loc, TypeRange{init.getType()}, ValueRange{}, ValueRange{init}, maps,
      iterators, [&](OpBuilder &b, Location l, ValueRange) {
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
          Value shifted = low[d] ? (Value)arith::SubIOp::create(
                                       b, l, i, arith::ConstantIndexOp::create(b, l, low[d]))
                                 : i;
          Value geZero = arith::CmpIOp::create(b, l, arith::CmpIPredicate::sge, shifted, zero);
          Value ltSize = arith::CmpIOp::create(b, l, arith::CmpIPredicate::slt, shifted,
                                               inSizeValues[d]);
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

/// Spatial attributes shared by Conv and the pools (2-D only).
struct WindowAttrs {
  SmallVector<int64_t> kernel, strides, dilations, padLow, padHigh;
  bool ceilMode = false;
};

/// Reads kernel/strides/dilations/pads/auto_pad for a 2-D window over `input`.
/// For a 1-D op (`oneD`, input already reshaped to [N, C, 1, L]) the
/// attributes are widened with a unit leading spatial dim.
FailureOr<WindowAttrs> readWindowAttrs(ImportContext &ctx, const onnx::NodeProto &node,
                                       Value input, ArrayRef<int64_t> kernel, bool oneD = false) {
  WindowAttrs w;
  w.kernel.assign(kernel.begin(), kernel.end());
  auto get = [&](const char *name, int64_t def, size_t n) -> SmallVector<int64_t> {
    auto v = ctx.intsAttr(node, name);
    if (!v)
      return SmallVector<int64_t>(n, def);
    return SmallVector<int64_t>(v->begin(), v->end());
  };
  size_t rank = oneD ? 1 : 2;
  w.strides = get("strides", 1, rank);
  w.dilations = get("dilations", 1, rank);
  SmallVector<int64_t> pads = get("pads", 0, 2 * rank);
  if (oneD) {
    if (w.strides.size() != 1 || w.dilations.size() != 1 || pads.size() != 2) {
      (void)ctx.fail(node, "strides/dilations/pads have the wrong length for a 1-D window");
      return failure();
    }
    w.strides.insert(w.strides.begin(), 1);
    w.dilations.insert(w.dilations.begin(), 1);
    pads = {0, pads[0], 0, pads[1]};
  }
  w.ceilMode = ctx.intAttr(node, "ceil_mode", 0) != 0;
  if (w.strides.size() != 2 || w.dilations.size() != 2 || pads.size() != 4) {
    (void)ctx.fail(node, "strides/dilations/pads have the wrong length for a 2-D window");
    return failure();
  }
  w.padLow = {pads[0], pads[1]};
  w.padHigh = {pads[2], pads[3]};
  std::string autoPad = ctx.stringAttr(node, "auto_pad", "NOTSET");
  if (autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER") {
    auto type = tensorType(input);
    for (int d = 0; d < 2; ++d) {
      if (type.isDynamicDim(2 + d)) {
        (void)ctx.unsupported(node, "auto_pad " + autoPad + " on a dynamic spatial dim");
        return failure();
      }
      int64_t in = type.getDimSize(2 + d);
      int64_t out = (in + w.strides[d] - 1) / w.strides[d];
      int64_t total = std::max<int64_t>(0, (out - 1) * w.strides[d] +
                                               w.dilations[d] * (w.kernel[d] - 1) + 1 - in);
      w.padLow[d] = autoPad == "SAME_UPPER" ? total / 2 : total - total / 2;
      w.padHigh[d] = total - w.padLow[d];
    }
  } else if (autoPad == "VALID") {
    w.padLow = {0, 0};
    w.padHigh = {0, 0};
  } else if (autoPad != "NOTSET") {
    (void)ctx.unsupported(node, "auto_pad " + autoPad);
    return failure();
  }
  for (int64_t v : w.strides)
    if (v <= 0) {
      (void)ctx.fail(node, "strides must be positive");
      return failure();
    }
  for (int64_t v : w.dilations)
    if (v <= 0) {
      (void)ctx.fail(node, "dilations must be positive");
      return failure();
    }
  return w;
}

/// Output spatial size for a (padded) input dim; extends padHigh[d] for
/// ceil_mode so every window starts inside the padded input.
FailureOr<OpFoldResult> windowOutputSize(ImportContext &ctx, const onnx::NodeProto &node,
                                         OpFoldResult inSize, WindowAttrs &w, int d) {
  int64_t span = w.dilations[d] * (w.kernel[d] - 1) + 1;
  SymDim s = ctx.toSymDim(inSize);
  if (s.isConstant()) {
    int64_t padded = s.constant + w.padLow[d] + w.padHigh[d];
    if (padded < span) {
      (void)ctx.fail(node, "window is larger than the padded input");
      return failure();
    }
    int64_t out = (padded - span) / w.strides[d] + 1;
    if (w.ceilMode) {
      out = (padded - span + w.strides[d] - 1) / w.strides[d] + 1;
      // The last window must start inside the input or the low padding.
      if ((out - 1) * w.strides[d] >= s.constant + w.padLow[d])
        --out;
      int64_t needed = (out - 1) * w.strides[d] + span;
      if (needed > padded)
        w.padHigh[d] += needed - padded;
    }
    return (OpFoldResult)ctx.builder.getIndexAttr(out);
  }
  if (w.ceilMode) {
    (void)ctx.unsupported(node, "ceil_mode on a dynamic spatial dim");
    return failure();
  }
  OpBuilder &b = ctx.builder;
  Value v = arith::AddIOp::create(b, ctx.loc, s.value,
                                  ctx.indexConstant(w.padLow[d] + w.padHigh[d] - span));
  v = arith::DivSIOp::create(b, ctx.loc, v, ctx.indexConstant(w.strides[d]));
  v = arith::AddIOp::create(b, ctx.loc, v, ctx.indexConstant(1));
  return (OpFoldResult)v;
}

/// Adds a per-channel bias (dim 1) to an NCHW tensor.
Value addChannelBias(ImportContext &ctx, Value x, Value bias) {
  SmallVector<OpFoldResult> sizes = ctx.dims(x);
  int64_t rank = sizes.size();
  Value init = ctx.empty(sizes, tensorType(x).getElementType());
  SmallVector<AffineMap> maps{ctx.builder.getMultiDimIdentityMap(rank),
                              AffineMap::get(rank, 0, {ctx.builder.getAffineDimExpr(1)}, &ctx.context),
                              ctx.builder.getMultiDimIdentityMap(rank)};
  SmallVector<utils::IteratorType> iterators(rank, utils::IteratorType::parallel);
  auto g = linalg::GenericOp::create(ctx.builder, ctx.loc, TypeRange{init.getType()},
                                     ValueRange{x, bias}, ValueRange{init}, maps, iterators,
                                     [](OpBuilder &b, Location l, ValueRange args) {
                                       linalg::YieldOp::create(
                                           b, l, (Value)arith::AddFOp::create(b, l, args[0], args[1]));
                                     });
  ctx.recordDims(g.getResult(0), sizes);
  return g.getResult(0);
}

LogicalResult convertConv(ImportContext &ctx, const onnx::NodeProto &node) {
  if (node.input_size() < 2)
    return ctx.fail(node, "expects at least 2 inputs");
  auto x = ctx.getTensor(node, node.input(0));
  auto w = ctx.getTensor(node, node.input(1));
  if (failed(x) || failed(w))
    return failure();
  // 1-D convolutions run as 2-D ones over [N, C, 1, L].
  bool oneD = tensorType(*x).getRank() == 3 && tensorType(*w).getRank() == 3;
  if (oneD) {
    if (!tensorType(*w).hasStaticShape())
      return ctx.unsupported(node, "weights must have a static shape");
    auto unit = ctx.builder.getIndexAttr(1);
    *x = ctx.reshape(*x, {ctx.dim(*x, 0), ctx.dim(*x, 1), unit, ctx.dim(*x, 2)});
    *w = ctx.reshape(*w, {ctx.dim(*w, 0), ctx.dim(*w, 1), unit, ctx.dim(*w, 2)});
  }
  auto xType = tensorType(*x), wType = tensorType(*w);
  if (xType.getRank() != 4 || wType.getRank() != 4)
    return ctx.unsupported(node, "only 1-D and 2-D convolutions (3-D/4-D NCHW input) are supported");
  Type et = xType.getElementType();
  if (!isa<FloatType>(et) || wType.getElementType() != et)
    return ctx.unsupported(node, "only floating-point convolutions are supported");
  if (!wType.hasStaticShape())
    return ctx.unsupported(node, "weights must have a static shape");
  int64_t group = ctx.intAttr(node, "group", 1);
  int64_t filters = wType.getDimSize(0), channelsPerGroup = wType.getDimSize(1);
  if (group <= 0 || filters % group != 0)
    return ctx.fail(node, "invalid group " + std::to_string(group));
  if (auto ks = ctx.intsAttr(node, "kernel_shape")) {
    bool matches = oneD ? ks->size() == 1 && (*ks)[0] == wType.getDimSize(3)
                        : ks->size() == 2 && (*ks)[0] == wType.getDimSize(2) &&
                              (*ks)[1] == wType.getDimSize(3);
    if (!matches)
      return ctx.fail(node, "kernel_shape does not match the weights");
  }
  auto attrs = readWindowAttrs(ctx, node, *x, {wType.getDimSize(2), wType.getDimSize(3)}, oneD);
  if (failed(attrs))
    return failure();
  if (!xType.isDynamicDim(1) && xType.getDimSize(1) != channelsPerGroup * group)
    return ctx.fail(node, "input has " + std::to_string(xType.getDimSize(1)) +
                              " channels but the weights expect " +
                              std::to_string(channelsPerGroup * group));
  SmallVector<OpFoldResult> outSizes{ctx.dim(*x, 0), ctx.builder.getIndexAttr(filters)};
  for (int d = 0; d < 2; ++d) {
    auto s = windowOutputSize(ctx, node, ctx.dim(*x, 2 + d), *attrs, d);
    if (failed(s))
      return failure();
    outSizes.push_back(*s);
  }
  Value padded = padTensor(ctx, *x, {0, 0, attrs->padLow[0], attrs->padLow[1]},
                           {0, 0, attrs->padHigh[0], attrs->padHigh[1]}, zeroOf(ctx, et));
  Value init = ctx.filled(outSizes, zeroOf(ctx, et));
  Value result;
  if (group == 1) {
    result = linalg::Conv2DNchwFchwOp::create(
                 ctx.builder, ctx.loc, TypeRange{init.getType()}, ValueRange{padded, *w},
                 ValueRange{init}, ctx.builder.getI64TensorAttr(attrs->strides),
                 ctx.builder.getI64TensorAttr(attrs->dilations))
                 .getResult(0);
  } else {
    // Grouped convolution as a generic over (n, f, oh, ow, c, kh, kw).
    int64_t filtersPerGroup = filters / group;
    auto dimExpr = [&](unsigned i) { return ctx.builder.getAffineDimExpr(i); };
    AffineExpr channel = dimExpr(1).floorDiv(filtersPerGroup) * channelsPerGroup + dimExpr(4);
    AffineMap inMap = AffineMap::get(
        7, 0,
        {dimExpr(0), channel, dimExpr(2) * attrs->strides[0] + dimExpr(5) * attrs->dilations[0],
         dimExpr(3) * attrs->strides[1] + dimExpr(6) * attrs->dilations[1]},
        &ctx.context);
    AffineMap wMap = AffineMap::get(7, 0, {dimExpr(1), dimExpr(4), dimExpr(5), dimExpr(6)}, &ctx.context);
    AffineMap outMap = AffineMap::get(7, 0, {dimExpr(0), dimExpr(1), dimExpr(2), dimExpr(3)}, &ctx.context);
    using IT = utils::IteratorType;
    SmallVector<IT> iterators{IT::parallel, IT::parallel, IT::parallel, IT::parallel,
                              IT::reduction, IT::reduction, IT::reduction};
    result = linalg::GenericOp::create(
                 ctx.builder, ctx.loc, TypeRange{init.getType()}, ValueRange{padded, *w},
                 ValueRange{init}, SmallVector<AffineMap>{inMap, wMap, outMap}, iterators,
                 [](OpBuilder &b, Location l, ValueRange args) {
                   Value p = arith::MulFOp::create(b, l, args[0], args[1]);
                   linalg::YieldOp::create(b, l, (Value)arith::AddFOp::create(b, l, args[2], p));
                 })
                 .getResult(0);
  }
  ctx.recordDims(result, outSizes);
  if (ImportContext::hasInput(node, 2)) {
    auto bias = ctx.getTensor(node, node.input(2));
    if (failed(bias))
      return failure();
    if (tensorType(*bias).getRank() != 1)
      return ctx.fail(node, "bias must be 1-D");
    result = addChannelBias(ctx, result, *bias);
  }
  if (oneD)
    result = ctx.reshape(result, {ctx.dim(result, 0), ctx.dim(result, 1), ctx.dim(result, 3)});
  ctx.setValue(node.output(0), result);
  return success();
}

/// MaxPool (isMax) or AveragePool.
LogicalResult convertPool(ImportContext &ctx, const onnx::NodeProto &node, bool isMax) {
  auto x = ctx.getTensor(node, node.input(0));
  if (failed(x))
    return failure();
  // 1-D pooling runs as 2-D pooling over [N, C, 1, L].
  bool oneD = tensorType(*x).getRank() == 3;
  if (oneD)
    *x = ctx.reshape(*x, {ctx.dim(*x, 0), ctx.dim(*x, 1), ctx.builder.getIndexAttr(1), ctx.dim(*x, 2)});
  auto xType = tensorType(*x);
  if (xType.getRank() != 4)
    return ctx.unsupported(node, "only 1-D and 2-D pooling (3-D/4-D NCHW input) is supported");
  Type et = xType.getElementType();
  if (!isa<FloatType>(et))
    return ctx.unsupported(node, "only floating-point pooling is supported");
  if (node.output_size() > 1 && !node.output(1).empty())
    return ctx.unsupported(node, "the Indices output is not supported");
  auto kernel = ctx.intsAttr(node, "kernel_shape");
  if (!kernel || kernel->size() != (oneD ? 1u : 2u))
    return ctx.fail(node, "kernel_shape has the wrong length");
  if (oneD)
    kernel->insert(kernel->begin(), 1);
  auto attrs = readWindowAttrs(ctx, node, *x, *kernel, oneD);
  if (failed(attrs))
    return failure();
  if (!isMax && ctx.opset < 19 && ctx.attr(node, "dilations"))
    attrs->dilations = {1, 1};
  SmallVector<int64_t> userPadHigh = attrs->padHigh;
  SmallVector<OpFoldResult> outSizes{ctx.dim(*x, 0), ctx.dim(*x, 1)};
  for (int d = 0; d < 2; ++d) {
    auto s = windowOutputSize(ctx, node, ctx.dim(*x, 2 + d), *attrs, d);
    if (failed(s))
      return failure();
    outSizes.push_back(*s);
  }
  bool countIncludePad = ctx.intAttr(node, "count_include_pad", 0) != 0;
  bool anyPad = attrs->padLow[0] || attrs->padLow[1] || attrs->padHigh[0] || attrs->padHigh[1];
  bool ceilExtended = attrs->padHigh != userPadHigh;
  const auto &fs = APFloat::getLargest(cast<FloatType>(et).getFloatSemantics(), /*Negative=*/true);
  double lowest = fs.convertToDouble();
  Value padValue = isMax ? ctx.scalarConstant(et, lowest) : zeroOf(ctx, et);
  Value padded = padTensor(ctx, *x, {0, 0, attrs->padLow[0], attrs->padLow[1]},
                           {0, 0, attrs->padHigh[0], attrs->padHigh[1]}, padValue);
  Value init = ctx.filled(outSizes, isMax ? ctx.scalarConstant(et, lowest) : zeroOf(ctx, et));
  Value window = tensor::EmptyOp::create(ctx.builder, ctx.loc, *kernel, et);
  auto strides = ctx.builder.getI64TensorAttr(attrs->strides);
  auto dilations = ctx.builder.getI64TensorAttr(attrs->dilations);
  Value result;
  if (isMax)
    result = linalg::PoolingNchwMaxOp::create(ctx.builder, ctx.loc, TypeRange{init.getType()},
                                              ValueRange{padded, window}, ValueRange{init},
                                              strides, dilations)
                 .getResult(0);
  else
    result = linalg::PoolingNchwSumOp::create(ctx.builder, ctx.loc, TypeRange{init.getType()},
                                              ValueRange{padded, window}, ValueRange{init},
                                              strides, dilations)
                 .getResult(0);
  ctx.recordDims(result, outSizes);
  if (!isMax) {
    // Divisor: the full window, or per position the count of non-pad cells.
    bool perPosition = (anyPad && !countIncludePad) || ceilExtended;
    if (!perPosition) {
      double count = (double)(*kernel)[0] * (double)(*kernel)[1];
      auto r = ctx.elementwise(node, ValueRange{result}, et, [&](OpBuilder &b, Location l, ValueRange a) {
        return (Value)arith::DivFOp::create(b, l, a[0], arith::ConstantOp::create(b, l, b.getFloatAttr(et, count)));
      });
      if (failed(r))
        return failure();
      result = *r;
    } else {
      SymDim h = ctx.toSymDim(ctx.dim(*x, 2)), w = ctx.toSymDim(ctx.dim(*x, 3));
      if (!h.isConstant() || !w.isConstant())
        return ctx.unsupported(node, "count_include_pad=0 with pads on dynamic spatial dims");
      int64_t oh = ctx.toSymDim(outSizes[2]).constant, ow = ctx.toSymDim(outSizes[3]).constant;
      std::vector<float> counts(oh * ow);
      int64_t limitH = countIncludePad ? h.constant + attrs->padLow[0] + userPadHigh[0] : h.constant;
      int64_t limitW = countIncludePad ? w.constant + attrs->padLow[1] + userPadHigh[1] : w.constant;
      int64_t offH = countIncludePad ? 0 : attrs->padLow[0], offW = countIncludePad ? 0 : attrs->padLow[1];
      for (int64_t i = 0; i < oh; ++i)
        for (int64_t j = 0; j < ow; ++j) {
          int64_t c = 0;
          for (int64_t a = 0; a < (*kernel)[0]; ++a)
            for (int64_t b2 = 0; b2 < (*kernel)[1]; ++b2) {
              int64_t r = i * attrs->strides[0] + a * attrs->dilations[0] - offH;
              int64_t s = j * attrs->strides[1] + b2 * attrs->dilations[1] - offW;
              c += r >= 0 && r < limitH && s >= 0 && s < limitW;
            }
          counts[i * ow + j] = (float)std::max<int64_t>(c, 1);
        }
      auto countType = RankedTensorType::get({oh, ow}, ctx.builder.getF32Type());
      Value countTensor = arith::ConstantOp::create(
          ctx.builder, ctx.loc, DenseElementsAttr::get(countType, ArrayRef<float>(counts)));
      auto r = ctx.elementwise(node, ValueRange{result, countTensor}, et,
                               [&](OpBuilder &b, Location l, ValueRange a) -> Value {
                                 Value c = a[1];
                                 if (c.getType() != et)
                                   c = et.getIntOrFloatBitWidth() < 32
                                           ? (Value)arith::TruncFOp::create(b, l, et, c)
                                           : (Value)arith::ExtFOp::create(b, l, et, c);
                                 return arith::DivFOp::create(b, l, a[0], c);
                               });
      if (failed(r))
        return failure();
      result = *r;
    }
  }
  if (oneD)
    result = ctx.reshape(result, {ctx.dim(result, 0), ctx.dim(result, 1), ctx.dim(result, 3)});
  ctx.setValue(node.output(0), result);
  return success();
}

/// GlobalAveragePool / GlobalMaxPool: reduce H,W into [N,C] then expand to [N,C,1,1].
LogicalResult convertGlobalPool(ImportContext &ctx, const onnx::NodeProto &node, bool isMax) {
  auto x = ctx.getTensor(node, node.input(0));
  if (failed(x))
    return failure();
  auto xType = tensorType(*x);
  int64_t rank = xType.getRank();
  Type et = xType.getElementType();
  if (rank < 3 || !isa<FloatType>(et))
    return ctx.unsupported(node, "expects a floating-point input of rank >= 3");
  double lowest = APFloat::getLargest(cast<FloatType>(et).getFloatSemantics(), true).convertToDouble();
  SmallVector<OpFoldResult> reducedSizes{ctx.dim(*x, 0), ctx.dim(*x, 1)};
  Value init = ctx.filled(reducedSizes, ctx.scalarConstant(et, isMax ? lowest : 0.0));
  SmallVector<utils::IteratorType> iterators(rank, utils::IteratorType::reduction);
  iterators[0] = iterators[1] = utils::IteratorType::parallel;
  SmallVector<AffineMap> maps{
      ctx.builder.getMultiDimIdentityMap(rank),
      AffineMap::get(rank, 0, {ctx.builder.getAffineDimExpr(0), ctx.builder.getAffineDimExpr(1)},
                     &ctx.context)};
  Value reduced = linalg::GenericOp::create(
                      ctx.builder, ctx.loc, TypeRange{init.getType()}, ValueRange{*x},
                      ValueRange{init}, maps, iterators,
                      [&](OpBuilder &b, Location l, ValueRange a) {
                        Value v = isMax ? (Value)arith::MaximumFOp::create(b, l, a[0], a[1])
                                        : (Value)arith::AddFOp::create(b, l, a[0], a[1]);
                        linalg::YieldOp::create(b, l, v);
                      })
                      .getResult(0);
  ctx.recordDims(reduced, reducedSizes);
  if (!isMax) {
    SmallVector<OpFoldResult> spatial;
    for (int64_t d = 2; d < rank; ++d)
      spatial.push_back(ctx.dim(*x, d));
    int64_t c = 1;
    Value dyn;
    for (OpFoldResult s : spatial) {
      SymDim sd = ctx.toSymDim(s);
      if (sd.isConstant())
        c *= sd.constant;
      else
        dyn = dyn ? (Value)arith::MulIOp::create(ctx.builder, ctx.loc, dyn, sd.value) : sd.value;
    }
    Value divisor;
    if (!dyn) {
      divisor = ctx.scalarConstant(et, (double)c);
    } else {
      Value total = c == 1 ? dyn : (Value)arith::MulIOp::create(ctx.builder, ctx.loc, dyn, ctx.indexConstant(c));
      Value asInt = arith::IndexCastOp::create(ctx.builder, ctx.loc, ctx.builder.getI64Type(), total);
      divisor = arith::SIToFPOp::create(ctx.builder, ctx.loc, et, asInt);
    }
    auto r = ctx.elementwise(node, ValueRange{reduced}, et, [&](OpBuilder &b, Location l, ValueRange a) {
      return (Value)arith::DivFOp::create(b, l, a[0], divisor);
    });
    if (failed(r))
      return failure();
    reduced = *r;
  }
  SmallVector<OpFoldResult> outSizes = reducedSizes;
  for (int64_t d = 2; d < rank; ++d)
    outSizes.push_back(ctx.builder.getIndexAttr(1));
  ctx.setValue(node.output(0), ctx.reshape(reduced, outSizes));
  return success();
}

LogicalResult convertPad(ImportContext &ctx, const onnx::NodeProto &node) {
  std::string mode = ctx.stringAttr(node, "mode", "constant");
  if (mode != "constant")
    return ctx.unsupported(node, "mode '" + mode + "'");
  if (ImportContext::hasInput(node, 3))
    return ctx.unsupported(node, "the axes input");
  auto x = ctx.getTensor(node, node.input(0));
  if (failed(x))
    return failure();
  int64_t rank = tensorType(*x).getRank();
  Type et = tensorType(*x).getElementType();
  std::vector<int64_t> pads;
  double value = 0;
  if (ctx.opset < 11) {
    auto p = ctx.intsAttr(node, "pads");
    if (!p)
      return ctx.fail(node, "missing pads");
    pads = *p;
    value = ctx.floatAttr(node, "value", 0.0f);
  } else {
    auto p = ctx.getShapeTensor(node.input(1));
    if (!p || !llvm::all_of(p->elements, [](const SymDim &d) { return d.isConstant(); }))
      return ctx.unsupported(node, "pads must be constant");
    for (const SymDim &d : p->elements)
      pads.push_back(d.constant);
    if (ImportContext::hasInput(node, 2)) {
      auto c = ctx.getConstant(node.input(2));
      if (!c || c->getNumElements() != 1)
        return ctx.unsupported(node, "constant_value must be a constant scalar");
      Attribute v = *c->getValues<Attribute>().begin();
      value = isa<FloatAttr>(v) ? cast<FloatAttr>(v).getValueAsDouble()
                                : (double)cast<IntegerAttr>(v).getInt();
    }
  }
  if ((int64_t)pads.size() != 2 * rank)
    return ctx.fail(node, "pads must have 2*rank entries");
  for (int64_t p : pads)
    if (p < 0)
      return ctx.unsupported(node, "negative pads");
  SmallVector<int64_t> low(pads.begin(), pads.begin() + rank), high(pads.begin() + rank, pads.end());
  ctx.setValue(node.output(0), padTensor(ctx, *x, low, high, ctx.scalarConstant(et, value)));
  return success();
}

} // namespace

void registerLinalgOps(OpRegistry &r) {
  r.add("Gemm", convertGemm);
  r.add("MatMul", convertMatMul);
  r.add("Conv", convertConv);
  r.add("MaxPool", [](ImportContext &c, const onnx::NodeProto &n) { return convertPool(c, n, true); });
  r.add("AveragePool", [](ImportContext &c, const onnx::NodeProto &n) { return convertPool(c, n, false); });
  r.add("GlobalAveragePool", [](ImportContext &c, const onnx::NodeProto &n) { return convertGlobalPool(c, n, false); });
  r.add("GlobalMaxPool", [](ImportContext &c, const onnx::NodeProto &n) { return convertGlobalPool(c, n, true); });
  r.add("Pad", convertPad, 2);
}

} // namespace turbine::onnx_frontend
