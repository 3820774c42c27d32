//===- LinalgOps.cpp - ONNX Gemm/MatMul/Conv/Pool/Pad -> linalg -----------===//
//
// Contractions and windowed ops: Gemm and MatMul become linalg.matmul /
// linalg.batch_matmul (constant B operands are transposed at import time so
// no runtime transpose is needed), 2-D Conv becomes linalg.conv_2d_nchw_fchw
// (grouped and 3-D convolutions a linalg.generic; 1-D runs as 2-D), 2-D
// pooling becomes linalg.pooling_nchw_max/sum (3-D pooling a generic),
// MaxUnpool a gather-style reduction, and padding is a gather-style
// linalg.generic.
//===----------------------------------------------------------------------===//
#include "ImportContext.h"

#include <algorithm>
#include <cctype>
#include <limits>
#include <map>

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

/// Pads `input` by `low`/`high` per dim with `padValue` (tensor.pad; the
/// compiler's global-opt lowers it, after layout rewrites have seen it).
Value padTensor(ImportContext &ctx, Value input, ArrayRef<int64_t> low, ArrayRef<int64_t> high,
                Value padValue) {
  int64_t rank = tensorType(input).getRank();
  bool any = false;
  for (int64_t d = 0; d < rank; ++d)
    any |= low[d] != 0 || high[d] != 0;
  if (!any)
    return input;
  SmallVector<OpFoldResult> inSizes = ctx.dims(input), outSizes;
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
  }
  Value padded = tensor::PadOp::create(ctx.builder, ctx.loc, Type(), input,
                                       getAsIndexOpFoldResult(ctx.builder.getContext(), low),
                                       getAsIndexOpFoldResult(ctx.builder.getContext(), high),
                                       padValue)
                     ->getResult(0);
  ctx.recordDims(padded, outSizes);
  return padded;
}

/// Spatial attributes shared by Conv and the pools (one entry per spatial dim).
using WindowAttrs = frontends::PoolingWindow;

