//===- ShapeOps.cpp - ONNX shape ops -------------------------------------===//
//
// Shape, Size, Reshape, Flatten, Unsqueeze/Squeeze, Expand and ConstantOfShape.
// Ops on shape tensors (Shape-derived int64 tensors) are evaluated
// symbolically; ops on data become expand/collapse_shape or a broadcasting
// linalg.generic. Shape inputs that are data (a Reshape target that is a graph
// input, Unsqueeze axes, ...) are read on the host at run time
// (getShapeOperand): their ONNX semantics become index arithmetic, their rules
// run-time checks. Slicing and concatenation: SliceConcatOps.cpp; gathers and
// scatters: GatherScatterOps.cpp; layout changes: LayoutOps.cpp.
//===----------------------------------------------------------------------===//
#include "ImportContext.h"

#include <cmath>
#include <limits>

using namespace mlir;

namespace turbine::onnx_frontend {
namespace {

RankedTensorType tensorType(Value v) { return cast<RankedTensorType>(v.getType()); }

LogicalResult convertShape(ImportContext &ctx, const onnx::NodeProto &node) {
  auto x = ctx.getTensor(node, node.input(0));
  if (failed(x))
    return failure();
  int64_t rank = tensorType(*x).getRank();
  int64_t start = ctx.intAttr(node, "start", 0), end = ctx.intAttr(node, "end", rank);
  if (start < 0)
    start += rank;
  if (end < 0)
    end += rank;
  start = std::clamp<int64_t>(start, 0, rank);
  end = std::clamp<int64_t>(end, 0, rank);
  ShapeTensor shape;
  shape.elementType = ctx.builder.getI64Type();
  for (int64_t i = start; i < end; ++i)
    shape.elements.push_back(ctx.toSymDim(ctx.dim(*x, i)));
  ctx.setShapeTensor(node.output(0), shape);
  return success();
}

/// Output sizes of Reshape from the target shape (0 / -1 semantics).
FailureOr<SmallVector<OpFoldResult>> reshapeSizes(ImportContext &ctx, const onnx::NodeProto &node,
                                                  ArrayRef<SymDim> inputDims,
                                                  const ShapeTensor &target, bool allowZero) {
  SmallVector<SymDim> out;
  int inferIndex = -1;
  for (auto [k, d] : llvm::enumerate(target.elements)) {
    if (d.isConstant() && d.constant == 0 && !allowZero) {
      if (k >= inputDims.size())
        return ctx.fail(node, "shape has a 0 at position " + std::to_string(k) +
                                  " beyond the input rank");
      out.push_back(inputDims[k]);
    } else if (d.isConstant() && d.constant == -1) {
      if (inferIndex >= 0)
        return ctx.fail(node, "shape has more than one -1");
      inferIndex = k;
      out.push_back(SymDim::of(1));
    } else if (d.isConstant() && d.constant < -1) {
      return ctx.fail(node, "shape has a negative size " + std::to_string(d.constant));
    } else {
      out.push_back(d);
    }
  }
  if (inferIndex >= 0) {
    // total / known with matching symbols cancelled.
    int64_t totalConst = 1, knownConst = 1;
    SmallVector<Value> totalSyms, knownSyms;
    for (const SymDim &d : inputDims)
      d.isConstant() ? (void)(totalConst *= d.constant) : totalSyms.push_back(d.value);
    for (auto [k, d] : llvm::enumerate(out))
      if ((int)k != inferIndex)
        d.isConstant() ? (void)(knownConst *= d.constant) : knownSyms.push_back(d.value);
    bool cancelled = true;
    for (Value s : knownSyms) {
      auto it = llvm::find(totalSyms, s);
      if (it == totalSyms.end()) {
        cancelled = false;
        break;
      }
      totalSyms.erase(it);
    }
    if (cancelled && knownConst != 0 && totalConst % knownConst == 0) {
      int64_t c = totalConst / knownConst;
      SmallVector<OpFoldResult> parts{ctx.builder.getIndexAttr(c)};
      for (Value s : totalSyms)
        parts.push_back(s);
      out[inferIndex] = ctx.toSymDim(product(ctx, parts));
    } else {
      SmallVector<OpFoldResult> all, known;
      for (const SymDim &d : inputDims)
        all.push_back(ctx.toFoldResult(d));
      for (auto [k, d] : llvm::enumerate(out))
        if ((int)k != inferIndex)
          known.push_back(ctx.toFoldResult(d));
      Value total = ctx.toIndexValue(product(ctx, all));
      Value knownV = ctx.toIndexValue(product(ctx, known));
      out[inferIndex] = SymDim::of((Value)arith::DivSIOp::create(ctx.builder, ctx.loc, total, knownV));
    }
  }
  SmallVector<OpFoldResult> sizes;
  for (const SymDim &d : out)
    sizes.push_back(ctx.toFoldResult(d));
  return sizes;
}

/// Output sizes of Reshape from a target shape read at run time: 0 (copy the
/// input dim unless allowzero) and -1 (inferred) are applied with index
/// arithmetic, and ONNX's rules (at most one -1, nothing below -1, equal
/// element counts) are checked at run time.
FailureOr<SmallVector<OpFoldResult>> runtimeReshapeSizes(ImportContext &ctx, const onnx::NodeProto &node,
                                                         ArrayRef<OpFoldResult> inputDims,
                                                         const ShapeTensor &target, bool allowZero) {
  using P = arith::CmpIPredicate;
  OpBuilder &b = ctx.builder;
  OpFoldResult zero = b.getIndexAttr(0), one = b.getIndexAttr(1);
  OpFoldResult total = product(ctx, inputDims);
  SmallVector<OpFoldResult> sizes;
  SmallVector<Value> inferred;
  OpFoldResult known = one, inferCount = zero;
  for (auto [k, d] : llvm::enumerate(target.elements)) {
    OpFoldResult v = ctx.toFoldResult(d);
    std::string at = "target shape element " + std::to_string(k);
    if (failed(ctx.check(node, ctx.compare(P::sge, v, b.getIndexAttr(-1)), at + " is below -1")))
      return failure();
    Value isZero = ctx.compare(P::eq, v, zero);
    if (!allowZero) {
      if (k < inputDims.size())
        v = ctx.select(isZero, inputDims[k], v);
      else if (failed(ctx.check(node, ctx.compare(P::ne, v, zero),
                                at + " is 0 (copy the input dim) beyond the input rank " +
                                    std::to_string(inputDims.size()))))
        return failure();
    }
    Value isInferred = ctx.compare(P::eq, v, b.getIndexAttr(-1));
    inferred.push_back(isInferred);
    known = ctx.indexOp<arith::MulIOp>(known, ctx.select(isInferred, one, v));
    inferCount = ctx.indexOp<arith::AddIOp>(inferCount, ctx.select(isInferred, one, zero));
    sizes.push_back(v);
  }
  if (failed(ctx.check(node, ctx.compare(P::sle, inferCount, one), "the target shape has more than one -1")))
    return failure();
  Value knownIsZero = ctx.compare(P::eq, known, zero);
  if (failed(ctx.check(node,
                       ctx.either(ctx.compare(P::eq, inferCount, zero),
                                  ctx.compare(P::ne, known, zero)),
                       "cannot infer the -1 of the target shape: the other sizes multiply to 0")))
    return failure();
  OpFoldResult inferredSize =
      ctx.indexOp<arith::DivSIOp>(total, ctx.select(knownIsZero, one, known));
  for (size_t k = 0; k < sizes.size(); ++k)
    sizes[k] = ctx.select(inferred[k], inferredSize, sizes[k]);
  if (failed(ctx.check(node, ctx.compare(P::eq, product(ctx, sizes), total),
                       "the target shape holds a different number of elements than the input")))
    return failure();
  return sizes;
}

LogicalResult convertReshape(ImportContext &ctx, const onnx::NodeProto &node) {
  if (node.input_size() < 2)
    return ctx.fail(node, "expects 2 inputs");
  auto target = ctx.getShapeOperand(node, 1, "shape");
  if (failed(target))
    return failure();
  bool allowZero = ctx.opset >= 14 && ctx.intAttr(node, "allowzero", 0) != 0;
  if (target->hasRuntimeData()) {
    auto x = ctx.getTensor(node, node.input(0));
    if (failed(x))
      return failure();
    auto sizes = runtimeReshapeSizes(ctx, node, ctx.dims(*x), *target, allowZero);
    if (failed(sizes))
      return failure();
    ctx.setValue(node.output(0), ctx.reshape(*x, *sizes));
    return success();
  }
  // Reshape of a shape tensor stays symbolic.
  if (ctx.isShapeLike(node.input(0)) && target->elements.size() <= 1) {
    ShapeTensor data = *ctx.getShapeTensor(node.input(0));
    data.isScalar = target->elements.empty();
    ctx.setShapeTensor(node.output(0), data);
    return success();
  }
  auto x = ctx.getTensor(node, node.input(0));
  if (failed(x))
    return failure();
  SmallVector<SymDim> inputDims;
  for (OpFoldResult d : ctx.dims(*x))
    inputDims.push_back(ctx.toSymDim(d));
  auto sizes = reshapeSizes(ctx, node, inputDims, *target, allowZero);
  if (failed(sizes))
    return failure();
  ctx.setValue(node.output(0), ctx.reshape(*x, *sizes));
  return success();
}

LogicalResult convertFlatten(ImportContext &ctx, const onnx::NodeProto &node) {
  auto x = ctx.getTensor(node, node.input(0));
  if (failed(x))
    return failure();
  int64_t rank = tensorType(*x).getRank();
  int64_t axis = ctx.intAttr(node, "axis", 1);
  if (axis < 0)
    axis += rank;
  if (axis < 0 || axis > rank)
    return ctx.fail(node, "axis " + std::to_string(axis) + " is out of range");
  SmallVector<OpFoldResult> d = ctx.dims(*x);
  SmallVector<OpFoldResult> sizes{product(ctx, ArrayRef(d).take_front(axis)),
                                  product(ctx, ArrayRef(d).drop_front(axis))};
  ctx.setValue(node.output(0), ctx.reshape(*x, sizes));
  return success();
}

/// Unsqueeze with axes read at run time: which output dims are the new 1s
/// is decided by index arithmetic; the data is a reshape.
LogicalResult runtimeUnsqueeze(ImportContext &ctx, const onnx::NodeProto &node,
                               const ShapeTensor &axesTensor) {
  auto x = ctx.getTensor(node, node.input(0));
  if (failed(x))
    return failure();
  int64_t count = axesTensor.elements.size();
  int64_t outRank = tensorType(*x).getRank() + count;
  auto axes = ctx.distinctAxes(node, axesTensor, outRank);
  if (failed(axes))
    return failure();
  SmallVector<Value> isNew = ctx.axisFlags(*axes, outRank);
  SmallVector<OpFoldResult> inDims = ctx.dims(*x), sizes;
  OpFoldResult one = ctx.builder.getIndexAttr(1), inputPosition = ctx.builder.getIndexAttr(0);
  for (int64_t k = 0; k < outRank; ++k) {
    sizes.push_back(ctx.select(isNew[k], one, ctx.pick(inDims, inputPosition)));
    inputPosition = ctx.select(isNew[k], inputPosition, ctx.indexOp<arith::AddIOp>(inputPosition, one));
  }
  ctx.setValue(node.output(0), ctx.reshape(*x, sizes));
  return success();
}

/// Squeeze with axes read at run time: the kept dims are selected by index
/// arithmetic (each squeezed dim is checked to be 1); the data is a reshape.
LogicalResult runtimeSqueeze(ImportContext &ctx, const onnx::NodeProto &node,
                             const ShapeTensor &axesTensor) {
  auto x = ctx.getTensor(node, node.input(0));
  if (failed(x))
    return failure();
  int64_t rank = tensorType(*x).getRank();
  int64_t count = axesTensor.elements.size();
  if (count > rank)
    return ctx.fail(node, std::to_string(count) + " axes for a rank-" + std::to_string(rank) + " input");
  auto axes = ctx.distinctAxes(node, axesTensor, rank);
  if (failed(axes))
    return failure();
  SmallVector<Value> drop = ctx.axisFlags(*axes, rank);
  SmallVector<OpFoldResult> inDims = ctx.dims(*x);
  for (int64_t d = 0; d < rank; ++d) {
    Value ok = ctx.either(ctx.logicalNot(drop[d]),
                          ctx.compare(arith::CmpIPredicate::eq, inDims[d], ctx.builder.getIndexAttr(1)));
    if (failed(ctx.check(node, ok, "dim " + std::to_string(d) + " is squeezed but its size is not 1")))
      return failure();
  }
  ctx.setValue(node.output(0), ctx.reshape(*x, ctx.keptSizes(inDims, drop, rank - count)));
  return success();
}

LogicalResult convertUnsqueeze(ImportContext &ctx, const onnx::NodeProto &node) {
  auto axesTensor = shapeListFromInputOrAttr(ctx, node, 1, "axes", ctx.opset >= 13);
  if (failed(axesTensor))
    return failure();
  if (!*axesTensor)
    return ctx.fail(node, "missing axes");
  if (!isKnown(*axesTensor)) {
    // A scalar shape value with one axis becomes a 1-element list whatever
    // the (then necessarily 0 or -1) axis is.
    if (ctx.isShapeLike(node.input(0)) && ctx.getShapeTensor(node.input(0))->isScalar &&
        (*axesTensor)->elements.size() == 1) {
      ShapeTensor data = *ctx.getShapeTensor(node.input(0));
      data.isScalar = false;
      ctx.setShapeTensor(node.output(0), data);
      return success();
    }
    return runtimeUnsqueeze(ctx, node, **axesTensor);
  }
  std::optional<std::vector<int64_t>> axes = constantValues(*axesTensor);
  if (ctx.isShapeLike(node.input(0))) {
    ShapeTensor data = *ctx.getShapeTensor(node.input(0));
    if (data.isScalar && axes->size() == 1) {
      data.isScalar = false;
      ctx.setShapeTensor(node.output(0), data);
      return success();
    }
  }
  auto x = ctx.getTensor(node, node.input(0));
  if (failed(x))
    return failure();
  int64_t outRank = tensorType(*x).getRank() + (int64_t)axes->size();
  std::vector<bool> isNew(outRank, false);
  for (int64_t a : *axes) {
    auto n = normalizeAxis(a, outRank);
    if (!n || isNew[*n])
      return ctx.fail(node, "invalid axis " + std::to_string(a));
    isNew[*n] = true;
  }
  SmallVector<OpFoldResult> inDims = ctx.dims(*x), sizes;
  size_t next = 0;
  for (int64_t k = 0; k < outRank; ++k)
    sizes.push_back(isNew[k] ? ctx.builder.getIndexAttr(1) : inDims[next++]);
  ctx.setValue(node.output(0), ctx.reshape(*x, sizes));
  return success();
}

LogicalResult convertSqueeze(ImportContext &ctx, const onnx::NodeProto &node) {
  auto axesTensor = shapeListFromInputOrAttr(ctx, node, 1, "axes", ctx.opset >= 13);
  if (failed(axesTensor))
    return failure();
  if (!isKnown(*axesTensor) &&
      !(ctx.isShapeLike(node.input(0)) && !ctx.getShapeTensor(node.input(0))->isScalar &&
        ctx.getShapeTensor(node.input(0))->elements.size() == 1))
    return runtimeSqueeze(ctx, node, **axesTensor);
  std::optional<std::vector<int64_t>> axes = constantValues(*axesTensor);
  if (ctx.isShapeLike(node.input(0))) {
    ShapeTensor data = *ctx.getShapeTensor(node.input(0));
    if (!data.isScalar && data.elements.size() == 1) {
      data.isScalar = true;
      ctx.setShapeTensor(node.output(0), data);
      return success();
    }
  }
  auto x = ctx.getTensor(node, node.input(0));
  if (failed(x))
    return failure();
  auto type = tensorType(*x);
  int64_t rank = type.getRank();
  std::vector<bool> drop(rank, false);
  if (axes) {
    for (int64_t a : *axes) {
      auto n = normalizeAxis(a, rank);
      if (!n)
        return ctx.fail(node, "invalid axis " + std::to_string(a));
      if (!type.isDynamicDim(*n) && type.getDimSize(*n) != 1)
        return ctx.fail(node, "cannot squeeze dim " + std::to_string(*n) + " of size " +
                                  std::to_string(type.getDimSize(*n)));
      drop[*n] = true;
    }
  } else {
    for (int64_t k = 0; k < rank; ++k)
      drop[k] = !type.isDynamicDim(k) && type.getDimSize(k) == 1;
  }
  SmallVector<OpFoldResult> sizes;
  for (int64_t k = 0; k < rank; ++k)
    if (!drop[k])
      sizes.push_back(ctx.dim(*x, k));
  // A dynamic dim being squeezed is 1 at run time by ONNX's contract: make
  // it static first so the collapse is well formed.
  ctx.setValue(node.output(0), ctx.reshape(*x, sizes));
  return success();
}

/// Broadcasts `input` to `sizes` (NumPy rules; `sizes` already broadcast).
Value broadcastTo(ImportContext &ctx, Value input, ArrayRef<OpFoldResult> sizes) {
  auto type = tensorType(input);
  int64_t rank = sizes.size();
  SmallVector<AffineExpr> exprs;
  for (int64_t k = 0; k < type.getRank(); ++k) {
    int64_t d = k + rank - type.getRank();
    bool one = !type.isDynamicDim(k) && type.getDimSize(k) == 1 &&
               ctx.toSymDim(sizes[d]) != SymDim::of(1);
    exprs.push_back(one ? ctx.builder.getAffineConstantExpr(0) : ctx.builder.getAffineDimExpr(d));
  }
  Value init = ctx.empty(sizes, type.getElementType());
  SmallVector<AffineMap> maps{AffineMap::get(rank, 0, exprs, &ctx.context),
                              ctx.builder.getMultiDimIdentityMap(rank)};
  SmallVector<utils::IteratorType> iterators(rank, utils::IteratorType::parallel);
  auto generic = linalg::GenericOp::create(
      ctx.builder, ctx.loc, TypeRange{init.getType()}, ValueRange{input}, ValueRange{init}, maps,
      iterators, [&](OpBuilder &b, Location l, ValueRange args) {
        linalg::YieldOp::create(b, l, args[0]);
      });
  Value result = generic.getResult(0);
  ctx.recordDims(result, sizes);
  return result;
}

LogicalResult convertExpand(ImportContext &ctx, const onnx::NodeProto &node) {
  if (node.input_size() != 2)
    return ctx.fail(node, "expects 2 inputs");
  auto shape = ctx.getShapeOperand(node, 1, "shape");
  if (failed(shape))
    return failure();
  auto x = ctx.getTensor(node, node.input(0));
  if (failed(x))
    return failure();
  auto type = tensorType(*x);
  int64_t rank = std::max<int64_t>(type.getRank(), shape->elements.size());
  SmallVector<OpFoldResult> sizes;
  using P = arith::CmpIPredicate;
  OpBuilder &b = ctx.builder;
  for (int64_t d = 0; d < rank; ++d) {
    int64_t k = d - (rank - type.getRank());
    int64_t j = d - (rank - (int64_t)shape->elements.size());
    std::optional<SymDim> fromShape;
    if (j >= 0)
      fromShape = shape->elements[j];
    if (fromShape && fromShape->isRuntimeData) {
      // A size read at run time: broadcast with index arithmetic. The
      // generated code reads input dims of static size 1 with index 0 and
      // all others one to one, so a dynamic input dim must equal the result.
      OpFoldResult v = ctx.toFoldResult(*fromShape);
      std::string at = "shape element " + std::to_string(j);
      if (failed(ctx.check(node, ctx.compare(P::sge, v, b.getIndexAttr(0)), at + " is negative")))
        return failure();
      if (k < 0 || (!type.isDynamicDim(k) && type.getDimSize(k) == 1)) {
        sizes.push_back(v);
        continue;
      }
      OpFoldResult in = ctx.dim(*x, k);
      OpFoldResult out = ctx.select(ctx.compare(P::eq, v, b.getIndexAttr(1)), in, v);
      if (failed(ctx.check(node, ctx.compare(P::eq, out, in),
                           at + " does not broadcast with input dim " + std::to_string(k) +
                               (type.isDynamicDim(k) ? " (a dynamic input dim must be 1 only where "
                                                       "the shape says 1)"
                                                     : ""))))
        return failure();
      sizes.push_back(in);
      continue;
    }
    if (k < 0) {
      sizes.push_back(ctx.toFoldResult(*fromShape));
      continue;
    }
    SymDim fromInput = ctx.toSymDim(ctx.dim(*x, k));
    if (!fromShape || (fromShape->isConstant() && fromShape->constant == 1))
      sizes.push_back(ctx.toFoldResult(fromInput));
    else if (fromInput.isConstant() && fromInput.constant == 1)
      sizes.push_back(ctx.toFoldResult(*fromShape));
    else
      sizes.push_back(ctx.toFoldResult(fromInput.isConstant() ? fromInput : *fromShape));
  }
  ctx.setValue(node.output(0), broadcastTo(ctx, *x, sizes));
  return success();
}

LogicalResult convertConstantOfShape(ImportContext &ctx, const onnx::NodeProto &node) {
  auto shape = ctx.getShapeOperand(node, 0, "shape");
  if (failed(shape))
    return failure();
  for (auto [k, d] : llvm::enumerate(shape->elements))
    if (failed(ctx.check(node,
                         ctx.compare(arith::CmpIPredicate::sge, ctx.toFoldResult(d),
                                     ctx.builder.getIndexAttr(0)),
                         "shape element " + std::to_string(k) + " is negative")))
      return failure();
  Attribute fill = ctx.builder.getF32FloatAttr(0);
  Type elementType = ctx.builder.getF32Type();
  if (const onnx::AttributeProto *a = ctx.attr(node, "value")) {
    std::string err;
    auto attr = convertTensorProto(ctx.context, a->t(), err);
    if (failed(attr) || attr->getNumElements() != 1)
      return ctx.unsupported(node, "value must be a one-element tensor");
    elementType = attr->getElementType();
    fill = *attr->getValues<Attribute>().begin();
  }
  SmallVector<OpFoldResult> sizes;
  for (const SymDim &d : shape->elements)
    sizes.push_back(ctx.toFoldResult(d));
  Value scalar = arith::ConstantOp::create(ctx.builder, ctx.loc, cast<TypedAttr>(fill));
  // Small integer results that later feed shapes stay symbolic when static.
  if (isa<IntegerType>(elementType) && !elementType.isInteger(1) && shape->elements.size() == 1 &&
      shape->elements[0].isConstant() && shape->elements[0].constant <= 16) {
    ShapeTensor result;
    result.elementType = elementType;
    int64_t v = cast<IntegerAttr>(fill).getInt();
    result.elements.assign(shape->elements[0].constant, SymDim::of(v));
    ctx.setShapeTensor(node.output(0), result);
    return success();
  }
  ctx.setValue(node.output(0), ctx.filled(sizes, scalar));
  return success();
}

LogicalResult convertSize(ImportContext &ctx, const onnx::NodeProto &node) {
  auto x = ctx.getTensor(node, node.input(0));
  if (failed(x))
    return failure();
  ShapeTensor result;
  result.isScalar = true;
  result.elementType = ctx.builder.getI64Type();
  result.elements.push_back(ctx.toSymDim(product(ctx, ctx.dims(*x))));
  ctx.setShapeTensor(node.output(0), result);
  return success();
}

} // namespace

void registerShapeOps(OpRegistry &r) {
  r.add("Size", convertSize);
  r.add("Shape", convertShape);
  r.add("Reshape", convertReshape, 5);
  r.add("Flatten", convertFlatten);
  r.add("Unsqueeze", convertUnsqueeze);
  r.add("Squeeze", convertSqueeze);
  r.add("Expand", convertExpand);
  r.add("ConstantOfShape", convertConstantOfShape);
}

} // namespace turbine::onnx_frontend
