//===- PoolingOps.cpp - ONNX pooling -> linalg ---------------------------===//
//
// MaxPool / AveragePool (2-D: linalg.pooling_nchw_max/sum; 1-D and 3-D a
// generic; ceil_mode, count_include_pad, dilations, the Indices output),
// GlobalAveragePool / GlobalMaxPool (reductions) and MaxUnpool (a
// gather-style reduction).
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

/// Zero of the element type of `v`.
Value zeroOf(ImportContext &ctx, Type elementType) { return ctx.scalarConstant(elementType, 0); }

/// Spatial attributes shared by Conv and the pools (one entry per spatial dim).
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
  // One map reads X and I below: I has X's shape (checked at run time where
  // a dim is dynamic; a static mismatch made IR that does not verify).
  for (int64_t d = 0; d < rank; ++d)
    if (failed(ctx.check(node, ctx.compare(arith::CmpIPredicate::eq, ctx.dim(*indices, d), ctx.dim(*x, d)),
                         "I must have the shape of X")))
      return failure();
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

} // namespace

void registerPoolingOps(OpRegistry &r) {
  r.add("MaxPool", [](ImportContext &c, const onnx::NodeProto &n) { return convertPool(c, n, true); });
  r.add("AveragePool", [](ImportContext &c, const onnx::NodeProto &n) { return convertPool(c, n, false); });
  r.add("GlobalAveragePool", [](ImportContext &c, const onnx::NodeProto &n) { return convertGlobalPool(c, n, false); });
  r.add("MaxUnpool", convertMaxUnpool, 9);
  r.add("GlobalMaxPool", [](ImportContext &c, const onnx::NodeProto &n) { return convertGlobalPool(c, n, true); });
}

} // namespace turbine::onnx_frontend