/// Reads kernel/strides/dilations/pads/auto_pad for a window of
/// `kernel.size()` spatial dims (2 or 3) over `input`. For a 1-D op (`oneD`,
/// input already reshaped to [N, C, 1, L], kernel widened to [1, k]) the
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
  const size_t spatial = kernel.size();
  size_t rank = oneD ? 1 : spatial;
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
  if (w.strides.size() != spatial || w.dilations.size() != spatial || pads.size() != 2 * spatial) {
    (void)ctx.fail(node, "strides/dilations/pads have the wrong length for a " +
                             std::to_string(spatial) + "-D window");
    return failure();
  }
  w.padLow.assign(pads.begin(), pads.begin() + spatial);
  w.padHigh.assign(pads.begin() + spatial, pads.end());
  std::string autoPad = ctx.stringAttr(node, "auto_pad", "NOTSET");
  if (autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER") {
    auto type = tensorType(input);
    for (size_t d = 0; d < spatial; ++d) {
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
    w.padLow.assign(spatial, 0);
    w.padHigh.assign(spatial, 0);
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

/// frontends::windowOutputSize, its refusal reported against `node`.
FailureOr<OpFoldResult> windowOutputSize(ImportContext &ctx, const onnx::NodeProto &node,
                                         OpFoldResult inSize, WindowAttrs &w, int d) {
  frontends::WindowError kind = frontends::WindowError::None;
  std::string error;
  OpFoldResult out = frontends::windowOutputSize(ctx, inSize, w, d, kind, error);
  if (out)
    return out;
  return kind == frontends::WindowError::Unsupported ? ctx.unsupported(node, error)
                                                     : ctx.fail(node, error);
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
  int64_t rank = xType.getRank(), spatial = rank - 2;
  if ((rank != 4 && rank != 5) || wType.getRank() != rank)
    return ctx.unsupported(node, "only 1-D, 2-D and 3-D convolutions (3-D to 5-D NC... input) are "
                                 "supported, got input rank " + std::to_string(rank) +
                                 " and weight rank " + std::to_string(wType.getRank()));
  Type et = xType.getElementType();
  if (!isa<FloatType>(et) || wType.getElementType() != et)
    return ctx.unsupported(node, "only floating-point convolutions are supported");
  if (!wType.hasStaticShape())
    return ctx.unsupported(node, "weights must have a static shape");
  int64_t group = ctx.intAttr(node, "group", 1);
  int64_t filters = wType.getDimSize(0), channelsPerGroup = wType.getDimSize(1);
  if (group <= 0 || filters % group != 0)
    return ctx.fail(node, "invalid group " + std::to_string(group));
  SmallVector<int64_t> kernel(wType.getShape().begin() + 2, wType.getShape().end());
  if (auto ks = ctx.intsAttr(node, "kernel_shape")) {
    bool matches = oneD ? ks->size() == 1 && (*ks)[0] == kernel[1]
                        : llvm::equal(*ks, kernel);
    if (!matches)
      return ctx.fail(node, "kernel_shape does not match the weights");
  }
  auto attrs = readWindowAttrs(ctx, node, *x, kernel, oneD);
  if (failed(attrs))
    return failure();
  if (!xType.isDynamicDim(1) && xType.getDimSize(1) != channelsPerGroup * group)
    return ctx.fail(node, "input has " + std::to_string(xType.getDimSize(1)) +
                              " channels but the weights expect " +
                              std::to_string(channelsPerGroup * group));
  SmallVector<OpFoldResult> outSizes{ctx.dim(*x, 0), ctx.builder.getIndexAttr(filters)};
  for (int d = 0; d < spatial; ++d) {
    auto s = windowOutputSize(ctx, node, ctx.dim(*x, 2 + d), *attrs, d);
    if (failed(s))
      return failure();
    outSizes.push_back(*s);
  }
  SmallVector<int64_t> padLow{0, 0}, padHigh{0, 0};
  padLow.append(attrs->padLow.begin(), attrs->padLow.end());
  padHigh.append(attrs->padHigh.begin(), attrs->padHigh.end());
  Value padded = padTensor(ctx, *x, padLow, padHigh, zeroOf(ctx, et));
  Value init = ctx.filled(outSizes, zeroOf(ctx, et));
  Value result;
  if (group == 1 && spatial == 2) {
    result = linalg::Conv2DNchwFchwOp::create(
                 ctx.builder, ctx.loc, TypeRange{init.getType()}, ValueRange{padded, *w},
                 ValueRange{init}, ctx.builder.getI64TensorAttr(attrs->strides),
                 ctx.builder.getI64TensorAttr(attrs->dilations))
                 .getResult(0);
  } else {
    // Grouped or 3-D convolution as a generic over (n, f, o..., c, k...)
    // with spatial output dims o and kernel dims k.
    int64_t filtersPerGroup = filters / group;
    int64_t numLoops = 2 * rank - 1;
    auto dimExpr = [&](unsigned i) { return ctx.builder.getAffineDimExpr(i); };
    AffineExpr channel = dimExpr(1).floorDiv(filtersPerGroup) * channelsPerGroup + dimExpr(rank);
    SmallVector<AffineExpr> inExprs{dimExpr(0), channel}, wExprs{dimExpr(1), dimExpr(rank)}, outExprs;
    for (int64_t d = 0; d < spatial; ++d) {
      inExprs.push_back(dimExpr(2 + d) * attrs->strides[d] + dimExpr(rank + 1 + d) * attrs->dilations[d]);
      wExprs.push_back(dimExpr(rank + 1 + d));
    }
    for (int64_t d = 0; d < rank; ++d)
      outExprs.push_back(dimExpr(d));
    AffineMap inMap = AffineMap::get(numLoops, 0, inExprs, &ctx.context);
    AffineMap wMap = AffineMap::get(numLoops, 0, wExprs, &ctx.context);
    AffineMap outMap = AffineMap::get(numLoops, 0, outExprs, &ctx.context);
    using IT = utils::IteratorType;
    SmallVector<IT> iterators(rank, IT::parallel);
    iterators.append(spatial + 1, IT::reduction);
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
  int64_t rank = xType.getRank(), spatial = rank - 2;
  if (rank != 4 && rank != 5)
    return ctx.unsupported(node, "only 1-D, 2-D and 3-D pooling (3-D to 5-D NC... input) is supported, "
                                 "got input rank " + std::to_string(rank));
  Type et = xType.getElementType();
  bool isInt = isa<IntegerType>(et);
  bool isUnsigned = isInt && ctx.isUnsigned(node.input(0));
  if (!isa<FloatType>(et) && !(isMax && isInt))
    return ctx.unsupported(node, isMax ? "element type (MaxPool takes floating-point or integer input)"
                                       : "only floating-point average pooling is supported");
  bool wantIndices = isMax && node.output_size() > 1 && !node.output(1).empty();
  if (wantIndices && isInt)
    return ctx.unsupported(node, "the Indices output of integer MaxPool");
  int64_t storageOrder = ctx.intAttr(node, "storage_order", 0);
  if (wantIndices && storageOrder != 0 && storageOrder != 1)
    return ctx.fail(node, "storage_order must be 0 or 1");
  if (wantIndices && spatial != 2)
    return ctx.unsupported(node, "the Indices output of 3-D MaxPool");
  auto kernel = ctx.intsAttr(node, "kernel_shape");
  if (!kernel || (int64_t)kernel->size() != (oneD ? 1 : spatial))
    return ctx.fail(node, "kernel_shape has the wrong length");
  if (oneD)
    kernel->insert(kernel->begin(), 1);
  auto attrs = readWindowAttrs(ctx, node, *x, *kernel, oneD);
  if (failed(attrs))
    return failure();
  if (!isMax && ctx.opset < 19 && ctx.attr(node, "dilations"))
    attrs->dilations.assign(spatial, 1);
  SmallVector<int64_t> userPadHigh = attrs->padHigh;
  SmallVector<OpFoldResult> outSizes{ctx.dim(*x, 0), ctx.dim(*x, 1)};
  for (int d = 0; d < spatial; ++d) {
    auto s = windowOutputSize(ctx, node, ctx.dim(*x, 2 + d), *attrs, d);
    if (failed(s))
      return failure();
    outSizes.push_back(*s);
  }
  bool countIncludePad = ctx.intAttr(node, "count_include_pad", 0) != 0;
  bool anyPad = llvm::any_of(attrs->padLow, [](int64_t p) { return p != 0; }) ||
                llvm::any_of(attrs->padHigh, [](int64_t p) { return p != 0; });
  bool ceilExtended = attrs->padHigh != userPadHigh;
  // The identity of max: the lowest value of the element type.
  double lowest = 0;
  if (!isInt)
    lowest = APFloat::getLargest(cast<FloatType>(et).getFloatSemantics(), /*Negative=*/true).convertToDouble();
  else if (!isUnsigned)
    lowest = (double)APInt::getSignedMinValue(et.getIntOrFloatBitWidth()).getSExtValue();
  Value padValue = isMax ? ctx.scalarConstant(et, lowest) : zeroOf(ctx, et);
  SmallVector<int64_t> padLow{0, 0}, padHigh{0, 0};
  padLow.append(attrs->padLow.begin(), attrs->padLow.end());
  padHigh.append(attrs->padHigh.begin(), attrs->padHigh.end());
  Value padded = padTensor(ctx, *x, padLow, padHigh, padValue);
  Value init = ctx.filled(outSizes, isMax ? ctx.scalarConstant(et, lowest) : zeroOf(ctx, et));
  Value window = tensor::EmptyOp::create(ctx.builder, ctx.loc, *kernel, et);
  auto strides = ctx.builder.getI64TensorAttr(attrs->strides);
  auto dilations = ctx.builder.getI64TensorAttr(attrs->dilations);
  Value result;
  if (spatial == 3 || isInt) {
    // No NCDHW (nor unsigned NCHW) pooling op upstream: a generic over
    // (n, c, o..., k...) with the window operand giving the kernel loops
    // their ranges.
    int64_t numLoops = 2 + 2 * spatial;
    auto dimExpr = [&](unsigned i) { return ctx.builder.getAffineDimExpr(i); };
    SmallVector<AffineExpr> inExprs{dimExpr(0), dimExpr(1)}, windowExprs, outExprs;
    for (int64_t d = 0; d < spatial; ++d) {
      inExprs.push_back(dimExpr(2 + d) * attrs->strides[d] + dimExpr(rank + d) * attrs->dilations[d]);
      windowExprs.push_back(dimExpr(rank + d));
    }
    for (int64_t d = 0; d < rank; ++d)
      outExprs.push_back(dimExpr(d));
    SmallVector<AffineMap> maps{AffineMap::get(numLoops, 0, inExprs, &ctx.context),
                                AffineMap::get(numLoops, 0, windowExprs, &ctx.context),
                                AffineMap::get(numLoops, 0, outExprs, &ctx.context)};
    SmallVector<utils::IteratorType> iterators(rank, utils::IteratorType::parallel);
    iterators.append(spatial, utils::IteratorType::reduction);
    result = linalg::GenericOp::create(
                 ctx.builder, ctx.loc, TypeRange{init.getType()}, ValueRange{padded, window},
                 ValueRange{init}, maps, iterators,
                 [&](OpBuilder &b, Location l, ValueRange a) {
                   Value v = !isMax       ? (Value)arith::AddFOp::create(b, l, a[2], a[0])
                             : isUnsigned ? (Value)arith::MaxUIOp::create(b, l, a[2], a[0])
                             : isInt      ? (Value)arith::MaxSIOp::create(b, l, a[2], a[0])
                                          : (Value)arith::MaximumFOp::create(b, l, a[2], a[0]);
                   linalg::YieldOp::create(b, l, v);
                 })
                 .getResult(0);
  } else if (isMax)
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
      double count = 1;
      for (int64_t k : *kernel)
        count *= (double)k;
      auto r = ctx.elementwise(node, ValueRange{result}, et, [&](OpBuilder &b, Location l, ValueRange a) {
        return (Value)arith::DivFOp::create(b, l, a[0], arith::ConstantOp::create(b, l, b.getFloatAttr(et, count)));
      });
      if (failed(r))
        return failure();
      result = *r;
    } else {
      // A window cell is counted when it is inside along every spatial dim,
      // so the count is the product of per-dim counts.
      SmallVector<int64_t> outShape;
      SmallVector<std::vector<int64_t>> perDim;
      for (int64_t d = 0; d < spatial; ++d) {
        SymDim in = ctx.toSymDim(ctx.dim(*x, 2 + d)), out = ctx.toSymDim(outSizes[2 + d]);
        if (!in.isConstant() || !out.isConstant())
          return ctx.unsupported(node, "count_include_pad=0 with pads on dynamic spatial dims");
        int64_t limit = countIncludePad ? in.constant + attrs->padLow[d] + userPadHigh[d] : in.constant;
        int64_t offset = countIncludePad ? 0 : attrs->padLow[d];
        std::vector<int64_t> c(out.constant, 0);
        for (int64_t i = 0; i < out.constant; ++i)
          for (int64_t k = 0; k < (*kernel)[d]; ++k) {
            int64_t r = i * attrs->strides[d] + k * attrs->dilations[d] - offset;
            c[i] += r >= 0 && r < limit;
          }
        perDim.push_back(std::move(c));
        outShape.push_back(out.constant);
      }
      int64_t total = 1;
      for (int64_t o : outShape)
        total *= o;
      std::vector<float> counts(total);
      for (int64_t flat = 0; flat < total; ++flat) {
        int64_t rest = flat, c = 1;
        for (int64_t d = spatial - 1; d >= 0; --d) {
          c *= perDim[d][rest % outShape[d]];
          rest /= outShape[d];
        }
        counts[flat] = (float)std::max<int64_t>(c, 1);
      }
      auto countType = RankedTensorType::get(outShape, ctx.builder.getF32Type());
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
  if (wantIndices) {
    // Indices: flattened position (row-major, or column-major within each
    // H x W plane for storage_order 1) of the first maximum of each window,
    // padding excluded; a generic over (n, c, i, j) with reduction loops over
    // the window.
    SmallVector<Value> dimValues;
    for (int64_t d = 0; d < 4; ++d)
      dimValues.push_back(ctx.toIndexValue(ctx.dim(*x, d)));
    Value bestInit = ctx.filled(outSizes, ctx.scalarConstant(et, lowest));
    Value indexInit = ctx.filled(outSizes, arith::ConstantOp::create(ctx.builder, ctx.loc,
                                                                    ctx.builder.getI64IntegerAttr(-1)));
    Value windowRange = ctx.empty({ctx.builder.getIndexAttr((*kernel)[0]), ctx.builder.getIndexAttr((*kernel)[1])},
                                  ctx.builder.getI1Type());
    SmallVector<AffineExpr> outExprs;
    for (int64_t d = 0; d < 4; ++d)
      outExprs.push_back(ctx.builder.getAffineDimExpr(d));
    AffineMap outMap = AffineMap::get(6, 0, outExprs, &ctx.context);
    SmallVector<AffineMap> maps{
        AffineMap::get(6, 0, {ctx.builder.getAffineDimExpr(4), ctx.builder.getAffineDimExpr(5)}, &ctx.context),
        outMap, outMap};
    SmallVector<utils::IteratorType> iterators(4, utils::IteratorType::parallel);
    iterators.append(2, utils::IteratorType::reduction);
    Value source = *x;
    WindowAttrs w = *attrs;
    auto g = linalg::GenericOp::create(
        ctx.builder, ctx.loc, TypeRange{bestInit.getType(), indexInit.getType()}, ValueRange{windowRange},
        ValueRange{bestInit, indexInit}, maps, iterators, [&](OpBuilder &b, Location l, ValueRange a) {
          auto cst = [&](int64_t v) -> Value { return arith::ConstantIndexOp::create(b, l, v); };
          SmallVector<Value> idx;
          for (int64_t d = 0; d < 6; ++d)
            idx.push_back(linalg::IndexOp::create(b, l, d));
          Value inside = arith::ConstantOp::create(b, l, b.getBoolAttr(true));
          SmallVector<Value> pos;
          for (int64_t d = 0; d < 2; ++d) {
            Value p = arith::SubIOp::create(
                b, l,
                arith::AddIOp::create(b, l, arith::MulIOp::create(b, l, idx[2 + d], cst(w.strides[d])),
                                      arith::MulIOp::create(b, l, idx[4 + d], cst(w.dilations[d]))),
                cst(w.padLow[d]));
            Value ok = arith::AndIOp::create(b, l, arith::CmpIOp::create(b, l, arith::CmpIPredicate::sge, p, cst(0)),
                                             arith::CmpIOp::create(b, l, arith::CmpIPredicate::slt, p, dimValues[2 + d]));
            inside = arith::AndIOp::create(b, l, inside, ok);
            Value last = arith::SubIOp::create(b, l, dimValues[2 + d], cst(1));
            pos.push_back(arith::MinSIOp::create(b, l, arith::MaxSIOp::create(b, l, p, cst(0)), last));
          }
          Value v = tensor::ExtractOp::create(b, l, source, ValueRange{idx[0], idx[1], pos[0], pos[1]});
          Value first = arith::CmpIOp::create(b, l, arith::CmpIPredicate::slt, a[2],
                                              arith::ConstantOp::create(b, l, b.getI64IntegerAttr(0)));
          Value greater = arith::CmpFOp::create(b, l, arith::CmpFPredicate::OGT, v, a[1]);
          Value better = arith::AndIOp::create(b, l, inside, arith::OrIOp::create(b, l, greater, first));
          Value plane = arith::AddIOp::create(b, l, arith::MulIOp::create(b, l, idx[0], dimValues[1]), idx[1]);
          Value within = storageOrder == 0
                             ? (Value)arith::AddIOp::create(b, l, arith::MulIOp::create(b, l, pos[0], dimValues[3]), pos[1])
                             : (Value)arith::AddIOp::create(b, l, arith::MulIOp::create(b, l, pos[1], dimValues[2]), pos[0]);
          Value flat = arith::AddIOp::create(
              b, l, arith::MulIOp::create(b, l, plane, arith::MulIOp::create(b, l, dimValues[2], dimValues[3])), within);
          flat = arith::IndexCastOp::create(b, l, b.getI64Type(), flat);
          linalg::YieldOp::create(b, l,
                                  ValueRange{arith::SelectOp::create(b, l, better, v, a[1]),
                                             arith::SelectOp::create(b, l, better, flat, a[2])});
        });
    Value indices = g.getResult(1);
    ctx.recordDims(indices, outSizes);
    if (oneD)
      indices = ctx.reshape(indices, {ctx.dim(indices, 0), ctx.dim(indices, 1), ctx.dim(indices, 3)});
    ctx.setValue(node.output(1), indices);
  }
  if (oneD)
    result = ctx.reshape(result, {ctx.dim(result, 0), ctx.dim(result, 1), ctx.dim(result, 3)});
  ctx.setValue(node.output(0), result);
  return success();
}

/// MaxUnpool (opsets 9, 11): y = zeros(output shape), y.flat[I[j]] = X[j],
/// where the flat indices address the default output shape (from
/// kernel_shape, strides, pads); a larger output_shape (a constant, or read
/// on the host at run time) extends that result with zeros at the end of
/// each spatial dim (as ONNX's test data expects).
/// As a gather: each output element of plane (n, c) looks for the input
/// element of the same plane whose index names it (a reduction over the
/// input plane, O(output * plane) work). Indices into another plane, which
/// MaxPool never produces, are not looked for.
LogicalResult convertMaxUnpool(ImportContext &ctx, const onnx::NodeProto &node) {
  if (node.input_size() < 2)
    return ctx.fail(node, "expects inputs X and I");
  auto x = ctx.getTensor(node, node.input(0));
  auto indices = ctx.getTensor(node, node.input(1));
  if (failed(x) || failed(indices))
    return failure();
  auto xType = tensorType(*x);
  int64_t rank = xType.getRank(), spatial = rank - 2;
  if (rank < 3 || tensorType(*indices).getRank() != rank ||
      !isa<IntegerType>(tensorType(*indices).getElementType()))
    return ctx.fail(node, "X and I must have the same rank >= 3, I integer");
  auto kernel = ctx.intsAttr(node, "kernel_shape");
  if (!kernel || (int64_t)kernel->size() != spatial)
    return ctx.fail(node, "kernel_shape must have one entry per spatial dim");
  std::vector<int64_t> strides = ctx.intsAttr(node, "strides").value_or(std::vector<int64_t>(spatial, 1));
  std::vector<int64_t> pads = ctx.intsAttr(node, "pads").value_or(std::vector<int64_t>(2 * spatial, 0));
  if ((int64_t)strides.size() != spatial || (int64_t)pads.size() != 2 * spatial)
    return ctx.fail(node, "strides/pads have the wrong length");
  SmallVector<OpFoldResult> outSizes{ctx.dim(*x, 0), ctx.dim(*x, 1)};
  SmallVector<OpFoldResult> defaultSizes = outSizes;
  for (int64_t d = 0; d < spatial; ++d) {
    if (xType.isDynamicDim(2 + d))
      return ctx.unsupported(node, "a dynamic spatial dim");
    int64_t out = (xType.getDimSize(2 + d) - 1) * strides[d] + (*kernel)[d] - pads[d] - pads[spatial + d];
    if (out < 0)
      return ctx.fail(node, "negative output size");
    defaultSizes.push_back(ctx.builder.getIndexAttr(out));
  }
  bool extended = false;
  if (ImportContext::hasInput(node, 2)) {
    // Known at import time, else read on the host at run time.
    auto shape = ctx.getShapeOperand(node, 2, "output_shape");
    if (failed(shape))
      return failure();
    if ((int64_t)shape->elements.size() != rank)
      return ctx.fail(node, "output_shape must have one entry per dim");
    for (int64_t d = 2; d < rank; ++d) {
      const SymDim &e = shape->elements[d];
      if (e.isConstant()) {
        if (e.constant < ctx.toSymDim(defaultSizes[d]).constant)
          return ctx.fail(node, "output_shape is smaller than the unpooled shape");
        outSizes.push_back(ctx.builder.getIndexAttr(e.constant));
      } else {
        OpFoldResult size = ctx.toFoldResult(e);
        if (failed(ctx.check(node, ctx.compare(arith::CmpIPredicate::sge, size, defaultSizes[d]),
                             "output_shape is smaller than the unpooled shape")))
          return failure();
        outSizes.push_back(size);
      }
      extended = extended || outSizes.back() != defaultSizes[d];
    }
  } else {
    outSizes = defaultSizes;
  }
  Type et = xType.getElementType();
  Value init = ctx.filled(outSizes, ctx.scalarConstant(et, 0));
  SmallVector<Value> outDims;
  SmallVector<int64_t> defaultSpatial;
  for (OpFoldResult s : defaultSizes)
    outDims.push_back(ctx.toIndexValue(s));
  for (int64_t d = 2; d < rank; ++d)
    defaultSpatial.push_back(ctx.toSymDim(defaultSizes[d]).constant);
  // Loops: n, c, o... (parallel), i... (reduction over the input plane).
  int64_t numLoops = rank + spatial;
  auto dimExpr = [&](unsigned i) { return ctx.builder.getAffineDimExpr(i); };
  SmallVector<AffineExpr> inExprs{dimExpr(0), dimExpr(1)}, outExprs;
  for (int64_t d = 0; d < spatial; ++d)
    inExprs.push_back(dimExpr(rank + d));
  for (int64_t d = 0; d < rank; ++d)
    outExprs.push_back(dimExpr(d));
  AffineMap inMap = AffineMap::get(numLoops, 0, inExprs, &ctx.context);
  SmallVector<AffineMap> maps{inMap, inMap, AffineMap::get(numLoops, 0, outExprs, &ctx.context)};
  SmallVector<utils::IteratorType> iterators(rank, utils::IteratorType::parallel);
  iterators.append(spatial, utils::IteratorType::reduction);
  Value result = linalg::GenericOp::create(
                     ctx.builder, ctx.loc, TypeRange{init.getType()}, ValueRange{*x, *indices}, ValueRange{init},
                     maps, iterators,
                     [&](OpBuilder &b, Location l, ValueRange a) {
                       Value flat = linalg::IndexOp::create(b, l, 0);
                       for (int64_t d = 1; d < rank; ++d)
                         flat = arith::AddIOp::create(b, l, arith::MulIOp::create(b, l, flat, outDims[d]),
                                                      linalg::IndexOp::create(b, l, d));
                       Type it = a[1].getType();
                       Value hit = arith::CmpIOp::create(b, l, arith::CmpIPredicate::eq, a[1],
                                                         arith::IndexCastOp::create(b, l, it, flat));
                       if (extended) // positions beyond the unpooled shape stay zero
                         for (int64_t d = 2; d < rank; ++d) {
                           Value inside = arith::CmpIOp::create(
                               b, l, arith::CmpIPredicate::slt, linalg::IndexOp::create(b, l, d),
                               arith::ConstantIndexOp::create(b, l, defaultSpatial[d - 2]));
                           hit = arith::AndIOp::create(b, l, hit, inside);
                         }
                       linalg::YieldOp::create(b, l, (Value)arith::SelectOp::create(b, l, hit, a[0], a[2]));
                     })
                     .getResult(0);
  ctx.recordDims(result, outSizes);
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
  if (mode != "constant" && mode != "edge" && mode != "reflect")
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
    auto p = ctx.getShapeOperand(node, 1, "pads");
    if (failed(p))
      return failure();
    bool runtimeValue = ImportContext::hasInput(node, 2) && !ctx.getConstant(node.input(2));
    if (!p->isConstant() || runtimeValue)
      return convertPadAtRunTime(ctx, node, *x, *p, mode);
    for (const SymDim &d : p->elements)
      pads.push_back(d.constant);
    if (ImportContext::hasInput(node, 2)) {
      auto c = ctx.getConstant(node.input(2));
      if (!c || c->getNumElements() != 1)
        return ctx.fail(node, "constant_value must be a scalar");
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
  if (mode == "constant") {
    ctx.setValue(node.output(0), padTensor(ctx, *x, low, high, ctx.scalarConstant(et, value)));
    return success();
  }
  // edge / reflect: a gather-style generic reading the clamped (edge) or
  // mirrored (reflect, without repeating the border) source index.
  bool reflect = mode == "reflect";
  SmallVector<OpFoldResult> outSizes;
  SmallVector<Value> inSizes;
  for (int64_t d = 0; d < rank; ++d) {
    auto type = tensorType(*x);
    bool padded = low[d] != 0 || high[d] != 0;
    if (padded && type.isDynamicDim(d))
      return ctx.unsupported(node, "mode '" + mode + "' on a dynamic dim");
    if (padded && type.getDimSize(d) == 0)
      return ctx.fail(node, "mode '" + mode + "' cannot pad an empty dim");
    if (reflect && padded && (low[d] >= type.getDimSize(d) || high[d] >= type.getDimSize(d)))
      return ctx.unsupported(node, "reflect pads must be smaller than the dim");
    OpFoldResult in = ctx.dim(*x, d);
    inSizes.push_back(ctx.toIndexValue(in));
    SymDim sd = ctx.toSymDim(in);
    outSizes.push_back(sd.isConstant() ? (OpFoldResult)ctx.builder.getIndexAttr(sd.constant + low[d] + high[d])
                                       : in);
  }
  Value init = ctx.empty(outSizes, et);
  SmallVector<utils::IteratorType> parallel(rank, utils::IteratorType::parallel);
  Value source = *x;
  Value result = linalg::GenericOp::create(
                     ctx.builder, ctx.loc, TypeRange{init.getType()}, ValueRange{}, ValueRange{init},
                     SmallVector<AffineMap>{ctx.builder.getMultiDimIdentityMap(rank)}, parallel,
                     [&](OpBuilder &b, Location l, ValueRange) {
                       Value zero = arith::ConstantIndexOp::create(b, l, 0);
                       Value one = arith::ConstantIndexOp::create(b, l, 1);
                       SmallVector<Value> src;
                       for (int64_t d = 0; d < rank; ++d) {
                         Value i = linalg::IndexOp::create(b, l, d);
                         if (low[d] == 0 && high[d] == 0) {
                           src.push_back(i);
                           continue;
                         }
                         i = arith::SubIOp::create(b, l, i, arith::ConstantIndexOp::create(b, l, low[d]));
                         Value last = arith::SubIOp::create(b, l, inSizes[d], one);
                         if (reflect) {
                           Value neg = arith::CmpIOp::create(b, l, arith::CmpIPredicate::slt, i, zero);
                           i = arith::SelectOp::create(b, l, neg, arith::SubIOp::create(b, l, zero, i), i);
                           Value over = arith::CmpIOp::create(b, l, arith::CmpIPredicate::sgt, i, last);
                           Value mirrored = arith::SubIOp::create(b, l, arith::AddIOp::create(b, l, last, last), i);
                           i = arith::SelectOp::create(b, l, over, mirrored, i);
                         }
                         src.push_back(arith::MinSIOp::create(b, l, arith::MaxSIOp::create(b, l, i, zero), last));
                       }
                       linalg::YieldOp::create(b, l, tensor::ExtractOp::create(b, l, source, src).getResult());
                     })
                     .getResult(0);
  ctx.recordDims(result, outSizes);
  ctx.setValue(node.output(0), result);
  return success();
}

/// ConvTranspose (1-D to 3-D spatial) as one linalg.generic: loops (n, m,
/// o...) parallel and (c in group, k...) reduction; y[n, m, o] = B[m] +
/// sum x[n, g*Cg + c, i] * W[g*Cg + c, m % Mg, k] over i with
/// o = i*stride + k*dilation - pad_begin (read with clamped tensor.extract,
/// masked where i is not integral or out of range). Output size and pads
/// follow the ONNX formulas for pads, output_padding, output_shape and
/// auto_pad (SAME_UPPER puts the extra padding at the end).
LogicalResult convertConvTranspose(ImportContext &ctx, const onnx::NodeProto &node) {
  if (node.input_size() < 2)
    return ctx.fail(node, "expects at least 2 inputs");
  auto x = ctx.getTensor(node, node.input(0));
  auto w = ctx.getTensor(node, node.input(1));
  if (failed(x) || failed(w))
    return failure();
  Value bias;
  if (ImportContext::hasInput(node, 2)) {
    auto b = ctx.getTensor(node, node.input(2));
    if (failed(b))
      return failure();
    bias = *b;
  }
  auto xType = tensorType(*x), wType = tensorType(*w);
  int64_t rank = xType.getRank(), s = rank - 2;
  if (rank < 3 || rank > 5 || wType.getRank() != rank)
    return ctx.unsupported(node, "only 1-D to 3-D transposed convolutions are supported");
  Type et = xType.getElementType();
  if (!isa<FloatType>(et) || wType.getElementType() != et)
    return ctx.unsupported(node, "only floating-point convolutions are supported");
  if (!wType.hasStaticShape())
    return ctx.unsupported(node, "weights must have a static shape");
  for (int64_t d = 1; d < rank; ++d)
    if (xType.isDynamicDim(d))
      return ctx.unsupported(node, "input channels and spatial dims must be static");
  int64_t group = ctx.intAttr(node, "group", 1);
  int64_t channels = xType.getDimSize(1);
  if (group <= 0 || channels % group != 0 || wType.getDimSize(0) != channels)
    return ctx.fail(node, "weights do not match the input channels / group");
  int64_t cg = channels / group, mg = wType.getDimSize(1), outChannels = mg * group;
  auto listAttr = [&](const char *name, int64_t def, size_t n) -> std::vector<int64_t> {
    auto v = ctx.intsAttr(node, name);
    return v ? *v : std::vector<int64_t>(n, def);
  };
  std::vector<int64_t> kernel(wType.getShape().begin() + 2, wType.getShape().end());
  if (auto ks = ctx.intsAttr(node, "kernel_shape"); ks && *ks != kernel)
    return ctx.fail(node, "kernel_shape does not match the weights");
  std::vector<int64_t> strides = listAttr("strides", 1, s), dilations = listAttr("dilations", 1, s),
                       outPad = listAttr("output_padding", 0, s), pads = listAttr("pads", 0, 2 * s);
  if ((int64_t)strides.size() != s || (int64_t)dilations.size() != s || (int64_t)outPad.size() != s ||
      (int64_t)pads.size() != 2 * s)
    return ctx.fail(node, "strides/dilations/output_padding/pads have the wrong length");
  std::string autoPad = ctx.stringAttr(node, "auto_pad", "NOTSET");
  auto outputShape = ctx.intsAttr(node, "output_shape");
  if (outputShape && (int64_t)outputShape->size() == rank)
    outputShape = std::vector<int64_t>(outputShape->begin() + 2, outputShape->end());
  if (outputShape && (int64_t)outputShape->size() != s)
    return ctx.fail(node, "output_shape has the wrong length");
  if (autoPad != "NOTSET" && autoPad != "VALID" && autoPad != "SAME_UPPER" && autoPad != "SAME_LOWER")
    return ctx.fail(node, "unknown auto_pad '" + autoPad + "'");
  if (autoPad == "VALID")
    pads.assign(2 * s, 0);
  std::vector<int64_t> outSpatial(s), padBegin(s);
  for (int64_t d = 0; d < s; ++d) {
    int64_t in = xType.getDimSize(d + 2);
    int64_t full = strides[d] * (in - 1) + outPad[d] + (kernel[d] - 1) * dilations[d] + 1;
    std::optional<int64_t> target;
    if (outputShape)
      target = (*outputShape)[d];
    else if (autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER")
      target = in * strides[d];
    if (target) {
      int64_t total = full - *target;
      bool lower = autoPad == "SAME_LOWER";
      padBegin[d] = lower ? total - total / 2 : total / 2;
      outSpatial[d] = *target;
    } else {
      padBegin[d] = pads[d];
      outSpatial[d] = full - pads[d] - pads[d + s];
    }
    if (outSpatial[d] < 0)
      return ctx.fail(node, "negative output size");
  }
  SmallVector<OpFoldResult> outSizes{ctx.dim(*x, 0), ctx.builder.getIndexAttr(outChannels)};
  for (int64_t d = 0; d < s; ++d)
    outSizes.push_back(ctx.builder.getIndexAttr(outSpatial[d]));
  // Output initialized with the bias (or zero).
  Value init;
  if (bias) {
    if (tensorType(bias).getRank() != 1)
      return ctx.fail(node, "bias must be 1-D");
    Value empty = ctx.empty(outSizes, et);
    SmallVector<AffineMap> maps{AffineMap::get(rank, 0, {ctx.builder.getAffineDimExpr(1)}, &ctx.context),
                                ctx.builder.getMultiDimIdentityMap(rank)};
    SmallVector<utils::IteratorType> parallel(rank, utils::IteratorType::parallel);
    init = linalg::GenericOp::create(ctx.builder, ctx.loc, TypeRange{empty.getType()}, ValueRange{bias},
                                     ValueRange{empty}, maps, parallel,
                                     [](OpBuilder &b, Location l, ValueRange a) { linalg::YieldOp::create(b, l, a[0]); })
               .getResult(0);
  } else {
    init = ctx.filled(outSizes, ctx.scalarConstant(et, 0));
  }
  // Loops: n, m, o_1..o_s (parallel), c, k_1..k_s (reduction). A dummy
  // operand of shape (Cg, k...) gives the reduction loops their ranges.
  int64_t numLoops = 2 * rank - 1;
  SmallVector<OpFoldResult> rangeSizes{ctx.builder.getIndexAttr(cg)};
  SmallVector<AffineExpr> rangeExprs, outExprs;
  for (int64_t d = 0; d < s; ++d)
    rangeSizes.push_back(ctx.builder.getIndexAttr(kernel[d]));
  for (int64_t d = 0; d <= s; ++d)
    rangeExprs.push_back(ctx.builder.getAffineDimExpr(rank + d));
  for (int64_t d = 0; d < rank; ++d)
    outExprs.push_back(ctx.builder.getAffineDimExpr(d));
  Value ranges = ctx.empty(rangeSizes, ctx.builder.getI1Type());
  SmallVector<AffineMap> maps{AffineMap::get(numLoops, 0, rangeExprs, &ctx.context),
                              AffineMap::get(numLoops, 0, outExprs, &ctx.context)};
  SmallVector<utils::IteratorType> iterators(rank, utils::IteratorType::parallel);
  iterators.append(s + 1, utils::IteratorType::reduction);
  Value xv = *x, wv = *w;
  Value result = linalg::GenericOp::create(
                     ctx.builder, ctx.loc, TypeRange{init.getType()}, ValueRange{ranges}, ValueRange{init}, maps,
                     iterators,
                     [&](OpBuilder &b, Location l, ValueRange a) {
                       auto cst = [&](int64_t v) -> Value { return arith::ConstantIndexOp::create(b, l, v); };
                       Value n = linalg::IndexOp::create(b, l, 0);
                       Value m = linalg::IndexOp::create(b, l, 1);
                       Value c = linalg::IndexOp::create(b, l, rank);
                       Value g = arith::DivUIOp::create(b, l, m, cst(mg));
                       Value inChannel = arith::AddIOp::create(b, l, arith::MulIOp::create(b, l, g, cst(cg)), c);
                       Value mInGroup = arith::RemUIOp::create(b, l, m, cst(mg));
                       Value valid = arith::ConstantOp::create(b, l, b.getBoolAttr(true));
                       SmallVector<Value> xIdx{n, inChannel}, wIdx{inChannel, mInGroup};
                       for (int64_t d = 0; d < s; ++d) {
                         Value o = linalg::IndexOp::create(b, l, 2 + d);
                         Value k = linalg::IndexOp::create(b, l, rank + 1 + d);
                         // numerator = o + pad_begin - k * dilation; i = numerator / stride.
                         Value num = arith::SubIOp::create(b, l, arith::AddIOp::create(b, l, o, cst(padBegin[d])),
                                                           arith::MulIOp::create(b, l, k, cst(dilations[d])));
                         Value nonNeg = arith::CmpIOp::create(b, l, arith::CmpIPredicate::sge, num, cst(0));
                         Value safe = arith::MaxSIOp::create(b, l, num, cst(0));
                         Value i = arith::DivUIOp::create(b, l, safe, cst(strides[d]));
                         Value exact = arith::CmpIOp::create(b, l, arith::CmpIPredicate::eq,
                                                             arith::RemUIOp::create(b, l, safe, cst(strides[d])), cst(0));
                         Value inRange = arith::CmpIOp::create(b, l, arith::CmpIPredicate::slt, i,
                                                               cst(xType.getDimSize(2 + d)));
                         valid = arith::AndIOp::create(b, l, valid, arith::AndIOp::create(b, l, nonNeg, exact));
                         valid = arith::AndIOp::create(b, l, valid, inRange);
                         xIdx.push_back(arith::MinSIOp::create(b, l, i, cst(xType.getDimSize(2 + d) - 1)));
                         wIdx.push_back(k);
                       }
                       Value xe = tensor::ExtractOp::create(b, l, xv, xIdx);
                       Value we = tensor::ExtractOp::create(b, l, wv, wIdx);
                       Value sum = arith::AddFOp::create(b, l, a[1], arith::MulFOp::create(b, l, xe, we));
                       linalg::YieldOp::create(b, l, (Value)arith::SelectOp::create(b, l, valid, sum, a[1]));
                     })
                     .getResult(0);
  ctx.recordDims(result, outSizes);
  ctx.setValue(node.output(0), result);
  return success();
}

/// Det (opset 11) of [*, M, M] with static M <= 4: a generic over the batch
/// dims evaluating the Leibniz formula on the M*M extracted elements.
LogicalResult convertDet(ImportContext &ctx, const onnx::NodeProto &node) {
  auto x = ctx.getTensor(node, node.input(0));
  if (failed(x))
    return failure();
  auto type = tensorType(*x);
  int64_t rank = type.getRank();
  Type et = type.getElementType();
  if (!isa<FloatType>(et))
    return ctx.unsupported(node, "only floating-point inputs are supported");
  if (rank < 2 || type.isDynamicDim(rank - 1) || type.isDynamicDim(rank - 2) ||
      type.getDimSize(rank - 1) != type.getDimSize(rank - 2))
    return ctx.fail(node, "input must be [*, M, M] with static M");
  int64_t m = type.getDimSize(rank - 1);
  if (m > 4)
    return ctx.unsupported(node, "matrices larger than 4x4");
  int64_t batchRank = rank - 2;
  SmallVector<OpFoldResult> sizes;
  for (int64_t d = 0; d < batchRank; ++d)
    sizes.push_back(ctx.dim(*x, d));
  Value init = ctx.empty(sizes, et);
  SmallVector<utils::IteratorType> parallel(batchRank, utils::IteratorType::parallel);
  Value source = *x;
  Value result = linalg::GenericOp::create(
                     ctx.builder, ctx.loc, TypeRange{init.getType()}, ValueRange{}, ValueRange{init},
                     SmallVector<AffineMap>{ctx.builder.getMultiDimIdentityMap(batchRank)}, parallel,
                     [&](OpBuilder &b, Location l, ValueRange) {
                       SmallVector<Value> batch;
                       for (int64_t d = 0; d < batchRank; ++d)
                         batch.push_back(linalg::IndexOp::create(b, l, d));
                       auto at = [&](int64_t i, int64_t j) -> Value {
                         SmallVector<Value> idx(batch);
                         idx.push_back(arith::ConstantIndexOp::create(b, l, i));
                         idx.push_back(arith::ConstantIndexOp::create(b, l, j));
                         return tensor::ExtractOp::create(b, l, source, idx);
                       };
                       SmallVector<SmallVector<Value>> a(m);
                       for (int64_t i = 0; i < m; ++i)
                         for (int64_t j = 0; j < m; ++j)
                           a[i].push_back(at(i, j));
                       SmallVector<int64_t> perm;
                       for (int64_t i = 0; i < m; ++i)
                         perm.push_back(i);
                       Value det = arith::ConstantOp::create(b, l, b.getFloatAttr(et, m == 0 ? 1.0 : 0.0));
                       if (m > 0) {
                         do {
                           int64_t inversions = 0;
                           for (int64_t i = 0; i < m; ++i)
                             for (int64_t j = i + 1; j < m; ++j)
                               inversions += perm[i] > perm[j];
                           Value term = a[0][perm[0]];
                           for (int64_t i = 1; i < m; ++i)
                             term = arith::MulFOp::create(b, l, term, a[i][perm[i]]);
                           det = inversions % 2 ? (Value)arith::SubFOp::create(b, l, det, term)
                                                : (Value)arith::AddFOp::create(b, l, det, term);
                         } while (std::next_permutation(perm.begin(), perm.end()));
                       }
                       linalg::YieldOp::create(b, l, det);
                     })
                     .getResult(0);
  ctx.recordDims(result, sizes);
  ctx.setValue(node.output(0), result);
  return success();
}

/// Einsum (opset 12) as one linalg.generic: one loop per label (ellipsis
/// dims first, then letters in order of appearance), inputs read through
/// their label maps (a repeated label reads a diagonal), product of the
/// inputs accumulated into the zero-filled output; labels absent from the
/// output are reduction loops. Implicit output: ellipsis dims, then the
/// letters appearing exactly once in alphabetical order. Ellipsis dims must
/// have the same count in every operand (no broadcasting of size-1 dims).
LogicalResult convertEinsum(ImportContext &ctx, const onnx::NodeProto &node) {
  std::string equation;
  for (char c : ctx.stringAttr(node, "equation", ""))
    if (c != ' ')
      equation.push_back(c);
  if (equation.empty())
    return ctx.fail(node, "missing equation");
  SmallVector<Value> operands;
  for (int i = 0; i < node.input_size(); ++i) {
    auto v = ctx.getTensor(node, node.input(i));
    if (failed(v))
      return failure();
    operands.push_back(*v);
  }
  if (operands.empty())
    return ctx.fail(node, "expects at least one input");
  Type et = cast<RankedTensorType>(operands[0].getType()).getElementType();
  for (Value v : operands)
    if (cast<RankedTensorType>(v.getType()).getElementType() != et)
      return ctx.fail(node, "inputs must have the same element type");
  if (!isa<FloatType>(et) && !isa<IntegerType>(et))
    return ctx.unsupported(node, "unsupported element type");
  size_t arrow = equation.find("->");
  std::string lhs = equation.substr(0, arrow);
  std::optional<std::string> rhs;
  if (arrow != std::string::npos)
    rhs = equation.substr(arrow + 2);
  SmallVector<std::string> terms;
  {
    std::string cur;
    for (char c : lhs) {
      if (c == ',') {
        terms.push_back(cur);
        cur.clear();
      } else {
        cur.push_back(c);
      }
    }
    terms.push_back(cur);
  }
  if (terms.size() != operands.size())
    return ctx.fail(node, "equation has " + std::to_string(terms.size()) + " operands, node has " +
                              std::to_string(operands.size()));
  // Parses a term into labels: letters, or -1-k for the k-th ellipsis dim.
  int64_t ellipsisCount = -1;
  auto parse = [&](const std::string &term, int64_t rank, SmallVector<int> &labels) -> LogicalResult {
    size_t dots = term.find("...");
    std::string letters = term;
    if (dots != std::string::npos)
      letters.erase(dots, 3);
    for (char c : letters)
      if (!std::isalpha((unsigned char)c))
        return ctx.fail(node, std::string("invalid character '") + c + "' in equation");
    int64_t e = 0;
    if (dots != std::string::npos && rank < 0) {
      e = std::max<int64_t>(ellipsisCount, 0); // the output term
    } else if (dots != std::string::npos) {
      e = rank - (int64_t)letters.size();
      if (e < 0)
        return ctx.fail(node, "term '" + term + "' does not match its input rank");
      if (ellipsisCount >= 0 && ellipsisCount != e)
        return ctx.unsupported(node, "ellipsis with different ranks across operands (broadcasting)");
      ellipsisCount = e;
    } else if ((int64_t)letters.size() != rank && rank >= 0) {
      return ctx.fail(node, "term '" + term + "' does not match its input rank");
    }
    for (size_t k = 0; k < term.size();) {
      if (term.compare(k, 3, "...") == 0) {
        for (int64_t j = 0; j < e; ++j)
          labels.push_back(-1 - (int)j);
        k += 3;
      } else {
        labels.push_back(term[k]);
        ++k;
      }
    }
    return success();
  };
  SmallVector<SmallVector<int>> inLabels(operands.size());
  for (auto [k, term] : llvm::enumerate(terms))
    if (failed(parse(term, cast<RankedTensorType>(operands[k].getType()).getRank(), inLabels[k])))
      return failure();
  SmallVector<int> outLabels;
  if (rhs) {
    if (rhs->find("...") != std::string::npos && ellipsisCount < 0)
      return ctx.fail(node, "output uses '...' but no input does");
    if (failed(parse(*rhs, -1, outLabels)))
      return failure();
  } else {
    for (int64_t j = 0; j < std::max<int64_t>(ellipsisCount, 0); ++j)
      outLabels.push_back(-1 - (int)j);
    std::map<int, int> counts;
    for (auto &ls : inLabels)
      for (int l : ls)
        if (l >= 0)
          ++counts[l];
    for (auto [l, n] : counts)
      if (n == 1)
        outLabels.push_back(l);
  }
  // Loop dims: ellipsis dims, then letters in order of first appearance.
  SmallVector<int> loops;
  for (int64_t j = 0; j < std::max<int64_t>(ellipsisCount, 0); ++j)
    loops.push_back(-1 - (int)j);
  for (auto &ls : inLabels)
    for (int l : ls)
      if (l >= 0 && !llvm::is_contained(loops, l))
        loops.push_back(l);
  auto loopOf = [&](int label) { return (int64_t)(llvm::find(loops, label) - loops.begin()); };
  for (auto [k, l] : llvm::enumerate(outLabels)) {
    if (!llvm::is_contained(loops, l))
      return ctx.fail(node, "output label does not appear in the inputs");
    if (llvm::is_contained(ArrayRef<int>(outLabels).take_front(k), l))
      return ctx.fail(node, "output label repeated");
  }
  int64_t numLoops = loops.size();
  SmallVector<AffineMap> maps;
  for (auto &ls : inLabels) {
    SmallVector<AffineExpr> exprs;
    for (int l : ls)
      exprs.push_back(ctx.builder.getAffineDimExpr(loopOf(l)));
    maps.push_back(AffineMap::get(numLoops, 0, exprs, &ctx.context));
  }
  SmallVector<AffineExpr> outExprs;
  SmallVector<OpFoldResult> outSizes;
  for (int l : outLabels) {
    outExprs.push_back(ctx.builder.getAffineDimExpr(loopOf(l)));
    for (auto [k, ls] : llvm::enumerate(inLabels)) {
      auto it = llvm::find(ls, l);
      if (it != ls.end()) {
        outSizes.push_back(ctx.dim(operands[k], it - ls.begin()));
        break;
      }
    }
  }
  maps.push_back(AffineMap::get(numLoops, 0, outExprs, &ctx.context));
  SmallVector<utils::IteratorType> iterators;
  for (int l : loops)
    iterators.push_back(llvm::is_contained(outLabels, l) ? utils::IteratorType::parallel
                                                         : utils::IteratorType::reduction);
  bool isFloat = isa<FloatType>(et);
  Value init = ctx.filled(outSizes, ctx.scalarConstant(et, 0));
  Value result = linalg::GenericOp::create(
                     ctx.builder, ctx.loc, TypeRange{init.getType()}, operands, ValueRange{init}, maps, iterators,
                     [&](OpBuilder &b, Location l, ValueRange a) {
                       Value prod = a[0];
                       for (size_t k = 1; k + 1 < a.size(); ++k)
                         prod = isFloat ? (Value)arith::MulFOp::create(b, l, prod, a[k])
                                        : (Value)arith::MulIOp::create(b, l, prod, a[k]);
                       Value acc = a.back();
                       linalg::YieldOp::create(b, l, isFloat ? (Value)arith::AddFOp::create(b, l, acc, prod)
                                                             : (Value)arith::AddIOp::create(b, l, acc, prod));
                     })
                     .getResult(0);
  ctx.recordDims(result, outSizes);
  ctx.setValue(node.output(0), result);
  return success();
}

} // namespace

void registerLinalgOps(OpRegistry &r) {
  r.add("Gemm", convertGemm);
  r.add("MatMul", convertMatMul);
  r.add("Einsum", convertEinsum, 12);
  r.add("Det", convertDet, 11);
  r.add("ConvTranspose", convertConvTranspose);
  r.add("Conv", convertConv);
  r.add("MaxPool", [](ImportContext &c, const onnx::NodeProto &n) { return convertPool(c, n, true); });
  r.add("AveragePool", [](ImportContext &c, const onnx::NodeProto &n) { return convertPool(c, n, false); });
  r.add("GlobalAveragePool", [](ImportContext &c, const onnx::NodeProto &n) { return convertGlobalPool(c, n, false); });
  r.add("MaxUnpool", convertMaxUnpool, 9);
  r.add("GlobalMaxPool", [](ImportContext &c, const onnx::NodeProto &n) { return convertGlobalPool(c, n, true); });
  r.add("Pad", convertPad, 2);
}

} // namespace turbine::onnx_frontend
