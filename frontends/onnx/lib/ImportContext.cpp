//===- ImportContext.cpp - shared IR-building helpers of the ONNX importer ===//
//
// Value bookkeeping (tensors, constants, symbolic shape tensors), dimension
// memoization so equal dynamic dims share one SSA value, NumPy broadcasting
// elementwise generics, general reshape via expand/collapse, transposes, and
// TensorProto -> DenseElementsAttr conversion.
//===----------------------------------------------------------------------===//
#include "ImportContext.h"

#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/Utils/StructuredOpsUtils.h"

#include <algorithm>

using namespace mlir;

namespace turbine::onnx_frontend {

const OpHandler *OpRegistry::lookup(const std::string &opType, int opset) const {
  auto it = entries.find(opType);
  if (it == entries.end())
    return nullptr;
  for (const OpHandlerEntry &entry : it->second)
    if (opset >= entry.sinceVersion && opset <= entry.untilVersion)
      return &entry.handler;
  return nullptr;
}

ImportContext::ImportContext(MLIRContext &context, std::string origin, int opset)
    : TensorBuilder(context, FileLineColLoc::get(&context, origin, 0, 0)), context(context),
      origin(std::move(origin)), opset(opset) {}

//===--- values -----------------------------------------------------------===//

void ImportContext::setValue(const std::string &name, Value value) {
  values[name] = value;
  runtimeReads.erase(name);
  shapeTensors.erase(name);
  constants.erase(name);
}

void ImportContext::setShapeTensor(const std::string &name, ShapeTensor shape) {
  values.erase(name);
  runtimeReads.erase(name);
  constants.erase(name);
  // A shape tensor whose elements are all constant is just a constant.
  bool allConstant = llvm::all_of(shape.elements, [](const SymDim &d) { return d.isConstant(); });
  if (allConstant) {
    SmallVector<int64_t> shapeDims;
    if (!shape.isScalar)
      shapeDims.push_back(static_cast<int64_t>(shape.elements.size()));
    auto type = RankedTensorType::get(shapeDims, shape.elementType);
    SmallVector<APInt> data;
    unsigned width = shape.elementType.getIntOrFloatBitWidth();
    for (const SymDim &d : shape.elements)
      data.push_back(width == 1 ? APInt(1, d.constant != 0)
                                : APInt(width, static_cast<uint64_t>(d.constant), /*isSigned=*/true));
    constants[name] = DenseElementsAttr::get(type, data);
    return;
  }
  shapeTensors[name] = std::move(shape);
}

void ImportContext::setConstant(const std::string &name, DenseElementsAttr attr) {
  values.erase(name);
  runtimeReads.erase(name);
  shapeTensors.erase(name);
  constants[name] = attr;
}

bool ImportContext::hasValue(const std::string &name) const {
  return values.count(name) || constants.count(name) || shapeTensors.count(name) ||
         sequences.count(name) || optionals.count(name);
}

FailureOr<Value> ImportContext::getTensor(const onnx::NodeProto &node,
                                          const std::string &name) {
  auto it = values.find(name);
  if (it != values.end())
    return it->second;
  auto constIt = constants.find(name);
  if (constIt != constants.end()) {
    Value v = arith::ConstantOp::create(builder, loc, constIt->second);
    values[name] = v; // reuse the materialized constant
    return v;
  }
  auto shapeIt = shapeTensors.find(name);
  if (shapeIt != shapeTensors.end()) {
    Value v = materialize(shapeIt->second);
    values[name] = v;
    return v;
  }
  if (sequences.count(name) || optionals.count(name))
    return fail(node, "input '" + name + "' is " +
                          (sequences.count(name) ? "a sequence" : "an optional") +
                          " where a tensor is expected");
  (void)fail(node, "input '" + name + "' is not produced by any earlier node, "
                   "graph input or initializer");
  return failure();
}

std::optional<DenseElementsAttr> ImportContext::getConstant(const std::string &name) const {
  auto it = constants.find(name);
  if (it == constants.end())
    return std::nullopt;
  return it->second;
}

std::optional<ShapeTensor> ImportContext::getShapeTensor(const std::string &name) const {
  auto it = shapeTensors.find(name);
  if (it != shapeTensors.end())
    return it->second;
  auto constIt = constants.find(name);
  if (constIt == constants.end())
    return std::nullopt;
  DenseElementsAttr attr = constIt->second;
  auto type = attr.getType();
  if (type.getRank() > 1 || !type.getElementType().isInteger() ||
      type.getElementType().getIntOrFloatBitWidth() < 8 || attr.getNumElements() > 64)
    return std::nullopt;
  ShapeTensor shape;
  shape.isScalar = type.getRank() == 0;
  shape.elementType = type.getElementType();
  for (const APInt &v : attr.getValues<APInt>())
    shape.elements.push_back(SymDim::of(v.getSExtValue()));
  return shape;
}

FailureOr<ShapeTensor> ImportContext::getShapeOperand(const onnx::NodeProto &node, int i,
                                                      const std::string &what, bool allowFloat) {
  if (!hasInput(node, i)) {
    (void)fail(node, "missing input " + std::to_string(i) + " (" + what + ")");
    return failure();
  }
  const std::string &name = node.input(i);
  if (std::optional<ShapeTensor> known = getShapeTensor(name))
    return *known;
  if (auto it = runtimeReads.find(name); it != runtimeReads.end())
    return it->second;
  FailureOr<Value> tensor = getTensor(node, name);
  if (failed(tensor))
    return failure();
  auto type = cast<RankedTensorType>(tensor->getType());
  Type et = type.getElementType();
  bool isInt = isa<IntegerType>(et), isFloat = isa<FloatType>(et);
  if (type.getRank() > 1 || !type.hasStaticShape() ||
      type.getNumElements() > kMaxRuntimeShapeElements || !(isInt || (allowFloat && isFloat))) {
    std::string typeText;
    llvm::raw_string_ostream os(typeText);
    os << type;
    (void)unsupported(node, "input '" + name + "' (" + what + ") is read at run time, so it must be " +
                                "a rank-0 or rank-1 " + (allowFloat ? "numeric" : "integer") +
                                " tensor of static length <= " +
                                std::to_string(kMaxRuntimeShapeElements) + "; it is " + typeText);
    return failure();
  }
  Value source = *tensor;
  if (isFloat) {
    // Truncate toward zero in a kernel; the host reads the integers.
    SmallVector<OpFoldResult> sizes = dims(source);
    Value init = empty(sizes, builder.getI64Type());
    int64_t rank = type.getRank();
    SmallVector<AffineMap> maps(2, builder.getMultiDimIdentityMap(rank));
    SmallVector<utils::IteratorType> iterators(rank, utils::IteratorType::parallel);
    source = linalg::GenericOp::create(builder, loc, TypeRange{init.getType()}, ValueRange{source},
                                       ValueRange{init}, maps, iterators,
                                       [&](OpBuilder &b, Location l, ValueRange args) {
                                         Value v = arith::FPToSIOp::create(b, l, b.getI64Type(), args[0]);
                                         linalg::YieldOp::create(b, l, v);
                                       })
                 .getResult(0);
  }
  ShapeTensor shape = readAtRunTime(source);
  runtimeReads[name] = shape;
  return shape;
}

ShapeTensor ImportContext::readAtRunTime(Value tensor) {
  auto type = cast<RankedTensorType>(tensor.getType());
  Type et = type.getElementType();
  ShapeTensor shape;
  shape.isScalar = type.getRank() == 0;
  shape.elementType = et;
  for (int64_t k = 0; k < type.getNumElements(); ++k) {
    SmallVector<Value> indices;
    if (type.getRank() == 1)
      indices.push_back(indexConstant(k));
    Value element = tensor::ExtractOp::create(builder, loc, tensor, indices);
    Value asIndex = et.isInteger(1)
                        ? (Value)arith::IndexCastUIOp::create(builder, loc, builder.getIndexType(), element)
                        : (Value)arith::IndexCastOp::create(builder, loc, builder.getIndexType(), element);
    shape.elements.push_back(SymDim::data(asIndex));
  }
  return shape;
}

//===--- errors -----------------------------------------------------------===//

LogicalResult ImportContext::unsupported(const onnx::NodeProto &node,
                                         const std::string &detail) {
  if (error.empty()) {
    error = "unsupported ONNX op '" + node.op_type() + "' (node '" + node.name() +
            "', opset " + std::to_string(opset) + ", domain '" + node.domain() + "')";
    if (!detail.empty())
      error += ": " + detail;
  }
  return failure();
}

LogicalResult ImportContext::fail(const onnx::NodeProto &node, const std::string &message) {
  if (error.empty())
    error = "ONNX node '" + node.name() + "' (" + node.op_type() + ", opset " +
            std::to_string(opset) + "): " + message;
  return failure();
}

//===--- run-time index arithmetic -----------------------------------------===//

Value ImportContext::compare(arith::CmpIPredicate predicate, OpFoldResult a, OpFoldResult b) {
  return builder.createOrFold<arith::CmpIOp>(loc, predicate, toIndexValue(a), toIndexValue(b));
}

OpFoldResult ImportContext::select(Value condition, OpFoldResult a, OpFoldResult b) {
  if (auto c = getConstantIntValue(condition))
    return *c ? a : b;
  if (toSymDim(a) == toSymDim(b))
    return a;
  return asFoldResult(
      builder.createOrFold<arith::SelectOp>(loc, condition, toIndexValue(a), toIndexValue(b)));
}

Value ImportContext::both(Value a, Value b) {
  return builder.createOrFold<arith::AndIOp>(loc, a, b);
}

Value ImportContext::either(Value a, Value b) {
  return builder.createOrFold<arith::OrIOp>(loc, a, b);
}

Value ImportContext::logicalNot(Value a) {
  return builder.createOrFold<arith::XOrIOp>(
      loc, a, arith::ConstantOp::create(builder, loc, builder.getBoolAttr(true)));
}

OpFoldResult ImportContext::asFoldResult(Value v) {
  if (auto c = v.getDefiningOp<arith::ConstantIndexOp>())
    return builder.getIndexAttr(c.value());
  return v;
}

LogicalResult ImportContext::check(const onnx::NodeProto &node, Value condition,
                                   const std::string &message) {
  if (auto c = getConstantIntValue(condition)) {
    if (*c)
      return success();
    return fail(node, message);
  }
  context.getOrLoadDialect<cf::ControlFlowDialect>();
  cf::AssertOp::create(builder, loc, condition,
                       "ONNX node '" + node.name() + "' (" + node.op_type() + ", opset " +
                           std::to_string(opset) + "): " + message);
  return success();
}

FailureOr<OpFoldResult> ImportContext::runtimeAxis(const onnx::NodeProto &node, const SymDim &axis,
                                                   int64_t rank, const std::string &what) {
  if (axis.isConstant()) {
    std::optional<int64_t> n = normalizeAxis(axis.constant, rank);
    if (!n) {
      (void)fail(node, what + " " + std::to_string(axis.constant) + " is out of range for rank " +
                           std::to_string(rank));
      return failure();
    }
    return OpFoldResult(builder.getIndexAttr(*n));
  }
  OpFoldResult a = axis.value, r = builder.getIndexAttr(rank);
  Value inRange = both(compare(arith::CmpIPredicate::sge, a, builder.getIndexAttr(-rank)),
                       compare(arith::CmpIPredicate::slt, a, r));
  if (failed(check(node, inRange, what + " is out of range [" + std::to_string(-rank) + ", " +
                                      std::to_string(rank) + ")")))
    return failure();
  Value negative = compare(arith::CmpIPredicate::slt, a, builder.getIndexAttr(0));
  return select(negative, indexOp<arith::AddIOp>(a, r), a);
}

FailureOr<SmallVector<OpFoldResult>> ImportContext::distinctAxes(const onnx::NodeProto &node,
                                                                 const ShapeTensor &axes, int64_t rank) {
  SmallVector<OpFoldResult> result;
  for (const SymDim &a : axes.elements) {
    FailureOr<OpFoldResult> n = runtimeAxis(node, a, rank, "axis");
    if (failed(n))
      return failure();
    result.push_back(*n);
  }
  for (size_t j = 0; j < result.size(); ++j)
    for (size_t k = j + 1; k < result.size(); ++k)
      if (failed(check(node, compare(arith::CmpIPredicate::ne, result[j], result[k]),
                       "axes " + std::to_string(j) + " and " + std::to_string(k) +
                           " are the same axis")))
        return failure();
  return result;
}

SmallVector<Value> ImportContext::axisFlags(ArrayRef<OpFoldResult> axes, int64_t rank) {
  SmallVector<Value> flags;
  for (int64_t d = 0; d < rank; ++d) {
    Value hit = arith::ConstantOp::create(builder, loc, builder.getBoolAttr(false));
    for (OpFoldResult a : axes)
      hit = either(hit, compare(arith::CmpIPredicate::eq, a, builder.getIndexAttr(d)));
    flags.push_back(hit);
  }
  return flags;
}

OpFoldResult ImportContext::pick(ArrayRef<OpFoldResult> sizes, OpFoldResult position) {
  if (auto c = getConstantIntValue(position))
    if (*c >= 0 && *c < (int64_t)sizes.size())
      return sizes[*c];
  OpFoldResult result = sizes.empty() ? (OpFoldResult)builder.getIndexAttr(0) : sizes.back();
  for (int64_t k = (int64_t)sizes.size() - 2; k >= 0; --k)
    result = select(compare(arith::CmpIPredicate::eq, position, builder.getIndexAttr(k)), sizes[k],
                    result);
  return result;
}

SmallVector<OpFoldResult> ImportContext::keptSizes(ArrayRef<OpFoldResult> sizes, ArrayRef<Value> drop,
                                                   int64_t count) {
  // position[d] = number of kept dims before d; kept j = the d with
  // !drop[d] and position[d] == j.
  SmallVector<OpFoldResult> result;
  SmallVector<OpFoldResult> position;
  OpFoldResult running = builder.getIndexAttr(0);
  for (size_t d = 0; d < sizes.size(); ++d) {
    position.push_back(running);
    running = select(drop[d], running, indexOp<arith::AddIOp>(running, builder.getIndexAttr(1)));
  }
  for (int64_t j = 0; j < count; ++j) {
    OpFoldResult size = builder.getIndexAttr(1);
    for (int64_t d = (int64_t)sizes.size() - 1; d >= 0; --d) {
      Value isJ = both(logicalNot(drop[d]),
                       compare(arith::CmpIPredicate::eq, position[d], builder.getIndexAttr(j)));
      size = select(isJ, sizes[d], size);
    }
    result.push_back(size);
  }
  return result;
}

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

//===--- broadcasting elementwise ------------------------------------------===//

FailureOr<SmallVector<OpFoldResult>>
ImportContext::broadcastSizes(const onnx::NodeProto &node, ValueRange inputs) {
  Result<SmallVector<OpFoldResult>> sizes = TensorBuilder::broadcastSizes(inputs);
  if (!sizes)
    return fail(node, sizes.message());
  return *sizes;
}

FailureOr<Value> ImportContext::elementwise(const onnx::NodeProto &node, ValueRange inputs,
                                            Type resultElementType, const ScalarBody &body) {
  auto sizes = broadcastSizes(node, inputs);
  if (failed(sizes))
    return failure();
  int64_t rank = sizes->size();
  SmallVector<AffineMap> maps;
  for (Value v : inputs) {
    auto type = cast<RankedTensorType>(v.getType());
    SmallVector<AffineExpr> exprs;
    for (int64_t k = 0; k < type.getRank(); ++k) {
      int64_t d = k + (rank - type.getRank());
      bool broadcastOne = !type.isDynamicDim(k) && type.getDimSize(k) == 1 &&
                          getConstantIntValue((*sizes)[d]) != std::optional<int64_t>(1);
      exprs.push_back(broadcastOne ? builder.getAffineConstantExpr(0)
                                   : builder.getAffineDimExpr(d));
    }
    maps.push_back(AffineMap::get(rank, 0, exprs, &context));
  }
  maps.push_back(builder.getMultiDimIdentityMap(rank));
  Value init = empty(*sizes, resultElementType);
  SmallVector<utils::IteratorType> iterators(rank, utils::IteratorType::parallel);
  auto generic = linalg::GenericOp::create(
      builder, loc, TypeRange{init.getType()}, inputs, ValueRange{init}, maps, iterators,
      [&](OpBuilder &b, Location l, ValueRange args) {
        Value result = body(b, l, args.drop_back());
        linalg::YieldOp::create(b, l, result);
      });
  Value result = generic.getResult(0);
  recordDims(result, *sizes);
  return result;
}

//===--- shape tensors as tensors -----------------------------------------===//

Value ImportContext::materialize(const ShapeTensor &shape) {
  SmallVector<OpFoldResult> sizes;
  if (!shape.isScalar)
    sizes.push_back(builder.getIndexAttr(static_cast<int64_t>(shape.elements.size())));
  Type elementType = shape.elementType;
  bool allConstant = llvm::all_of(shape.elements, [](const SymDim &d) { return d.isConstant(); });
  if (allConstant) {
    SmallVector<int64_t> staticShape;
    if (!shape.isScalar)
      staticShape.push_back(static_cast<int64_t>(shape.elements.size()));
    unsigned width = elementType.getIntOrFloatBitWidth();
    SmallVector<APInt> data;
    for (const SymDim &d : shape.elements)
      data.push_back(width == 1 ? APInt(1, d.constant != 0)
                                : APInt(width, static_cast<uint64_t>(d.constant), true));
    return arith::ConstantOp::create(
        builder, loc, DenseElementsAttr::get(RankedTensorType::get(staticShape, elementType), data));
  }
  // Index values as the element type, selected by position.
  SmallVector<Value> elementValues;
  for (const SymDim &d : shape.elements) {
    Value idx = d.isConstant() ? indexConstant(d.constant) : d.value;
    elementValues.push_back(arith::IndexCastOp::create(builder, loc, elementType, idx));
  }
  Value init = empty(sizes, elementType);
  int64_t rank = sizes.size();
  SmallVector<AffineMap> maps{builder.getMultiDimIdentityMap(rank)};
  SmallVector<utils::IteratorType> iterators(rank, utils::IteratorType::parallel);
  auto generic = linalg::GenericOp::create(
      builder, loc, TypeRange{init.getType()}, ValueRange{}, ValueRange{init}, maps, iterators,
      [&](OpBuilder &b, Location l, ValueRange) {
        Value result = elementValues[0];
        if (rank == 1) {
          Value position = linalg::IndexOp::create(b, l, 0);
          for (size_t k = 1; k < elementValues.size(); ++k) {
            Value kIdx = arith::ConstantIndexOp::create(b, l, k);
            Value isK = arith::CmpIOp::create(b, l, arith::CmpIPredicate::eq, position, kIdx);
            result = arith::SelectOp::create(b, l, isK, elementValues[k], result);
          }
        }
        linalg::YieldOp::create(b, l, result);
      });
  return generic.getResult(0);
}

//===--- attributes -------------------------------------------------------===//

const onnx::AttributeProto *ImportContext::attr(const onnx::NodeProto &node,
                                                const std::string &name) const {
  for (const onnx::AttributeProto &a : node.attribute())
    if (a.name() == name)
      return &a;
  return nullptr;
}

int64_t ImportContext::intAttr(const onnx::NodeProto &node, const std::string &name,
                               int64_t def) const {
  const onnx::AttributeProto *a = attr(node, name);
  return a ? a->i() : def;
}

float ImportContext::floatAttr(const onnx::NodeProto &node, const std::string &name,
                               float def) const {
  const onnx::AttributeProto *a = attr(node, name);
  return a ? a->f() : def;
}

std::string ImportContext::stringAttr(const onnx::NodeProto &node, const std::string &name,
                                      const std::string &def) const {
  const onnx::AttributeProto *a = attr(node, name);
  return a ? a->s() : def;
}

std::optional<std::vector<int64_t>> ImportContext::intsAttr(const onnx::NodeProto &node,
                                                            const std::string &name) const {
  const onnx::AttributeProto *a = attr(node, name);
  if (!a)
    return std::nullopt;
  return std::vector<int64_t>(a->ints().begin(), a->ints().end());
}

//===--- free functions ---------------------------------------------------===//

Type convertElementType(MLIRContext &context, int onnxType) {
  Builder b(&context);
  switch (onnxType) {
  case onnx::TensorProto::FLOAT: return b.getF32Type();
  case onnx::TensorProto::DOUBLE: return b.getF64Type();
  case onnx::TensorProto::FLOAT16: return b.getF16Type();
  case onnx::TensorProto::BFLOAT16: return b.getBF16Type();
  case onnx::TensorProto::INT64: return b.getI64Type();
  case onnx::TensorProto::INT32: return b.getI32Type();
  case onnx::TensorProto::INT16: return b.getIntegerType(16);
  case onnx::TensorProto::INT8: return b.getIntegerType(8);
  // Unsigned types are signless too; ImportContext::isUnsigned tracks them.
  case onnx::TensorProto::UINT8: return b.getIntegerType(8);
  case onnx::TensorProto::UINT16: return b.getIntegerType(16);
  case onnx::TensorProto::UINT32: return b.getIntegerType(32);
  case onnx::TensorProto::UINT64: return b.getIntegerType(64);
  case onnx::TensorProto::BOOL: return b.getI1Type();
  default: return nullptr;
  }
}

FailureOr<DenseElementsAttr> convertTensorProto(MLIRContext &context,
                                                const onnx::TensorProto &tensor,
                                                std::string &error) {
  Type elementType = convertElementType(context, tensor.data_type());
  if (tensor.data_type() == onnx::TensorProto::STRING) {
    error = "tensor '" + tensor.name() + "' holds strings: string constants are not "
            "supported (string tensors may only be graph inputs and results of "
            "StringNormalizer, Cast and CastLike)";
    return failure();
  }
  if (!elementType) {
    error = "tensor '" + tensor.name() + "' has unsupported data type " +
            std::to_string(tensor.data_type());
    return failure();
  }
  if (tensor.data_location() == onnx::TensorProto::EXTERNAL) {
    error = "tensor '" + tensor.name() + "' uses external data, which is not supported";
    return failure();
  }
  SmallVector<int64_t> shape(tensor.dims().begin(), tensor.dims().end());
  int64_t count = 1;
  for (int64_t d : shape) {
    if (d < 0) {
      error = "tensor '" + tensor.name() + "' has a negative dim";
      return failure();
    }
    count *= d;
  }
  auto type = RankedTensorType::get(shape, elementType);
  auto sizeError = [&](int64_t got) {
    error = "tensor '" + tensor.name() + "' holds " + std::to_string(got) +
            " elements but its shape needs " + std::to_string(count);
    return failure();
  };
  if (tensor.has_raw_data()) {
    const std::string &raw = tensor.raw_data();
    if (elementType.isInteger(1)) {
      if (static_cast<int64_t>(raw.size()) != count)
        return sizeError(raw.size());
      SmallVector<bool> bits;
      for (char c : raw)
        bits.push_back(c != 0);
      return DenseElementsAttr::get(type, bits);
    }
    int64_t width = elementType.getIntOrFloatBitWidth() / 8;
    if (static_cast<int64_t>(raw.size()) != count * width)
      return sizeError(raw.size() / std::max<int64_t>(width, 1));
    return DenseElementsAttr::getFromRawBuffer(type, ArrayRef<char>(raw.data(), raw.size()));
  }
  if (elementType.isF32()) {
    if (tensor.float_data_size() != count)
      return sizeError(tensor.float_data_size());
    return DenseElementsAttr::get(
        type, ArrayRef<float>(tensor.float_data().data(), tensor.float_data_size()));
  }
  if (elementType.isF64()) {
    if (tensor.double_data_size() != count)
      return sizeError(tensor.double_data_size());
    return DenseElementsAttr::get(
        type, ArrayRef<double>(tensor.double_data().data(), tensor.double_data_size()));
  }
  if (auto intType = dyn_cast<IntegerType>(elementType)) {
    SmallVector<APInt> data;
    unsigned width = intType.getWidth();
    if (tensor.data_type() == onnx::TensorProto::UINT32 ||
        tensor.data_type() == onnx::TensorProto::UINT64) {
      if (tensor.uint64_data_size() != count)
        return sizeError(tensor.uint64_data_size());
      for (uint64_t v : tensor.uint64_data())
        data.push_back(APInt(width, v, /*isSigned=*/false, /*implicitTrunc=*/true));
    } else if (width == 64) {
      if (tensor.int64_data_size() != count)
        return sizeError(tensor.int64_data_size());
      for (int64_t v : tensor.int64_data())
        data.push_back(APInt(64, static_cast<uint64_t>(v), true));
    } else {
      if (tensor.int32_data_size() != count)
        return sizeError(tensor.int32_data_size());
      for (int32_t v : tensor.int32_data())
        data.push_back(APInt(width, static_cast<uint64_t>(static_cast<int64_t>(v)), true,
                             /*implicitTrunc=*/true));
    }
    return DenseElementsAttr::get(type, data);
  }
  error = "tensor '" + tensor.name() + "' stores its data in a field that is not supported";
  return failure();
}

std::optional<int64_t> normalizeAxis(int64_t axis, int64_t rank) {
  if (axis < -rank || axis >= std::max<int64_t>(rank, 1))
    return std::nullopt;
  return axis < 0 ? axis + rank : axis;
}

} // namespace turbine::onnx_frontend
