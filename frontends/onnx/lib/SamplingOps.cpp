//===- SamplingOps.cpp - ONNX GridSample and RoiAlign --------------------===//
//
// Ops that sample their input at coordinates computed from data, in the
// kernel. GridSample (opset 16): per output position the grid gives input
// coordinates; nearest, bilinear and bicubic interpolation with the padding
// modes zeros, border and reflection, in one linalg.generic that gathers
// its taps with clamped tensor.extract. RoiAlign (opsets 10, 16): one
// generic over (roi, channel, bin_y, bin_x) with reduction loops over the
// sampling grid of each bin, bilinear samples computed in the kernel from
// the runtime rois as ONNX Runtime does (mode avg; max, whose ONNX
// definition is unclear, is not supported); needs sampling_ratio > 0 (an
// adaptive grid would make the loop count data-dependent). Resize:
// ResizeOps.cpp.
//===----------------------------------------------------------------------===//
#include "ImportContext.h"

#include <cmath>
#include <limits>

using namespace mlir;

namespace turbine::onnx_frontend {
namespace {

RankedTensorType tensorType(Value v) { return cast<RankedTensorType>(v.getType()); }

/// GridSample (opset 16, 4-D, static H_in/W_in) as one gather-style generic
/// over (N, C, H_out, W_out), following PyTorch's grid_sample (the ONNX
/// reference): unnormalize with align_corners, padding zeros/border/
/// reflection, modes bilinear, nearest (round half to even) and bicubic
/// (A = -0.75, padding applied per tap).
LogicalResult convertGridSample(ImportContext &ctx, const onnx::NodeProto &node) {
  if (node.input_size() < 2)
    return ctx.fail(node, "expects X and grid");
  auto x = ctx.getTensor(node, node.input(0));
  auto grid = ctx.getTensor(node, node.input(1));
  if (failed(x) || failed(grid))
    return failure();
  auto xType = tensorType(*x), gType = tensorType(*grid);
  Type et = xType.getElementType();
  if (xType.getRank() != 4 || gType.getRank() != 4)
    return ctx.unsupported(node, "only 4-D inputs are supported");
  if (!isa<FloatType>(et) || gType.getElementType() != et)
    return ctx.unsupported(node, "only floating-point inputs of one type are supported");
  if (xType.isDynamicDim(2) || xType.isDynamicDim(3))
    return ctx.unsupported(node, "input spatial dims must be static");
  if (!gType.isDynamicDim(3) && gType.getDimSize(3) != 2)
    return ctx.fail(node, "grid must be [N, H_out, W_out, 2]");
  // The kernel reads grid[n] for every n of X (checked at run time when dynamic).
  if (failed(ctx.check(node,
                       ctx.compare(arith::CmpIPredicate::eq, ctx.dim(*grid, 0), ctx.dim(*x, 0)),
                       "X and grid must have the same batch size N")))
    return failure();
  std::string mode = ctx.stringAttr(node, "mode", "bilinear");
  std::string padding = ctx.stringAttr(node, "padding_mode", "zeros");
  bool align = ctx.intAttr(node, "align_corners", 0) != 0;
  if (mode != "bilinear" && mode != "nearest" && mode != "bicubic")
    return ctx.unsupported(node, "mode '" + mode + "'");
  if (padding != "zeros" && padding != "border" && padding != "reflection")
    return ctx.unsupported(node, "padding_mode '" + padding + "'");
  int64_t inH = xType.getDimSize(2), inW = xType.getDimSize(3);
  if (inH == 0 || inW == 0)
    return ctx.fail(node, "empty input spatial dims");
  SmallVector<OpFoldResult> sizes{ctx.dim(*x, 0), ctx.dim(*x, 1), ctx.dim(*grid, 1), ctx.dim(*grid, 2)};
  Value init = ctx.empty(sizes, et);
  auto gridMap = [&](int64_t component) {
    return AffineMap::get(4, 0,
                          {ctx.builder.getAffineDimExpr(0), ctx.builder.getAffineDimExpr(2),
                           ctx.builder.getAffineDimExpr(3), ctx.builder.getAffineConstantExpr(component)},
                          &ctx.context);
  };
  SmallVector<AffineMap> maps{gridMap(0), gridMap(1), ctx.builder.getMultiDimIdentityMap(4)};
  SmallVector<utils::IteratorType> parallel(4, utils::IteratorType::parallel);
  Value source = *x;
  Value result = linalg::GenericOp::create(
      ctx.builder, ctx.loc, TypeRange{init.getType()}, ValueRange{*grid, *grid}, ValueRange{init}, maps, parallel,
      [&](OpBuilder &b, Location l, ValueRange a) {
        auto f = [&](double v) -> Value { return arith::ConstantOp::create(b, l, b.getFloatAttr(et, v)); };
        auto add = [&](Value p, Value q) -> Value { return arith::AddFOp::create(b, l, p, q); };
        auto sub = [&](Value p, Value q) -> Value { return arith::SubFOp::create(b, l, p, q); };
        auto mul = [&](Value p, Value q) -> Value { return arith::MulFOp::create(b, l, p, q); };
        auto unnormalize = [&](Value g, int64_t size) -> Value {
          if (align)
            return mul(mul(add(g, f(1)), f(0.5)), f(size - 1));
          return mul(sub(mul(add(g, f(1)), f(size)), f(1)), f(0.5));
        };
        auto clip = [&](Value c, int64_t size) -> Value {
          return arith::MinimumFOp::create(b, l, arith::MaximumFOp::create(b, l, c, f(0)), f(size - 1));
        };
        auto reflectCoord = [&](Value c, int64_t twiceLow, int64_t twiceHigh) -> Value {
          if (twiceLow == twiceHigh)
            return f(0);
          double lo = twiceLow / 2.0, span = (twiceHigh - twiceLow) / 2.0;
          Value in = math::AbsFOp::create(b, l, sub(c, f(lo)));
          Value extra = arith::RemFOp::create(b, l, in, f(span));
          Value flips = math::FloorOp::create(b, l, arith::DivFOp::create(b, l, in, f(span)));
          Value half = mul(flips, f(0.5));
          Value even = arith::CmpFOp::create(b, l, arith::CmpFPredicate::OEQ, math::FloorOp::create(b, l, half), half);
          return arith::SelectOp::create(b, l, even, add(extra, f(lo)), add(sub(f(span), extra), f(lo)));
        };
        auto applyPadding = [&](Value c, int64_t size) -> Value {
          if (padding == "border")
            return clip(c, size);
          if (padding == "reflection") {
            c = align ? reflectCoord(c, 0, 2 * (size - 1)) : reflectCoord(c, -1, 2 * size - 1);
            return clip(c, size);
          }
          return c;
        };
        Value n = linalg::IndexOp::create(b, l, 0), ch = linalg::IndexOp::create(b, l, 1);
        // Value at integer-valued float coordinates, 0 when out of bounds.
        auto sample = [&](Value fx, Value fy) -> Value {
          Value inX = arith::AndIOp::create(b, l, arith::CmpFOp::create(b, l, arith::CmpFPredicate::OGE, fx, f(0)),
                                            arith::CmpFOp::create(b, l, arith::CmpFPredicate::OLE, fx, f(inW - 1)));
          Value inY = arith::AndIOp::create(b, l, arith::CmpFOp::create(b, l, arith::CmpFPredicate::OGE, fy, f(0)),
                                            arith::CmpFOp::create(b, l, arith::CmpFPredicate::OLE, fy, f(inH - 1)));
          Value inside = arith::AndIOp::create(b, l, inX, inY);
          // Out-of-bounds (or NaN) coordinates read element 0 and are masked.
          auto toIndex = [&](Value c, int64_t) -> Value {
            Value safe = arith::SelectOp::create(b, l, inside, c, f(0));
            Value i = arith::FPToSIOp::create(b, l, b.getI64Type(), safe);
            return arith::IndexCastOp::create(b, l, b.getIndexType(), i);
          };
          Value v = tensor::ExtractOp::create(b, l, source, ValueRange{n, ch, toIndex(fy, inH), toIndex(fx, inW)});
          return arith::SelectOp::create(b, l, inside, v, f(0));
        };
        Value ix = unnormalize(a[0], inW), iy = unnormalize(a[1], inH);
        Value out;
        if (mode == "nearest") {
          ix = applyPadding(ix, inW);
          iy = applyPadding(iy, inH);
          out = sample(math::RoundEvenOp::create(b, l, ix), math::RoundEvenOp::create(b, l, iy));
        } else if (mode == "bilinear") {
          ix = applyPadding(ix, inW);
          iy = applyPadding(iy, inH);
          Value x0 = math::FloorOp::create(b, l, ix), y0 = math::FloorOp::create(b, l, iy);
          Value x1 = add(x0, f(1)), y1 = add(y0, f(1));
          Value wx1 = sub(ix, x0), wx0 = sub(x1, ix), wy1 = sub(iy, y0), wy0 = sub(y1, iy);
          out = add(add(mul(sample(x0, y0), mul(wx0, wy0)), mul(sample(x1, y0), mul(wx1, wy0))),
                    add(mul(sample(x0, y1), mul(wx0, wy1)), mul(sample(x1, y1), mul(wx1, wy1))));
        } else {
          const double A = -0.75;
          auto conv1 = [&](Value t) -> Value { // ((A+2)t - (A+3)) t^2 + 1
            return add(mul(mul(sub(mul(f(A + 2), t), f(A + 3)), t), t), f(1));
          };
          auto conv2 = [&](Value t) -> Value { // ((A t - 5A) t + 8A) t - 4A
            return sub(mul(add(mul(sub(mul(f(A), t), f(5 * A)), t), f(8 * A)), t), f(4 * A));
          };
          auto coefficients = [&](Value t) -> SmallVector<Value> {
            return {conv2(add(t, f(1))), conv1(t), conv1(sub(f(1), t)), conv2(sub(f(2), t))};
          };
          Value x0 = math::FloorOp::create(b, l, ix), y0 = math::FloorOp::create(b, l, iy);
          SmallVector<Value> cx = coefficients(sub(ix, x0)), cy = coefficients(sub(iy, y0));
          out = f(0);
          for (int64_t j = 0; j < 4; ++j) {
            Value ty = applyPadding(add(y0, f(j - 1)), inH);
            Value row = f(0);
            for (int64_t i = 0; i < 4; ++i) {
              Value tx = applyPadding(add(x0, f(i - 1)), inW);
              row = add(row, mul(sample(tx, ty), cx[i]));
            }
            out = add(out, mul(row, cy[j]));
          }
        }
        linalg::YieldOp::create(b, l, out);
      }).getResult(0);
  ctx.recordDims(result, sizes);
  ctx.setValue(node.output(0), result);
  return success();
}

/// RoiAlign-10/16: X [N, C, H, W], rois [R, 4] (x1, y1, x2, y2), batch
/// indices [R] -> [R, C, output_height, output_width].
LogicalResult convertRoiAlign(ImportContext &ctx, const onnx::NodeProto &node) {
  if (node.input_size() < 3)
    return ctx.fail(node, "expects inputs X, rois and batch_indices");
  auto x = ctx.getTensor(node, node.input(0));
  auto rois = ctx.getTensor(node, node.input(1));
  auto batchIndices = ctx.getTensor(node, node.input(2));
  if (failed(x) || failed(rois) || failed(batchIndices))
    return failure();
  auto xType = cast<RankedTensorType>(x->getType());
  Type et = xType.getElementType();
  if (xType.getRank() != 4 || !isa<FloatType>(et))
    return ctx.fail(node, "X must be a floating-point [N, C, H, W] tensor");
  auto roiType = cast<RankedTensorType>(rois->getType());
  if (roiType.getRank() != 2 || roiType.isDynamicDim(1) || roiType.getDimSize(1) != 4 ||
      roiType.getElementType() != et)
    return ctx.fail(node, "rois must be [num_rois, 4] of X's element type");
  auto biType = cast<RankedTensorType>(batchIndices->getType());
  if (biType.getRank() != 1 || !isa<IntegerType>(biType.getElementType()))
    return ctx.fail(node, "batch_indices must be a 1-D integer tensor");
  std::string mode = ctx.stringAttr(node, "mode", "avg");
  if (mode != "avg")
    return ctx.unsupported(node, "mode '" + mode + "' (only 'avg' is supported)");
  std::string ctm = ctx.opset >= 16 ? ctx.stringAttr(node, "coordinate_transformation_mode", "half_pixel")
                                    : "output_half_pixel";
  if (ctm != "half_pixel" && ctm != "output_half_pixel")
    return ctx.unsupported(node, "coordinate_transformation_mode '" + ctm + "'");
  bool halfPixel = ctm == "half_pixel";
  int64_t outH = ctx.intAttr(node, "output_height", 1), outW = ctx.intAttr(node, "output_width", 1);
  int64_t samplingRatio = ctx.intAttr(node, "sampling_ratio", 0);
  if (outH <= 0 || outW <= 0)
    return ctx.fail(node, "output_height and output_width must be positive");
  if (samplingRatio <= 0)
    return ctx.unsupported(node, "sampling_ratio 0 (an adaptive sampling grid depends on the roi "
                                 "values; give a positive sampling_ratio)");
  double spatialScale = ctx.floatAttr(node, "spatial_scale", 1.0f);

  OpBuilder &b = ctx.builder;
  SmallVector<OpFoldResult> outSizes{ctx.dim(*rois, 0), ctx.dim(*x, 1), b.getIndexAttr(outH),
                                     b.getIndexAttr(outW)};
  Value batchCount = ctx.toIndexValue(ctx.dim(*x, 0));
  Value height = ctx.toIndexValue(ctx.dim(*x, 2)), width = ctx.toIndexValue(ctx.dim(*x, 3));
  Value init = ctx.filled(outSizes, ctx.scalarConstant(et, 0.0));
  Value grid = ctx.empty({b.getIndexAttr(samplingRatio), b.getIndexAttr(samplingRatio)}, b.getI1Type());
  auto d = [&](unsigned i) { return b.getAffineDimExpr(i); };
  SmallVector<AffineMap> maps{AffineMap::get(6, 0, {d(4), d(5)}, &ctx.context),
                              AffineMap::get(6, 0, {d(0), d(1), d(2), d(3)}, &ctx.context)};
  using IT = utils::IteratorType;
  SmallVector<IT> iterators{IT::parallel, IT::parallel, IT::parallel, IT::parallel, IT::reduction, IT::reduction};
  Value source = *x, roiValues = *rois, batchValues = *batchIndices;
  Value result = linalg::GenericOp::create(
                     b, ctx.loc, TypeRange{init.getType()}, ValueRange{grid}, ValueRange{init}, maps, iterators,
                     [&](OpBuilder &nb, Location l, ValueRange args) {
                       auto idx = [&](int64_t v) -> Value { return arith::ConstantIndexOp::create(nb, l, v); };
                       auto fc = [&](double v) -> Value {
                         return arith::ConstantOp::create(nb, l, nb.getFloatAttr(et, v));
                       };
                       auto toFloat = [&](Value index) -> Value {
                         return arith::SIToFPOp::create(
                             nb, l, et, arith::IndexCastOp::create(nb, l, nb.getI64Type(), index));
                       };
                       Value r = linalg::IndexOp::create(nb, l, 0), c = linalg::IndexOp::create(nb, l, 1);
                       Value ph = linalg::IndexOp::create(nb, l, 2), pw = linalg::IndexOp::create(nb, l, 3);
                       Value iy = linalg::IndexOp::create(nb, l, 4), ix = linalg::IndexOp::create(nb, l, 5);
                       Value batch = tensor::ExtractOp::create(nb, l, batchValues, ValueRange{r});
                       batch = arith::IndexCastOp::create(nb, l, nb.getIndexType(), batch);
                       batch = arith::MinSIOp::create(nb, l, arith::MaxSIOp::create(nb, l, batch, idx(0)),
                                                      arith::SubIOp::create(nb, l, batchCount, idx(1)));
                       SmallVector<Value> corner;
                       for (int64_t k = 0; k < 4; ++k) {
                         Value v = tensor::ExtractOp::create(nb, l, roiValues, ValueRange{r, idx(k)});
                         v = arith::MulFOp::create(nb, l, v, fc(spatialScale));
                         if (halfPixel)
                           v = arith::SubFOp::create(nb, l, v, fc(0.5));
                         corner.push_back(v);
                       }
                       // corner: start_w, start_h, end_w, end_h.
                       Value roiW = arith::SubFOp::create(nb, l, corner[2], corner[0]);
                       Value roiH = arith::SubFOp::create(nb, l, corner[3], corner[1]);
                       if (!halfPixel) {
                         roiW = arith::MaximumFOp::create(nb, l, roiW, fc(1.0));
                         roiH = arith::MaximumFOp::create(nb, l, roiH, fc(1.0));
                       }
                       Value binH = arith::DivFOp::create(nb, l, roiH, fc((double)outH));
                       Value binW = arith::DivFOp::create(nb, l, roiW, fc((double)outW));
                       auto sample = [&](Value start, Value bin, Value p, Value i) -> Value {
                         Value offset = arith::MulFOp::create(nb, l, toFloat(p), bin);
                         Value within = arith::DivFOp::create(
                             nb, l, arith::MulFOp::create(nb, l, arith::AddFOp::create(nb, l, toFloat(i), fc(0.5)), bin),
                             fc((double)samplingRatio));
                         return arith::AddFOp::create(nb, l, arith::AddFOp::create(nb, l, start, offset), within);
                       };
                       Value y = sample(corner[1], binH, ph, iy), xv = sample(corner[0], binW, pw, ix);
                       Value hF = toFloat(height), wF = toFloat(width);
                       auto olt = [&](Value a, Value bb) {
                         return arith::CmpFOp::create(nb, l, arith::CmpFPredicate::OLT, a, bb);
                       };
                       auto ogt = [&](Value a, Value bb) {
                         return arith::CmpFOp::create(nb, l, arith::CmpFPredicate::OGT, a, bb);
                       };
                       Value outside = arith::OrIOp::create(
                           nb, l, arith::OrIOp::create(nb, l, olt(y, fc(-1.0)), ogt(y, hF)),
                           arith::OrIOp::create(nb, l, olt(xv, fc(-1.0)), ogt(xv, wF)));
                       // Per axis: low/high index and the fraction, as ORT computes them.
                       auto axis = [&](Value coord, Value size, Value &low, Value &high, Value &frac) {
                         coord = arith::MaximumFOp::create(nb, l, coord, fc(0.0));
                         Value lowI = arith::IndexCastOp::create(
                             nb, l, nb.getIndexType(), arith::FPToSIOp::create(nb, l, nb.getI64Type(), coord));
                         Value last = arith::SubIOp::create(nb, l, size, idx(1));
                         Value atEnd = arith::CmpIOp::create(nb, l, arith::CmpIPredicate::sge, lowI, last);
                         low = arith::SelectOp::create(nb, l, atEnd, last, lowI);
                         high = arith::SelectOp::create(nb, l, atEnd, last, arith::AddIOp::create(nb, l, lowI, idx(1)));
                         coord = arith::SelectOp::create(nb, l, atEnd, toFloat(last), coord);
                         frac = arith::SubFOp::create(nb, l, coord, toFloat(low));
                         // Keep reads in bounds for samples that are discarded.
                         low = arith::MinSIOp::create(nb, l, low, last);
                         high = arith::MinSIOp::create(nb, l, high, last);
                       };
                       Value yLow, yHigh, ly, xLow, xHigh, lx;
                       axis(y, height, yLow, yHigh, ly);
                       axis(xv, width, xLow, xHigh, lx);
                       Value hy = arith::SubFOp::create(nb, l, fc(1.0), ly);
                       Value hx = arith::SubFOp::create(nb, l, fc(1.0), lx);
                       auto at = [&](Value yy, Value xx) -> Value {
                         return tensor::ExtractOp::create(nb, l, source, ValueRange{batch, c, yy, xx});
                       };
                       Value t1 = arith::MulFOp::create(nb, l, arith::MulFOp::create(nb, l, hy, hx), at(yLow, xLow));
                       Value t2 = arith::MulFOp::create(nb, l, arith::MulFOp::create(nb, l, hy, lx), at(yLow, xHigh));
                       Value t3 = arith::MulFOp::create(nb, l, arith::MulFOp::create(nb, l, ly, hx), at(yHigh, xLow));
                       Value t4 = arith::MulFOp::create(nb, l, arith::MulFOp::create(nb, l, ly, lx), at(yHigh, xHigh));
                       // The mean over the grid of the in-image samples.
                       Value v = arith::AddFOp::create(nb, l, arith::AddFOp::create(nb, l, t1, t2),
                                                       arith::AddFOp::create(nb, l, t3, t4));
                       v = arith::SelectOp::create(nb, l, outside, fc(0.0), v);
                       v = arith::DivFOp::create(nb, l, v, fc((double)(samplingRatio * samplingRatio)));
                       linalg::YieldOp::create(nb, l, (Value)arith::AddFOp::create(nb, l, args[1], v));
                     })
                     .getResult(0);
  ctx.recordDims(result, outSizes);
  ctx.setValue(node.output(0), result);
  return success();
}

} // namespace

void registerSamplingOps(OpRegistry &r) {
  r.add("RoiAlign", convertRoiAlign, 10);
  r.add("GridSample", convertGridSample, 16);
}

} // namespace turbine::onnx_frontend
