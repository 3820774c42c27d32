//===- LogicalOps.cpp - ONNX comparisons, logical ops, Where --------------===//
//
// Equal/Less/LessOrEqual/Greater/GreaterOrEqual (unsigned predicates for
// ONNX unsigned types), Not/And/Or/Xor and Where, as broadcasting
// linalg.generics. On shape tensors whose result is known at import time
// (torch.onnx's expand(-1) pattern: Where(Equal(shape, -1), ones, shape))
// they fold into shape tensors, so the shapes they feed stay static.
//===----------------------------------------------------------------------===//
#include "ImportContext.h"

using namespace mlir;

namespace turbine::onnx_frontend {
namespace {

Type elementTypeOf(Value v) { return cast<RankedTensorType>(v.getType()).getElementType(); }

/// The unsigned form of a signed integer comparison (eq/ne unchanged).
arith::CmpIPredicate unsignedPredicate(arith::CmpIPredicate p) {
  switch (p) {
  case arith::CmpIPredicate::slt: return arith::CmpIPredicate::ult;
  case arith::CmpIPredicate::sle: return arith::CmpIPredicate::ule;
  case arith::CmpIPredicate::sgt: return arith::CmpIPredicate::ugt;
  case arith::CmpIPredicate::sge: return arith::CmpIPredicate::uge;
  default: return p;
  }
}

/// `pred` on two import-time integers.
bool evaluatePredicate(arith::CmpIPredicate pred, int64_t x, int64_t y) {
  switch (pred) {
  case arith::CmpIPredicate::eq: return x == y;
  case arith::CmpIPredicate::ne: return x != y;
  case arith::CmpIPredicate::slt: return x < y;
  case arith::CmpIPredicate::sle: return x <= y;
  case arith::CmpIPredicate::sgt: return x > y;
  case arith::CmpIPredicate::sge: return x >= y;
  case arith::CmpIPredicate::ult: return (uint64_t)x < (uint64_t)y;
  case arith::CmpIPredicate::ule: return (uint64_t)x <= (uint64_t)y;
  case arith::CmpIPredicate::ugt: return (uint64_t)x > (uint64_t)y;
  case arith::CmpIPredicate::uge: return (uint64_t)x >= (uint64_t)y;
  }
  return false;
}

/// Elementwise `pred` of two shape tensors whose result is known at import
/// time (constants, or the same symbolic dim for eq/ne/le/ge): a bool shape
/// tensor. torch.onnx writes `x.expand(n, -1, -1)` as
/// Where(Equal(shape, -1), ones, shape); folding it keeps the Expand static.
std::optional<ShapeTensor> compareShapeTensors(ImportContext &ctx, const onnx::NodeProto &node,
                                               arith::CmpIPredicate pred) {
  if (!ctx.isShapeLike(node.input(0)) || !ctx.isShapeLike(node.input(1)))
    return std::nullopt;
  ShapeTensor lhs = *ctx.getShapeTensor(node.input(0)), rhs = *ctx.getShapeTensor(node.input(1));
  size_t n = std::max(lhs.elements.size(), rhs.elements.size());
  if ((lhs.elements.size() != n && lhs.elements.size() != 1) ||
      (rhs.elements.size() != n && rhs.elements.size() != 1))
    return std::nullopt;
  ShapeTensor result;
  result.elementType = ctx.builder.getI1Type();
  result.isScalar = lhs.isScalar && rhs.isScalar;
  for (size_t k = 0; k < n; ++k) {
    const SymDim &x = lhs.elements[lhs.elements.size() == 1 ? 0 : k];
    const SymDim &y = rhs.elements[rhs.elements.size() == 1 ? 0 : k];
    bool value;
    if (x.isConstant() && y.isConstant())
      value = evaluatePredicate(pred, x.constant, y.constant);
    else if (x == y && (pred == arith::CmpIPredicate::eq || pred == arith::CmpIPredicate::ne ||
                        pred == arith::CmpIPredicate::sle || pred == arith::CmpIPredicate::sge ||
                        pred == arith::CmpIPredicate::ule || pred == arith::CmpIPredicate::uge))
      value = pred != arith::CmpIPredicate::ne;
    else
      return std::nullopt;
    result.elements.push_back(SymDim::of(value ? 1 : 0));
  }
  return result;
}

OpHandler comparison(arith::CmpFPredicate fpred, arith::CmpIPredicate ipred) {
  return [=](ImportContext &ctx, const onnx::NodeProto &node) -> LogicalResult {
    if (node.input_size() == 2) {
      arith::CmpIPredicate pred =
          ctx.isUnsigned(node.input(0)) ? unsignedPredicate(ipred) : ipred;
      if (std::optional<ShapeTensor> folded = compareShapeTensors(ctx, node, pred)) {
        ctx.setShapeTensor(node.output(0), *folded);
        return success();
      }
    }
    auto inputs = tensorInputs(ctx, node);
    if (failed(inputs))
      return failure();
    if (inputs->size() != 2)
      return ctx.fail(node, "expects 2 inputs");
    Type t = elementTypeOf((*inputs)[0]);
    if (elementTypeOf((*inputs)[1]) != t)
      return ctx.fail(node, "operand element types differ");
    arith::CmpIPredicate pred =
        ctx.isUnsigned(node.input(0)) ? unsignedPredicate(ipred) : ipred;
    auto r = ctx.elementwise(node, *inputs, ctx.builder.getI1Type(),
                             [&](OpBuilder &b, Location l, ValueRange a) -> Value {
                               if (isa<FloatType>(t))
                                 return arith::CmpFOp::create(b, l, fpred, a[0], a[1]);
                               return arith::CmpIOp::create(b, l, pred, a[0], a[1]);
                             });
    if (failed(r))
      return failure();
    ctx.setValue(node.output(0), *r);
    return success();
  };
}

OpHandler logical(std::function<Value(OpBuilder &, Location, ValueRange)> fn) {
  return [fn](ImportContext &ctx, const onnx::NodeProto &node) -> LogicalResult {
    auto inputs = tensorInputs(ctx, node);
    if (failed(inputs))
      return failure();
    for (Value v : *inputs)
      if (!elementTypeOf(v).isInteger(1))
        return ctx.fail(node, "expects bool operands");
    auto r = ctx.elementwise(node, *inputs, ctx.builder.getI1Type(), fn);
    if (failed(r))
      return failure();
    ctx.setValue(node.output(0), *r);
    return success();
  };
}

LogicalResult convertWhere(ImportContext &ctx, const onnx::NodeProto &node) {
  // A condition known at import time selecting between shape tensors: a
  // shape tensor (the other half of compareShapeTensors' pattern).
  // (An all-constant shape tensor is kept as a constant: read bool ones here.)
  std::optional<ShapeTensor> cond;
  if (node.input_size() == 3) {
    cond = ctx.getShapeTensor(node.input(0));
    if (auto attr = ctx.getConstant(node.input(0));
        !cond && attr && attr->getElementType().isInteger(1) && attr->getType().getRank() <= 1 &&
        attr->getNumElements() <= 64) {
      cond = ShapeTensor();
      cond->elementType = attr->getElementType();
      cond->isScalar = attr->getType().getRank() == 0;
      for (bool b : attr->getValues<bool>())
        cond->elements.push_back(SymDim::of(b ? 1 : 0));
    }
  }
  if (cond && ctx.isShapeLike(node.input(1)) && ctx.isShapeLike(node.input(2))) {
    ShapeTensor x = *ctx.getShapeTensor(node.input(1)), y = *ctx.getShapeTensor(node.input(2));
    size_t n = std::max({cond->elements.size(), x.elements.size(), y.elements.size()});
    auto fits = [n](const ShapeTensor &t) {
      return t.elements.size() == n || t.elements.size() == 1;
    };
    if (cond->elementType && cond->elementType.isInteger(1) && cond->isConstant() && fits(*cond) &&
        fits(x) && fits(y) && x.elementType == y.elementType) {
      ShapeTensor result;
      result.elementType = x.elementType;
      result.isScalar = cond->isScalar && x.isScalar && y.isScalar;
      auto at = [](const ShapeTensor &t, size_t k) {
        return t.elements[t.elements.size() == 1 ? 0 : k];
      };
      for (size_t k = 0; k < n; ++k)
        result.elements.push_back(at(*cond, k).constant != 0 ? at(x, k) : at(y, k));
      ctx.setShapeTensor(node.output(0), result);
      return success();
    }
  }
  auto inputs = tensorInputs(ctx, node);
  if (failed(inputs))
    return failure();
  if (inputs->size() != 3)
    return ctx.fail(node, "expects 3 inputs");
  if (!elementTypeOf((*inputs)[0]).isInteger(1))
    return ctx.fail(node, "condition must be bool");
  Type t = elementTypeOf((*inputs)[1]);
  if (elementTypeOf((*inputs)[2]) != t)
    return ctx.fail(node, "X and Y element types differ");
  auto r = ctx.elementwise(node, *inputs, t, [&](OpBuilder &b, Location l, ValueRange a) {
    return (Value)arith::SelectOp::create(b, l, a[0], a[1], a[2]);
  });
  if (failed(r))
    return failure();
  ctx.setValue(node.output(0), *r);
  return success();
}

} // namespace

void registerLogicalOps(OpRegistry &r) {
  r.add("Xor", logical([](OpBuilder &b, Location l, ValueRange a) -> Value { return arith::XOrIOp::create(b, l, a[0], a[1]); }));
  r.add("Equal", comparison(arith::CmpFPredicate::OEQ, arith::CmpIPredicate::eq));
  r.add("Less", comparison(arith::CmpFPredicate::OLT, arith::CmpIPredicate::slt));
  r.add("LessOrEqual", comparison(arith::CmpFPredicate::OLE, arith::CmpIPredicate::sle));
  r.add("Greater", comparison(arith::CmpFPredicate::OGT, arith::CmpIPredicate::sgt));
  r.add("GreaterOrEqual", comparison(arith::CmpFPredicate::OGE, arith::CmpIPredicate::sge));
  r.add("Not", logical([](OpBuilder &b, Location l, ValueRange a) -> Value {
    return arith::XOrIOp::create(b, l, a[0], arith::ConstantOp::create(b, l, b.getBoolAttr(true)));
  }));
  r.add("And", logical([](OpBuilder &b, Location l, ValueRange a) -> Value { return arith::AndIOp::create(b, l, a[0], a[1]); }));
  r.add("Or", logical([](OpBuilder &b, Location l, ValueRange a) -> Value { return arith::OrIOp::create(b, l, a[0], a[1]); }));
  r.add("Where", convertWhere);
}

} // namespace turbine::onnx_frontend
