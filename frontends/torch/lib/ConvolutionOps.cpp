//===- ConvolutionOps.cpp - aten convolutions ----------------------------===//
//
// aten::_convolution / conv1d / conv2d (2-D: linalg.conv_2d_nchw_fchw;
// grouped and depthwise a generic; padding as a gather-style generic like the
// ONNX frontend, no tensor.pad) and conv_transpose1d/2d (a convolution over
// the zero-inserted input with the flipped, channel-swapped filter).
//===----------------------------------------------------------------------===//
#include "ImportContext.h"
#include "turbine/frontends/ChannelBias.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"

#include <cmath>
#include <cstring>

using namespace mlir;

namespace turbine::torch_frontend {
namespace {

Value zeroOf(ImportContext &ctx, Type t) { return ctx.scalarConstant(t, 0); }

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
    result = frontends::addChannelBias(ctx, result, *bias);
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

} // namespace

void registerConvolutionOps(OpRegistry &r) {
  r.add("aten::_convolution", convertConv);
  r.add("aten::conv2d", convertConv);
  r.add("aten::conv1d", convertConv);
  r.add("aten::conv_transpose2d", convertConvTranspose);
  r.add("aten::conv_transpose1d", convertConvTranspose);
}

} // namespace turbine::torch_frontend
