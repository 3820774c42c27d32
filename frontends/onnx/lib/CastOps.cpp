//===- CastOps.cpp - ONNX Cast and CastLike -------------------------------===//
//
// Cast and CastLike between every supported element type (float <-> int with
// ONNX unsigned types through uitofp/fptoui/extui, to bool as != 0), on shape
// tensors symbolically; to and from STRING they become host string ops
// (StringOps.cpp). convertScalar is the scalar conversion other handlers
// share (declared in ImportContext.h).
//===----------------------------------------------------------------------===//
#include "ImportContext.h"

using namespace mlir;

namespace turbine::onnx_frontend {
namespace {

Type elementTypeOf(Value v) { return cast<RankedTensorType>(v.getType()).getElementType(); }

LogicalResult convertCast(ImportContext &ctx, const onnx::NodeProto &node) {
  const onnx::AttributeProto *to = ctx.attr(node, "to");
  if (!to)
    return ctx.fail(node, "missing attribute 'to'");
  if (Value in = ctx.lookupValue(node.input(0));
      to->i() == onnx::TensorProto::STRING ||
      (in && isStringElementType(elementTypeOf(in)))) { // host string ops
    auto x = ctx.getTensor(node, node.input(0));
    if (failed(x))
      return failure();
    return convertStringCast(ctx, node, *x, static_cast<int>(to->i()));
  }
  Type target = convertElementType(ctx.context, static_cast<int>(to->i()));
  if (!target)
    return ctx.unsupported(node, "target type " + std::to_string(to->i()) + " is not supported");
  if (ctx.isShapeLike(node.input(0)) && isa<IntegerType>(target) && !target.isInteger(1)) {
    ShapeTensor shape = *ctx.getShapeTensor(node.input(0));
    shape.elementType = target;
    ctx.setShapeTensor(node.output(0), shape);
    return success();
  }
  auto inputs = tensorInputs(ctx, node);
  if (failed(inputs))
    return failure();
  bool fromUnsigned = ctx.isUnsigned(node.input(0));
  bool toUnsigned = ImportContext::isUnsignedOnnxType(static_cast<int>(to->i()));
  auto r = ctx.elementwise(node, ValueRange{(*inputs)[0]}, target,
                           [&](OpBuilder &b, Location l, ValueRange a) {
                             return convertScalar(b, l, a[0], target, fromUnsigned, toUnsigned);
                           });
  if (failed(r))
    return failure();
  ctx.setValue(node.output(0), *r);
  return success();
}

LogicalResult convertCastLike(ImportContext &ctx, const onnx::NodeProto &node) {
  if (node.input_size() != 2)
    return ctx.fail(node, "expects 2 inputs");
  auto x = ctx.getTensor(node, node.input(0));
  auto like = ctx.getTensor(node, node.input(1));
  if (failed(x) || failed(like))
    return failure();
  if (isStringElementType(elementTypeOf(*x)) || isStringElementType(elementTypeOf(*like))) {
    std::optional<int> likeType = ctx.onnxType(node.input(1));
    if (isStringElementType(elementTypeOf(*like)))
      likeType = onnx::TensorProto::STRING;
    if (!likeType)
      return ctx.fail(node, "the ONNX type of input 'target_type' is unknown");
    return convertStringCast(ctx, node, *x, *likeType);
  }
  Type target = elementTypeOf(*like);
  bool fromUnsigned = ctx.isUnsigned(node.input(0)), toUnsigned = ctx.isUnsigned(node.input(1));
  auto r = ctx.elementwise(node, ValueRange{*x}, target, [&](OpBuilder &b, Location l, ValueRange a) {
    return convertScalar(b, l, a[0], target, fromUnsigned, toUnsigned);
  });
  if (failed(r))
    return failure();
  ctx.setValue(node.output(0), *r);
  return success();
}

} // namespace

/// Scalar conversion between any two supported element types. The
/// `...Unsigned` flags say whether an integer side is ONNX unsigned
/// (uitofp/fptoui/extui instead of the signed forms); bool is unsigned.
Value convertScalar(OpBuilder &b, Location l, Value v, Type to, bool fromUnsigned,
                    bool toUnsigned) {
  Type from = v.getType();
  if (from == to)
    return v;
  bool fromFloat = isa<FloatType>(from), toFloat = isa<FloatType>(to);
  fromUnsigned |= from.isInteger(1);
  if (fromFloat && toFloat)
    return from.getIntOrFloatBitWidth() < to.getIntOrFloatBitWidth()
               ? (Value)arith::ExtFOp::create(b, l, to, v)
               : (Value)arith::TruncFOp::create(b, l, to, v);
  if (!fromFloat && toFloat)
    return fromUnsigned ? (Value)arith::UIToFPOp::create(b, l, to, v)
                        : (Value)arith::SIToFPOp::create(b, l, to, v);
  if (fromFloat && !toFloat) {
    if (to.isInteger(1))
      return arith::CmpFOp::create(b, l, arith::CmpFPredicate::UNE, v, arith::ConstantOp::create(b, l, b.getFloatAttr(from, 0)));
    return toUnsigned ? (Value)arith::FPToUIOp::create(b, l, to, v)
                      : (Value)arith::FPToSIOp::create(b, l, to, v);
  }
  // integer -> integer
  if (to.isInteger(1))
    return arith::CmpIOp::create(b, l, arith::CmpIPredicate::ne, v,
                                 arith::ConstantOp::create(b, l, b.getIntegerAttr(from, 0)));
  if (from.getIntOrFloatBitWidth() < to.getIntOrFloatBitWidth())
    return fromUnsigned ? (Value)arith::ExtUIOp::create(b, l, to, v)
                        : (Value)arith::ExtSIOp::create(b, l, to, v);
  return arith::TruncIOp::create(b, l, to, v);
}

void registerCastOps(OpRegistry &r) {
  r.add("CastLike", convertCastLike);
  r.add("Cast", convertCast);
}

} // namespace turbine::onnx_frontend
