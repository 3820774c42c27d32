//===- ElementwiseOps.cpp - aten elementwise ops (and number arithmetic) --===//
//
// Binary arithmetic and comparisons with broadcasting and torch's type
// promotion (aten::add with alpha, div with rounding modes, ...), unary
// activations (relu, hardtanh/relu6, sigmoid, silu, gelu exact and tanh,
// hardswish, ...), masked_fill / where, dtype casts (aten::to, type_as), and
// ops that are the identity in eval mode (dropout, contiguous, clone). When
// every operand is a number (sizes in `b * s`, `x.size(0) // 2`), the same op
// kinds compute a number instead: folded when constant, `index` arithmetic
// when a size is dynamic.
//===----------------------------------------------------------------------===//
#include "ImportContext.h"

#include <cmath>

using namespace mlir;

namespace turbine::torch_frontend {
namespace {

bool anyTensor(ImportContext &ctx, const TorchNode &node, size_t count) {
  for (size_t i = 0; i < count && i < node.inputs.size(); ++i)
    if (ctx.input(node, i).isTensor())
      return true;
  return false;
}

Value floatConst(OpBuilder &b, Location l, Type t, double v) {
  return arith::ConstantOp::create(b, l, b.getFloatAttr(t, v));
}

//===--- number arithmetic ------------------------------------------------===//

/// Arithmetic/comparison on numbers (no tensor operand).
LogicalResult scalarBinary(ImportContext &ctx, const TorchNode &node, const std::string &op,
                           TValue a, TValue b) {
  if (!a.isScalar() || !b.isScalar())
    return ctx.fail(node, "operands must be numbers or tensors");
  double alpha = 1.0;
  if ((op == "add" || op == "sub") && node.inputs.size() > 2) {
    auto al = ctx.floatInput(node, 2);
    if (failed(al))
      return failure();
    alpha = *al;
  }
  bool isFloat = a.kind == TValue::Kind::Float || b.kind == TValue::Kind::Float || op == "div";
  auto asInt = [](const TValue &v) -> SymInt {
    return v.kind == TValue::Kind::Bool ? SymInt::of((int64_t)v.boolValue) : v.intValue;
  };
  if (!isFloat) {
    SymInt x = asInt(a), y = asInt(b);
    if (alpha != 1.0) {
      if (!y.isConstant())
        return ctx.unsupported(node, "alpha on a dynamic size");
      y = SymInt::of((int64_t)(y.constant * alpha));
    }
    bool isCompare = op == "eq" || op == "ne" || op == "lt" || op == "le" || op == "gt" || op == "ge";
    if (x.isConstant() && y.isConstant()) {
      int64_t p = x.constant, q = y.constant;
      if (isCompare) {
        bool r = op == "eq" ? p == q : op == "ne" ? p != q : op == "lt" ? p < q
                 : op == "le" ? p <= q : op == "gt" ? p > q : p >= q;
        ctx.set(node.outputs[0], TValue::ofBool(r));
        return success();
      }
      if ((op == "floordiv" || op == "remainder") && q == 0)
        return ctx.fail(node, "integer division by zero");
      int64_t r;
      if (op == "add") r = p + q;
      else if (op == "sub") r = p - q;
      else if (op == "mul") r = p * q;
      else if (op == "floordiv") r = (p / q) - ((p % q != 0) && ((p < 0) != (q < 0)));
      else if (op == "remainder") r = ((p % q) + q) % q;
      else return ctx.unsupported(node, "on integers");
      ctx.set(node.outputs[0], TValue::ofInt(r));
      return success();
    }
    if (isCompare) {
      if (x == y && (op == "eq" || op == "le" || op == "ge" || op == "ne")) {
        ctx.set(node.outputs[0], TValue::ofBool(op != "ne"));
        return success();
      }
      // Known at run time only (an int argument such as a position): an i1
      // on the host, for conditions that guard a raise (cf.assert).
      Value xv = ctx.toIndexValue(ctx.toFoldResult(x)), yv = ctx.toIndexValue(ctx.toFoldResult(y));
      arith::CmpIPredicate pred = op == "eq"   ? arith::CmpIPredicate::eq
                                  : op == "ne" ? arith::CmpIPredicate::ne
                                  : op == "lt" ? arith::CmpIPredicate::slt
                                  : op == "le" ? arith::CmpIPredicate::sle
                                  : op == "gt" ? arith::CmpIPredicate::sgt
                                               : arith::CmpIPredicate::sge;
      ctx.set(node.outputs[0],
              TValue::ofSymBool(arith::CmpIOp::create(ctx.builder, ctx.loc, pred, xv, yv)));
      return success();
    }
    Value xv = ctx.toIndexValue(ctx.toFoldResult(x)), yv = ctx.toIndexValue(ctx.toFoldResult(y));
    OpBuilder &bd = ctx.builder;
    Value r;
    if (op == "add") r = arith::AddIOp::create(bd, ctx.loc, xv, yv);
    else if (op == "sub") r = arith::SubIOp::create(bd, ctx.loc, xv, yv);
    else if (op == "mul") r = arith::MulIOp::create(bd, ctx.loc, xv, yv);
    else if (op == "floordiv") r = arith::FloorDivSIOp::create(bd, ctx.loc, xv, yv);
    else if (op == "remainder") r = arith::RemSIOp::create(bd, ctx.loc, xv, yv);
    else return ctx.unsupported(node, "on a dynamic size");
    ctx.set(node.outputs[0], TValue::ofInt(SymInt::of(r)));
    return success();
  }
  auto asDouble = [&](const TValue &v) -> std::optional<double> {
    if (v.kind == TValue::Kind::Float) return v.floatValue;
    if (v.kind == TValue::Kind::Bool) return (double)v.boolValue;
    if (v.intValue.isConstant()) return (double)v.intValue.constant;
    return std::nullopt;
  };
  auto x = asDouble(a), y = asDouble(b);
  if (!x || !y)
    return ctx.unsupported(node, "float arithmetic on a dynamic size");
  double p = *x, q = *y * alpha;
  if (op == "add") ctx.set(node.outputs[0], TValue::ofFloat(p + q));
  else if (op == "sub") ctx.set(node.outputs[0], TValue::ofFloat(p - q));
  else if (op == "mul") ctx.set(node.outputs[0], TValue::ofFloat(p * q));
  else if (op == "div") ctx.set(node.outputs[0], TValue::ofFloat(p / q));
  else if (op == "floordiv") ctx.set(node.outputs[0], TValue::ofFloat(std::floor(p / q)));
  else if (op == "pow") ctx.set(node.outputs[0], TValue::ofFloat(std::pow(p, q)));
  else if (op == "eq") ctx.set(node.outputs[0], TValue::ofBool(p == q));
  else if (op == "ne") ctx.set(node.outputs[0], TValue::ofBool(p != q));
  else if (op == "lt") ctx.set(node.outputs[0], TValue::ofBool(p < q));
  else if (op == "le") ctx.set(node.outputs[0], TValue::ofBool(p <= q));
  else if (op == "gt") ctx.set(node.outputs[0], TValue::ofBool(p > q));
  else if (op == "ge") ctx.set(node.outputs[0], TValue::ofBool(p >= q));
  else return ctx.unsupported(node, "on numbers");
  return success();
}

//===--- tensor arithmetic ------------------------------------------------===//

Value binaryArith(OpBuilder &b, Location l, const std::string &op, Value x, Value y) {
  bool f = isa<FloatType>(x.getType());
  if (op == "add") return f ? (Value)arith::AddFOp::create(b, l, x, y) : (Value)arith::AddIOp::create(b, l, x, y);
  if (op == "sub") return f ? (Value)arith::SubFOp::create(b, l, x, y) : (Value)arith::SubIOp::create(b, l, x, y);
  if (op == "mul") return f ? (Value)arith::MulFOp::create(b, l, x, y) : (Value)arith::MulIOp::create(b, l, x, y);
  if (op == "div") return arith::DivFOp::create(b, l, x, y);
  if (op == "maximum") return f ? (Value)arith::MaximumFOp::create(b, l, x, y) : (Value)arith::MaxSIOp::create(b, l, x, y);
  if (op == "minimum") return f ? (Value)arith::MinimumFOp::create(b, l, x, y) : (Value)arith::MinSIOp::create(b, l, x, y);
  if (op == "pow") return math::PowFOp::create(b, l, x, y);
  if (op == "floordiv") return f ? (Value)math::FloorOp::create(b, l, arith::DivFOp::create(b, l, x, y))
                                 : (Value)arith::FloorDivSIOp::create(b, l, x, y);
  if (op == "remainder") {
    if (!f) {
      Value r = arith::RemSIOp::create(b, l, x, y);
      Value rPlus = arith::RemSIOp::create(b, l, arith::AddIOp::create(b, l, r, y), y);
      return rPlus;
    }
    Value q = math::FloorOp::create(b, l, arith::DivFOp::create(b, l, x, y));
    return arith::SubFOp::create(b, l, x, arith::MulFOp::create(b, l, q, y));
  }
  return nullptr;
}

Value compare(OpBuilder &b, Location l, const std::string &op, Value x, Value y) {
  if (isa<FloatType>(x.getType())) {
    auto p = op == "eq" ? arith::CmpFPredicate::OEQ : op == "ne" ? arith::CmpFPredicate::UNE
             : op == "lt" ? arith::CmpFPredicate::OLT : op == "le" ? arith::CmpFPredicate::OLE
             : op == "gt" ? arith::CmpFPredicate::OGT : arith::CmpFPredicate::OGE;
    return arith::CmpFOp::create(b, l, p, x, y);
  }
  auto p = op == "eq" ? arith::CmpIPredicate::eq : op == "ne" ? arith::CmpIPredicate::ne
           : op == "lt" ? arith::CmpIPredicate::slt : op == "le" ? arith::CmpIPredicate::sle
           : op == "gt" ? arith::CmpIPredicate::sgt : arith::CmpIPredicate::sge;
  return arith::CmpIOp::create(b, l, p, x, y);
}

/// aten::add/sub/mul/div/... and comparisons; `op` names the operation.
OpHandler binary(std::string op) {
  return [op](ImportContext &ctx, const TorchNode &node) -> LogicalResult {
    const TValue &lhs = ctx.input(node, 0), &rhs = ctx.input(node, 1);
    // List concatenation (`a + b` on int lists in scripted code).
    if (op == "add" && lhs.kind == TValue::Kind::List && rhs.kind == TValue::Kind::List) {
      std::vector<TValue> joined = lhs.elements;
      joined.insert(joined.end(), rhs.elements.begin(), rhs.elements.end());
      ctx.set(node.outputs[0], TValue::ofList(std::move(joined)));
      return success();
    }
    // Int list equality (nn.LSTM's `hx.size() != expected_hidden_size`,
    // scripted): equal when every element is the same constant or the same
    // symbolic size; known unequal when a length or a constant differs.
    if ((op == "eq" || op == "ne") && lhs.kind == TValue::Kind::List &&
        rhs.kind == TValue::Kind::List) {
      bool equal = lhs.elements.size() == rhs.elements.size();
      bool unknown = false;
      for (size_t i = 0; equal && i < lhs.elements.size(); ++i) {
        const TValue &x = lhs.elements[i], &y = rhs.elements[i];
        if (x.kind != TValue::Kind::Int || y.kind != TValue::Kind::Int)
          return ctx.unsupported(node, "comparing lists of something other than ints");
        if (x.intValue == y.intValue)
          continue;
        if (x.intValue.isConstant() && y.intValue.isConstant())
          equal = false;
        else
          unknown = true;
      }
      if (equal && unknown)
        return ctx.fail(node, "the comparison depends on a dynamic dim, so its result is not "
                              "known at import time");
      ctx.set(node.outputs[0], TValue::ofBool(op == "eq" ? equal : !equal));
      return success();
    }
    // String / device / None equality (option checks in scripted functionals).
    auto isText = [](const TValue &v) {
      return v.kind == TValue::Kind::String || v.kind == TValue::Kind::Device || v.isNone();
    };
    if ((op == "eq" || op == "ne") && isText(lhs) && isText(rhs)) {
      bool same = lhs.kind == rhs.kind && lhs.text == rhs.text;
      ctx.set(node.outputs[0], TValue::ofBool(op == "eq" ? same : !same));
      return success();
    }
    // Numbers, and 0-d constant tensors next to numbers (traced size
    // arithmetic: NumToTensor(size) // {2}), compute a number.
    auto asNumber = [&](size_t i) -> std::optional<TValue> {
      const TValue &v = ctx.input(node, i);
      if (v.isScalar())
        return v;
      if (v.isTensor() && !v.tensor && v.constant && v.constant->shape.empty())
        return constantTensorScalar(*v.constant);
      return std::nullopt;
    };
    auto n0 = asNumber(0), n1 = asNumber(1);
    if (n0 && n1 && (!ctx.input(node, 0).isTensor() || !ctx.input(node, 1).isTensor()))
      return scalarBinary(ctx, node, op, *n0, *n1);
    if (!anyTensor(ctx, node, 2))
      return scalarBinary(ctx, node, op, ctx.input(node, 0), ctx.input(node, 1));
    std::string mode = op;
    if (op == "div" && node.inputs.size() > 2 && ctx.input(node, 2).kind == TValue::Kind::String) {
      const std::string &rounding = ctx.input(node, 2).text;
      if (rounding == "floor")
        mode = "floordiv";
      else if (rounding == "trunc")
        mode = "truncdiv";
    }
    const TValue *operands[] = {&ctx.input(node, 0), &ctx.input(node, 1)};
    Type promoted = ctx.promotedType(operands);
    if (!promoted)
      return ctx.fail(node, "operands must be tensors or numbers of a supported dtype");
    bool isCompare = op == "eq" || op == "ne" || op == "lt" || op == "le" || op == "gt" || op == "ge";
    Type compute = promoted;
    if ((mode == "div" || op == "pow") && !isa<FloatType>(compute))
      compute = ctx.builder.getF32Type();
    Type result = isCompare ? ctx.builder.getI1Type() : (mode == "truncdiv" || mode == "floordiv") ? promoted : compute;
    double alpha = 1.0;
    if ((op == "add" || op == "sub" || op == "rsub") && node.inputs.size() > 2) {
      auto a = ctx.floatInput(node, 2);
      if (failed(a))
        return failure();
      alpha = *a;
    }
    auto r = ctx.elementwise(node, operands, compute, result,
                             [&](OpBuilder &b, Location l, ValueRange a) -> Value {
      Value x = a[0], y = a[1];
      if (op == "rsub")
        std::swap(x, y);
      if (alpha != 1.0) {
        Value al = isa<FloatType>(compute) ? floatConst(b, l, compute, alpha)
                                           : (Value)arith::ConstantOp::create(b, l, b.getIntegerAttr(compute, (int64_t)alpha));
        y = isa<FloatType>(compute) ? (Value)arith::MulFOp::create(b, l, y, al) : (Value)arith::MulIOp::create(b, l, y, al);
      }
      if (isCompare)
        return compare(b, l, op, x, y);
      if (mode == "truncdiv") {
        if (!isa<FloatType>(compute))
          return arith::DivSIOp::create(b, l, x, y);
        Value q = arith::DivFOp::create(b, l, x, y);
        Value t = math::TruncOp::create(b, l, q);
        return t;
      }
      return binaryArith(b, l, op == "rsub" ? "sub" : mode, x, y);
    });
    if (failed(r))
      return failure();
    ctx.setTensor(node, 0, *r);
    return success();
  };
}

/// Unary float op: `fn(b, l, x)` on the float-converted input.
using UnaryFn = std::function<Value(OpBuilder &, Location, Value)>;
/// The same function on a number known at import time (traced size
/// arithmetic: `1.0 / k.size(-1) ** 0.5` records aten::reciprocal of a
/// prim::NumToTensor).
using NumberFn = std::function<double(double)>;
OpHandler unaryFloat(UnaryFn fn, NumberFn onNumber = nullptr) {
  return [fn, onNumber](ImportContext &ctx, const TorchNode &node) -> LogicalResult {
    const TValue &in = ctx.input(node, 0);
    std::optional<TValue> number;
    if (in.isScalar())
      number = in;
    if (number) {
      // A number in, a number out (floats are import-time constants here).
      if (!onNumber)
        return ctx.unsupported(node, "on a number");
      if (number->kind == TValue::Kind::Int && !number->intValue.isConstant())
        return ctx.unsupported(node, "on a dynamic size (float arithmetic on sizes must be "
                                     "known at import time)");
      double x = number->kind == TValue::Kind::Float  ? number->floatValue
                 : number->kind == TValue::Kind::Bool ? (double)number->boolValue
                                                      : (double)number->intValue.constant;
      ctx.set(node.outputs[0], TValue::ofFloat(onNumber(x)));
      return success();
    }
    if (!in.isTensor())
      return ctx.unsupported(node, "on a number");
    const TValue *operands[] = {&ctx.input(node, 0)};
    Type t = ctx.promotedType(operands);
    if (!t)
      return ctx.fail(node, "input has an unsupported dtype");
    if (!isa<FloatType>(t))
      t = ctx.builder.getF32Type();
    auto r = ctx.elementwise(node, operands, t, t, [&](OpBuilder &b, Location l, ValueRange a) {
      return fn(b, l, a[0]);
    });
    if (failed(r))
      return failure();
    ctx.setTensor(node, 0, *r);
    return success();
  };
}

/// Unary op that keeps the input's dtype (relu on ints, neg, abs, clamp).
OpHandler unarySame(std::function<Value(OpBuilder &, Location, Value, ImportContext &, const TorchNode &)> fn) {
  return [fn](ImportContext &ctx, const TorchNode &node) -> LogicalResult {
    if (!ctx.input(node, 0).isTensor()) {
      if (node.kind == "aten::neg") {
        TValue v = ctx.input(node, 0);
        if (v.kind == TValue::Kind::Float)
          ctx.set(node.outputs[0], TValue::ofFloat(-v.floatValue));
        else if (v.kind == TValue::Kind::Int && v.intValue.isConstant())
          ctx.set(node.outputs[0], TValue::ofInt(-v.intValue.constant));
        else if (v.kind == TValue::Kind::Int)
          ctx.set(node.outputs[0], TValue::ofInt(SymInt::of((Value)arith::SubIOp::create(
                                       ctx.builder, ctx.loc, ctx.indexConstant(0), v.intValue.value))));
        else
          return ctx.unsupported(node, "on this value");
        return success();
      }
      return ctx.unsupported(node, "on a number");
    }
    const TValue *operands[] = {&ctx.input(node, 0)};
    Type t = ctx.promotedType(operands);
    if (!t)
      return ctx.fail(node, "input has an unsupported dtype");
    auto r = ctx.elementwise(node, operands, t, t, [&](OpBuilder &b, Location l, ValueRange a) {
      return fn(b, l, a[0], ctx, node);
    });
    if (failed(r))
      return failure();
    ctx.setTensor(node, 0, *r);
    return success();
  };
}

Value clampValue(OpBuilder &b, Location l, Value x, std::optional<double> lo, std::optional<double> hi) {
  Type t = x.getType();
  bool f = isa<FloatType>(t);
  auto c = [&](double v) -> Value {
    return f ? floatConst(b, l, t, v) : (Value)arith::ConstantOp::create(b, l, b.getIntegerAttr(t, (int64_t)v));
  };
  if (lo)
    x = f ? (Value)arith::MaximumFOp::create(b, l, x, c(*lo)) : (Value)arith::MaxSIOp::create(b, l, x, c(*lo));
  if (hi)
    x = f ? (Value)arith::MinimumFOp::create(b, l, x, c(*hi)) : (Value)arith::MinSIOp::create(b, l, x, c(*hi));
  return x;
}

/// clamp(x, min?, max?), clamp_min, clamp_max, hardtanh(x, lo, hi), relu6.
LogicalResult convertClamp(ImportContext &ctx, const TorchNode &node) {
  std::optional<double> lo, hi;
  const std::string &k = node.kind;
  auto readOpt = [&](size_t i, std::optional<double> &out) -> LogicalResult {
    if (ctx.isNoneInput(node, i))
      return success();
    if (ctx.input(node, i).isTensor())
      return ctx.unsupported(node, "tensor bounds");
    auto v = ctx.floatInput(node, i);
    if (failed(v))
      return failure();
    out = *v;
    return success();
  };
  if (k == "aten::relu6" || k == "aten::relu6_") {
    lo = 0.0;
    hi = 6.0;
  } else if (k.rfind("aten::hardtanh", 0) == 0) {
    lo = -1.0;
    hi = 1.0;
    if (node.inputs.size() > 1 && failed(readOpt(1, lo))) return failure();
    if (node.inputs.size() > 2 && failed(readOpt(2, hi))) return failure();
  } else if (k.rfind("aten::clamp_min", 0) == 0) {
    if (failed(readOpt(1, lo))) return failure();
  } else if (k.rfind("aten::clamp_max", 0) == 0) {
    if (failed(readOpt(1, hi))) return failure();
  } else {
    if (failed(readOpt(1, lo)) || failed(readOpt(2, hi))) return failure();
  }
  return unarySame([lo, hi](OpBuilder &b, Location l, Value x, ImportContext &, const TorchNode &) {
    return clampValue(b, l, x, lo, hi);
  })(ctx, node);
}

Value sigmoidOf(OpBuilder &b, Location l, Value x) {
  Value one = floatConst(b, l, x.getType(), 1.0);
  Value e = math::ExpOp::create(b, l, arith::NegFOp::create(b, l, x));
  return arith::DivFOp::create(b, l, one, arith::AddFOp::create(b, l, one, e));
}

LogicalResult convertGelu(ImportContext &ctx, const TorchNode &node) {
  bool tanhApprox = node.inputs.size() > 1 && ctx.input(node, 1).kind == TValue::Kind::String &&
                    ctx.input(node, 1).text == "tanh";
  return unaryFloat([tanhApprox](OpBuilder &b, Location l, Value x) -> Value {
    Type t = x.getType();
    Value half = floatConst(b, l, t, 0.5), one = floatConst(b, l, t, 1.0);
    Value inner;
    if (tanhApprox) {
      Value x3 = arith::MulFOp::create(b, l, x, arith::MulFOp::create(b, l, x, x));
      Value s = arith::AddFOp::create(b, l, x, arith::MulFOp::create(b, l, floatConst(b, l, t, 0.044715), x3));
      inner = math::TanhOp::create(b, l, arith::MulFOp::create(b, l, floatConst(b, l, t, std::sqrt(2.0 / M_PI)), s));
    } else {
      inner = math::ErfOp::create(b, l, arith::MulFOp::create(b, l, x, floatConst(b, l, t, M_SQRT1_2)));
    }
    return arith::MulFOp::create(b, l, arith::MulFOp::create(b, l, half, x), arith::AddFOp::create(b, l, one, inner));
  })(ctx, node);
}

LogicalResult convertLeakyRelu(ImportContext &ctx, const TorchNode &node) {
  double slope = 0.01;
  if (node.inputs.size() > 1) {
    auto s = ctx.floatInput(node, 1);
    if (failed(s))
      return failure();
    slope = *s;
  }
  return unaryFloat([slope](OpBuilder &b, Location l, Value x) -> Value {
    Value zero = floatConst(b, l, x.getType(), 0.0);
    Value pos = arith::CmpFOp::create(b, l, arith::CmpFPredicate::OGT, x, zero);
    return arith::SelectOp::create(b, l, pos, x, arith::MulFOp::create(b, l, x, floatConst(b, l, x.getType(), slope)));
  })(ctx, node);
}

/// masked_fill(self, mask, value) and where(cond, self, other).
LogicalResult convertWhere(ImportContext &ctx, const TorchNode &node) {
  bool isMaskedFill = node.kind.rfind("aten::masked_fill", 0) == 0;
  const TValue &cond = ctx.input(node, isMaskedFill ? 1 : 0);
  const TValue &onTrue = ctx.input(node, isMaskedFill ? 2 : 1);
  const TValue &onFalse = ctx.input(node, isMaskedFill ? 0 : 2);
  if (!cond.isTensor())
    return ctx.fail(node, "the condition/mask must be a tensor");
  const TValue *valueOperands[] = {&onTrue, &onFalse};
  Type t = isMaskedFill ? ctx.promotedType({&onFalse}) : ctx.promotedType(valueOperands);
  if (!t)
    return ctx.fail(node, "operands have unsupported dtypes");
  size_t order[] = {isMaskedFill ? 1u : 0u, isMaskedFill ? 2u : 1u, isMaskedFill ? 0u : 2u};
  const TValue *operands[] = {&cond, &onTrue, &onFalse};
  SmallVector<Value> tensors;
  SmallVector<int> where; // -1 scalar
  SmallVector<Value> scalars;
  for (size_t i = 0; i < 3; ++i) {
    const TValue *v = operands[i];
    if (v->isTensor()) {
      auto t = ctx.tensorInput(node, order[i]);
      if (failed(t))
        return failure();
      where.push_back(tensors.size());
      tensors.push_back(*t);
    } else {
      where.push_back(-1 - (int)scalars.size());
      scalars.push_back(ctx.scalarValue(*v, t));
    }
  }
  auto g = ctx.elementwiseTensors(node, tensors, t, [&](OpBuilder &b, Location l, ValueRange a) -> Value {
    auto get = [&](int i, Type ty) {
      return where[i] >= 0 ? ImportContext::castScalar(b, l, a[where[i]], ty) : scalars[-1 - where[i]];
    };
    return arith::SelectOp::create(b, l, get(0, b.getI1Type()), get(1, t), get(2, t));
  });
  if (failed(g))
    return failure();
  ctx.setTensor(node, 0, *g);
  return success();
}

LogicalResult convertIdentityOp(ImportContext &ctx, const TorchNode &node) {
  if (!ctx.input(node, 0).isTensor())
    return ctx.fail(node, "input must be a tensor");
  ctx.set(node.outputs[0], ctx.input(node, 0));
  return success();
}

/// Dropout: the identity in eval mode, and in training mode with p = 0
/// (a module traced without .eval() whose dropout rate is 0, as
/// torchvision's ViT has by default).
LogicalResult convertDropout(ImportContext &ctx, const TorchNode &node) {
  auto train = ctx.boolInput(node, 2);
  if (failed(train))
    return failure();
  if (*train) {
    auto p = ctx.floatInput(node, 1);
    if (failed(p))
      return failure();
    if (*p != 0.0)
      return ctx.unsupported(node, "dropout with p = " + std::to_string(*p) +
                                       " in training mode (call model.eval() before saving)");
  }
  return convertIdentityOp(ctx, node);
}

/// aten::to (dtype / device+dtype / other tensor / dtype_layout), type_as.
LogicalResult convertTo(ImportContext &ctx, const TorchNode &node) {
  auto x = ctx.tensorInput(node, 0);
  if (failed(x))
    return failure();
  Type target;
  const TValue &a1 = ctx.input(node, 1);
  if (node.kind == "aten::type_as" || a1.isTensor()) {
    auto other = ctx.tensorInput(node, 1);
    if (failed(other))
      return failure();
    target = tensorType(*other).getElementType();
  } else {
    size_t dtypeIndex = a1.kind == TValue::Kind::Device ? 2 : 1;
    const TValue &d = ctx.input(node, dtypeIndex);
    if (d.isNone() || d.kind == TValue::Kind::Unset) {
      ctx.setTensor(node, 0, *x);
      return success();
    }
    auto code = ctx.intInput(node, dtypeIndex);
    if (failed(code))
      return failure();
    target = elementTypeOfDtypeCode(ctx.context, *code);
    if (!target)
      return ctx.unsupported(node, "conversion to dtype code " + std::to_string(*code));
  }
  ctx.setTensor(node, 0, ctx.castTensor(*x, target));
  return success();
}

LogicalResult convertLogicalNot(ImportContext &ctx, const TorchNode &node) {
  auto x = ctx.tensorInput(node, 0);
  if (failed(x))
    return failure();
  auto r = ctx.elementwiseTensors(node, ValueRange{*x}, ctx.builder.getI1Type(),
                                  [&](OpBuilder &b, Location l, ValueRange a) -> Value {
    Value v = ImportContext::castScalar(b, l, a[0], b.getI1Type());
    return arith::XOrIOp::create(b, l, v, arith::ConstantOp::create(b, l, b.getBoolAttr(true)));
  });
  if (failed(r))
    return failure();
  ctx.setTensor(node, 0, *r);
  return success();
}

} // namespace

void registerElementwiseOps(OpRegistry &r) {
  for (const char *op : {"add", "sub", "mul", "div", "rsub", "floordiv", "remainder", "pow",
                         "maximum", "minimum", "eq", "ne", "lt", "le", "gt", "ge"})
    r.addWithInplace(std::string("aten::") + op, binary(op));
  r.add("aten::floor_divide", binary("floordiv"));
  r.add("aten::true_divide", binary("div"));
  r.add("aten::max.other", binary("maximum"));

  auto cmpZero = [](OpBuilder &b, Location l, Value x, ImportContext &, const TorchNode &) -> Value {
    if (isa<FloatType>(x.getType()))
      return arith::MaximumFOp::create(b, l, x, floatConst(b, l, x.getType(), 0.0));
    return arith::MaxSIOp::create(b, l, x, arith::ConstantOp::create(b, l, b.getIntegerAttr(x.getType(), 0)));
  };
  r.addWithInplace("aten::relu", unarySame(cmpZero));
  r.addWithInplace("aten::neg", unarySame([](OpBuilder &b, Location l, Value x, ImportContext &, const TorchNode &) -> Value {
    if (isa<FloatType>(x.getType()))
      return arith::NegFOp::create(b, l, x);
    return arith::SubIOp::create(b, l, arith::ConstantOp::create(b, l, b.getIntegerAttr(x.getType(), 0)), x);
  }));
  r.addWithInplace("aten::abs", unarySame([](OpBuilder &b, Location l, Value x, ImportContext &, const TorchNode &) -> Value {
    if (isa<FloatType>(x.getType()))
      return math::AbsFOp::create(b, l, x);
    return math::AbsIOp::create(b, l, x);
  }));
  for (const char *k : {"aten::clamp", "aten::clamp_min", "aten::clamp_max", "aten::hardtanh",
                        "aten::relu6", "aten::clip"})
    r.addWithInplace(k, convertClamp);
  r.addWithInplace("aten::sigmoid", unaryFloat(sigmoidOf, [](double x) { return 1.0 / (1.0 + std::exp(-x)); }));
  r.addWithInplace("aten::silu", unaryFloat([](OpBuilder &b, Location l, Value x) -> Value {
    return arith::MulFOp::create(b, l, x, sigmoidOf(b, l, x));
  }));
  r.addWithInplace("aten::hardsigmoid", unaryFloat([](OpBuilder &b, Location l, Value x) -> Value {
    Type t = x.getType();
    Value v = arith::DivFOp::create(b, l, arith::AddFOp::create(b, l, x, floatConst(b, l, t, 3.0)), floatConst(b, l, t, 6.0));
    return clampValue(b, l, v, 0.0, 1.0);
  }));
  r.addWithInplace("aten::hardswish", unaryFloat([](OpBuilder &b, Location l, Value x) -> Value {
    Type t = x.getType();
    Value v = arith::DivFOp::create(b, l, arith::AddFOp::create(b, l, x, floatConst(b, l, t, 3.0)), floatConst(b, l, t, 6.0));
    return arith::MulFOp::create(b, l, x, clampValue(b, l, v, 0.0, 1.0));
  }));
  r.addWithInplace("aten::gelu", convertGelu);
  r.addWithInplace("aten::leaky_relu", convertLeakyRelu);
  r.addWithInplace("aten::tanh", unaryFloat([](OpBuilder &b, Location l, Value x) -> Value { return math::TanhOp::create(b, l, x); }, [](double x) { return std::tanh(x); }));
  r.addWithInplace("aten::exp", unaryFloat([](OpBuilder &b, Location l, Value x) -> Value { return math::ExpOp::create(b, l, x); }, [](double x) { return std::exp(x); }));
  r.addWithInplace("aten::log", unaryFloat([](OpBuilder &b, Location l, Value x) -> Value { return math::LogOp::create(b, l, x); }, [](double x) { return std::log(x); }));
  r.addWithInplace("aten::sqrt", unaryFloat([](OpBuilder &b, Location l, Value x) -> Value { return math::SqrtOp::create(b, l, x); }, [](double x) { return std::sqrt(x); }));
  r.addWithInplace("aten::rsqrt", unaryFloat([](OpBuilder &b, Location l, Value x) -> Value { return math::RsqrtOp::create(b, l, x); }, [](double x) { return 1.0 / std::sqrt(x); }));
  r.addWithInplace("aten::erf", unaryFloat([](OpBuilder &b, Location l, Value x) -> Value { return math::ErfOp::create(b, l, x); }, [](double x) { return std::erf(x); }));
  r.addWithInplace("aten::sin", unaryFloat([](OpBuilder &b, Location l, Value x) -> Value { return math::SinOp::create(b, l, x); }, [](double x) { return std::sin(x); }));
  r.addWithInplace("aten::cos", unaryFloat([](OpBuilder &b, Location l, Value x) -> Value { return math::CosOp::create(b, l, x); }, [](double x) { return std::cos(x); }));
  r.addWithInplace("aten::reciprocal", unaryFloat([](OpBuilder &b, Location l, Value x) -> Value {
    return arith::DivFOp::create(b, l, floatConst(b, l, x.getType(), 1.0), x);
  }, [](double x) { return 1.0 / x; }));
  r.addWithInplace("aten::masked_fill", convertWhere);
  r.add("aten::where", convertWhere);
  r.addWithInplace("aten::logical_not", convertLogicalNot);
  for (const char *k : {"aten::dropout", "aten::feature_dropout", "aten::alpha_dropout",
                        "aten::feature_alpha_dropout"})
    r.addWithInplace(k, convertDropout);
  for (const char *k : {"aten::contiguous", "aten::clone", "aten::detach", "aten::alias"})
    r.add(k, convertIdentityOp);
  r.add("aten::to", convertTo);
  r.add("aten::type_as", convertTo);
}

} // namespace turbine::torch_frontend
