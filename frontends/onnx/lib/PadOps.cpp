//===- PadOps.cpp - ONNX Pad -> tensor.pad / linalg -------------------------===//
//
// Pad with the constant, edge and reflect modes. Pads known at import time:
// constant mode becomes tensor.pad (the compiler's global-opt lowers it,
// after layout rewrites have seen it), edge and reflect a gather-style
// linalg.generic with clamped / mirrored indices. Pads or a constant value
// known only at run time (opset >= 11 inputs): convertPadAtRunTime, one
// generic whose sizes and index arithmetic come from the pads read on the
// host.
//===----------------------------------------------------------------------===//
#include "ImportContext.h"

#include <algorithm>
#include <cmath>
#include <limits>

using namespace mlir;

namespace turbine::onnx_frontend {
namespace {

RankedTensorType tensorType(Value v) { return cast<RankedTensorType>(v.getType()); }

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

} // namespace

LogicalResult convertPadAtRunTime(ImportContext &ctx, const onnx::NodeProto &node, Value input,
                                  const ShapeTensor &pads, const std::string &mode) {
  using P = arith::CmpIPredicate;
  auto type = tensorType(input);
  int64_t rank = type.getRank();
  Type et = type.getElementType();
  if ((int64_t)pads.elements.size() != 2 * rank)
    return ctx.fail(node, "pads has " + std::to_string(pads.elements.size()) +
                              " values for a rank-" + std::to_string(rank) + " input (needs " +
                              std::to_string(2 * rank) + ")");
  Value padValue;
  if (mode == "constant" && ImportContext::hasInput(node, 2)) {
    auto v = ctx.getTensor(node, node.input(2));
    if (failed(v))
      return failure();
    auto vType = tensorType(*v);
    if (!vType.hasStaticShape() || vType.getNumElements() != 1 || vType.getRank() > 1 ||
        vType.getElementType() != et)
      return ctx.fail(node, "constant_value must be a scalar of the input's element type");
    padValue = *v;
  }
  OpBuilder &b = ctx.builder;
  OpFoldResult zero = b.getIndexAttr(0);
  SmallVector<OpFoldResult> inDims = ctx.dims(input), outSizes;
  SmallVector<Value> lows, inSizes;
  for (int64_t d = 0; d < rank; ++d) {
    OpFoldResult low = ctx.toFoldResult(pads.elements[d]);
    OpFoldResult high = ctx.toFoldResult(pads.elements[d + rank]);
    OpFoldResult out = ctx.indexOp<arith::AddIOp>(ctx.indexOp<arith::AddIOp>(inDims[d], low), high);
    std::string dim = "dim " + std::to_string(d);
    if (failed(ctx.check(node, ctx.compare(P::sge, out, zero), "the pads of " + dim + " remove more than its size")))
      return failure();
    Value padded = ctx.either(ctx.compare(P::ne, low, zero), ctx.compare(P::ne, high, zero));
    if (mode != "constant" &&
        failed(ctx.check(node,
                         ctx.either(ctx.compare(P::sgt, inDims[d], zero),
                                    ctx.logicalNot(padded)),
                         "mode '" + mode + "' cannot pad the empty " + dim)))
      return failure();
    if (mode == "reflect" &&
        failed(ctx.check(node,
                         ctx.both(ctx.compare(P::slt, low, inDims[d]), ctx.compare(P::slt, high, inDims[d])),
                         "reflect pads of " + dim + " must be smaller than its size")))
      return failure();
    // The result reads a clamped input index even where it holds the pad
    // value, so the input must not be empty.
    if (mode == "constant" &&
        failed(ctx.check(node, ctx.compare(P::sgt, inDims[d], zero),
                         "constant padding of an empty input (" + dim +
                             " is 0) is not supported when the pads are known only at run time")))
      return failure();
    outSizes.push_back(out);
    lows.push_back(ctx.toIndexValue(low));
    inSizes.push_back(ctx.toIndexValue(inDims[d]));
  }
  bool reflect = mode == "reflect", constant = mode == "constant";
  Value init = ctx.empty(outSizes, et);
  SmallVector<utils::IteratorType> parallel(rank, utils::IteratorType::parallel);
  Value scalar = constant && !padValue ? ctx.scalarConstant(et, 0) : Value();
  Value result =
      linalg::GenericOp::create(
          b, ctx.loc, TypeRange{init.getType()}, ValueRange{}, ValueRange{init},
          SmallVector<AffineMap>{b.getMultiDimIdentityMap(rank)}, parallel,
          [&](OpBuilder &nb, Location l, ValueRange) {
            Value zeroI = arith::ConstantIndexOp::create(nb, l, 0);
            Value oneI = arith::ConstantIndexOp::create(nb, l, 1);
            Value inside = arith::ConstantOp::create(nb, l, nb.getBoolAttr(true));
            SmallVector<Value> src;
            for (int64_t d = 0; d < rank; ++d) {
              Value i = arith::SubIOp::create(nb, l, linalg::IndexOp::create(nb, l, d), lows[d]);
              Value last = arith::SubIOp::create(nb, l, inSizes[d], oneI);
              if (constant) {
                inside = arith::AndIOp::create(
                    nb, l, inside,
                    arith::AndIOp::create(nb, l, arith::CmpIOp::create(nb, l, P::sge, i, zeroI),
                                          arith::CmpIOp::create(nb, l, P::slt, i, inSizes[d])));
              } else if (reflect) {
                Value neg = arith::CmpIOp::create(nb, l, P::slt, i, zeroI);
                i = arith::SelectOp::create(nb, l, neg, arith::SubIOp::create(nb, l, zeroI, i), i);
                Value over = arith::CmpIOp::create(nb, l, P::sgt, i, last);
                i = arith::SelectOp::create(nb, l, over,
                                            arith::SubIOp::create(nb, l, arith::AddIOp::create(nb, l, last, last), i), i);
              }
              // Clamped so the read is in bounds also where the result is the pad value.
              src.push_back(arith::MaxSIOp::create(nb, l, arith::MinSIOp::create(nb, l, i, last), zeroI));
            }
            Value v = tensor::ExtractOp::create(nb, l, input, src);
            if (constant) {
              Value fill = scalar;
              if (!fill) {
                SmallVector<Value> at;
                if (tensorType(padValue).getRank() == 1)
                  at.push_back(zeroI);
                fill = tensor::ExtractOp::create(nb, l, padValue, at);
              }
              v = arith::SelectOp::create(nb, l, inside, v, fill);
            }
            linalg::YieldOp::create(nb, l, v);
          })
          .getResult(0);
  ctx.recordDims(result, outSizes);
  ctx.setValue(node.output(0), result);
  return success();
}

void registerPadOps(OpRegistry &r) {
  r.add("Pad", convertPad, 2);
}

} // namespace turbine::onnx_frontend
