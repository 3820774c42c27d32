//===- ComposedOps.cpp - helpers for ops built from other ops' handlers ---===//
//
// See ComposedOps.h. Temporary names look like "<turbine temporary N>", which
// no exporter produces, so they do not collide with a model's value names.
//===----------------------------------------------------------------------===//
#include "ComposedOps.h"

#include <atomic>

using namespace mlir;

namespace turbine::onnx_frontend {

std::string temporaryName(ImportContext &) {
  static std::atomic<uint64_t> counter{0};
  return "<turbine temporary " + std::to_string(counter++) + ">";
}

std::string bindTemporary(ImportContext &ctx, Value value) {
  std::string name = temporaryName(ctx);
  ctx.setValue(name, value);
  return name;
}

std::string bindTemporary(ImportContext &ctx, DenseElementsAttr constant) {
  std::string name = temporaryName(ctx);
  ctx.setConstant(name, constant);
  return name;
}

DenseElementsAttr i64Constant(ImportContext &ctx, ArrayRef<int64_t> values, bool scalar) {
  SmallVector<int64_t> shape;
  if (!scalar)
    shape.push_back(static_cast<int64_t>(values.size()));
  auto type = RankedTensorType::get(shape, ctx.builder.getI64Type());
  return DenseElementsAttr::get(type, values);
}

DenseElementsAttr boolConstant(ImportContext &ctx, bool value) {
  auto type = RankedTensorType::get({}, ctx.builder.getI1Type());
  return DenseElementsAttr::get(type, ArrayRef<bool>{value});
}

onnx::AttributeProto intAttribute(const std::string &name, int64_t value) {
  onnx::AttributeProto attr;
  attr.set_name(name);
  attr.set_type(onnx::AttributeProto::INT);
  attr.set_i(value);
  return attr;
}

FailureOr<std::string> callOpHandler(ImportContext &ctx, const onnx::NodeProto &origin,
                                     const std::string &opType, ArrayRef<std::string> inputs,
                                     ArrayRef<onnx::AttributeProto> attributes) {
  const OpHandler *handler = lookupOpHandler(opType, ctx.opset);
  if (!handler)
    return ctx.fail(origin, "needs op " + opType + ", which has no handler at opset " +
                                std::to_string(ctx.opset));
  onnx::NodeProto node;
  node.set_op_type(opType);
  node.set_name(origin.name());
  for (const std::string &in : inputs)
    node.add_input(in);
  std::string out = temporaryName(ctx);
  node.add_output(out);
  for (const onnx::AttributeProto &attr : attributes)
    *node.add_attribute() = attr;
  if (failed((*handler)(ctx, node)))
    return failure();
  return out;
}

Value insertUnitDim(ImportContext &ctx, Value value, int64_t axis) {
  SmallVector<OpFoldResult> sizes = ctx.dims(value);
  sizes.insert(sizes.begin() + axis, ctx.builder.getIndexAttr(1));
  return ctx.reshape(value, sizes);
}

FailureOr<Value> concatenate(ImportContext &ctx, const onnx::NodeProto &origin,
                             ArrayRef<Value> values, int64_t axis) {
  if (values.empty())
    return ctx.fail(origin, "internal error: concatenating no values");
  if (values.size() == 1)
    return values.front();
  SmallVector<std::string> names;
  for (Value v : values)
    names.push_back(bindTemporary(ctx, v));
  auto out = callOpHandler(ctx, origin, "Concat", names, {intAttribute("axis", axis)});
  if (failed(out))
    return failure();
  return ctx.getTensor(origin, *out);
}

FailureOr<Value> stack(ImportContext &ctx, const onnx::NodeProto &origin, ArrayRef<Value> values,
                       int64_t axis) {
  SmallVector<Value> expanded;
  for (Value v : values)
    expanded.push_back(insertUnitDim(ctx, v, axis));
  return concatenate(ctx, origin, expanded, axis);
}

FailureOr<Value> sliceAt(ImportContext &ctx, const onnx::NodeProto &origin, Value value,
                         int64_t index, int64_t axis) {
  std::string data = bindTemporary(ctx, value);
  std::string indices = bindTemporary(ctx, i64Constant(ctx, {index}, /*scalar=*/true));
  auto out = callOpHandler(ctx, origin, "Gather", {data, indices}, {intAttribute("axis", axis)});
  if (failed(out))
    return failure();
  return ctx.getTensor(origin, *out);
}

std::optional<int64_t> importTimeScalar(ImportContext &ctx, const std::string &name) {
  if (auto attr = ctx.getConstant(name)) {
    if (attr->getNumElements() != 1)
      return std::nullopt;
    Type element = attr->getElementType();
    if (element.isInteger(1))
      return (*attr->value_begin<bool>()) ? 1 : 0;
    if (element.isInteger())
      return (*attr->value_begin<APInt>()).getSExtValue();
    return std::nullopt;
  }
  if (auto shape = ctx.getShapeTensor(name))
    if (shape->elements.size() == 1 && shape->elements[0].isConstant())
      return shape->elements[0].constant;
  return std::nullopt;
}

FailureOr<Value> scalarTensor(ImportContext &ctx, const onnx::NodeProto &node,
                              const std::string &name) {
  auto value = ctx.getTensor(node, name);
  if (failed(value))
    return failure();
  auto type = cast<RankedTensorType>(value->getType());
  if (type.getRank() == 0)
    return *value;
  if (!type.hasStaticShape() || type.getNumElements() != 1)
    return ctx.fail(node, "input '" + name + "' must hold one element");
  return ctx.reshape(*value, {});
}

FailureOr<Value> positionTest(ImportContext &ctx, const onnx::NodeProto &node, Value position,
                              int64_t length, int64_t k, bool greater) {
  return ctx.elementwise(
      node, {position}, ctx.builder.getI1Type(),
      [&](OpBuilder &b, Location l, ValueRange args) -> Value {
        Value p = args[0];
        Type t = p.getType();
        Value zero = arith::ConstantOp::create(b, l, b.getIntegerAttr(t, 0));
        Value len = arith::ConstantOp::create(b, l, b.getIntegerAttr(t, length));
        Value negative = arith::CmpIOp::create(b, l, arith::CmpIPredicate::slt, p, zero);
        Value wrapped = arith::AddIOp::create(b, l, p, len);
        Value normalized = arith::SelectOp::create(b, l, negative, wrapped, p);
        Value kValue = arith::ConstantOp::create(b, l, b.getIntegerAttr(t, k));
        return arith::CmpIOp::create(
            b, l, greater ? arith::CmpIPredicate::sgt : arith::CmpIPredicate::eq, normalized,
            kValue);
      });
}

FailureOr<Value> selectByCondition(ImportContext &ctx, const onnx::NodeProto &node,
                                   Value condition, Value a, Value b, const std::string &what) {
  if (a == b)
    return a;
  if (a.getType() != b.getType()) {
    std::string aText, bText;
    llvm::raw_string_ostream aOs(aText), bOs(bText);
    aOs << a.getType();
    bOs << b.getType();
    return ctx.fail(node, what + " is chosen at run time between values of different types (" +
                              aText + " and " + bText +
                              "), which a compiled artifact cannot hold; make the choice known "
                              "at import time (a constant)");
  }
  return ctx.elementwise(node, {condition, a, b},
                         cast<RankedTensorType>(a.getType()).getElementType(),
                         [](OpBuilder &bld, Location l, ValueRange args) -> Value {
                           return arith::SelectOp::create(bld, l, args[0], args[1], args[2]);
                         });
}

LogicalResult requireElements(ImportContext &ctx, const onnx::NodeProto &node,
                              const std::string &name, const SequenceValue &sequence) {
  if (sequence.elementsUnavailable.empty())
    return success();
  return ctx.unsupported(node, "the elements of sequence '" + name +
                                   "' are not known at import time (" +
                                   sequence.elementsUnavailable + "); only its length is");
}

FailureOr<Value> bindingTensor(ImportContext &ctx, const onnx::NodeProto &node,
                               const ValueBinding &binding) {
  switch (binding.kind) {
  case ValueBinding::Kind::Tensor: return binding.tensor;
  case ValueBinding::Kind::Constant:
  case ValueBinding::Kind::Shape: {
    std::string name = temporaryName(ctx);
    ctx.bind(name, binding);
    return ctx.getTensor(node, name);
  }
  default: return ctx.fail(node, "expected a tensor, got a sequence, an optional or nothing");
  }
}

FailureOr<ValueBinding> selectBindings(ImportContext &ctx, const onnx::NodeProto &node,
                                       Value condition, const ValueBinding &a,
                                       const ValueBinding &b, const std::string &what) {
  using Kind = ValueBinding::Kind;
  auto isSequence = [](const ValueBinding &x) { return x.kind == Kind::Sequence; };
  auto isOptional = [](const ValueBinding &x) { return x.kind == Kind::Optional; };
  if (isSequence(a) != isSequence(b) || isOptional(a) != isOptional(b))
    return ctx.fail(node, what + " is a different kind of value in the two choices");
  ValueBinding result = a;
  auto selectSequences = [&](const SequenceValue &x, const SequenceValue &y,
                             SequenceValue &out) -> LogicalResult {
    if (failed(requireElements(ctx, node, what, x)) || failed(requireElements(ctx, node, what, y)))
      return failure();
    if (x.elements.size() != y.elements.size())
      return ctx.fail(node, what + " is chosen at run time between sequences of lengths " +
                                std::to_string(x.elements.size()) + " and " +
                                std::to_string(y.elements.size()) +
                                "; a compiled artifact needs the length at import time");
    out.elements.clear();
    for (auto [ex, ey] : llvm::zip(x.elements, y.elements)) {
      auto v = selectByCondition(ctx, node, condition, ex, ey, what);
      if (failed(v))
        return failure();
      out.elements.push_back(*v);
    }
    return success();
  };
  if (isSequence(a)) {
    if (failed(selectSequences(a.sequence, b.sequence, result.sequence)))
      return failure();
    return result;
  }
  if (isOptional(a)) {
    const OptionalValue &x = a.optional, &y = b.optional;
    if (x.hasElement != y.hasElement || x.isSequence != y.isSequence)
      return ctx.fail(node, what + " is chosen at run time between an empty and a full "
                                "optional (or a tensor and a sequence); a compiled artifact "
                                "needs that at import time");
    if (!x.hasElement)
      return result;
    if (x.isSequence) {
      if (failed(selectSequences(x.sequence, y.sequence, result.optional.sequence)))
        return failure();
      return result;
    }
    auto v = selectByCondition(ctx, node, condition, x.tensor, y.tensor, what);
    if (failed(v))
      return failure();
    result.optional.tensor = *v;
    return result;
  }
  auto ta = bindingTensor(ctx, node, a);
  auto tb = bindingTensor(ctx, node, b);
  if (failed(ta) || failed(tb))
    return failure();
  auto v = selectByCondition(ctx, node, condition, *ta, *tb, what);
  if (failed(v))
    return failure();
  result = ValueBinding{};
  result.kind = Kind::Tensor;
  result.tensor = *v;
  result.onnxType = a.onnxType;
  return result;
}

} // namespace turbine::onnx_frontend
