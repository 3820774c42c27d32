//===- PassThroughOps.cpp - ONNX Constant, Identity, Dropout --------------===//
//
// Ops whose result is a value they are given: Constant (an attribute becomes
// a constant the other handlers can fold), Identity (tensors, sequences and
// optionals forwarded) and Dropout: the identity at inference, and with a
// run-time or true training_mode a mask drawn from the counter-based
// generator of RandomOps.cpp (uniformAtIndex).
//===----------------------------------------------------------------------===//
#include "ImportContext.h"

using namespace mlir;

namespace turbine::onnx_frontend {
namespace {

Type elementTypeOf(Value v) { return cast<RankedTensorType>(v.getType()).getElementType(); }

Value floatConst(OpBuilder &b, Location l, Type t, double v) {
  return arith::ConstantOp::create(b, l, b.getFloatAttr(t, v));
}

/// Forwards input 0 to output 0 keeping its kind (constant, shape tensor, value).
LogicalResult forwardValue(ImportContext &ctx, const onnx::NodeProto &node, const std::string &out) {
  const std::string &in = node.input(0);
  if (auto c = ctx.getConstant(in)) {
    ctx.setConstant(out, *c);
    return success();
  }
  if (ctx.isShapeTensor(in)) {
    ctx.setShapeTensor(out, *ctx.getShapeTensor(in));
    return success();
  }
  auto v = ctx.getTensor(node, in);
  if (failed(v))
    return failure();
  ctx.setValue(out, *v);
  return success();
}

LogicalResult convertIdentity(ImportContext &ctx, const onnx::NodeProto &node) {
  if (node.input_size() < 1)
    return ctx.fail(node, "expects 1 input");
  if (ctx.lookupSequence(node.input(0)) || ctx.lookupOptional(node.input(0))) {
    ctx.bind(node.output(0), ctx.capture(node.input(0)));
    return success();
  }
  return forwardValue(ctx, node, node.output(0));
}

/// Dropout with a runtime training_mode (or a constant true): in training
/// mode each element is kept when its uniform draw is >= ratio and scaled by
/// 1 / (1 - ratio). The draws come from uniformAtIndex, not from any other
/// framework's generator, so masks for 0 < ratio < 1 differ from e.g. NumPy's;
/// ratio 0 keeps everything and ratio 1 drops everything exactly.
LogicalResult convertTrainingDropout(ImportContext &ctx, const onnx::NodeProto &node) {
  auto x = ctx.getTensor(node, node.input(0));
  auto mode = ctx.getTensor(node, node.input(2));
  if (failed(x) || failed(mode))
    return failure();
  Type t = elementTypeOf(*x);
  if (!isa<FloatType>(t))
    return ctx.unsupported(node, "only floating-point inputs are supported");
  if (!elementTypeOf(*mode).isInteger(1) || cast<RankedTensorType>(mode->getType()).getRank() != 0)
    return ctx.fail(node, "training_mode must be a bool scalar");
  Value ratio;
  if (ImportContext::hasInput(node, 1)) {
    auto r = ctx.getTensor(node, node.input(1));
    if (failed(r))
      return failure();
    if (!isa<FloatType>(elementTypeOf(*r)) || cast<RankedTensorType>(r->getType()).getRank() != 0)
      return ctx.fail(node, "ratio must be a floating-point scalar");
    ratio = *r;
  } else {
    ratio = arith::ConstantOp::create(  // the default ratio 0.5
        ctx.builder, ctx.loc,
        DenseElementsAttr::get(RankedTensorType::get({}, t), ctx.builder.getFloatAttr(t, 0.5).getValue()));
  }
  int64_t seed = ctx.intAttr(node, "seed", 0);
  SmallVector<OpFoldResult> sizes = ctx.dims(*x);
  auto mask = ctx.elementwise(node, ValueRange{*x, ratio, *mode}, ctx.builder.getI1Type(),
                              [&](OpBuilder &b, Location l, ValueRange a) -> Value {
                                Value u = uniformAtIndex(b, l, sizes, seed);
                                Value r = convertScalar(b, l, a[1], b.getF32Type());
                                Value keep = arith::CmpFOp::create(b, l, arith::CmpFPredicate::OGE, u, r);
                                Value notTraining = arith::XOrIOp::create(
                                    b, l, a[2], arith::ConstantOp::create(b, l, b.getBoolAttr(true)));
                                return arith::OrIOp::create(b, l, keep, notTraining);
                              });
  if (failed(mask))
    return failure();
  auto y = ctx.elementwise(node, ValueRange{*x, *mask, ratio, *mode}, t,
                           [&](OpBuilder &b, Location l, ValueRange a) -> Value {
                             Value r = convertScalar(b, l, a[2], t);
                             Value one = floatConst(b, l, t, 1.0);
                             Value scaled = arith::DivFOp::create(b, l, a[0], arith::SubFOp::create(b, l, one, r));
                             Value dropped = arith::SelectOp::create(b, l, a[1], scaled, floatConst(b, l, t, 0.0));
                             return arith::SelectOp::create(b, l, a[3], dropped, a[0]);
                           });
  if (failed(y))
    return failure();
  ctx.setValue(node.output(0), *y);
  if (node.output_size() > 1 && !node.output(1).empty())
    ctx.setValue(node.output(1), *mask);
  return success();
}

LogicalResult convertDropout(ImportContext &ctx, const onnx::NodeProto &node) {
  if (node.input_size() < 1)
    return ctx.fail(node, "expects 1 input");
  // training_mode (opset 12+) that is not a constant false: random masks.
  if (ImportContext::hasInput(node, 2)) {
    auto mode = ctx.getConstant(node.input(2));
    bool constantFalse = mode && mode->getNumElements() == 1 && mode->getElementType().isInteger(1) &&
                         !*mode->getValues<bool>().begin();
    if (!constantFalse)
      return convertTrainingDropout(ctx, node);
  }
  if (failed(forwardValue(ctx, node, node.output(0))))
    return failure();
  if (node.output_size() > 1 && !node.output(1).empty()) {
    auto x = ctx.getTensor(node, node.input(0));
    if (failed(x))
      return failure();
    Value mask = ctx.filled(ctx.dims(*x), ctx.scalarConstant(ctx.builder.getI1Type(), 1));
    ctx.setValue(node.output(1), mask);
  }
  return success();
}

LogicalResult convertConstant(ImportContext &ctx, const onnx::NodeProto &node) {
  if (node.attribute_size() != 1)
    return ctx.fail(node, "expects exactly one attribute");
  const onnx::AttributeProto &a = node.attribute(0);
  Builder &b = ctx.builder;
  if (a.name() == "value") {
    std::string err;
    auto attr = convertTensorProto(ctx.context, a.t(), err);
    if (failed(attr))
      return ctx.unsupported(node, err);
    ctx.setConstant(node.output(0), *attr);
    return success();
  }
  if (a.name() == "value_float") {
    ctx.setConstant(node.output(0), DenseElementsAttr::get(RankedTensorType::get({}, b.getF32Type()), a.f()));
    return success();
  }
  if (a.name() == "value_floats") {
    std::vector<float> v(a.floats().begin(), a.floats().end());
    ctx.setConstant(node.output(0),
                    DenseElementsAttr::get(RankedTensorType::get({(int64_t)v.size()}, b.getF32Type()),
                                           ArrayRef<float>(v)));
    return success();
  }
  if (a.name() == "value_int") {
    ctx.setConstant(node.output(0),
                    DenseElementsAttr::get(RankedTensorType::get({}, b.getI64Type()), (int64_t)a.i()));
    return success();
  }
  if (a.name() == "value_ints") {
    std::vector<int64_t> v(a.ints().begin(), a.ints().end());
    ctx.setConstant(node.output(0),
                    DenseElementsAttr::get(RankedTensorType::get({(int64_t)v.size()}, b.getI64Type()),
                                           ArrayRef<int64_t>(v)));
    return success();
  }
  return ctx.unsupported(node, "attribute '" + a.name() + "' is not supported");
}

} // namespace

void registerPassThroughOps(OpRegistry &r) {
  r.add("Identity", convertIdentity);
  r.add("Dropout", convertDropout);
  r.add("Constant", convertConstant);
}

} // namespace turbine::onnx_frontend
