//===- ImportContext.cpp - shared IR-building helpers of the Torch importer ===//
//
// Value bookkeeping (TValue per TorchScript value, lazily materialized tensor
// constants), error formatting with schema and source location, torch type
// promotion, broadcasting elementwise generics. Dims, reshape, transpose and
// reductions come from frontends/common (TensorBuilder), shared with ONNX.
//===----------------------------------------------------------------------===//
#include "ImportContext.h"

#include "mlir/Dialect/Utils/StaticValueUtils.h"

#include <algorithm>

using namespace mlir;

namespace turbine::torch_frontend {

ImportContext::ImportContext(MLIRContext &context, const TorchGraph &graph, std::string origin)
    : TensorBuilder(context, FileLineColLoc::get(&context, origin, 0, 0)), context(context),
      graph(graph), origin(std::move(origin)) {}

//===--- values -----------------------------------------------------------===//

TValue &ImportContext::input(const TorchNode &node, size_t i) {
  static TValue unset;
  if (i >= node.inputs.size()) {
    unset = TValue();
    return unset;
  }
  return values[node.inputs[i]];
}

static std::string inputName(ImportContext &ctx, const TorchNode &node, size_t i) {
  if (i >= node.inputs.size())
    return "input " + std::to_string(i) + " (missing)";
  return "input " + std::to_string(i) + " (%" + ctx.graph.values[node.inputs[i]].debugName + ")";
}

Value ImportContext::materializeConstant(const TorchConstant &c) {
  Type et = elementTypeOf(context, c.dtype);
  if (!et)
    return nullptr;
  auto type = RankedTensorType::get(c.shape, et);
  DenseElementsAttr attr;
  if (et.isInteger(1)) {
    SmallVector<bool> bits;
    for (char b : c.data)
      bits.push_back(b != 0);
    attr = DenseElementsAttr::get(type, bits);
  } else {
    attr = DenseElementsAttr::getFromRawBuffer(type, ArrayRef<char>(c.data.data(), c.data.size()));
  }
  auto op = arith::ConstantOp::create(builder, loc, attr);
  nameParameter(op, c.name);
  return op;
}

void ImportContext::nameParameter(arith::ConstantOp op, const std::string &name) {
  if (!name.empty())
    op->setAttr("turbine.param_name", builder.getStringAttr(name));
}

FailureOr<Value> ImportContext::tensorInput(const TorchNode &node, size_t i) {
  TValue &v = input(node, i);
  if (v.kind == TValue::Kind::Tensor) {
    if (!v.tensor && v.constant) {
      v.tensor = materializeConstant(*v.constant);
      if (!v.tensor) {
        (void)unsupported(node, "constant tensor of dtype " + v.constant->dtypeName);
        return failure();
      }
    }
    if (v.tensor)
      return v.tensor;
  }
  if (v.isScalar()) {
    Type type = v.kind == TValue::Kind::Float  ? (Type)builder.getF32Type()
                : v.kind == TValue::Kind::Bool ? (Type)builder.getI1Type()
                                               : (Type)builder.getI64Type();
    Value s = scalarValue(v, type);
    return (Value)tensor::FromElementsOp::create(builder, loc, RankedTensorType::get({}, type),
                                                 ValueRange{s});
  }
  (void)fail(node, inputName(*this, node, i) + " must be a tensor");
  return failure();
}

FailureOr<int64_t> ImportContext::intInput(const TorchNode &node, size_t i) {
  TValue &v = input(node, i);
  if ((v.kind == TValue::Kind::Int && v.intValue.isConstant()))
    return v.intValue.constant;
  if (v.kind == TValue::Kind::Bool)
    return (int64_t)v.boolValue;
  (void)fail(node, inputName(*this, node, i) +
                       (v.kind == TValue::Kind::Int ? " must be known at import time (it depends on a dynamic dim)"
                                                    : " must be an int"));
  return failure();
}

FailureOr<double> ImportContext::floatInput(const TorchNode &node, size_t i) {
  TValue &v = input(node, i);
  if (v.kind == TValue::Kind::Float)
    return v.floatValue;
  if (v.kind == TValue::Kind::Int && v.intValue.isConstant())
    return (double)v.intValue.constant;
  if (v.kind == TValue::Kind::Bool)
    return (double)v.boolValue;
  (void)fail(node, inputName(*this, node, i) + " must be a number known at import time");
  return failure();
}

FailureOr<bool> ImportContext::boolInput(const TorchNode &node, size_t i) {
  TValue &v = input(node, i);
  if (v.kind == TValue::Kind::Bool)
    return v.boolValue;
  if (v.kind == TValue::Kind::Int && v.intValue.isConstant())
    return v.intValue.constant != 0;
  (void)fail(node, inputName(*this, node, i) + " must be a bool known at import time");
  return failure();
}

FailureOr<std::vector<SymInt>> ImportContext::symIntListInput(const TorchNode &node, size_t i) {
  TValue &v = input(node, i);
  std::vector<SymInt> out;
  if (v.kind == TValue::Kind::Int) {
    out.push_back(v.intValue);
    return out;
  }
  if (v.kind != TValue::Kind::List) {
    (void)fail(node, inputName(*this, node, i) + " must be a list of ints");
    return failure();
  }
  for (const TValue &e : v.elements) {
    if (e.kind == TValue::Kind::Int)
      out.push_back(e.intValue);
    else if (e.kind == TValue::Kind::Bool)
      out.push_back(SymInt::of((int64_t)e.boolValue));
    else {
      (void)fail(node, inputName(*this, node, i) + " must be a list of ints");
      return failure();
    }
  }
  return out;
}

FailureOr<std::vector<int64_t>> ImportContext::intListInput(const TorchNode &node, size_t i) {
  auto syms = symIntListInput(node, i);
  if (failed(syms))
    return failure();
  std::vector<int64_t> out;
  for (const SymInt &s : *syms) {
    if (!s.isConstant()) {
      (void)fail(node, inputName(*this, node, i) +
                           " must be known at import time (it depends on a dynamic dim)");
      return failure();
    }
    out.push_back(s.constant);
  }
  return out;
}

//===--- errors -----------------------------------------------------------===//

std::string ImportContext::describe(const TorchNode &node) {
  std::string s;
  if (!node.schema.empty())
    s += "\n  schema: " + node.schema;
  if (!node.location.empty()) {
    s += "\n  at: " + node.location;
    if (!node.sourceLine.empty())
      s += ": " + node.sourceLine;
  }
  return s;
}

LogicalResult ImportContext::unsupported(const TorchNode &node, const std::string &detail) {
  if (error.empty())
    error = "unsupported TorchScript op '" + node.kind + "'" +
            (detail.empty() ? std::string() : ": " + detail) + describe(node);
  return failure();
}

LogicalResult ImportContext::fail(const TorchNode &node, const std::string &message) {
  if (error.empty())
    error = "TorchScript op '" + node.kind + "': " + message + describe(node);
  return failure();
}

//===--- IR helpers -------------------------------------------------------===//

Value ImportContext::scalarConstant(Type type, double value) {
  if (auto floatType = dyn_cast<FloatType>(type))
    return arith::ConstantOp::create(builder, loc, builder.getFloatAttr(floatType, value));
  if (type.isIndex())
    return indexConstant(static_cast<int64_t>(value));
  if (type.isInteger(1))
    return arith::ConstantOp::create(builder, loc, builder.getBoolAttr(value != 0));
  return arith::ConstantOp::create(builder, loc,
                                   builder.getIntegerAttr(type, static_cast<int64_t>(value)));
}

Value ImportContext::castScalar(OpBuilder &b, Location l, Value v, Type type) {
  Type from = v.getType();
  if (from == type)
    return v;
  if (from.isIndex()) {
    v = arith::IndexCastOp::create(b, l, b.getI64Type(), v);
    from = v.getType();
    if (from == type)
      return v;
  }
  if (type.isIndex())
    return arith::IndexCastOp::create(b, l, type, castScalar(b, l, v, b.getI64Type()));
  bool fromFloat = isa<FloatType>(from), toFloat = isa<FloatType>(type);
  if (fromFloat && toFloat)
    return from.getIntOrFloatBitWidth() < type.getIntOrFloatBitWidth()
               ? (Value)arith::ExtFOp::create(b, l, type, v)
               : (Value)arith::TruncFOp::create(b, l, type, v);
  if (!fromFloat && toFloat)
    return from.isInteger(1) ? (Value)arith::UIToFPOp::create(b, l, type, v)
                             : (Value)arith::SIToFPOp::create(b, l, type, v);
  if (fromFloat && !toFloat) {
    if (type.isInteger(1)) {
      Value zero = arith::ConstantOp::create(b, l, b.getFloatAttr(from, 0.0));
      return arith::CmpFOp::create(b, l, arith::CmpFPredicate::UNE, v, zero);
    }
    return arith::FPToSIOp::create(b, l, type, v);
  }
  unsigned fw = from.getIntOrFloatBitWidth(), tw = type.getIntOrFloatBitWidth();
  if (tw == 1) {
    Value zero = arith::ConstantOp::create(b, l, b.getIntegerAttr(from, 0));
    return arith::CmpIOp::create(b, l, arith::CmpIPredicate::ne, v, zero);
  }
  if (fw < tw)
    return fw == 1 ? (Value)arith::ExtUIOp::create(b, l, type, v)
                   : (Value)arith::ExtSIOp::create(b, l, type, v);
  return arith::TruncIOp::create(b, l, type, v);
}

Value ImportContext::scalarValue(const TValue &v, Type type) {
  switch (v.kind) {
  case TValue::Kind::Float: return scalarConstant(type, v.floatValue);
  case TValue::Kind::Bool: return scalarConstant(type, v.boolValue ? 1.0 : 0.0);
  case TValue::Kind::Int:
    if (v.intValue.isConstant()) {
      if (isa<FloatType>(type))
        return scalarConstant(type, (double)v.intValue.constant);
      if (type.isIndex())
        return indexConstant(v.intValue.constant);
      return arith::ConstantOp::create(builder, loc,
                                       builder.getIntegerAttr(type, v.intValue.constant));
    }
    return castScalar(builder, loc, v.intValue.value, type);
  default: return nullptr;
  }
}

namespace {
/// 0 bool, 1 int, 2 float.
int category(Type t) {
  if (isa<FloatType>(t))
    return 2;
  return t.isInteger(1) ? 0 : 1;
}
Type wider(Type a, Type b) {
  if (!a)
    return b;
  if (category(a) != category(b))
    return category(a) > category(b) ? a : b;
  return a.getIntOrFloatBitWidth() >= b.getIntOrFloatBitWidth() ? a : b;
}
} // namespace

Type ImportContext::promotedType(ArrayRef<const TValue *> operands) {
  Type dimType, zeroDimType;
  int scalarCategory = -1;
  for (const TValue *v : operands) {
    if (v->kind == TValue::Kind::Tensor) {
      Type et;
      bool zeroDim;
      if (v->tensor) {
        et = tensorType(v->tensor).getElementType();
        zeroDim = tensorType(v->tensor).getRank() == 0;
      } else if (v->constant) {
        et = elementTypeOf(context, v->constant->dtype);
        zeroDim = v->constant->shape.empty();
      } else {
        return nullptr;
      }
      if (!et)
        return nullptr;
      (zeroDim ? zeroDimType : dimType) = wider(zeroDim ? zeroDimType : dimType, et);
    } else if (v->isScalar()) {
      scalarCategory = std::max(scalarCategory, v->kind == TValue::Kind::Float  ? 2
                                                : v->kind == TValue::Kind::Int ? 1
                                                                               : 0);
    } else {
      return nullptr;
    }
  }
  Type result = dimType;
  if (zeroDimType && (!result || category(zeroDimType) > category(result)))
    result = zeroDimType;
  if (scalarCategory >= 0 && (!result || scalarCategory > category(result)))
    result = scalarCategory == 2   ? (Type)builder.getF32Type()
             : scalarCategory == 1 ? (Type)builder.getI64Type()
                                   : (Type)builder.getI1Type();
  return result;
}

FailureOr<SmallVector<OpFoldResult>> ImportContext::broadcastSizes(const TorchNode &node,
                                                                   ValueRange inputs) {
  Result<SmallVector<OpFoldResult>> sizes = TensorBuilder::broadcastSizes(inputs);
  if (!sizes)
    return fail(node, sizes.message());
  return *sizes;
}

FailureOr<Value> ImportContext::elementwiseTensors(const TorchNode &node, ValueRange inputs,
                                                   Type resultType, const ScalarBody &body) {
  auto sizes = broadcastSizes(node, inputs);
  if (failed(sizes))
    return failure();
  int64_t rank = sizes->size();
  SmallVector<AffineMap> maps;
  for (Value v : inputs) {
    auto type = tensorType(v);
    SmallVector<AffineExpr> exprs;
    for (int64_t k = 0; k < type.getRank(); ++k) {
      int64_t d = k + (rank - type.getRank());
      bool broadcastOne = !type.isDynamicDim(k) && type.getDimSize(k) == 1 &&
                          getConstantIntValue((*sizes)[d]) != std::optional<int64_t>(1);
      exprs.push_back(broadcastOne ? builder.getAffineConstantExpr(0) : builder.getAffineDimExpr(d));
    }
    maps.push_back(AffineMap::get(rank, 0, exprs, &context));
  }
  maps.push_back(builder.getMultiDimIdentityMap(rank));
  Value init = empty(*sizes, resultType);
  SmallVector<utils::IteratorType> iterators(rank, utils::IteratorType::parallel);
  auto generic = linalg::GenericOp::create(
      builder, loc, TypeRange{init.getType()}, inputs, ValueRange{init}, maps, iterators,
      [&](OpBuilder &b, Location l, ValueRange args) {
        linalg::YieldOp::create(b, l, body(b, l, args.drop_back()));
      });
  Value result = generic.getResult(0);
  recordDims(result, *sizes);
  return result;
}

FailureOr<Value> ImportContext::elementwise(const TorchNode &node, ArrayRef<const TValue *> operands,
                                            Type computeType, Type resultType,
                                            const ScalarBody &body) {
  if (!computeType)
    computeType = promotedType(operands);
  if (!computeType) {
    (void)fail(node, "operands must be tensors or numbers of a supported dtype");
    return failure();
  }
  if (!resultType)
    resultType = computeType;
  SmallVector<Value> tensors;
  // Position of each operand: >= 0 tensor index, else scalar value index.
  SmallVector<int> tensorIndex;
  SmallVector<Value> scalars;
  for (const TValue *v : operands) {
    if (v->kind == TValue::Kind::Tensor) {
      Value t = v->tensor;
      if (!t) {
        t = materializeConstant(*v->constant);
        const_cast<TValue *>(v)->tensor = t;
      }
      if (!t) {
        (void)unsupported(node, "constant tensor of dtype " + v->constant->dtypeName);
        return failure();
      }
      tensorIndex.push_back(tensors.size());
      tensors.push_back(t);
    } else {
      tensorIndex.push_back(-1 - (int)scalars.size());
      scalars.push_back(scalarValue(*v, computeType));
    }
  }
  if (tensors.empty()) {
    (void)fail(node, "expects at least one tensor operand");
    return failure();
  }
  return elementwiseTensors(node, tensors, resultType,
                            [&](OpBuilder &b, Location l, ValueRange args) {
                              SmallVector<Value> converted;
                              for (int idx : tensorIndex)
                                converted.push_back(idx >= 0 ? castScalar(b, l, args[idx], computeType)
                                                             : scalars[-1 - idx]);
                              return castScalar(b, l, body(b, l, converted), resultType);
                            });
}

Value ImportContext::castTensor(Value input, Type elementType) {
  if (tensorType(input).getElementType() == elementType)
    return input;
  TorchNode none;
  return *elementwiseTensors(none, ValueRange{input}, elementType,
                             [&](OpBuilder &b, Location l, ValueRange a) {
                               return castScalar(b, l, a[0], elementType);
                             });
}

Value ImportContext::broadcastTo(Value input, ArrayRef<OpFoldResult> sizes) {
  auto type = tensorType(input);
  int64_t rank = sizes.size();
  SmallVector<AffineExpr> exprs;
  bool needed = type.getRank() != rank;
  for (int64_t k = 0; k < type.getRank(); ++k) {
    int64_t d = k + rank - type.getRank();
    bool one = !type.isDynamicDim(k) && type.getDimSize(k) == 1 && toSymDim(sizes[d]) != SymInt::of(1);
    needed |= one;
    exprs.push_back(one ? builder.getAffineConstantExpr(0) : builder.getAffineDimExpr(d));
  }
  if (!needed)
    return input;
  Value init = empty(sizes, type.getElementType());
  SmallVector<AffineMap> maps{AffineMap::get(rank, 0, exprs, &context),
                              builder.getMultiDimIdentityMap(rank)};
  SmallVector<utils::IteratorType> iterators(rank, utils::IteratorType::parallel);
  auto g = linalg::GenericOp::create(builder, loc, TypeRange{init.getType()}, ValueRange{input},
                                     ValueRange{init}, maps, iterators,
                                     [](OpBuilder &b, Location l, ValueRange args) {
                                       linalg::YieldOp::create(b, l, args[0]);
                                     });
  recordDims(g.getResult(0), sizes);
  return g.getResult(0);
}

//===--- reductions and free helpers --------------------------------------===//

std::optional<int64_t> normalizeDim(int64_t dim, int64_t rank) {
  int64_t r = std::max<int64_t>(rank, 1);
  if (dim < -r || dim >= r)
    return std::nullopt;
  return dim < 0 ? dim + r : dim;
}

Type elementTypeOf(MLIRContext &context, TorchDType dtype) {
  Builder b(&context);
  switch (dtype) {
  case TorchDType::f32: return b.getF32Type();
  case TorchDType::f64: return b.getF64Type();
  case TorchDType::f16: return b.getF16Type();
  case TorchDType::bf16: return b.getBF16Type();
  case TorchDType::i64: return b.getI64Type();
  case TorchDType::i32: return b.getI32Type();
  case TorchDType::i16: return b.getIntegerType(16);
  case TorchDType::i8: return b.getIntegerType(8);
  case TorchDType::u8: return b.getIntegerType(8);
  case TorchDType::i1: return b.getI1Type();
  default: return nullptr;
  }
}

Type elementTypeOfDtypeCode(MLIRContext &context, int64_t code) {
  // c10::ScalarType numbering.
  switch (code) {
  case 0: return elementTypeOf(context, TorchDType::u8);
  case 1: return elementTypeOf(context, TorchDType::i8);
  case 2: return elementTypeOf(context, TorchDType::i16);
  case 3: return elementTypeOf(context, TorchDType::i32);
  case 4: return elementTypeOf(context, TorchDType::i64);
  case 5: return elementTypeOf(context, TorchDType::f16);
  case 6: return elementTypeOf(context, TorchDType::f32);
  case 7: return elementTypeOf(context, TorchDType::f64);
  case 11: return elementTypeOf(context, TorchDType::i1);
  case 15: return elementTypeOf(context, TorchDType::bf16);
  default: return nullptr;
  }
}

} // namespace turbine::torch_frontend
