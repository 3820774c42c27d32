//===- ElementwiseOps.cpp - ONNX elementwise ops -> linalg.generic --------===//
//
// Unary and binary (NumPy-broadcasting) arithmetic and activations: Add, Sub,
// Mul, Div, Pow, Mod, Max/Min/Sum/Mean, Neg, Abs, Clip, the float functions
// (Exp, Log, Tanh, Erf, trigonometric and hyperbolic ones, ...), Relu,
// LeakyRelu, PRelu, Elu, Selu, Celu, Hard{Sigmoid,Swish}, Softplus,
// Softsign, Shrink, ThresholdedRelu, IsNaN/IsInf, BitShift. Binary
// arithmetic on shape tensors (Shape-derived int64 tensors) is evaluated
// symbolically on `index` values instead of emitting tensor code.
// Comparisons, logical ops and Where: LogicalOps.cpp; Cast: CastOps.cpp;
// Constant, Identity, Dropout: PassThroughOps.cpp.
//===----------------------------------------------------------------------===//
#include "ImportContext.h"

using namespace mlir;

namespace turbine::onnx_frontend {
namespace {

using ScalarFn = std::function<Value(OpBuilder &, Location, ValueRange)>;

Type elementTypeOf(Value v) { return cast<RankedTensorType>(v.getType()).getElementType(); }

/// Registers a unary float op.
OpHandler unaryFloat(std::function<Value(OpBuilder &, Location, Value)> fn) {
  return [fn](ImportContext &ctx, const onnx::NodeProto &node) -> LogicalResult {
    auto inputs = tensorInputs(ctx, node);
    if (failed(inputs))
      return failure();
    Value x = (*inputs)[0];
    if (!isa<FloatType>(elementTypeOf(x)))
      return ctx.unsupported(node, "only floating-point inputs are supported");
    auto r = ctx.elementwise(node, ValueRange{x}, elementTypeOf(x),
                             [&](OpBuilder &b, Location l, ValueRange a) { return fn(b, l, a[0]); });
    if (failed(r))
      return failure();
    ctx.setValue(node.output(0), *r);
    return success();
  };
}

Value floatConst(OpBuilder &b, Location l, Type t, double v) {
  return arith::ConstantOp::create(b, l, b.getFloatAttr(t, v));
}

/// max/min of two scalars: NaN-propagating for floats, signed or unsigned for integers.
Value emitMax(OpBuilder &b, Location l, Value x, Value y, bool isUnsigned) {
  if (isa<FloatType>(x.getType()))
    return arith::MaximumFOp::create(b, l, x, y);
  return isUnsigned ? (Value)arith::MaxUIOp::create(b, l, x, y) : (Value)arith::MaxSIOp::create(b, l, x, y);
}
Value emitMin(OpBuilder &b, Location l, Value x, Value y, bool isUnsigned) {
  if (isa<FloatType>(x.getType()))
    return arith::MinimumFOp::create(b, l, x, y);
  return isUnsigned ? (Value)arith::MinUIOp::create(b, l, x, y) : (Value)arith::MinSIOp::create(b, l, x, y);
}

/// Binary arithmetic kinds shared by the tensor and the symbolic paths.
enum class BinaryKind { Add, Sub, Mul, Div };

/// `isUnsigned`: integer operands are ONNX unsigned (only Div differs).
Value emitBinaryScalar(OpBuilder &b, Location l, BinaryKind kind, Value x, Value y,
                       bool isUnsigned = false) {
  bool isFloat = isa<FloatType>(x.getType());
  switch (kind) {
  case BinaryKind::Add:
    return isFloat ? (Value)arith::AddFOp::create(b, l, x, y) : (Value)arith::AddIOp::create(b, l, x, y);
  case BinaryKind::Sub:
    return isFloat ? (Value)arith::SubFOp::create(b, l, x, y) : (Value)arith::SubIOp::create(b, l, x, y);
  case BinaryKind::Mul:
    return isFloat ? (Value)arith::MulFOp::create(b, l, x, y) : (Value)arith::MulIOp::create(b, l, x, y);
  case BinaryKind::Div:
    if (isFloat)
      return arith::DivFOp::create(b, l, x, y);
    return isUnsigned ? (Value)arith::DivUIOp::create(b, l, x, y) : (Value)arith::DivSIOp::create(b, l, x, y);
  }
  return x;
}

/// Symbolic index arithmetic on two shape-tensor elements, folded when constant.
SymDim symbolicBinary(ImportContext &ctx, BinaryKind kind, const SymDim &x, const SymDim &y) {
  if (x.isConstant() && y.isConstant()) {
    switch (kind) {
    case BinaryKind::Add: return SymDim::of(x.constant + y.constant);
    case BinaryKind::Sub: return SymDim::of(x.constant - y.constant);
    case BinaryKind::Mul: return SymDim::of(x.constant * y.constant);
    case BinaryKind::Div:
      if (y.constant != 0)
        return SymDim::of(x.constant / y.constant);
      break;
    }
  }
  if (kind == BinaryKind::Mul && y.isConstant() && y.constant == 1)
    return x;
  if (kind == BinaryKind::Mul && x.isConstant() && x.constant == 1)
    return y;
  if ((kind == BinaryKind::Div || kind == BinaryKind::Mul) && y.isConstant() && y.constant == 1)
    return x;
  if ((kind == BinaryKind::Add || kind == BinaryKind::Sub) && y.isConstant() && y.constant == 0)
    return x;
  Value a = ctx.toIndexValue(ctx.toFoldResult(x));
  Value c = ctx.toIndexValue(ctx.toFoldResult(y));
  return SymDim::of(emitBinaryScalar(ctx.builder, ctx.loc, kind, a, c));
}

OpHandler binary(BinaryKind kind) {
  return [kind](ImportContext &ctx, const onnx::NodeProto &node) -> LogicalResult {
    if (node.input_size() != 2)
      return ctx.fail(node, "expects 2 inputs");
    // Shape arithmetic stays symbolic.
    if (ctx.isShapeLike(node.input(0)) && ctx.isShapeLike(node.input(1))) {
      auto lhs = ctx.getShapeTensor(node.input(0));
      auto rhs = ctx.getShapeTensor(node.input(1));
      if (lhs && rhs) {
        size_t n = std::max(lhs->elements.size(), rhs->elements.size());
        bool ok = (lhs->elements.size() == n || lhs->elements.size() == 1) &&
                  (rhs->elements.size() == n || rhs->elements.size() == 1);
        if (ok) {
          ShapeTensor result;
          result.elementType = lhs->elementType;
          result.isScalar = lhs->isScalar && rhs->isScalar;
          for (size_t k = 0; k < n; ++k)
            result.elements.push_back(symbolicBinary(
                ctx, kind, lhs->elements[lhs->elements.size() == 1 ? 0 : k],
                rhs->elements[rhs->elements.size() == 1 ? 0 : k]));
          ctx.setShapeTensor(node.output(0), result);
          return success();
        }
      }
    }
    auto inputs = tensorInputs(ctx, node);
    if (failed(inputs))
      return failure();
    Type t = elementTypeOf((*inputs)[0]);
    if (t != elementTypeOf((*inputs)[1]))
      return ctx.fail(node, "operand element types differ");
    bool isUnsigned = ctx.isUnsigned(node.input(0));
    auto r = ctx.elementwise(node, *inputs, t, [&](OpBuilder &b, Location l, ValueRange a) {
      return emitBinaryScalar(b, l, kind, a[0], a[1], isUnsigned);
    });
    if (failed(r))
      return failure();
    ctx.setValue(node.output(0), *r);
    return success();
  };
}

/// Generic float binary op such as Pow or PRelu.
OpHandler binaryFloat(ScalarFn fn) {
  return [fn](ImportContext &ctx, const onnx::NodeProto &node) -> LogicalResult {
    auto inputs = tensorInputs(ctx, node);
    if (failed(inputs))
      return failure();
    if (inputs->size() != 2)
      return ctx.fail(node, "expects 2 inputs");
    Type t = elementTypeOf((*inputs)[0]);
    if (!isa<FloatType>(t) || elementTypeOf((*inputs)[1]) != t)
      return ctx.unsupported(node, "only floating-point operands of one type are supported");
    auto r = ctx.elementwise(node, *inputs, t, fn);
    if (failed(r))
      return failure();
    ctx.setValue(node.output(0), *r);
    return success();
  };
}

LogicalResult convertPow(ImportContext &ctx, const onnx::NodeProto &node) {
  auto inputs = tensorInputs(ctx, node);
  if (failed(inputs))
    return failure();
  if (inputs->size() != 2)
    return ctx.fail(node, "expects 2 inputs");
  Value base = (*inputs)[0], exponent = (*inputs)[1];
  Type t = elementTypeOf(base);
  Type et = elementTypeOf(exponent);
  bool baseUnsigned = ctx.isUnsigned(node.input(0));
  bool exponentUnsigned = ctx.isUnsigned(node.input(1));
  if (isa<IntegerType>(t) && !t.isInteger(1)) {
    // Integer base: the result has the base's type.
    unsigned width = t.getIntOrFloatBitWidth();
    if (isa<FloatType>(et)) {
      // x^y computed in the exponent's float type (at least f64 for 64-bit
      // bases), truncated toward zero like the reference's cast.
      Type ft = width > 32 || et.getIntOrFloatBitWidth() > 32 ? (Type)ctx.builder.getF64Type()
                                                              : (Type)ctx.builder.getF32Type();
      auto r = ctx.elementwise(node, *inputs, t, [&](OpBuilder &b, Location l, ValueRange a) -> Value {
        Value x = convertScalar(b, l, a[0], ft, baseUnsigned);
        Value y = convertScalar(b, l, a[1], ft);
        return convertScalar(b, l, math::PowFOp::create(b, l, x, y), t, false, baseUnsigned);
      });
      if (failed(r))
        return failure();
      ctx.setValue(node.output(0), *r);
      return success();
    }
    if (!isa<IntegerType>(et) || et.isInteger(1))
      return ctx.unsupported(node, "exponent type");
    // Integer ^ integer: exact exponentiation by squaring over the exponent's
    // bits (wrapping like the reference's fixed-width arithmetic). A negative
    // exponent gives 1 / x^-y truncated: 1 for x == 1, +-1 for x == -1, else 0.
    unsigned ew = et.getIntOrFloatBitWidth();
    auto r = ctx.elementwise(node, *inputs, t, [&](OpBuilder &b, Location l, ValueRange a) -> Value {
      Value x = a[0], e = a[1];
      auto c = [&](Type ty, int64_t v) -> Value { return arith::ConstantOp::create(b, l, b.getIntegerAttr(ty, v)); };
      Value result = c(t, 1), square = x;
      // A signed exponent's sign bit is handled below; an unsigned one's is a power.
      unsigned bits = exponentUnsigned ? ew : ew - 1;
      for (unsigned k = 0; k < bits; ++k) {
        Value bit = arith::AndIOp::create(b, l, arith::ShRUIOp::create(b, l, e, c(et, k)), c(et, 1));
        Value set = arith::CmpIOp::create(b, l, arith::CmpIPredicate::ne, bit, c(et, 0));
        result = arith::SelectOp::create(b, l, set, arith::MulIOp::create(b, l, result, square), result);
        square = arith::MulIOp::create(b, l, square, square);
      }
      if (exponentUnsigned)
        return result;
      Value negative = arith::CmpIOp::create(b, l, arith::CmpIPredicate::slt, e, c(et, 0));
      Value odd = arith::CmpIOp::create(b, l, arith::CmpIPredicate::ne, arith::AndIOp::create(b, l, e, c(et, 1)),
                                        c(et, 0));
      Value isOne = arith::CmpIOp::create(b, l, arith::CmpIPredicate::eq, x, c(t, 1));
      Value isMinusOne = arith::CmpIOp::create(b, l, arith::CmpIPredicate::eq, x, c(t, -1));
      Value minusOnePow = arith::SelectOp::create(b, l, odd, c(t, -1), c(t, 1));
      Value negResult = arith::SelectOp::create(b, l, isOne, c(t, 1),
                                                arith::SelectOp::create(b, l, isMinusOne, minusOnePow, c(t, 0)));
      return arith::SelectOp::create(b, l, negative, negResult, result);
    });
    if (failed(r))
      return failure();
    ctx.setValue(node.output(0), *r);
    return success();
  }
  if (!isa<FloatType>(t))
    return ctx.unsupported(node, "only floating-point and integer bases are supported");
  // x^2 with a constant exponent is a multiply.
  if (auto c = ctx.getConstant(node.input(1)); c && c->isSplat() &&
                                               isa<FloatType>(c->getElementType()) &&
                                               c->getSplatValue<APFloat>().convertToDouble() == 2.0 &&
                                               c->getType().getRank() == 0) {
    auto r = ctx.elementwise(node, ValueRange{base}, t, [&](OpBuilder &b, Location l, ValueRange a) {
      return (Value)arith::MulFOp::create(b, l, a[0], a[0]);
    });
    if (failed(r))
      return failure();
    ctx.setValue(node.output(0), *r);
    return success();
  }
  auto r = ctx.elementwise(node, *inputs, t, [&](OpBuilder &b, Location l, ValueRange a) {
    Value e = convertScalar(b, l, a[1], t, exponentUnsigned);
    return (Value)math::PowFOp::create(b, l, a[0], e);
  });
  if (failed(r))
    return failure();
  ctx.setValue(node.output(0), *r);
  return success();
}

/// Variadic Max/Min/Sum folded into one generic.
OpHandler variadic(BinaryKind kindForSum, bool isMax, bool isMin) {
  return [=](ImportContext &ctx, const onnx::NodeProto &node) -> LogicalResult {
    auto inputs = tensorInputs(ctx, node);
    if (failed(inputs))
      return failure();
    Type t = elementTypeOf((*inputs)[0]);
    for (Value v : *inputs)
      if (elementTypeOf(v) != t)
        return ctx.fail(node, "operand element types differ");
    bool isUnsigned = ctx.isUnsigned(node.input(0));
    auto r = ctx.elementwise(node, *inputs, t, [&](OpBuilder &b, Location l, ValueRange a) {
      Value acc = a[0];
      for (Value v : a.drop_front()) {
        if (isMax)
          acc = emitMax(b, l, acc, v, isUnsigned);
        else if (isMin)
          acc = emitMin(b, l, acc, v, isUnsigned);
        else
          acc = emitBinaryScalar(b, l, kindForSum, acc, v);
      }
      return acc;
    });
    if (failed(r))
      return failure();
    ctx.setValue(node.output(0), *r);
    return success();
  };
}

/// Clip whose min/max are runtime scalars: one generic over all operands.
LogicalResult convertClipWithTensorBounds(ImportContext &ctx, const onnx::NodeProto &node, Value x) {
  SmallVector<Value> operands{x};
  bool hasMin = ImportContext::hasInput(node, 1), hasMax = ImportContext::hasInput(node, 2);
  for (int i = 1; i <= 2; ++i) {
    if (!ImportContext::hasInput(node, i))
      continue;
    auto v = ctx.getTensor(node, node.input(i));
    if (failed(v))
      return failure();
    if (cast<RankedTensorType>(v->getType()).getRank() != 0 || elementTypeOf(*v) != elementTypeOf(x))
      return ctx.fail(node, "min/max must be scalars of the input's type");
    operands.push_back(*v);
  }
  bool isUnsigned = ctx.isUnsigned(node.input(0));
  auto r = ctx.elementwise(node, operands, elementTypeOf(x), [&](OpBuilder &b, Location l, ValueRange a) {
    Value v = a[0];
    size_t next = 1;
    if (hasMin)
      v = emitMax(b, l, v, a[next++], isUnsigned);
    if (hasMax)
      v = emitMin(b, l, v, a[next++], isUnsigned);
    return v;
  });
  if (failed(r))
    return failure();
  ctx.setValue(node.output(0), *r);
  return success();
}

LogicalResult convertClip(ImportContext &ctx, const onnx::NodeProto &node) {
  auto x = ctx.getTensor(node, node.input(0));
  if (failed(x))
    return failure();
  Type t = elementTypeOf(*x);
  if (ctx.opset < 11 && !isa<FloatType>(t))
    return ctx.unsupported(node, "only floating-point inputs are supported before opset 11");
  if (t.isInteger(1))
    return ctx.unsupported(node, "bool inputs are not supported");
  // Integer inputs (opset >= 11): the bounds are scalar tensors of the
  // input's type, compared signed or unsigned; an absent bound clips nothing.
  if (isa<IntegerType>(t))
    return convertClipWithTensorBounds(ctx, node, *x);
  std::optional<double> lo, hi;
  if (ctx.opset < 11) {
    lo = ctx.floatAttr(node, "min", -3.402823e+38f);
    hi = ctx.floatAttr(node, "max", 3.402823e+38f);
  } else {
    for (int i = 1; i <= 2; ++i) {
      if (!ImportContext::hasInput(node, i))
        continue;
      auto c = ctx.getConstant(node.input(i));
      if (!c || c->getNumElements() != 1)
        return convertClipWithTensorBounds(ctx, node, *x);
      double v = (*c->getValues<APFloat>().begin()).convertToDouble();
      (i == 1 ? lo : hi) = v;
    }
  }
  auto r = ctx.elementwise(node, ValueRange{*x}, t, [&](OpBuilder &b, Location l, ValueRange a) {
    Value v = a[0];
    if (lo)
      v = arith::MaximumFOp::create(b, l, v, floatConst(b, l, t, *lo));
    if (hi)
      v = arith::MinimumFOp::create(b, l, v, floatConst(b, l, t, *hi));
    return v;
  });
  if (failed(r))
    return failure();
  ctx.setValue(node.output(0), *r);
  return success();
}

/// A unary float op whose body reads attributes of the node.
using NodeScalarFn = std::function<Value(OpBuilder &, Location, Value, ImportContext &,
                                         const onnx::NodeProto &)>;
OpHandler unaryFloatWithAttrs(NodeScalarFn fn) {
  return [fn](ImportContext &ctx, const onnx::NodeProto &node) -> LogicalResult {
    return unaryFloat([&](OpBuilder &b, Location l, Value x) { return fn(b, l, x, ctx, node); })(ctx, node);
  };
}

/// exp(x) - 1 scaled by `alpha`.
Value expMinusOne(OpBuilder &b, Location l, Value x, double alpha) {
  Value em1 = math::ExpM1Op::create(b, l, x);
  return arith::MulFOp::create(b, l, em1, floatConst(b, l, x.getType(), alpha));
}

/// Float -> bool predicate ops (IsNaN, IsInf).
OpHandler floatPredicate(std::function<Value(OpBuilder &, Location, Value, ImportContext &,
                                             const onnx::NodeProto &)> fn) {
  return [fn](ImportContext &ctx, const onnx::NodeProto &node) -> LogicalResult {
    auto inputs = tensorInputs(ctx, node);
    if (failed(inputs))
      return failure();
    Value x = (*inputs)[0];
    if (!isa<FloatType>(elementTypeOf(x)))
      return ctx.unsupported(node, "only floating-point inputs are supported");
    auto r = ctx.elementwise(node, ValueRange{x}, ctx.builder.getI1Type(),
                             [&](OpBuilder &b, Location l, ValueRange a) { return fn(b, l, a[0], ctx, node); });
    if (failed(r))
      return failure();
    ctx.setValue(node.output(0), *r);
    return success();
  };
}

LogicalResult convertMod(ImportContext &ctx, const onnx::NodeProto &node) {
  auto inputs = tensorInputs(ctx, node);
  if (failed(inputs))
    return failure();
  if (inputs->size() != 2)
    return ctx.fail(node, "expects 2 inputs");
  Type t = elementTypeOf((*inputs)[0]);
  if (elementTypeOf((*inputs)[1]) != t)
    return ctx.fail(node, "operand element types differ");
  bool fmod = ctx.intAttr(node, "fmod", 0) != 0;
  if (isa<FloatType>(t) && !fmod)
    return ctx.fail(node, "fmod must be 1 for floating-point inputs");
  bool isUnsigned = ctx.isUnsigned(node.input(0));
  auto r = ctx.elementwise(node, *inputs, t, [&](OpBuilder &b, Location l, ValueRange a) -> Value {
    if (isa<FloatType>(t))
      return arith::RemFOp::create(b, l, a[0], a[1]);
    // Unsigned operands: both fmod modes are the plain remainder.
    if (isUnsigned)
      return arith::RemUIOp::create(b, l, a[0], a[1]);
    Value rem = arith::RemSIOp::create(b, l, a[0], a[1]);
    if (fmod)
      return rem;
    // Python-style: the result takes the sign of the divisor.
    Value zero = arith::ConstantOp::create(b, l, b.getIntegerAttr(t, 0));
    Value remNonZero = arith::CmpIOp::create(b, l, arith::CmpIPredicate::ne, rem, zero);
    Value remNeg = arith::CmpIOp::create(b, l, arith::CmpIPredicate::slt, rem, zero);
    Value divNeg = arith::CmpIOp::create(b, l, arith::CmpIPredicate::slt, a[1], zero);
    Value signsDiffer = arith::XOrIOp::create(b, l, remNeg, divNeg);
    Value fix = arith::AndIOp::create(b, l, remNonZero, signsDiffer);
    return arith::SelectOp::create(b, l, fix, arith::AddIOp::create(b, l, rem, a[1]), rem);
  });
  if (failed(r))
    return failure();
  ctx.setValue(node.output(0), *r);
  return success();
}

LogicalResult convertMean(ImportContext &ctx, const onnx::NodeProto &node) {
  auto inputs = tensorInputs(ctx, node);
  if (failed(inputs))
    return failure();
  Type t = elementTypeOf((*inputs)[0]);
  if (!isa<FloatType>(t))
    return ctx.unsupported(node, "only floating-point inputs are supported");
  double n = static_cast<double>(inputs->size());
  auto r = ctx.elementwise(node, *inputs, t, [&](OpBuilder &b, Location l, ValueRange a) -> Value {
    Value acc = a[0];
    for (Value v : a.drop_front())
      acc = arith::AddFOp::create(b, l, acc, v);
    return arith::DivFOp::create(b, l, acc, floatConst(b, l, t, n));
  });
  if (failed(r))
    return failure();
  ctx.setValue(node.output(0), *r);
  return success();
}

/// Neg on floats, integers, and (symbolically) on shape values.
LogicalResult convertNeg(ImportContext &ctx, const onnx::NodeProto &node) {
  if (ctx.isShapeLike(node.input(0))) {
    ShapeTensor shape = *ctx.getShapeTensor(node.input(0));
    for (SymDim &d : shape.elements)
      d = symbolicBinary(ctx, BinaryKind::Sub, SymDim::of(0), d);
    ctx.setShapeTensor(node.output(0), shape);
    return success();
  }
  auto inputs = tensorInputs(ctx, node);
  if (failed(inputs))
    return failure();
  Type t = elementTypeOf((*inputs)[0]);
  auto r = ctx.elementwise(node, *inputs, t, [&](OpBuilder &b, Location l, ValueRange a) -> Value {
    if (isa<FloatType>(t))
      return arith::NegFOp::create(b, l, a[0]);
    return arith::SubIOp::create(b, l, arith::ConstantOp::create(b, l, b.getIntegerAttr(t, 0)), a[0]);
  });
  if (failed(r))
    return failure();
  ctx.setValue(node.output(0), *r);
  return success();
}

/// PRelu with NumPy broadcasting of the slope.
OpHandler preluHandler() {
  return binaryFloat([](OpBuilder &b, Location l, ValueRange a) -> Value {
    Value zero = floatConst(b, l, a[0].getType(), 0);
    Value neg = arith::CmpFOp::create(b, l, arith::CmpFPredicate::OLT, a[0], zero);
    return arith::SelectOp::create(b, l, neg, arith::MulFOp::create(b, l, a[0], a[1]), a[0]);
  });
}

} // namespace

/// Collects the tensor operands of `node` (all non-empty inputs).
FailureOr<SmallVector<Value>> tensorInputs(ImportContext &ctx, const onnx::NodeProto &node) {
  SmallVector<Value> inputs;
  for (const std::string &name : node.input()) {
    if (name.empty())
      continue;
    auto v = ctx.getTensor(node, name);
    if (failed(v))
      return failure();
    inputs.push_back(*v);
  }
  if (inputs.empty()) {
    (void)ctx.fail(node, "expects at least one input");
    return failure();
  }
  return inputs;
}

void registerElementwiseOps(OpRegistry &r) {
  r.add("Add", binary(BinaryKind::Add));
  r.add("Sub", binary(BinaryKind::Sub));
  r.add("Mul", binary(BinaryKind::Mul));
  r.add("Div", binary(BinaryKind::Div));
  r.add("Pow", convertPow);
  r.add("Max", variadic(BinaryKind::Add, true, false));
  r.add("Min", variadic(BinaryKind::Add, false, true));
  r.add("Sum", variadic(BinaryKind::Add, false, false));
  r.add("PRelu", [](ImportContext &ctx, const onnx::NodeProto &node) -> LogicalResult {
    // Before opset 7 a 1-D slope [C] applies along dim 1 (channels).
    if (ctx.opset < 7 && node.input_size() == 2) {
      auto x = ctx.getTensor(node, node.input(0));
      auto slope = ctx.getTensor(node, node.input(1));
      if (failed(x) || failed(slope))
        return failure();
      int64_t rank = cast<RankedTensorType>(x->getType()).getRank();
      if (cast<RankedTensorType>(slope->getType()).getRank() == 1 && rank > 2) {
        SmallVector<OpFoldResult> sizes{ctx.dim(*slope, 0)};
        for (int64_t d = 2; d < rank; ++d)
          sizes.push_back(ctx.builder.getIndexAttr(1));
        std::string reshaped = node.input(1) + "#prelu_channel_slope";
        ctx.setValue(reshaped, ctx.reshape(*slope, sizes));
        onnx::NodeProto rewritten = node;
        rewritten.set_input(1, reshaped);
        return preluHandler()(ctx, rewritten);
      }
    }
    return preluHandler()(ctx, node);
  });

  r.add("Relu", unaryFloat([](OpBuilder &b, Location l, Value x) -> Value {
    return arith::MaximumFOp::create(b, l, x, floatConst(b, l, x.getType(), 0));
  }));
  r.add("Sigmoid", unaryFloat([](OpBuilder &b, Location l, Value x) -> Value {
    Value one = floatConst(b, l, x.getType(), 1);
    Value e = math::ExpOp::create(b, l, arith::NegFOp::create(b, l, x));
    return arith::DivFOp::create(b, l, one, arith::AddFOp::create(b, l, one, e));
  }));
  r.add("Tanh", unaryFloat([](OpBuilder &b, Location l, Value x) -> Value { return math::TanhOp::create(b, l, x); }));
  r.add("Erf", unaryFloat([](OpBuilder &b, Location l, Value x) -> Value { return math::ErfOp::create(b, l, x); }));
  r.add("Sqrt", unaryFloat([](OpBuilder &b, Location l, Value x) -> Value { return math::SqrtOp::create(b, l, x); }));
  r.add("Exp", unaryFloat([](OpBuilder &b, Location l, Value x) -> Value { return math::ExpOp::create(b, l, x); }));
  r.add("Log", unaryFloat([](OpBuilder &b, Location l, Value x) -> Value { return math::LogOp::create(b, l, x); }));
  r.add("Sin", unaryFloat([](OpBuilder &b, Location l, Value x) -> Value { return math::SinOp::create(b, l, x); }));
  r.add("Cos", unaryFloat([](OpBuilder &b, Location l, Value x) -> Value { return math::CosOp::create(b, l, x); }));
  r.add("Floor", unaryFloat([](OpBuilder &b, Location l, Value x) -> Value { return math::FloorOp::create(b, l, x); }));
  r.add("Ceil", unaryFloat([](OpBuilder &b, Location l, Value x) -> Value { return math::CeilOp::create(b, l, x); }));
  r.add("Abs", unaryFloat([](OpBuilder &b, Location l, Value x) -> Value { return math::AbsFOp::create(b, l, x); }));
  r.add("Neg", convertNeg);
  r.add("Reciprocal", unaryFloat([](OpBuilder &b, Location l, Value x) -> Value {
    return arith::DivFOp::create(b, l, floatConst(b, l, x.getType(), 1), x);
  }));
  r.add("LeakyRelu", [](ImportContext &ctx, const onnx::NodeProto &node) {
    double alpha = ctx.floatAttr(node, "alpha", 0.01f);
    return unaryFloat([alpha](OpBuilder &b, Location l, Value x) -> Value {
      Value zero = floatConst(b, l, x.getType(), 0);
      Value neg = arith::CmpFOp::create(b, l, arith::CmpFPredicate::OLT, x, zero);
      Value scaled = arith::MulFOp::create(b, l, x, floatConst(b, l, x.getType(), alpha));
      return arith::SelectOp::create(b, l, neg, scaled, x);
    })(ctx, node);
  });
  r.add("Clip", convertClip);
  r.add("Elu", unaryFloatWithAttrs([](OpBuilder &b, Location l, Value x, ImportContext &ctx,
                                      const onnx::NodeProto &node) -> Value {
    double alpha = ctx.floatAttr(node, "alpha", 1.0f);
    Value neg = arith::CmpFOp::create(b, l, arith::CmpFPredicate::OLT, x, floatConst(b, l, x.getType(), 0));
    return arith::SelectOp::create(b, l, neg, expMinusOne(b, l, x, alpha), x);
  }));
  r.add("Selu", unaryFloatWithAttrs([](OpBuilder &b, Location l, Value x, ImportContext &ctx,
                                       const onnx::NodeProto &node) -> Value {
    double alpha = ctx.floatAttr(node, "alpha", 1.67326319217681884765625f);
    double gamma = ctx.floatAttr(node, "gamma", 1.05070102214813232421875f);
    Value pos = arith::CmpFOp::create(b, l, arith::CmpFPredicate::OGT, x, floatConst(b, l, x.getType(), 0));
    Value v = arith::SelectOp::create(b, l, pos, x, expMinusOne(b, l, x, alpha));
    return arith::MulFOp::create(b, l, v, floatConst(b, l, x.getType(), gamma));
  }));
  r.add("Celu", unaryFloatWithAttrs([](OpBuilder &b, Location l, Value x, ImportContext &ctx,
                                       const onnx::NodeProto &node) -> Value {
    double alpha = ctx.floatAttr(node, "alpha", 1.0f);
    Type t = x.getType();
    Value scaled = arith::DivFOp::create(b, l, x, floatConst(b, l, t, alpha));
    Value negPart = arith::MinimumFOp::create(b, l, floatConst(b, l, t, 0), expMinusOne(b, l, scaled, alpha));
    return arith::AddFOp::create(b, l, arith::MaximumFOp::create(b, l, x, floatConst(b, l, t, 0)), negPart);
  }));
  r.add("HardSigmoid", unaryFloatWithAttrs([](OpBuilder &b, Location l, Value x, ImportContext &ctx,
                                              const onnx::NodeProto &node) -> Value {
    Type t = x.getType();
    double alpha = ctx.floatAttr(node, "alpha", 0.2f), beta = ctx.floatAttr(node, "beta", 0.5f);
    Value v = arith::AddFOp::create(b, l, arith::MulFOp::create(b, l, x, floatConst(b, l, t, alpha)),
                                    floatConst(b, l, t, beta));
    return arith::MaximumFOp::create(b, l, floatConst(b, l, t, 0),
                                     arith::MinimumFOp::create(b, l, v, floatConst(b, l, t, 1)));
  }));
  r.add("HardSwish", unaryFloat([](OpBuilder &b, Location l, Value x) -> Value {
    Type t = x.getType();
    Value v = arith::AddFOp::create(b, l, arith::MulFOp::create(b, l, x, floatConst(b, l, t, 1.0 / 6.0)),
                                    floatConst(b, l, t, 0.5));
    Value hs = arith::MaximumFOp::create(b, l, floatConst(b, l, t, 0),
                                         arith::MinimumFOp::create(b, l, v, floatConst(b, l, t, 1)));
    return arith::MulFOp::create(b, l, x, hs);
  }));
  // BitShift (opset 11, unsigned types only): shifts of width or more give 0.
  r.add("BitShift", [](ImportContext &ctx, const onnx::NodeProto &node) -> LogicalResult {
    auto inputs = tensorInputs(ctx, node);
    if (failed(inputs))
      return failure();
    if (inputs->size() != 2)
      return ctx.fail(node, "expects 2 inputs");
    Type t = elementTypeOf((*inputs)[0]);
    if (!isa<IntegerType>(t) || t.isInteger(1) || elementTypeOf((*inputs)[1]) != t)
      return ctx.unsupported(node, "expects two unsigned integer inputs of the same type");
    std::string direction = ctx.stringAttr(node, "direction", "");
    if (direction != "LEFT" && direction != "RIGHT")
      return ctx.fail(node, "direction must be LEFT or RIGHT");
    bool left = direction == "LEFT";
    unsigned width = t.getIntOrFloatBitWidth();
    auto r = ctx.elementwise(node, *inputs, t, [&](OpBuilder &b, Location l, ValueRange a) -> Value {
      Value shifted = left ? (Value)arith::ShLIOp::create(b, l, a[0], a[1])
                           : (Value)arith::ShRUIOp::create(b, l, a[0], a[1]);
      Value tooFar = arith::CmpIOp::create(b, l, arith::CmpIPredicate::uge, a[1],
                                           arith::ConstantOp::create(b, l, b.getIntegerAttr(t, width)));
      return arith::SelectOp::create(b, l, tooFar, arith::ConstantOp::create(b, l, b.getIntegerAttr(t, 0)),
                                     shifted);
    });
    if (failed(r))
      return failure();
    ctx.setValue(node.output(0), *r);
    return success();
  }, 11);
  // Shrink: x < -lambd ? x + bias : (x > lambd ? x - bias : 0); float inputs.
  r.add("Shrink", unaryFloatWithAttrs([](OpBuilder &b, Location l, Value x, ImportContext &ctx,
                                         const onnx::NodeProto &node) -> Value {
    double lambd = ctx.floatAttr(node, "lambd", 0.5f);
    double bias = ctx.floatAttr(node, "bias", 0.0f);
    Type t = x.getType();
    Value below = arith::CmpFOp::create(b, l, arith::CmpFPredicate::OLT, x, floatConst(b, l, t, -lambd));
    Value above = arith::CmpFOp::create(b, l, arith::CmpFPredicate::OGT, x, floatConst(b, l, t, lambd));
    Value plus = arith::AddFOp::create(b, l, x, floatConst(b, l, t, bias));
    Value minus = arith::SubFOp::create(b, l, x, floatConst(b, l, t, bias));
    Value inner = arith::SelectOp::create(b, l, above, minus, floatConst(b, l, t, 0));
    return arith::SelectOp::create(b, l, below, plus, inner);
  }), 9);
  r.add("ThresholdedRelu", unaryFloatWithAttrs([](OpBuilder &b, Location l, Value x, ImportContext &ctx,
                                                  const onnx::NodeProto &node) -> Value {
    double alpha = ctx.floatAttr(node, "alpha", 1.0f);
    Value gt = arith::CmpFOp::create(b, l, arith::CmpFPredicate::OGT, x, floatConst(b, l, x.getType(), alpha));
    return arith::SelectOp::create(b, l, gt, x, floatConst(b, l, x.getType(), 0));
  }));
  r.add("Softplus", unaryFloat([](OpBuilder &b, Location l, Value x) -> Value {
    return math::Log1pOp::create(b, l, math::ExpOp::create(b, l, x));
  }));
  r.add("Softsign", unaryFloat([](OpBuilder &b, Location l, Value x) -> Value {
    Value denom = arith::AddFOp::create(b, l, floatConst(b, l, x.getType(), 1), math::AbsFOp::create(b, l, x));
    return arith::DivFOp::create(b, l, x, denom);
  }));
  r.add("Sign", unaryFloat([](OpBuilder &b, Location l, Value x) -> Value {
    Type t = x.getType();
    Value zero = floatConst(b, l, t, 0);
    Value pos = arith::CmpFOp::create(b, l, arith::CmpFPredicate::OGT, x, zero);
    Value neg = arith::CmpFOp::create(b, l, arith::CmpFPredicate::OLT, x, zero);
    Value v = arith::SelectOp::create(b, l, neg, floatConst(b, l, t, -1), zero);
    return arith::SelectOp::create(b, l, pos, floatConst(b, l, t, 1), v);
  }));
  r.add("Round", unaryFloat([](OpBuilder &b, Location l, Value x) -> Value { return math::RoundEvenOp::create(b, l, x); }));
  r.add("Tan", unaryFloat([](OpBuilder &b, Location l, Value x) -> Value { return math::TanOp::create(b, l, x); }));
  r.add("Sinh", unaryFloat([](OpBuilder &b, Location l, Value x) -> Value { return math::SinhOp::create(b, l, x); }));
  r.add("Cosh", unaryFloat([](OpBuilder &b, Location l, Value x) -> Value { return math::CoshOp::create(b, l, x); }));
  r.add("Asin", unaryFloat([](OpBuilder &b, Location l, Value x) -> Value { return math::AsinOp::create(b, l, x); }));
  r.add("Acos", unaryFloat([](OpBuilder &b, Location l, Value x) -> Value { return math::AcosOp::create(b, l, x); }));
  r.add("Atan", unaryFloat([](OpBuilder &b, Location l, Value x) -> Value { return math::AtanOp::create(b, l, x); }));
  r.add("Asinh", unaryFloat([](OpBuilder &b, Location l, Value x) -> Value { return math::AsinhOp::create(b, l, x); }));
  r.add("Acosh", unaryFloat([](OpBuilder &b, Location l, Value x) -> Value { return math::AcoshOp::create(b, l, x); }));
  r.add("Atanh", unaryFloat([](OpBuilder &b, Location l, Value x) -> Value { return math::AtanhOp::create(b, l, x); }));
  r.add("IsNaN", floatPredicate([](OpBuilder &b, Location l, Value x, ImportContext &, const onnx::NodeProto &) -> Value {
    return arith::CmpFOp::create(b, l, arith::CmpFPredicate::UNO, x, x);
  }));
  r.add("IsInf", floatPredicate([](OpBuilder &b, Location l, Value x, ImportContext &ctx,
                                   const onnx::NodeProto &node) -> Value {
    bool detectNeg = ctx.intAttr(node, "detect_negative", 1) != 0;
    bool detectPos = ctx.intAttr(node, "detect_positive", 1) != 0;
    const llvm::fltSemantics &sem = cast<FloatType>(x.getType()).getFloatSemantics();
    Value posInf = floatConst(b, l, x.getType(), APFloat::getInf(sem, false).convertToDouble());
    Value negInf = floatConst(b, l, x.getType(), APFloat::getInf(sem, true).convertToDouble());
    Value isPos = arith::CmpFOp::create(b, l, arith::CmpFPredicate::OEQ, x, posInf);
    Value isNeg = arith::CmpFOp::create(b, l, arith::CmpFPredicate::OEQ, x, negInf);
    Value f = arith::ConstantOp::create(b, l, b.getBoolAttr(false));
    return arith::OrIOp::create(b, l, detectPos ? isPos : f, detectNeg ? isNeg : f);
  }));
  r.add("Mod", convertMod);
  r.add("Mean", convertMean);

}

} // namespace turbine::onnx_frontend
