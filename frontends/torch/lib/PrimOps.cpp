//===- PrimOps.cpp - prim:: ops, lists, tuples, size arithmetic ----------===//
//
// TorchScript's non-tensor values: constants, lists and (lowered) tuples,
// sizes read from tensors (aten::size/dim/numel/len: symbolic `index` values
// for dynamic dims, so size arithmetic stays symbolic), number <-> tensor
// conversions (prim::NumToTensor, aten::Int, ...), `is None` tests, and the
// exception/warning ops that only reach the importer on a path a folded
// prim::If did not remove. Arithmetic on numbers (aten::add on ints, ...)
// lives with the tensor versions in ElementwiseOps.cpp.
//===----------------------------------------------------------------------===//
#include "ImportContext.h"

using namespace mlir;

namespace turbine::torch_frontend {
namespace {

TValue convertConstant(const TorchConstant &c) {
  using K = TorchConstant::Kind;
  switch (c.kind) {
  case K::None: return TValue::none();
  case K::Bool: return TValue::ofBool(c.intValue != 0);
  case K::Int: return TValue::ofInt(c.intValue);
  case K::Float: return TValue::ofFloat(c.floatValue);
  case K::String:
  case K::Device: {
    TValue t;
    t.kind = c.kind == K::String ? TValue::Kind::String : TValue::Kind::Device;
    t.text = c.text;
    return t;
  }
  case K::IntList: {
    std::vector<TValue> e;
    for (int64_t i : c.ints)
      e.push_back(TValue::ofInt(i));
    return TValue::ofList(std::move(e));
  }
  case K::BoolList: {
    std::vector<TValue> e;
    for (int64_t i : c.ints)
      e.push_back(TValue::ofBool(i != 0));
    return TValue::ofList(std::move(e));
  }
  case K::FloatList: {
    std::vector<TValue> e;
    for (double f : c.floats)
      e.push_back(TValue::ofFloat(f));
    return TValue::ofList(std::move(e));
  }
  case K::Tensor: {
    TValue t;
    t.kind = TValue::Kind::Tensor;
    t.constant = &c;
    return t;
  }
  case K::List: {
    std::vector<TValue> e;
    for (const TorchConstant &element : c.elements) {
      TValue v = convertConstant(element);
      if (v.kind == TValue::Kind::Unset)
        return TValue(); // an element of an unsupported kind
      e.push_back(std::move(v));
    }
    return TValue::ofList(std::move(e));
  }
  case K::Other: break;
  }
  return TValue();
}

LogicalResult convertConstantOp(ImportContext &ctx, const TorchNode &node) {
  TValue v = convertConstant(node.constant);
  if (v.kind == TValue::Kind::Unset) {
    // Name the innermost unsupported kind (a list of objects names the object's).
    const TorchConstant *c = &node.constant;
    while (c->kind == TorchConstant::Kind::List) {
      const TorchConstant *bad = nullptr;
      for (const TorchConstant &e : c->elements)
        if (convertConstant(e).kind == TValue::Kind::Unset)
          bad = &e;
      if (!bad)
        break;
      c = bad;
    }
    return ctx.unsupported(node, "constant of kind '" + c->text + "'" +
                                     (c != &node.constant ? " inside a list constant" : ""));
  }
  ctx.set(node.outputs[0], v);
  return success();
}

LogicalResult convertListConstruct(ImportContext &ctx, const TorchNode &node) {
  std::vector<TValue> elements;
  for (size_t i = 0; i < node.inputs.size(); ++i)
    elements.push_back(ctx.input(node, i));
  ctx.set(node.outputs[0], TValue::ofList(std::move(elements)));
  return success();
}

LogicalResult convertListUnpack(ImportContext &ctx, const TorchNode &node) {
  TValue list = ctx.input(node, 0);
  if (list.kind != TValue::Kind::List)
    return ctx.fail(node, "input is not a list or tuple");
  if (list.elements.size() != node.outputs.size())
    return ctx.fail(node, "unpacks " + std::to_string(node.outputs.size()) + " values from a list of " +
                              std::to_string(list.elements.size()));
  for (size_t i = 0; i < node.outputs.size(); ++i)
    ctx.set(node.outputs[i], list.elements[i]);
  return success();
}

/// aten::append on a list that mutation removal left (e.g. built in an
/// unrolled loop): appends in place, so later readers of the list see it.
LogicalResult convertAppend(ImportContext &ctx, const TorchNode &node) {
  TValue &list = ctx.input(node, 0);
  if (list.kind != TValue::Kind::List)
    return ctx.fail(node, "input is not a list");
  list.elements.push_back(ctx.input(node, 1));
  if (!node.outputs.empty())
    ctx.set(node.outputs[0], list);
  return success();
}

LogicalResult convertGetItem(ImportContext &ctx, const TorchNode &node) {
  TValue list = ctx.input(node, 0);
  if (list.kind != TValue::Kind::List)
    return ctx.unsupported(node, "indexing something other than a list or tuple");
  auto index = ctx.intInput(node, 1);
  if (failed(index))
    return failure();
  int64_t n = list.elements.size(), i = *index < 0 ? *index + n : *index;
  if (i < 0 || i >= n)
    return ctx.fail(node, "index " + std::to_string(*index) + " is out of range for a list of " +
                              std::to_string(n));
  ctx.set(node.outputs[0], list.elements[i]);
  return success();
}

LogicalResult convertLen(ImportContext &ctx, const TorchNode &node) {
  TValue v = ctx.input(node, 0);
  if (v.kind == TValue::Kind::List) {
    ctx.set(node.outputs[0], TValue::ofInt((int64_t)v.elements.size()));
    return success();
  }
  if (v.kind == TValue::Kind::String) {
    // Exact for constants; for aten::format results the length may differ
    // where an argument is not known, but emptiness (`if not msg:`) is exact.
    ctx.set(node.outputs[0], TValue::ofInt((int64_t)v.text.size()));
    return success();
  }
  auto t = ctx.tensorInput(node, 0);
  if (failed(t))
    return failure();
  if (tensorType(*t).getRank() == 0)
    return ctx.fail(node, "len() of a 0-d tensor");
  ctx.set(node.outputs[0], TValue::ofInt(ctx.dimSym(*t, 0)));
  return success();
}

LogicalResult convertSize(ImportContext &ctx, const TorchNode &node) {
  auto t = ctx.tensorInput(node, 0);
  if (failed(t))
    return failure();
  int64_t rank = tensorType(*t).getRank();
  if (node.inputs.size() >= 2 && !ctx.isNoneInput(node, 1)) {
    auto d = ctx.intInput(node, 1);
    if (failed(d))
      return failure();
    auto dim = normalizeDim(*d, rank);
    if (!dim || rank == 0)
      return ctx.fail(node, "dim " + std::to_string(*d) + " is out of range for rank " +
                                std::to_string(rank));
    ctx.set(node.outputs[0], TValue::ofInt(ctx.dimSym(*t, *dim)));
    return success();
  }
  std::vector<TValue> sizes;
  for (int64_t d = 0; d < rank; ++d)
    sizes.push_back(TValue::ofInt(ctx.dimSym(*t, d)));
  ctx.set(node.outputs[0], TValue::ofList(std::move(sizes)));
  return success();
}

LogicalResult convertDim(ImportContext &ctx, const TorchNode &node) {
  auto t = ctx.tensorInput(node, 0);
  if (failed(t))
    return failure();
  ctx.set(node.outputs[0], TValue::ofInt(tensorType(*t).getRank()));
  return success();
}

LogicalResult convertNumel(ImportContext &ctx, const TorchNode &node) {
  auto t = ctx.tensorInput(node, 0);
  if (failed(t))
    return failure();
  int64_t c = 1;
  Value dyn;
  for (int64_t d = 0; d < tensorType(*t).getRank(); ++d) {
    SymInt s = ctx.dimSym(*t, d);
    if (s.isConstant())
      c *= s.constant;
    else
      dyn = dyn ? (Value)arith::MulIOp::create(ctx.builder, ctx.loc, dyn, s.value) : s.value;
  }
  if (dyn && c != 1)
    dyn = arith::MulIOp::create(ctx.builder, ctx.loc, dyn, ctx.indexConstant(c));
  ctx.set(node.outputs[0], TValue::ofInt(dyn ? SymInt::of(dyn) : SymInt::of(c)));
  return success();
}

/// NumToTensor / Int / Float / Bool / ScalarImplicit / item: numbers stay
/// numbers (a size made into a tensor and back keeps its symbolic value).
LogicalResult convertNumberCast(ImportContext &ctx, const TorchNode &node) {
  TValue v = ctx.input(node, 0);
  if (v.kind == TValue::Kind::Tensor && !v.tensor && v.constant) {
    auto s = constantTensorScalar(*v.constant);
    if (!s)
      return ctx.fail(node, "converts a constant tensor with more than one element to a number");
    v = *s;
  }
  if (!v.isScalar())
    return ctx.unsupported(node, "reading a number out of a computed tensor (data-dependent value)");
  const std::string &k = node.kind;
  if (k == "aten::Int" && v.kind == TValue::Kind::Float)
    v = TValue::ofInt((int64_t)v.floatValue);
  else if (k == "aten::Int" && v.kind == TValue::Kind::Bool)
    v = TValue::ofInt((int64_t)v.boolValue);
  else if (k == "aten::Float" && v.kind != TValue::Kind::Float) {
    if (v.kind == TValue::Kind::Int && !v.intValue.isConstant())
      return ctx.unsupported(node, "float() of a dynamic size");
    v = TValue::ofFloat(v.kind == TValue::Kind::Bool ? v.boolValue : (double)v.intValue.constant);
  } else if (k == "aten::Bool" && v.kind != TValue::Kind::Bool) {
    if (v.kind == TValue::Kind::Int && !v.intValue.isConstant())
      return ctx.unsupported(node, "bool() of a dynamic size");
    v = TValue::ofBool(v.kind == TValue::Kind::Float ? v.floatValue != 0 : v.intValue.constant != 0);
  }
  ctx.set(node.outputs[0], v);
  return success();
}

LogicalResult convertIdentity(ImportContext &ctx, const TorchNode &node) {
  ctx.set(node.outputs[0], ctx.input(node, 0));
  return success();
}

LogicalResult convertNoOp(ImportContext &, const TorchNode &) { return success(); }

LogicalResult convertIs(ImportContext &ctx, const TorchNode &node) {
  TValue a = ctx.input(node, 0), b = ctx.input(node, 1);
  bool aNone = a.isNone(), bNone = b.isNone();
  bool same;
  if (aNone || bNone) {
    same = aNone && bNone;
  } else if (a.isTensor() && b.isTensor()) {
    // The same TorchScript value (e.g. self-attention's `query is key`).
    same = a.tensor ? a.tensor == b.tensor : a.constant == b.constant;
  } else {
    return ctx.unsupported(node, "identity comparison of two non-None, non-tensor values");
  }
  ctx.set(node.outputs[0], TValue::ofBool(node.kind == "aten::__is__" ? same : !same));
  return success();
}

/// "and", "or", "xor" or "not" for __and__, bitwise_and, logical_and, ...
std::string logicOp(const std::string &kind) {
  if (kind.find("xor") != std::string::npos)
    return "xor";
  if (kind.find("and") != std::string::npos)
    return "and";
  if (kind.find("or") != std::string::npos)
    return "or";
  return "not";
}

LogicalResult convertBoolLogic(ImportContext &ctx, const TorchNode &node) {
  if (ctx.input(node, 0).isTensor()) {
    // Elementwise logical/bitwise ops on bool or integer tensors.
    const std::string op = logicOp(node.kind);
    std::vector<const TValue *> operands{&ctx.input(node, 0)};
    if (op != "not")
      operands.push_back(&ctx.input(node, 1));
    Type t = ctx.promotedType(operands);
    if (node.kind.rfind("aten::logical_", 0) == 0)
      t = ctx.builder.getI1Type(); // nonzero is true
    else if (!t || isa<FloatType>(t))
      return ctx.unsupported(node, "on floating-point tensors");
    auto r = ctx.elementwise(node, operands, t, t, [&](OpBuilder &b, Location l, ValueRange a) -> Value {
      if (op == "not")
        return arith::XOrIOp::create(b, l, a[0], arith::ConstantOp::create(b, l, b.getIntegerAttr(t, -1)));
      if (op == "and")
        return arith::AndIOp::create(b, l, a[0], a[1]);
      if (op == "or")
        return arith::OrIOp::create(b, l, a[0], a[1]);
      return arith::XOrIOp::create(b, l, a[0], a[1]);
    });
    if (failed(r))
      return failure();
    ctx.setTensor(node, 0, *r);
    return success();
  }
  // Run-time bools (TValue::SymBool): i1 arithmetic on the host.
  bool symbolic = ctx.input(node, 0).kind == TValue::Kind::SymBool ||
                  (node.kind != "aten::__not__" && ctx.input(node, 1).kind == TValue::Kind::SymBool);
  if (symbolic) {
    auto predicate = [&](size_t i) -> FailureOr<Value> {
      const TValue &v = ctx.input(node, i);
      if (v.kind == TValue::Kind::SymBool)
        return v.predicate;
      auto known = ctx.boolInput(node, i);
      if (failed(known))
        return failure();
      return (Value)arith::ConstantOp::create(ctx.builder, ctx.loc, ctx.builder.getBoolAttr(*known));
    };
    auto a = predicate(0);
    if (failed(a))
      return failure();
    Value r;
    if (node.kind == "aten::__not__") {
      Value t = arith::ConstantOp::create(ctx.builder, ctx.loc, ctx.builder.getBoolAttr(true));
      r = arith::XOrIOp::create(ctx.builder, ctx.loc, *a, t);
    } else {
      auto b = predicate(1);
      if (failed(b))
        return failure();
      std::string op = logicOp(node.kind);
      r = op == "and"  ? (Value)arith::AndIOp::create(ctx.builder, ctx.loc, *a, *b)
          : op == "or" ? (Value)arith::OrIOp::create(ctx.builder, ctx.loc, *a, *b)
                       : (Value)arith::XOrIOp::create(ctx.builder, ctx.loc, *a, *b);
    }
    ctx.set(node.outputs[0], TValue::ofSymBool(r));
    return success();
  }
  auto a = ctx.boolInput(node, 0);
  if (failed(a))
    return failure();
  if (node.kind == "aten::__not__") {
    ctx.set(node.outputs[0], TValue::ofBool(!*a));
    return success();
  }
  auto b = ctx.boolInput(node, 1);
  if (failed(b))
    return failure();
  std::string op = logicOp(node.kind);
  bool r = op == "and" ? (*a && *b) : op == "or" ? (*a || *b) : (*a != *b);
  ctx.set(node.outputs[0], TValue::ofBool(r));
  return success();
}

LogicalResult convertRaise(ImportContext &ctx, const TorchNode &node) {
  std::string message;
  TValue m = ctx.input(node, 0);
  if (m.kind == TValue::Kind::String)
    message = m.text;
  return ctx.fail(node, "the model raises an exception on the path taken for these input "
                        "shapes" + (message.empty() ? std::string() : ": " + message));
}

LogicalResult convertUninitialized(ImportContext &ctx, const TorchNode &node) {
  ctx.set(node.outputs[0], TValue());
  return success();
}

/// A number, bool or string argument as Python's str() would print it.
std::string displayText(const TValue &v) {
  switch (v.kind) {
  case TValue::Kind::String:
  case TValue::Kind::Device: return v.text;
  case TValue::Kind::Bool: return v.boolValue ? "True" : "False";
  case TValue::Kind::Int: return v.intValue.isConstant() ? std::to_string(v.intValue.constant) : "?";
  case TValue::Kind::Float: return std::to_string(v.floatValue);
  case TValue::Kind::None: return "None";
  default: return "?";
  }
}

/// aten::format (fills `{}` placeholders) and aten::str: the text is kept so
/// string tests on it (emptiness, equality with constants) fold.
LogicalResult convertString(ImportContext &ctx, const TorchNode &node) {
  TValue t;
  t.kind = TValue::Kind::String;
  if (node.kind == "aten::str") {
    t.text = displayText(ctx.input(node, 0));
  } else {
    const TValue &format = ctx.input(node, 0);
    std::string fmt = format.kind == TValue::Kind::String ? format.text : "";
    size_t arg = 1;
    for (size_t i = 0; i < fmt.size(); ++i) {
      if (fmt.compare(i, 2, "{}") == 0) {
        t.text += arg < node.inputs.size() ? displayText(ctx.input(node, arg++)) : "{}";
        ++i;
      } else {
        t.text += fmt[i];
      }
    }
  }
  ctx.set(node.outputs[0], t);
  return success();
}

/// aten::find(str, substr, start, end) on known strings.
LogicalResult convertFind(ImportContext &ctx, const TorchNode &node) {
  const TValue &str = ctx.input(node, 0), &sub = ctx.input(node, 1);
  if (str.kind != TValue::Kind::String || sub.kind != TValue::Kind::String)
    return ctx.unsupported(node, "on values that are not strings");
  int64_t n = str.text.size(), start = 0, end = n;
  if (node.inputs.size() > 2) {
    auto v = ctx.intInput(node, 2);
    if (failed(v))
      return failure();
    start = *v;
  }
  if (node.inputs.size() > 3) {
    auto v = ctx.intInput(node, 3);
    if (failed(v))
      return failure();
    end = *v;
  }
  if (start < 0) start = std::max<int64_t>(0, start + n);
  if (end < 0) end = std::max<int64_t>(0, end + n);
  end = std::min(end, n);
  int64_t found = -1;
  if (start <= end) {
    size_t pos = str.text.substr(0, end).find(sub.text, start);
    if (pos != std::string::npos)
      found = pos;
  }
  ctx.set(node.outputs[0], TValue::ofInt(found));
  return success();
}

/// all()/any() of a list of bools known at import time.
LogicalResult convertAllAny(ImportContext &ctx, const TorchNode &node) {
  const TValue &list = ctx.input(node, 0);
  if (list.kind != TValue::Kind::List)
    return ctx.unsupported(node, "on a tensor (only on a list of bools)");
  bool isAll = node.kind == "aten::all";
  bool result = isAll;
  for (const TValue &e : list.elements) {
    if (e.kind != TValue::Kind::Bool && !(e.kind == TValue::Kind::Int && e.intValue.isConstant()))
      return ctx.fail(node, "list elements must be bools known at import time");
    bool v = e.kind == TValue::Kind::Bool ? e.boolValue : e.intValue.constant != 0;
    result = isAll ? (result && v) : (result || v);
  }
  ctx.set(node.outputs[0], TValue::ofBool(result));
  return success();
}

LogicalResult convertDtype(ImportContext &ctx, const TorchNode &node) {
  auto t = ctx.tensorInput(node, 0);
  if (failed(t))
    return failure();
  Type et = tensorType(*t).getElementType();
  int64_t code = -1;
  for (int64_t c : {0, 1, 2, 3, 4, 5, 6, 7, 11, 15})
    if (elementTypeOfDtypeCode(ctx.context, c) == et && code < 0)
      code = c;
  ctx.set(node.outputs[0], TValue::ofInt(code));
  return success();
}

LogicalResult convertDevice(ImportContext &ctx, const TorchNode &node) {
  TValue t;
  t.kind = TValue::Kind::Device;
  t.text = "cpu";
  ctx.set(node.outputs[0], t);
  return success();
}

LogicalResult convertRangeLength(ImportContext &ctx, const TorchNode &node) {
  auto lo = ctx.intInput(node, 0), hi = ctx.intInput(node, 1), step = ctx.intInput(node, 2);
  if (failed(lo) || failed(hi) || failed(step))
    return failure();
  if (*step == 0)
    return ctx.fail(node, "range step is zero");
  int64_t n = *step > 0 ? (*hi - *lo + *step - 1) / *step : (*lo - *hi - *step - 1) / -*step;
  ctx.set(node.outputs[0], TValue::ofInt(std::max<int64_t>(n, 0)));
  return success();
}

LogicalResult convertDeriveIndex(ImportContext &ctx, const TorchNode &node) {
  auto index = ctx.intInput(node, 0), start = ctx.intInput(node, 1), step = ctx.intInput(node, 2);
  if (failed(index) || failed(start) || failed(step))
    return failure();
  ctx.set(node.outputs[0], TValue::ofInt(*start + *index * *step));
  return success();
}

LogicalResult convertMinMaxList(ImportContext &ctx, const TorchNode &node) {
  std::vector<int64_t> values;
  if (node.inputs.size() == 1) {
    auto list = ctx.intListInput(node, 0);
    if (failed(list))
      return failure();
    values = *list;
  } else {
    for (size_t i = 0; i < node.inputs.size(); ++i) {
      auto v = ctx.intInput(node, i);
      if (failed(v))
        return failure();
      values.push_back(*v);
    }
  }
  if (values.empty())
    return ctx.fail(node, "min/max of an empty list");
  bool isMin = node.kind == "prim::min";
  int64_t r = values[0];
  for (int64_t v : values)
    r = isMin ? std::min(r, v) : std::max(r, v);
  ctx.set(node.outputs[0], TValue::ofInt(r));
  return success();
}

/// Queries about the execution context, answered for inference on the CPU:
/// no autocast, no grad, no nested/sparse/CUDA tensors, no grad required.
LogicalResult convertFalse(ImportContext &ctx, const TorchNode &node) {
  ctx.set(node.outputs[0], TValue::ofBool(false));
  return success();
}

LogicalResult convertIsFloatingPoint(ImportContext &ctx, const TorchNode &node) {
  auto t = ctx.tensorInput(node, 0);
  if (failed(t))
    return failure();
  ctx.set(node.outputs[0], TValue::ofBool(isa<FloatType>(tensorType(*t).getElementType())));
  return success();
}

LogicalResult convertGetAttr(ImportContext &ctx, const TorchNode &node) {
  return ctx.unsupported(node, "an attribute read that freezing did not resolve (is the module "
                               "mutating its own attributes in forward?)");
}

} // namespace

/// Reads a rank-0 (or one-element) constant tensor as a number.
std::optional<TValue> constantTensorScalar(const TorchConstant &c) {
  int64_t count = 1;
  for (int64_t d : c.shape)
    count *= d;
  if (count != 1 || c.data.empty())
    return std::nullopt;
  const char *p = c.data.data();
  switch (c.dtype) {
  case TorchDType::f32: return TValue::ofFloat(*reinterpret_cast<const float *>(p));
  case TorchDType::f64: return TValue::ofFloat(*reinterpret_cast<const double *>(p));
  case TorchDType::i64: return TValue::ofInt(*reinterpret_cast<const int64_t *>(p));
  case TorchDType::i32: return TValue::ofInt((int64_t)*reinterpret_cast<const int32_t *>(p));
  case TorchDType::i1: return TValue::ofBool(*p != 0);
  default: return std::nullopt;
  }
}

void registerPrimOps(OpRegistry &r) {
  r.add("prim::Constant", convertConstantOp);
  r.add("prim::ListConstruct", convertListConstruct);
  r.add("prim::TupleConstruct", convertListConstruct);
  r.add("prim::ListUnpack", convertListUnpack);
  r.add("prim::TupleUnpack", convertListUnpack);
  r.add("aten::__getitem__", convertGetItem);
  r.add("prim::TupleIndex", convertGetItem);
  r.add("aten::list", convertIdentity);
  r.add("aten::append", convertAppend);
  r.add("aten::len", convertLen);
  r.add("aten::size", convertSize);
  r.add("aten::dim", convertDim);
  r.add("aten::numel", convertNumel);
  for (const char *k : {"prim::NumToTensor", "aten::Int", "aten::Float", "aten::Bool",
                        "aten::ScalarImplicit", "aten::item", "aten::IntImplicit",
                        "aten::FloatImplicit"})
    r.add(k, convertNumberCast);
  r.add("prim::unchecked_cast", convertIdentity);
  r.add("aten::__is__", convertIs);
  r.add("aten::__isnot__", convertIs);
  for (const char *k : {"aten::__not__", "aten::__and__", "aten::__or__", "aten::__xor__",
                        "aten::bitwise_and", "aten::bitwise_or", "aten::bitwise_xor",
                        "aten::logical_and", "aten::logical_or", "aten::logical_xor"})
    r.add(k, convertBoolLogic);
  r.add("prim::RaiseException", convertRaise);
  r.add("aten::warn", convertNoOp);
  r.add("prim::Print", convertNoOp);
  r.add("prim::Uninitialized", convertUninitialized);
  r.add("aten::format", convertString);
  r.add("aten::str", convertString);
  r.add("prim::dtype", convertDtype);
  r.add("aten::find", convertFind);
  r.add("aten::all", convertAllAny);
  r.add("aten::any", convertAllAny);
  r.add("prim::device", convertDevice);
  r.add("aten::__range_length", convertRangeLength);
  r.add("aten::__derive_index", convertDeriveIndex);
  r.add("prim::min", convertMinMaxList);
  r.add("prim::max", convertMinMaxList);
  r.add("prim::GetAttr", convertGetAttr);
  for (const char *k : {"aten::is_autocast_enabled", "aten::is_autocast_cpu_enabled",
                        "aten::is_grad_enabled", "prim::is_nested", "prim::is_cuda",
                        "prim::is_sparse", "prim::requires_grad", "prim::is_mkldnn",
                        "prim::is_quantized", "prim::is_meta", "prim::is_xpu"})
    r.add(k, convertFalse);
  r.add("aten::is_floating_point", convertIsFloatingPoint);
}

} // namespace turbine::torch_frontend
