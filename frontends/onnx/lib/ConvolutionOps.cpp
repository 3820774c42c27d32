//===- ConvolutionOps.cpp - ONNX Conv/ConvTranspose -> linalg ------------===//
//
// 2-D Conv becomes linalg.conv_2d_nchw_fchw (grouped and 3-D convolutions a
// linalg.generic; 1-D runs as 2-D) with the bias added per channel;
// ConvTranspose is the convolution of the input with zeros inserted between
// elements, padded, with the flipped, channel-swapped filter.
//===----------------------------------------------------------------------===//
#include "ImportContext.h"
#include "turbine/frontends/ChannelBias.h"

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
    result = frontends::addChannelBias(ctx, result, *bias);
  }
  if (oneD)
    result = ctx.reshape(result, {ctx.dim(result, 0), ctx.dim(result, 1), ctx.dim(result, 3)});
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

} // namespace

void registerConvolutionOps(OpRegistry &r) {
  r.add("ConvTranspose", convertConvTranspose);
  r.add("Conv", convertConv);
}

} // namespace turbine::onnx_frontend
