//===- ShapeOps.cpp - ONNX shape and data-movement ops --------------------===//
//
// Shape, Reshape, Flatten, Unsqueeze/Squeeze, Transpose, Concat, Slice, Split,
// Gather, Expand, ConstantOfShape, Range,
// and Compress/NonZero/Unique, whose result sizes are counted by a
// kernel and read by the host. Ops on shape tensors (Shape-derived int64
// tensors) are evaluated symbolically; ops on data become
// expand/collapse_shape, linalg.transpose, or gather-style linalg.generic ops
// whose tensor.extract indices are always in bounds. Shape inputs that are
// data (a Reshape target that is a graph input, Slice starts, Range bounds,
// Pad pads, ...) are read on the host at run time (getShapeOperand): their
// ONNX semantics become index arithmetic, their rules run-time checks.
//===----------------------------------------------------------------------===//
#include "ImportContext.h"

#include <cmath>
#include <limits>

using namespace mlir;

namespace turbine::onnx_frontend {
namespace {

RankedTensorType tensorType(Value v) { return cast<RankedTensorType>(v.getType()); }

/// Product of `sizes` with constants folded.
OpFoldResult product(ImportContext &ctx, ArrayRef<OpFoldResult> sizes) {
  int64_t constant = 1;
  Value dynamic;
  for (OpFoldResult s : sizes) {
    SymDim d = ctx.toSymDim(s);
    if (d.isConstant()) {
      constant *= d.constant;
      continue;
    }
    dynamic = dynamic ? (Value)arith::MulIOp::create(ctx.builder, ctx.loc, dynamic, d.value) : d.value;
  }
  if (!dynamic)
    return ctx.builder.getIndexAttr(constant);
  if (constant == 1)
    return dynamic;
  return (Value)arith::MulIOp::create(ctx.builder, ctx.loc, dynamic, ctx.indexConstant(constant));
}

/// Input `i` (when `fromInput`) or the ints attribute `attrName` as a shape
/// tensor; nullopt when absent. An input not known at import time is read at
/// run time (ImportContext::getShapeOperand).
FailureOr<std::optional<ShapeTensor>>
shapeListFromInputOrAttr(ImportContext &ctx, const onnx::NodeProto &node, int i,
                         const std::string &attrName, bool fromInput) {
  if (!fromInput) {
    std::optional<std::vector<int64_t>> ints = ctx.intsAttr(node, attrName);
    if (!ints)
      return std::optional<ShapeTensor>{};
    ShapeTensor t;
    t.elementType = ctx.builder.getI64Type();
    for (int64_t v : *ints)
      t.elements.push_back(SymDim::of(v));
    return std::optional<ShapeTensor>(t);
  }
  if (!ImportContext::hasInput(node, i))
    return std::optional<ShapeTensor>{};
  FailureOr<ShapeTensor> t = ctx.getShapeOperand(node, i, attrName);
  if (failed(t))
    return failure();
  return std::optional<ShapeTensor>(*t);
}

/// The values of `t` when all are constants; nullopt for an absent list.
std::optional<std::vector<int64_t>> constantValues(const std::optional<ShapeTensor> &t) {
  if (!t)
    return std::nullopt;
  std::vector<int64_t> values;
  for (const SymDim &d : t->elements)
    values.push_back(d.constant);
  return values;
}

bool isKnown(const std::optional<ShapeTensor> &t) { return !t || t->isConstant(); }

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

LogicalResult convertTranspose(ImportContext &ctx, const onnx::NodeProto &node) {
  auto x = ctx.getTensor(node, node.input(0));
  if (failed(x))
    return failure();
  int64_t rank = tensorType(*x).getRank();
  std::vector<int64_t> perm;
  if (auto p = ctx.intsAttr(node, "perm"))
    perm = *p;
  else
    for (int64_t k = rank - 1; k >= 0; --k)
      perm.push_back(k);
  std::vector<int64_t> sorted = perm;
  std::sort(sorted.begin(), sorted.end());
  for (int64_t k = 0; k < (int64_t)sorted.size(); ++k)
    if (sorted[k] != k || (int64_t)sorted.size() != rank)
      return ctx.fail(node, "perm is not a permutation of the input dims");
  bool identity = true;
  for (int64_t k = 0; k < rank; ++k)
    identity &= perm[k] == k;
  ctx.setValue(node.output(0), identity ? *x : ctx.transpose(*x, perm));
  return success();
}

/// Clamps an index value into [0, size-1] (inside a generic body).
Value clampIndex(OpBuilder &b, Location l, Value idx, Value size) {
  Value zero = arith::ConstantIndexOp::create(b, l, 0);
  Value one = arith::ConstantIndexOp::create(b, l, 1);
  Value last = arith::SubIOp::create(b, l, size, one);
  return arith::MinSIOp::create(b, l, arith::MaxSIOp::create(b, l, idx, zero), last);
}

LogicalResult convertConcat(ImportContext &ctx, const onnx::NodeProto &node) {
  int64_t axisAttr = ctx.intAttr(node, "axis", 0);
  bool anyShape = false, allShape = true;
  for (const std::string &in : node.input()) {
    anyShape |= ctx.isShapeLike(in);
    allShape &= ctx.getShapeTensor(in).has_value();
  }
  if (anyShape && allShape) {
    ShapeTensor result;
    for (const std::string &in : node.input()) {
      ShapeTensor part = *ctx.getShapeTensor(in);
      result.elementType = part.elementType;
      result.elements.insert(result.elements.end(), part.elements.begin(), part.elements.end());
    }
    ctx.setShapeTensor(node.output(0), result);
    return success();
  }
  SmallVector<Value> inputs;
  for (const std::string &in : node.input()) {
    auto v = ctx.getTensor(node, in);
    if (failed(v))
      return failure();
    // Empty inputs along the axis contribute nothing.
    inputs.push_back(*v);
  }
  if (inputs.empty())
    return ctx.fail(node, "expects at least one input");
  int64_t rank = tensorType(inputs[0]).getRank();
  auto axisOpt = normalizeAxis(axisAttr, rank);
  if (!axisOpt)
    return ctx.fail(node, "axis out of range");
  int64_t axis = *axisOpt;
  SmallVector<Value> parts;
  for (Value v : inputs) {
    auto t = tensorType(v);
    if (t.getRank() != rank)
      return ctx.fail(node, "inputs have different ranks");
    if (!t.isDynamicDim(axis) && t.getDimSize(axis) == 0)
      continue;
    parts.push_back(v);
  }
  if (parts.empty())
    parts.push_back(inputs[0]);
  if (parts.size() == 1) {
    ctx.setValue(node.output(0), parts[0]);
    return success();
  }
  // Offsets along the axis (top level, captured by the body).
  SmallVector<OpFoldResult> axisSizes;
  for (Value v : parts)
    axisSizes.push_back(ctx.dim(v, axis));
  SmallVector<Value> ends, starts, sizeValues;
  OpFoldResult running = ctx.builder.getIndexAttr(0);
  for (OpFoldResult s : axisSizes) {
    starts.push_back(ctx.toIndexValue(running));
    SymDim a = ctx.toSymDim(running), c = ctx.toSymDim(s);
    if (a.isConstant() && c.isConstant())
      running = ctx.builder.getIndexAttr(a.constant + c.constant);
    else
      running = (Value)arith::AddIOp::create(ctx.builder, ctx.loc, ctx.toIndexValue(running),
                                             ctx.toIndexValue(s));
    ends.push_back(ctx.toIndexValue(running));
    sizeValues.push_back(ctx.toIndexValue(s));
  }
  SmallVector<OpFoldResult> outSizes = ctx.dims(parts[0]);
  outSizes[axis] = running;
  Type elementType = tensorType(parts[0]).getElementType();
  Value init = ctx.empty(outSizes, elementType);
  SmallVector<AffineMap> maps{ctx.builder.getMultiDimIdentityMap(rank)};
  SmallVector<utils::IteratorType> iterators(rank, utils::IteratorType::parallel);
  auto generic = linalg::GenericOp::create(
      ctx.builder, ctx.loc, TypeRange{init.getType()}, ValueRange{}, ValueRange{init}, maps,
      iterators, [&](OpBuilder &b, Location l, ValueRange) {
        SmallVector<Value> idx;
        for (int64_t d = 0; d < rank; ++d)
          idx.push_back(linalg::IndexOp::create(b, l, d));
        Value position = idx[axis];
        Value result;
        for (int64_t k = (int64_t)parts.size() - 1; k >= 0; --k) {
          SmallVector<Value> local = idx;
          local[axis] = clampIndex(b, l, arith::SubIOp::create(b, l, position, starts[k]),
                                   sizeValues[k]);
          Value v = tensor::ExtractOp::create(b, l, parts[k], local);
          if (!result) {
            result = v;
            continue;
          }
          Value inThis = arith::CmpIOp::create(b, l, arith::CmpIPredicate::slt, position, ends[k]);
          result = arith::SelectOp::create(b, l, inThis, v, result);
        }
        linalg::YieldOp::create(b, l, result);
      });
  Value result = generic.getResult(0);
  ctx.recordDims(result, outSizes);
  ctx.setValue(node.output(0), result);
  return success();
}

/// out[i] = in[start + i*step] along each dim (gather-style generic).
Value stridedSlice(ImportContext &ctx, Value input, ArrayRef<OpFoldResult> starts,
                   ArrayRef<OpFoldResult> sizes, ArrayRef<OpFoldResult> steps) {
  int64_t rank = tensorType(input).getRank();
  bool identity = true;
  for (int64_t d = 0; d < rank; ++d) {
    SymDim s = ctx.toSymDim(starts[d]);
    identity &= s.isConstant() && s.constant == 0 && ctx.toSymDim(steps[d]) == SymDim::of(1) &&
                ctx.toSymDim(sizes[d]) == ctx.toSymDim(ctx.dim(input, d));
  }
  if (identity)
    return input;
  SmallVector<Value> startValues, stepValues;
  for (int64_t d = 0; d < rank; ++d) {
    startValues.push_back(ctx.toIndexValue(starts[d]));
    stepValues.push_back(ctx.toIndexValue(steps[d]));
  }
  Value init = ctx.empty(sizes, tensorType(input).getElementType());
  SmallVector<AffineMap> maps{ctx.builder.getMultiDimIdentityMap(rank)};
  SmallVector<utils::IteratorType> iterators(rank, utils::IteratorType::parallel);
  auto generic = linalg::GenericOp::create(
      ctx.builder, ctx.loc, TypeRange{init.getType()}, ValueRange{}, ValueRange{init}, maps,
      iterators, [&](OpBuilder &b, Location l, ValueRange) {
        SmallVector<Value> idx;
        for (int64_t d = 0; d < rank; ++d) {
          Value i = linalg::IndexOp::create(b, l, d);
          if (ctx.toSymDim(steps[d]) != SymDim::of(1))
            i = arith::MulIOp::create(b, l, i, stepValues[d]);
          SymDim s = ctx.toSymDim(starts[d]);
          if (!(s.isConstant() && s.constant == 0))
            i = arith::AddIOp::create(b, l, i, startValues[d]);
          idx.push_back(i);
        }
        linalg::YieldOp::create(b, l, tensor::ExtractOp::create(b, l, input, idx).getResult());
      });
  Value result = generic.getResult(0);
  ctx.recordDims(result, sizes);
  return result;
}

/// Slice with starts/ends/axes/steps that are only known at run time (or
/// negative steps on a dynamic dim): ONNX's normalization and clamping as
/// index arithmetic per (axis, dim) pair, step 0 and repeated axes checked
/// at run time.
LogicalResult runtimeSlice(ImportContext &ctx, const onnx::NodeProto &node, const ShapeTensor &starts,
                           const ShapeTensor &ends, const std::optional<ShapeTensor> &axesTensor,
                           const std::optional<ShapeTensor> &stepsTensor) {
  using P = arith::CmpIPredicate;
  auto x = ctx.getTensor(node, node.input(0));
  if (failed(x))
    return failure();
  int64_t rank = tensorType(*x).getRank();
  size_t count = starts.elements.size();
  ShapeTensor axes;
  if (axesTensor)
    axes = *axesTensor;
  else
    for (size_t k = 0; k < count; ++k)
      axes.elements.push_back(SymDim::of((int64_t)k));
  if (axes.elements.size() != count || (stepsTensor && stepsTensor->elements.size() != count))
    return ctx.fail(node, "axes/steps lengths differ from starts");
  auto normalized = ctx.distinctAxes(node, axes, rank);
  if (failed(normalized))
    return failure();
  OpBuilder &b = ctx.builder;
  OpFoldResult zero = b.getIndexAttr(0), one = b.getIndexAttr(1), minusOne = b.getIndexAttr(-1);
  auto clamp = [&](OpFoldResult v, OpFoldResult lo, OpFoldResult hi) {
    return ctx.indexOp<arith::MinSIOp>(ctx.indexOp<arith::MaxSIOp>(v, lo), hi);
  };
  SmallVector<OpFoldResult> inDims = ctx.dims(*x), startPerDim(rank, zero), sizePerDim = inDims,
                                     stepPerDim(rank, one);
  for (size_t k = 0; k < count; ++k) {
    OpFoldResult step = stepsTensor ? ctx.toFoldResult(stepsTensor->elements[k]) : one;
    if (failed(ctx.check(node, ctx.compare(P::ne, step, zero), "step " + std::to_string(k) + " is 0")))
      return failure();
    Value forward = ctx.compare(P::sgt, step, zero);
    for (int64_t d = 0; d < rank; ++d) {
      Value hit = ctx.compare(P::eq, (*normalized)[k], b.getIndexAttr(d));
      if (auto c = getConstantIntValue(hit); c && !*c)
        continue;
      OpFoldResult dim = inDims[d];
      auto wrap = [&](OpFoldResult v) {
        return ctx.select(ctx.compare(P::slt, v, zero), ctx.indexOp<arith::AddIOp>(v, dim), v);
      };
      OpFoldResult start = wrap(ctx.toFoldResult(starts.elements[k]));
      OpFoldResult end = wrap(ctx.toFoldResult(ends.elements[k]));
      OpFoldResult last = ctx.indexOp<arith::SubIOp>(dim, one);
      start = ctx.select(forward, clamp(start, zero, dim), clamp(start, zero, last));
      end = ctx.select(forward, clamp(end, zero, dim), clamp(end, minusOne, last));
      OpFoldResult size = ctx.indexOp<arith::MaxSIOp>(
          zero, ctx.indexOp<arith::CeilDivSIOp>(ctx.indexOp<arith::SubIOp>(end, start), step));
      startPerDim[d] = ctx.select(hit, start, startPerDim[d]);
      sizePerDim[d] = ctx.select(hit, size, sizePerDim[d]);
      stepPerDim[d] = ctx.select(hit, step, stepPerDim[d]);
    }
  }
  ctx.setValue(node.output(0), stridedSlice(ctx, *x, startPerDim, sizePerDim, stepPerDim));
  return success();
}

LogicalResult convertSlice(ImportContext &ctx, const onnx::NodeProto &node) {
  bool fromInputs = ctx.opset >= 10;
  auto startsTensor = shapeListFromInputOrAttr(ctx, node, 1, "starts", fromInputs);
  if (failed(startsTensor))
    return failure();
  auto endsTensor = shapeListFromInputOrAttr(ctx, node, 2, "ends", fromInputs);
  if (failed(endsTensor))
    return failure();
  auto axesTensor = shapeListFromInputOrAttr(ctx, node, 3, "axes", fromInputs);
  if (failed(axesTensor))
    return failure();
  auto stepsTensor = shapeListFromInputOrAttr(ctx, node, 4, "steps", fromInputs);
  if (failed(stepsTensor))
    return failure();
  if (!*startsTensor || !*endsTensor ||
      (*startsTensor)->elements.size() != (*endsTensor)->elements.size())
    return ctx.fail(node, "starts and ends are missing or of different lengths");
  if (!isKnown(*startsTensor) || !isKnown(*endsTensor) || !isKnown(*axesTensor) ||
      !isKnown(*stepsTensor))
    return runtimeSlice(ctx, node, **startsTensor, **endsTensor, *axesTensor, *stepsTensor);
  auto starts = constantValues(*startsTensor), ends = constantValues(*endsTensor),
       axes = constantValues(*axesTensor), steps = constantValues(*stepsTensor);
  size_t count = starts->size();
  std::vector<int64_t> axesList, stepsList(count, 1);
  if (axes)
    axesList = *axes;
  else
    for (size_t k = 0; k < count; ++k)
      axesList.push_back(k);
  if (steps)
    stepsList = *steps;
  if (axesList.size() != count || stepsList.size() != count)
    return ctx.fail(node, "axes/steps lengths differ from starts");

  auto clampStatic = [](int64_t v, int64_t dimSize, int64_t step, bool isEnd) {
    if (v < 0)
      v += dimSize;
    if (step > 0)
      return std::clamp<int64_t>(v, 0, dimSize);
    return std::clamp<int64_t>(v, isEnd ? -1 : 0, dimSize - 1);
  };

  // Slicing a shape tensor stays symbolic.
  if (ctx.isShapeLike(node.input(0))) {
    ShapeTensor data = *ctx.getShapeTensor(node.input(0));
    int64_t n = data.elements.size();
    if (count != 1 || (axesList[0] != 0 && axesList[0] != -1))
      return ctx.unsupported(node, "slicing a shape value needs exactly one axis 0");
    int64_t step = stepsList[0];
    if (step == 0)
      return ctx.fail(node, "step 0");
    int64_t s = clampStatic((*starts)[0], n, step, false);
    int64_t e = clampStatic((*ends)[0], n, step, true);
    ShapeTensor result;
    result.elementType = data.elementType;
    for (int64_t i = s; step > 0 ? i < e : i > e; i += step)
      result.elements.push_back(data.elements[i]);
    ctx.setShapeTensor(node.output(0), result);
    return success();
  }

  auto x = ctx.getTensor(node, node.input(0));
  if (failed(x))
    return failure();
  int64_t rank = tensorType(*x).getRank();
  SmallVector<OpFoldResult> startSizes(rank, ctx.builder.getIndexAttr(0));
  SmallVector<OpFoldResult> outSizes = ctx.dims(*x);
  SmallVector<int64_t> stepPerDim(rank, 1);
  std::vector<bool> seen(rank, false);
  OpBuilder &b = ctx.builder;
  Location l = ctx.loc;
  for (size_t k = 0; k < count; ++k) {
    auto axis = normalizeAxis(axesList[k], rank);
    if (!axis || seen[*axis])
      return ctx.fail(node, "invalid or repeated axis " + std::to_string(axesList[k]));
    seen[*axis] = true;
    int64_t step = stepsList[k];
    if (step == 0)
      return ctx.fail(node, "step 0");
    int64_t start = (*starts)[k], end = (*ends)[k];
    SymDim size = ctx.toSymDim(ctx.dim(*x, *axis));
    stepPerDim[*axis] = step;
    if (size.isConstant()) {
      int64_t s = clampStatic(start, size.constant, step, false);
      int64_t e = clampStatic(end, size.constant, step, true);
      int64_t n = step > 0 ? std::max<int64_t>(0, (e - s + step - 1) / step)
                           : std::max<int64_t>(0, (s - e + (-step) - 1) / (-step));
      startSizes[*axis] = b.getIndexAttr(s);
      outSizes[*axis] = b.getIndexAttr(n);
      continue;
    }
    if (step < 0)
      return runtimeSlice(ctx, node, **startsTensor, **endsTensor, *axesTensor, *stepsTensor);
    // Dynamic dim: clamp at run time with index arithmetic.
    Value d = size.value;
    auto clampDynamic = [&](int64_t v) -> Value {
      if (v >= 0) {
        if (v >= std::numeric_limits<int32_t>::max())
          return d;
        return arith::MinSIOp::create(b, l, ctx.indexConstant(v), d);
      }
      Value shifted = arith::AddIOp::create(b, l, d, ctx.indexConstant(v));
      return arith::MaxSIOp::create(b, l, shifted, ctx.indexConstant(0));
    };
    Value s = start == 0 ? ctx.indexConstant(0) : clampDynamic(start);
    Value e = clampDynamic(end);
    Value extent = e == d && start == 0 ? d : (Value)arith::SubIOp::create(b, l, e, s);
    if (extent != d)
      extent = arith::MaxSIOp::create(b, l, extent, ctx.indexConstant(0));
    if (step != 1)
      extent = arith::CeilDivSIOp::create(b, l, extent, ctx.indexConstant(step));
    startSizes[*axis] = start == 0 ? (OpFoldResult)b.getIndexAttr(0) : (OpFoldResult)s;
    outSizes[*axis] = extent;
  }
  SmallVector<OpFoldResult> stepSizes;
  for (int64_t step : stepPerDim)
    stepSizes.push_back(b.getIndexAttr(step));
  ctx.setValue(node.output(0), stridedSlice(ctx, *x, startSizes, outSizes, stepSizes));
  return success();
}

LogicalResult convertSplit(ImportContext &ctx, const onnx::NodeProto &node) {
  using P = arith::CmpIPredicate;
  auto x = ctx.getTensor(node, node.input(0));
  if (failed(x))
    return failure();
  int64_t rank = tensorType(*x).getRank();
  auto axis = normalizeAxis(ctx.intAttr(node, "axis", 0), rank);
  if (!axis)
    return ctx.fail(node, "axis out of range");
  auto split = shapeListFromInputOrAttr(ctx, node, 1, "split", ctx.opset >= 13);
  if (failed(split))
    return failure();
  int64_t outputs = node.output_size();
  OpBuilder &b = ctx.builder;
  OpFoldResult total = ctx.dim(*x, *axis), zero = b.getIndexAttr(0);
  SmallVector<OpFoldResult> partSizes;
  if (*split) {
    if ((int64_t)(*split)->elements.size() != outputs)
      return ctx.fail(node, "split has " + std::to_string((*split)->elements.size()) + " sizes for " +
                                std::to_string(outputs) + " outputs");
    OpFoldResult sum = zero;
    for (auto [k, d] : llvm::enumerate((*split)->elements)) {
      OpFoldResult size = ctx.toFoldResult(d);
      if (failed(ctx.check(node, ctx.compare(P::sge, size, zero),
                           "split size " + std::to_string(k) + " is negative")))
        return failure();
      partSizes.push_back(size);
      sum = ctx.indexOp<arith::AddIOp>(sum, size);
    }
    if (failed(ctx.check(node, ctx.compare(P::eq, sum, total),
                         "the split sizes do not add up to the size of axis " + std::to_string(*axis))))
      return failure();
  } else {
    // Equal parts of ceil(total / outputs); the last ones may be smaller.
    OpFoldResult chunk = ctx.indexOp<arith::CeilDivSIOp>(total, b.getIndexAttr(outputs));
    for (int64_t k = 0; k < outputs; ++k) {
      OpFoldResult rest = ctx.indexOp<arith::SubIOp>(
          total, ctx.indexOp<arith::MulIOp>(chunk, b.getIndexAttr(k)));
      partSizes.push_back(ctx.indexOp<arith::MaxSIOp>(zero, ctx.indexOp<arith::MinSIOp>(chunk, rest)));
    }
  }
  OpFoldResult offset = zero;
  for (int64_t k = 0; k < outputs; ++k) {
    SmallVector<OpFoldResult> starts(rank, zero);
    starts[*axis] = offset;
    SmallVector<OpFoldResult> sizes = ctx.dims(*x);
    sizes[*axis] = partSizes[k];
    offset = ctx.indexOp<arith::AddIOp>(offset, partSizes[k]);
    if (!node.output(k).empty())
      ctx.setValue(node.output(k), stridedSlice(ctx, *x, starts, sizes,
                                                SmallVector<OpFoldResult>(rank, b.getIndexAttr(1))));
  }
  return success();
}

LogicalResult convertGather(ImportContext &ctx, const onnx::NodeProto &node) {
  if (node.input_size() != 2)
    return ctx.fail(node, "expects 2 inputs");
  int64_t axisAttr = ctx.intAttr(node, "axis", 0);
  // Gather on a shape tensor with constant indices stays symbolic.
  if (ctx.isShapeLike(node.input(0)) && !ctx.getShapeTensor(node.input(0))->isScalar &&
      (axisAttr == 0 || axisAttr == -1)) {
    ShapeTensor data = *ctx.getShapeTensor(node.input(0));
    auto indices = ctx.getShapeTensor(node.input(1));
    if (indices && !ctx.isShapeTensor(node.input(1))) {
      ShapeTensor result;
      result.elementType = data.elementType;
      result.isScalar = indices->isScalar;
      int64_t n = data.elements.size();
      for (const SymDim &i : indices->elements) {
        int64_t k = i.constant < 0 ? i.constant + n : i.constant;
        if (k < 0 || k >= n)
          return ctx.fail(node, "index " + std::to_string(i.constant) + " is out of range");
        result.elements.push_back(data.elements[k]);
      }
      ctx.setShapeTensor(node.output(0), result);
      return success();
    }
  }
  auto data = ctx.getTensor(node, node.input(0));
  if (failed(data))
    return failure();
  auto indices = ctx.getTensor(node, node.input(1));
  if (failed(indices))
    return failure();
  int64_t rank = tensorType(*data).getRank();
  auto axisOpt = normalizeAxis(axisAttr, rank);
  if (!axisOpt)
    return ctx.fail(node, "axis out of range");
  int64_t axis = *axisOpt;
  auto indicesType = tensorType(*indices);
  if (!isa<IntegerType>(indicesType.getElementType()))
    return ctx.fail(node, "indices must be integers");
  int64_t q = indicesType.getRank();
  SmallVector<OpFoldResult> dataDims = ctx.dims(*data), indexDims = ctx.dims(*indices);
  SmallVector<OpFoldResult> outSizes(dataDims.begin(), dataDims.begin() + axis);
  outSizes.append(indexDims.begin(), indexDims.end());
  outSizes.append(dataDims.begin() + axis + 1, dataDims.end());
  int64_t outRank = outSizes.size();
  Value axisSize = ctx.toIndexValue(dataDims[axis]);
  Value init = ctx.empty(outSizes, tensorType(*data).getElementType());
  SmallVector<AffineExpr> indexExprs;
  for (int64_t k = 0; k < q; ++k)
    indexExprs.push_back(ctx.builder.getAffineDimExpr(axis + k));
  SmallVector<AffineMap> maps{AffineMap::get(outRank, 0, indexExprs, &ctx.context),
                              ctx.builder.getMultiDimIdentityMap(outRank)};
  SmallVector<utils::IteratorType> iterators(outRank, utils::IteratorType::parallel);
  Value dataValue = *data;
  auto generic = linalg::GenericOp::create(
      ctx.builder, ctx.loc, TypeRange{init.getType()}, ValueRange{*indices}, ValueRange{init},
      maps, iterators, [&](OpBuilder &b, Location l, ValueRange args) {
        Value i = arith::IndexCastOp::create(b, l, b.getIndexType(), args[0]);
        Value zero = arith::ConstantIndexOp::create(b, l, 0);
        Value negative = arith::CmpIOp::create(b, l, arith::CmpIPredicate::slt, i, zero);
        Value wrapped = arith::SelectOp::create(b, l, negative,
                                                arith::AddIOp::create(b, l, i, axisSize), i);
        Value clamped = clampIndex(b, l, wrapped, axisSize);
        SmallVector<Value> idx;
        for (int64_t d = 0; d < axis; ++d)
          idx.push_back(linalg::IndexOp::create(b, l, d));
        idx.push_back(clamped);
        for (int64_t d = axis + 1; d < rank; ++d)
          idx.push_back(linalg::IndexOp::create(b, l, d - 1 + q));
        linalg::YieldOp::create(b, l, tensor::ExtractOp::create(b, l, dataValue, idx).getResult());
      });
  Value result = generic.getResult(0);
  ctx.recordDims(result, outSizes);
  ctx.setValue(node.output(0), result);
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

/// Range whose start/limit/delta are known only at run time: the length
/// max(ceil((limit - start) / delta), 0) is computed on the host (integers)
/// or by a one-element kernel the host then reads (floats), and a generic
/// writes start + i * delta.
LogicalResult runtimeRange(ImportContext &ctx, const onnx::NodeProto &node) {
  using P = arith::CmpIPredicate;
  OpBuilder &b = ctx.builder;
  Location loc = ctx.loc;
  SmallVector<Value> args;
  for (int i = 0; i < 3; ++i) {
    auto v = ctx.getTensor(node, node.input(i));
    if (failed(v))
      return failure();
    auto type = tensorType(*v);
    if (type.getRank() > 1 || !type.hasStaticShape() || type.getNumElements() != 1)
      return ctx.fail(node, "input '" + node.input(i) + "' must be a scalar");
    args.push_back(*v);
  }
  Type et = tensorType(args[0]).getElementType();
  for (Value v : args)
    if (tensorType(v).getElementType() != et)
      return ctx.fail(node, "start, limit and delta have different element types");
  if (!isa<FloatType>(et) && !isa<IntegerType>(et))
    return ctx.unsupported(node, "element type of start/limit/delta");
  OpFoldResult length;
  if (isa<IntegerType>(et)) {
    SmallVector<OpFoldResult> scalars;
    for (int i = 0; i < 3; ++i) {
      auto t = ctx.getShapeOperand(node, i, i == 0 ? "start" : i == 1 ? "limit" : "delta");
      if (failed(t))
        return failure();
      scalars.push_back(ctx.toFoldResult(t->elements[0]));
    }
    OpFoldResult zero = b.getIndexAttr(0);
    if (failed(ctx.check(node, ctx.compare(P::ne, scalars[2], zero), "delta is 0")))
      return failure();
    length = ctx.indexOp<arith::MaxSIOp>(
        zero, ctx.indexOp<arith::CeilDivSIOp>(ctx.indexOp<arith::SubIOp>(scalars[1], scalars[0]),
                                              scalars[2]));
  } else {
    // max(ceil((limit - start) / delta), 0) in the element type, as i64,
    // by a one-element kernel; delta == 0 gives -1 and fails the check.
    Value init = ctx.empty({}, b.getI64Type());
    SmallVector<AffineMap> maps;
    for (Value v : args)
      maps.push_back(AffineMap::get(0, 0, tensorType(v).getRank() == 1
                                               ? SmallVector<AffineExpr>{b.getAffineConstantExpr(0)}
                                               : SmallVector<AffineExpr>{},
                                    &ctx.context));
    maps.push_back(AffineMap::get(0, 0, {}, &ctx.context));
    Value count = linalg::GenericOp::create(
                      b, loc, TypeRange{init.getType()}, args, ValueRange{init}, maps,
                      ArrayRef<utils::IteratorType>{},
                      [&](OpBuilder &nb, Location l, ValueRange a) {
                        Value zeroF = arith::ConstantOp::create(nb, l, nb.getFloatAttr(et, 0));
                        Value n = math::CeilOp::create(
                            nb, l, arith::DivFOp::create(nb, l, arith::SubFOp::create(nb, l, a[1], a[0]), a[2]));
                        n = arith::MaximumFOp::create(nb, l, n, zeroF);
                        Value asInt = arith::FPToSIOp::create(nb, l, nb.getI64Type(), n);
                        Value isZero = arith::CmpFOp::create(nb, l, arith::CmpFPredicate::OEQ, a[2], zeroF);
                        Value minusOne = arith::ConstantOp::create(nb, l, nb.getI64IntegerAttr(-1));
                        linalg::YieldOp::create(nb, l, (Value)arith::SelectOp::create(nb, l, isZero, minusOne, asInt));
                      })
                      .getResult(0);
    Value n = tensor::ExtractOp::create(b, loc, count, ValueRange{});
    length = ctx.asFoldResult(arith::IndexCastOp::create(b, loc, b.getIndexType(), n));
    if (failed(ctx.check(node, ctx.compare(P::sge, length, b.getIndexAttr(0)), "delta is 0")))
      return failure();
  }
  // out[i] = start + i * delta in the element type.
  Value init = ctx.empty({length}, et);
  SmallVector<AffineMap> maps;
  for (int i : {0, 2})
    maps.push_back(AffineMap::get(1, 0, tensorType(args[i]).getRank() == 1
                                            ? SmallVector<AffineExpr>{b.getAffineConstantExpr(0)}
                                            : SmallVector<AffineExpr>{},
                                  &ctx.context));
  maps.push_back(b.getMultiDimIdentityMap(1));
  Value result = linalg::GenericOp::create(
                     b, loc, TypeRange{init.getType()}, ValueRange{args[0], args[2]}, ValueRange{init}, maps,
                     ArrayRef<utils::IteratorType>{utils::IteratorType::parallel},
                     [&](OpBuilder &nb, Location l, ValueRange a) {
                       Value i = linalg::IndexOp::create(nb, l, 0);
                       Value v;
                       if (isa<FloatType>(et)) {
                         Value fi = arith::SIToFPOp::create(
                             nb, l, et, arith::IndexCastOp::create(nb, l, nb.getI64Type(), i));
                         v = arith::AddFOp::create(nb, l, a[0], arith::MulFOp::create(nb, l, fi, a[1]));
                       } else {
                         Value ii = arith::IndexCastOp::create(nb, l, et, i);
                         v = arith::AddIOp::create(nb, l, a[0], arith::MulIOp::create(nb, l, ii, a[1]));
                       }
                       linalg::YieldOp::create(nb, l, v);
                     })
                     .getResult(0);
  ctx.recordDims(result, {length});
  ctx.setValue(node.output(0), result);
  return success();
}

Value gatherGeneric(ImportContext &ctx, Value source, ArrayRef<OpFoldResult> outSizes,
                    ValueRange extraInputs, ArrayRef<AffineMap> extraMaps,
                    const std::function<SmallVector<Value>(OpBuilder &, Location, ArrayRef<Value>, ValueRange)> &indexFn);

} // namespace

/// Positions of the set flags of a 1-D i1 tensor, for ops whose result size
/// is a count of data (Compress, NonZero): a kernel counts the flags, the
/// host reads the count (the result size), and two generics with an extra
/// reduction loop find, for every output j, the position of the j-th set
/// flag. O(length^2) work: meant for the small selections these ops make in
/// models, not for large tensors.
std::pair<Value, OpFoldResult> setFlagPositions(ImportContext &ctx, Value flags) {
  using P = arith::CmpIPredicate;
  OpBuilder &b = ctx.builder;
  Location loc = ctx.loc;
  MLIRContext *mc = &ctx.context;
  OpFoldResult length = ctx.dim(flags, 0);
  Type i64 = b.getI64Type();
  AffineExpr d0 = b.getAffineDimExpr(0), d1 = b.getAffineDimExpr(1);
  auto flagAsInt = [&](OpBuilder &nb, Location l, Value flag) -> Value {
    return arith::ExtUIOp::create(nb, l, nb.getI64Type(), flag);
  };
  // count = sum of the flags.
  Value countInit = ctx.filled({}, ctx.scalarConstant(i64, 0));
  Value count = linalg::GenericOp::create(
                    b, loc, TypeRange{countInit.getType()}, ValueRange{flags}, ValueRange{countInit},
                    SmallVector<AffineMap>{AffineMap::get(1, 0, {d0}, mc), AffineMap::get(1, 0, {}, mc)},
                    ArrayRef<utils::IteratorType>{utils::IteratorType::reduction},
                    [&](OpBuilder &nb, Location l, ValueRange a) {
                      linalg::YieldOp::create(nb, l, (Value)arith::AddIOp::create(nb, l, a[1], flagAsInt(nb, l, a[0])));
                    })
                    .getResult(0);
  OpFoldResult countSize = ctx.asFoldResult(arith::IndexCastOp::create(
      b, loc, b.getIndexType(), tensor::ExtractOp::create(b, loc, count, ValueRange{})));
  // before[m] = number of set flags at positions < m.
  Value beforeInit = ctx.filled({length}, ctx.scalarConstant(i64, 0));
  Value before = linalg::GenericOp::create(
                     b, loc, TypeRange{beforeInit.getType()}, ValueRange{flags}, ValueRange{beforeInit},
                     SmallVector<AffineMap>{AffineMap::get(2, 0, {d1}, mc), AffineMap::get(2, 0, {d0}, mc)},
                     ArrayRef<utils::IteratorType>{utils::IteratorType::parallel, utils::IteratorType::reduction},
                     [&](OpBuilder &nb, Location l, ValueRange a) {
                       Value earlier = arith::CmpIOp::create(nb, l, P::slt, linalg::IndexOp::create(nb, l, 1),
                                                             linalg::IndexOp::create(nb, l, 0));
                       Value add = arith::AndIOp::create(nb, l, earlier, a[0]);
                       linalg::YieldOp::create(nb, l, (Value)arith::AddIOp::create(nb, l, a[1], flagAsInt(nb, l, add)));
                     })
                     .getResult(0);
  ctx.recordDims(before, {length});
  // positions[j] = the m with flags[m] set and before[m] == j. The loop
  // over m gets its bound from the flags operand.
  Value positionsInit = ctx.filled({countSize}, ctx.scalarConstant(i64, 0));
  Value positions = linalg::GenericOp::create(
                        b, loc, TypeRange{positionsInit.getType()}, ValueRange{flags, before},
                        ValueRange{positionsInit},
                        SmallVector<AffineMap>{AffineMap::get(2, 0, {d1}, mc), AffineMap::get(2, 0, {d1}, mc),
                                               AffineMap::get(2, 0, {d0}, mc)},
                        ArrayRef<utils::IteratorType>{utils::IteratorType::parallel, utils::IteratorType::reduction},
                        [&](OpBuilder &nb, Location l, ValueRange a) {
                          Value j = arith::IndexCastOp::create(nb, l, nb.getI64Type(), linalg::IndexOp::create(nb, l, 0));
                          Value m = arith::IndexCastOp::create(nb, l, nb.getI64Type(), linalg::IndexOp::create(nb, l, 1));
                          Value hit = arith::AndIOp::create(nb, l, a[0], arith::CmpIOp::create(nb, l, P::eq, a[1], j));
                          linalg::YieldOp::create(nb, l, (Value)arith::SelectOp::create(nb, l, hit, m, a[2]));
                        })
                        .getResult(0);
  ctx.recordDims(positions, {countSize});
  return {positions, countSize};
}

namespace {

/// A 1-D i1 tensor: element != 0 of 1-D `x`.
Value nonZeroFlags(ImportContext &ctx, Value x) {
  Type et = tensorType(x).getElementType();
  SmallVector<OpFoldResult> sizes = ctx.dims(x);
  Value init = ctx.empty(sizes, ctx.builder.getI1Type());
  Value result = linalg::GenericOp::create(
                     ctx.builder, ctx.loc, TypeRange{init.getType()}, ValueRange{x}, ValueRange{init},
                     SmallVector<AffineMap>(2, ctx.builder.getMultiDimIdentityMap(1)),
                     ArrayRef<utils::IteratorType>{utils::IteratorType::parallel},
                     [&](OpBuilder &b, Location l, ValueRange a) {
                       Value v;
                       if (isa<FloatType>(et))
                         v = arith::CmpFOp::create(b, l, arith::CmpFPredicate::UNE, a[0],
                                                   arith::ConstantOp::create(b, l, b.getFloatAttr(et, 0)));
                       else
                         v = arith::CmpIOp::create(b, l, arith::CmpIPredicate::ne, a[0],
                                                   arith::ConstantOp::create(b, l, b.getIntegerAttr(et, 0)));
                       linalg::YieldOp::create(b, l, v);
                     })
                     .getResult(0);
  ctx.recordDims(result, sizes);
  return result;
}

/// Compress (opset 9/11): the slices along `axis` (of the flattened input
/// without one) whose condition is true; the result size is the number of
/// true conditions, counted by a kernel and read by the host.
LogicalResult convertCompress(ImportContext &ctx, const onnx::NodeProto &node) {
  if (node.input_size() != 2)
    return ctx.fail(node, "expects input and condition");
  auto x = ctx.getTensor(node, node.input(0));
  auto condition = ctx.getTensor(node, node.input(1));
  if (failed(x) || failed(condition))
    return failure();
  if (tensorType(*condition).getRank() != 1)
    return ctx.fail(node, "condition must be 1-D");
  Value input = *x;
  int64_t axis = 0;
  if (const onnx::AttributeProto *a = ctx.attr(node, "axis")) {
    auto n = normalizeAxis(a->i(), tensorType(input).getRank());
    if (!n || tensorType(input).getRank() == 0)
      return ctx.fail(node, "axis " + std::to_string(a->i()) + " is out of range");
    axis = *n;
  } else {
    input = ctx.reshape(input, {product(ctx, ctx.dims(input))});
  }
  SmallVector<OpFoldResult> inSizes = ctx.dims(input);
  if (failed(ctx.check(node,
                       ctx.compare(arith::CmpIPredicate::sle, ctx.dim(*condition, 0), inSizes[axis]),
                       "condition is longer than the input along the axis")))
    return failure();
  Value flags = nonZeroFlags(ctx, *condition);
  auto [positions, count] = setFlagPositions(ctx, flags);
  SmallVector<OpFoldResult> outSizes = inSizes;
  outSizes[axis] = count;
  Value result = gatherGeneric(ctx, input, outSizes, {}, {},
                               [&](OpBuilder &b, Location l, ArrayRef<Value> idx, ValueRange) {
                                 SmallVector<Value> src(idx.begin(), idx.end());
                                 Value p = tensor::ExtractOp::create(b, l, positions, ValueRange{idx[axis]});
                                 src[axis] = arith::IndexCastOp::create(b, l, b.getIndexType(), p);
                                 return src;
                               });
  ctx.setValue(node.output(0), result);
  return success();
}

/// NonZero (opset 9/13): the indices (int64, one row per dim) of the
/// non-zero elements in row-major order; their number is counted by a kernel
/// and read by the host.
LogicalResult convertNonZero(ImportContext &ctx, const onnx::NodeProto &node) {
  auto x = ctx.getTensor(node, node.input(0));
  if (failed(x))
    return failure();
  int64_t rank = tensorType(*x).getRank();
  SmallVector<OpFoldResult> sizes = ctx.dims(*x);
  Value flat = ctx.reshape(*x, {product(ctx, sizes)});
  auto [positions, count] = setFlagPositions(ctx, nonZeroFlags(ctx, flat));
  SmallVector<Value> sizeValues;
  for (OpFoldResult s : sizes)
    sizeValues.push_back(ctx.toIndexValue(s));
  SmallVector<OpFoldResult> outSizes{ctx.builder.getIndexAttr(rank), count};
  Value init = ctx.empty(outSizes, ctx.builder.getI64Type());
  MLIRContext *mc = &ctx.context;
  Value result = linalg::GenericOp::create(
                     ctx.builder, ctx.loc, TypeRange{init.getType()}, ValueRange{positions}, ValueRange{init},
                     SmallVector<AffineMap>{AffineMap::get(2, 0, {ctx.builder.getAffineDimExpr(1)}, mc),
                                            ctx.builder.getMultiDimIdentityMap(2)},
                     ArrayRef<utils::IteratorType>{utils::IteratorType::parallel, utils::IteratorType::parallel},
                     [&](OpBuilder &b, Location l, ValueRange a) {
                       // Row d of the index of flat position p: (p / stride_d) % size_d.
                       Value d = linalg::IndexOp::create(b, l, 0);
                       Value p = a[0];
                       Value coordinate = arith::ConstantOp::create(b, l, b.getI64IntegerAttr(0));
                       Value stride = arith::ConstantOp::create(b, l, b.getI64IntegerAttr(1));
                       for (int64_t k = rank - 1; k >= 0; --k) {
                         Value size = arith::IndexCastOp::create(b, l, b.getI64Type(), sizeValues[k]);
                         Value c = arith::RemSIOp::create(b, l, arith::DivSIOp::create(b, l, p, stride), size);
                         Value isK = arith::CmpIOp::create(b, l, arith::CmpIPredicate::eq, d,
                                                           arith::ConstantIndexOp::create(b, l, k));
                         coordinate = arith::SelectOp::create(b, l, isK, c, coordinate);
                         stride = arith::MulIOp::create(b, l, stride, size);
                       }
                       linalg::YieldOp::create(b, l, coordinate);
                     })
                     .getResult(0);
  ctx.recordDims(result, outSizes);
  ctx.setValue(node.output(0), result);
  return success();
}

/// Unique (opset 11): the distinct slices along `axis` (elements of the
/// flattened input without one), sorted ascending (lexicographically for
/// slices) or in order of first occurrence, with indices, inverse_indices
/// and counts. Pairwise comparisons of the L slices (L x L generics: equal,
/// first differing element, less) give each slice's first occurrence and
/// output position; the number of distinct slices is counted by a kernel
/// and read on the host. O(L^2 * slice) work: for the small inputs Unique
/// sees in models.
LogicalResult convertUnique(ImportContext &ctx, const onnx::NodeProto &node) {
  using P = arith::CmpIPredicate;
  auto x = ctx.getTensor(node, node.input(0));
  if (failed(x))
    return failure();
  auto type = tensorType(*x);
  Type et = type.getElementType();
  bool isFloat = isa<FloatType>(et);
  if (!isFloat && !isa<IntegerType>(et))
    return ctx.unsupported(node, "element type");
  int64_t rank = type.getRank();
  bool sorted = ctx.intAttr(node, "sorted", 1) != 0;
  const onnx::AttributeProto *axisAttr = ctx.attr(node, "axis");
  std::optional<int64_t> axis;
  if (axisAttr) {
    axis = normalizeAxis(axisAttr->i(), rank);
    if (!axis || rank == 0)
      return ctx.fail(node, "axis " + std::to_string(axisAttr->i()) + " is out of range");
  }
  OpBuilder &b = ctx.builder;
  Location loc = ctx.loc;
  MLIRContext *mc = &ctx.context;
  SmallVector<OpFoldResult> dims = ctx.dims(*x);
  OpFoldResult one = b.getIndexAttr(1), pre = one, post = one, length;
  if (axis) {
    pre = product(ctx, ArrayRef(dims).take_front(*axis));
    post = product(ctx, ArrayRef(dims).drop_front(*axis + 1));
    length = dims[*axis];
  } else {
    length = product(ctx, dims);
  }
  Value x3 = ctx.reshape(*x, {pre, length, post});
  OpFoldResult sliceSize = ctx.indexOp<arith::MulIOp>(pre, post);
  if (failed(ctx.check(node, ctx.compare(P::sgt, sliceSize, b.getIndexAttr(0)),
                       "slices along the axis are empty")))
    return failure();
  Value postValue = ctx.toIndexValue(post), sliceValue = ctx.toIndexValue(sliceSize);
  Type i64 = b.getI64Type(), i1 = b.getI1Type();
  auto dim = [&](unsigned k) { return b.getAffineDimExpr(k); };
  auto map = [&](unsigned count, ArrayRef<AffineExpr> exprs) { return AffineMap::get(count, 0, exprs, mc); };
  using IT = utils::IteratorType;
  auto generic = [&](ArrayRef<Value> inits, ValueRange inputs, ArrayRef<AffineMap> maps,
                     ArrayRef<IT> iterators,
                     function_ref<void(OpBuilder &, Location, ValueRange)> body) {
    SmallVector<Type> types;
    for (Value v : inits)
      types.push_back(v.getType());
    return linalg::GenericOp::create(b, loc, types, inputs, inits, maps, iterators, body);
  };
  auto i64Index = [](OpBuilder &nb, Location l, unsigned k) -> Value {
    return arith::IndexCastOp::create(nb, l, nb.getI64Type(), linalg::IndexOp::create(nb, l, k));
  };
  auto differ = [&](OpBuilder &nb, Location l, Value a, Value c) -> Value {
    return isFloat ? (Value)arith::CmpFOp::create(nb, l, arith::CmpFPredicate::UNE, a, c)
                   : (Value)arith::CmpIOp::create(nb, l, P::ne, a, c);
  };
  // equal[m, q] and firstDiff[m, q] (flat slice position, or the slice size).
  Value equalInit = ctx.filled({length, length}, ctx.scalarConstant(i1, 1));
  Value firstDiffInit = ctx.filled({length, length},
                                   arith::IndexCastOp::create(b, loc, i64, sliceValue).getResult());
  auto pairwise = generic(
      {equalInit, firstDiffInit}, ValueRange{x3, x3},
      {map(4, {dim(2), dim(0), dim(3)}), map(4, {dim(2), dim(1), dim(3)}), map(4, {dim(0), dim(1)}),
       map(4, {dim(0), dim(1)})},
      {IT::parallel, IT::parallel, IT::reduction, IT::reduction}, [&](OpBuilder &nb, Location l, ValueRange a) {
        Value d = differ(nb, l, a[0], a[1]);
        Value equal = arith::AndIOp::create(
            nb, l, a[2], arith::XOrIOp::create(nb, l, d, arith::ConstantOp::create(nb, l, nb.getBoolAttr(true))));
        Value position = arith::AddIOp::create(
            nb, l, arith::MulIOp::create(nb, l, i64Index(nb, l, 2),
                                         arith::IndexCastOp::create(nb, l, nb.getI64Type(), postValue)),
            i64Index(nb, l, 3));
        Value first = arith::SelectOp::create(nb, l, d, arith::MinSIOp::create(nb, l, a[3], position), a[3]);
        linalg::YieldOp::create(nb, l, ValueRange{equal, first});
      });
  Value equal = pairwise.getResult(0), firstDiff = pairwise.getResult(1);
  // less[m, q]: slice m sorts before slice q.
  Value lessInit = ctx.empty({length, length}, i1);
  Value less = generic({lessInit}, ValueRange{firstDiff}, {map(2, {dim(0), dim(1)}), map(2, {dim(0), dim(1)})},
                       {IT::parallel, IT::parallel},
                       [&](OpBuilder &nb, Location l, ValueRange a) {
                         Value sliceI64 = arith::IndexCastOp::create(nb, l, nb.getI64Type(), sliceValue);
                         Value found = arith::CmpIOp::create(nb, l, P::slt, a[0], sliceI64);
                         Value at = arith::IndexCastOp::create(
                             nb, l, nb.getIndexType(),
                             arith::MinSIOp::create(nb, l, a[0],
                                                    arith::SubIOp::create(nb, l, sliceI64,
                                                                          arith::ConstantOp::create(nb, l, nb.getI64IntegerAttr(1)))));
                         Value p = arith::DivSIOp::create(nb, l, at, postValue);
                         Value t = arith::RemSIOp::create(nb, l, at, postValue);
                         Value vm = tensor::ExtractOp::create(nb, l, x3, ValueRange{p, linalg::IndexOp::create(nb, l, 0), t});
                         Value vq = tensor::ExtractOp::create(nb, l, x3, ValueRange{p, linalg::IndexOp::create(nb, l, 1), t});
                         Value lt = isFloat ? (Value)arith::CmpFOp::create(nb, l, arith::CmpFPredicate::OLT, vm, vq)
                                            : (Value)arith::CmpIOp::create(nb, l, P::slt, vm, vq);
                         linalg::YieldOp::create(nb, l, (Value)arith::AndIOp::create(nb, l, found, lt));
                       })
                   .getResult(0);
  // isFirst[m]: no earlier slice equals slice m.
  Value firstInit = ctx.filled({length}, ctx.scalarConstant(i1, 1));
  Value isFirst = generic({firstInit}, ValueRange{equal}, {map(2, {dim(1), dim(0)}), map(2, {dim(0)})},
                          {IT::parallel, IT::reduction},
                          [&](OpBuilder &nb, Location l, ValueRange a) {
                            Value earlier = arith::CmpIOp::create(nb, l, P::slt, linalg::IndexOp::create(nb, l, 1),
                                                                  linalg::IndexOp::create(nb, l, 0));
                            Value dup = arith::AndIOp::create(nb, l, earlier, a[0]);
                            Value keep = arith::XOrIOp::create(nb, l, dup, arith::ConstantOp::create(nb, l, nb.getBoolAttr(true)));
                            linalg::YieldOp::create(nb, l, (Value)arith::AndIOp::create(nb, l, a[1], keep));
                          })
                      .getResult(0);
  ctx.recordDims(isFirst, {length});
  // position[m] of a first occurrence in the output: the first occurrences
  // that sort before it (sorted) or come before it.
  Value positionInit = ctx.filled({length}, ctx.scalarConstant(i64, 0));
  Value position = generic({positionInit}, ValueRange{isFirst, less},
                           {map(2, {dim(1)}), map(2, {dim(1), dim(0)}), map(2, {dim(0)})},
                           {IT::parallel, IT::reduction},
                           [&](OpBuilder &nb, Location l, ValueRange a) {
                             Value before = sorted ? a[1]
                                                   : (Value)arith::CmpIOp::create(nb, l, P::slt, linalg::IndexOp::create(nb, l, 1),
                                                                                  linalg::IndexOp::create(nb, l, 0));
                             Value add = arith::ExtUIOp::create(nb, l, nb.getI64Type(), arith::AndIOp::create(nb, l, a[0], before));
                             linalg::YieldOp::create(nb, l, (Value)arith::AddIOp::create(nb, l, a[2], add));
                           })
                       .getResult(0);
  // inverse[m] = position of the first occurrence equal to slice m.
  Value inverseInit = ctx.filled({length}, ctx.scalarConstant(i64, 0));
  Value inverse = generic({inverseInit}, ValueRange{isFirst, equal, position},
                          {map(2, {dim(1)}), map(2, {dim(1), dim(0)}), map(2, {dim(1)}), map(2, {dim(0)})},
                          {IT::parallel, IT::reduction},
                          [&](OpBuilder &nb, Location l, ValueRange a) {
                            Value hit = arith::AndIOp::create(nb, l, a[0], a[1]);
                            linalg::YieldOp::create(nb, l, (Value)arith::SelectOp::create(nb, l, hit, a[2], a[3]));
                          })
                      .getResult(0);
  ctx.recordDims(inverse, {length});
  // U = number of first occurrences, read on the host.
  auto [firstPositions, uniqueCount] = setFlagPositions(ctx, isFirst);
  (void)firstPositions;
  // indices[j] = the first occurrence at output position j; counts[j].
  Value indicesInit = ctx.filled({uniqueCount}, ctx.scalarConstant(i64, 0));
  Value countsInit = ctx.filled({uniqueCount}, ctx.scalarConstant(i64, 0));
  auto perUnique = generic({indicesInit, countsInit}, ValueRange{isFirst, position, inverse},
                           {map(2, {dim(1)}), map(2, {dim(1)}), map(2, {dim(1)}), map(2, {dim(0)}), map(2, {dim(0)})},
                           {IT::parallel, IT::reduction},
                           [&](OpBuilder &nb, Location l, ValueRange a) {
                             Value j = i64Index(nb, l, 0);
                             Value hit = arith::AndIOp::create(nb, l, a[0], arith::CmpIOp::create(nb, l, P::eq, a[1], j));
                             Value index = arith::SelectOp::create(nb, l, hit, i64Index(nb, l, 1), a[3]);
                             Value same = arith::ExtUIOp::create(nb, l, nb.getI64Type(),
                                                                 arith::CmpIOp::create(nb, l, P::eq, a[2], j));
                             linalg::YieldOp::create(nb, l, ValueRange{index, arith::AddIOp::create(nb, l, a[4], same)});
                           });
  Value indices = perUnique.getResult(0), counts = perUnique.getResult(1);
  ctx.recordDims(indices, {uniqueCount});
  ctx.recordDims(counts, {uniqueCount});
  // Y: the unique slices, gathered along the axis.
  Value y3 = gatherGeneric(ctx, x3, {pre, uniqueCount, post}, {}, {},
                           [&](OpBuilder &nb, Location l, ArrayRef<Value> idx, ValueRange) {
                             Value m = tensor::ExtractOp::create(nb, l, indices, ValueRange{idx[1]});
                             return SmallVector<Value>{idx[0], arith::IndexCastOp::create(nb, l, nb.getIndexType(), m),
                                                       idx[2]};
                           });
  SmallVector<OpFoldResult> ySizes{uniqueCount};
  if (axis) {
    ySizes = dims;
    ySizes[*axis] = uniqueCount;
  }
  ctx.setValue(node.output(0), ctx.reshape(y3, ySizes));
  Value outputs[] = {indices, inverse, counts};
  for (int k = 1; k < node.output_size() && k < 4; ++k)
    if (!node.output(k).empty())
      ctx.setValue(node.output(k), outputs[k - 1]);
  return success();
}

/// Range with constant start/limit/delta becomes a constant; otherwise see
/// runtimeRange.
LogicalResult convertRange(ImportContext &ctx, const onnx::NodeProto &node) {
  if (node.input_size() != 3)
    return ctx.fail(node, "expects 3 inputs");
  SmallVector<DenseElementsAttr> args;
  for (int i = 0; i < 3; ++i) {
    auto c = ctx.getConstant(node.input(i));
    if (!c || c->getNumElements() != 1)
      return runtimeRange(ctx, node);
    args.push_back(*c);
  }
  Type et = args[0].getElementType();
  if (isa<FloatType>(et)) {
    double start = (*args[0].getValues<APFloat>().begin()).convertToDouble();
    double limit = (*args[1].getValues<APFloat>().begin()).convertToDouble();
    double delta = (*args[2].getValues<APFloat>().begin()).convertToDouble();
    if (delta == 0)
      return ctx.fail(node, "delta is 0");
    int64_t n = std::max<int64_t>(0, (int64_t)std::ceil((limit - start) / delta));
    std::vector<float> values;
    for (int64_t k = 0; k < n; ++k)
      values.push_back((float)(start + k * delta));
    if (!et.isF32())
      return ctx.unsupported(node, "only f32 floating-point ranges are supported");
    ctx.setConstant(node.output(0), DenseElementsAttr::get(RankedTensorType::get({n}, et), ArrayRef<float>(values)));
    return success();
  }
  int64_t start = (*args[0].getValues<APInt>().begin()).getSExtValue();
  int64_t limit = (*args[1].getValues<APInt>().begin()).getSExtValue();
  int64_t delta = (*args[2].getValues<APInt>().begin()).getSExtValue();
  if (delta == 0)
    return ctx.fail(node, "delta is 0");
  int64_t n = std::max<int64_t>(0, (limit - start + delta + (delta > 0 ? -1 : 1)) / delta);
  SmallVector<APInt> values;
  for (int64_t k = 0; k < n; ++k)
    values.push_back(APInt(et.getIntOrFloatBitWidth(), (uint64_t)(start + k * delta), true));
  ctx.setConstant(node.output(0), DenseElementsAttr::get(RankedTensorType::get({n}, et), values));
  return success();
}

/// Gather-style generic over `outSizes` whose body computes the source
/// indices from the output indices.
Value gatherGeneric(ImportContext &ctx, Value source, ArrayRef<OpFoldResult> outSizes,
                    ValueRange extraInputs, ArrayRef<AffineMap> extraMaps,
                    const std::function<SmallVector<Value>(OpBuilder &, Location, ArrayRef<Value>, ValueRange)> &indexFn) {
  int64_t rank = outSizes.size();
  Value init = ctx.empty(outSizes, tensorType(source).getElementType());
  SmallVector<AffineMap> maps(extraMaps.begin(), extraMaps.end());
  maps.push_back(ctx.builder.getMultiDimIdentityMap(rank));
  SmallVector<utils::IteratorType> iterators(rank, utils::IteratorType::parallel);
  auto g = linalg::GenericOp::create(
      ctx.builder, ctx.loc, TypeRange{init.getType()}, extraInputs, ValueRange{init}, maps, iterators,
      [&](OpBuilder &b, Location l, ValueRange args) {
        SmallVector<Value> idx;
        for (int64_t d = 0; d < rank; ++d)
          idx.push_back(linalg::IndexOp::create(b, l, d));
        SmallVector<Value> src = indexFn(b, l, idx, args.drop_back());
        linalg::YieldOp::create(b, l, tensor::ExtractOp::create(b, l, source, src).getResult());
      });
  ctx.recordDims(g.getResult(0), outSizes);
  return g.getResult(0);
}

LogicalResult convertTile(ImportContext &ctx, const onnx::NodeProto &node) {
  auto x = ctx.getTensor(node, node.input(0));
  if (failed(x))
    return failure();
  auto repeats = ctx.getShapeOperand(node, 1, "repeats");
  if (failed(repeats))
    return failure();
  int64_t rank = tensorType(*x).getRank();
  if ((int64_t)repeats->elements.size() != rank)
    return ctx.fail(node, "repeats has " + std::to_string(repeats->elements.size()) +
                              " elements for a rank-" + std::to_string(rank) + " input");
  SmallVector<OpFoldResult> inSizes = ctx.dims(*x), outSizes;
  SmallVector<Value> inSizeValues;
  for (int64_t d = 0; d < rank; ++d) {
    OpFoldResult r = ctx.toFoldResult(repeats->elements[d]);
    if (failed(ctx.check(node, ctx.compare(arith::CmpIPredicate::sge, r, ctx.builder.getIndexAttr(0)),
                         "repeats element " + std::to_string(d) + " is negative")))
      return failure();
    outSizes.push_back(product(ctx, {inSizes[d], r}));
    inSizeValues.push_back(ctx.toIndexValue(inSizes[d]));
  }
  Value result = gatherGeneric(ctx, *x, outSizes, {}, {}, [&](OpBuilder &b, Location l, ArrayRef<Value> idx, ValueRange) {
    SmallVector<Value> src;
    for (int64_t d = 0; d < rank; ++d)
      src.push_back(repeats->elements[d] == SymDim::of(1)
                        ? idx[d]
                        : (Value)arith::RemSIOp::create(b, l, idx[d], inSizeValues[d]));
    return src;
  });
  ctx.setValue(node.output(0), result);
  return success();
}

/// Map from a rank-`rank` iteration space to a 0-D or one-element 1-D
/// "scalar" tensor, read as an ordinary generic input.
AffineMap scalarTensorMap(ImportContext &ctx, Value scalar, int64_t rank) {
  SmallVector<AffineExpr> exprs;
  if (tensorType(scalar).getRank() == 1)
    exprs.push_back(ctx.builder.getAffineConstantExpr(0));
  return AffineMap::get(rank, 0, exprs, &ctx.context);
}

LogicalResult convertTrilu(ImportContext &ctx, const onnx::NodeProto &node) {
  auto x = ctx.getTensor(node, node.input(0));
  if (failed(x))
    return failure();
  int64_t rank = tensorType(*x).getRank();
  if (rank < 2)
    return ctx.fail(node, "input must have rank >= 2");
  // k: absent (0), a constant, or a runtime scalar read inside the generic.
  int64_t k = 0;
  Value kTensor;
  if (ImportContext::hasInput(node, 1)) {
    auto kt = ctx.getShapeTensor(node.input(1));
    if (kt && kt->elements.size() == 1 && kt->elements[0].isConstant()) {
      k = kt->elements[0].constant;
    } else {
      auto kv = ctx.getTensor(node, node.input(1));
      if (failed(kv))
        return failure();
      auto kType = tensorType(*kv);
      if (kType.getRank() > 1 || (kType.getRank() == 1 && kType.getDimSize(0) != 1) ||
          !isa<IntegerType>(kType.getElementType()))
        return ctx.fail(node, "k must be an integer scalar");
      kTensor = *kv;
    }
  }
  bool upper = ctx.intAttr(node, "upper", 1) != 0;
  Type et = tensorType(*x).getElementType();
  SmallVector<OpFoldResult> sizes = ctx.dims(*x);
  Value init = ctx.empty(sizes, et);
  SmallVector<Value> inputs{*x};
  SmallVector<AffineMap> maps{ctx.builder.getMultiDimIdentityMap(rank)};
  if (kTensor) {
    inputs.push_back(kTensor);
    maps.push_back(scalarTensorMap(ctx, kTensor, rank));
  }
  maps.push_back(ctx.builder.getMultiDimIdentityMap(rank));
  SmallVector<utils::IteratorType> iterators(rank, utils::IteratorType::parallel);
  Value zero = ctx.scalarConstant(et, 0);
  auto g = linalg::GenericOp::create(
      ctx.builder, ctx.loc, TypeRange{init.getType()}, inputs, ValueRange{init}, maps, iterators,
      [&](OpBuilder &b, Location l, ValueRange a) {
        Value i = arith::IndexCastOp::create(b, l, b.getI64Type(), linalg::IndexOp::create(b, l, rank - 2));
        Value j = arith::IndexCastOp::create(b, l, b.getI64Type(), linalg::IndexOp::create(b, l, rank - 1));
        Value diff = arith::SubIOp::create(b, l, j, i);
        Value kv;
        if (kTensor) {
          kv = a[1];
          if (kv.getType() != b.getI64Type())
            kv = arith::ExtSIOp::create(b, l, b.getI64Type(), kv);
        } else {
          kv = arith::ConstantOp::create(b, l, b.getI64IntegerAttr(k));
        }
        Value keep = arith::CmpIOp::create(b, l, upper ? arith::CmpIPredicate::sge : arith::CmpIPredicate::sle,
                                           diff, kv);
        linalg::YieldOp::create(b, l, (Value)arith::SelectOp::create(b, l, keep, a[0], zero));
      });
  ctx.recordDims(g.getResult(0), sizes);
  ctx.setValue(node.output(0), g.getResult(0));
  return success();
}

LogicalResult convertGatherElements(ImportContext &ctx, const onnx::NodeProto &node) {
  auto data = ctx.getTensor(node, node.input(0));
  auto indices = ctx.getTensor(node, node.input(1));
  if (failed(data) || failed(indices))
    return failure();
  int64_t rank = tensorType(*data).getRank();
  if (tensorType(*indices).getRank() != rank)
    return ctx.fail(node, "data and indices must have the same rank");
  auto axis = normalizeAxis(ctx.intAttr(node, "axis", 0), rank);
  if (!axis)
    return ctx.fail(node, "axis out of range");
  Value axisSize = ctx.toIndexValue(ctx.dim(*data, *axis));
  SmallVector<OpFoldResult> outSizes = ctx.dims(*indices);
  int64_t a = *axis;
  Value result = gatherGeneric(
      ctx, *data, outSizes, ValueRange{*indices}, {ctx.builder.getMultiDimIdentityMap(rank)},
      [&](OpBuilder &b, Location l, ArrayRef<Value> idx, ValueRange args) {
        Value i = arith::IndexCastOp::create(b, l, b.getIndexType(), args[0]);
        Value zero = arith::ConstantIndexOp::create(b, l, 0);
        Value neg = arith::CmpIOp::create(b, l, arith::CmpIPredicate::slt, i, zero);
        Value wrapped = arith::SelectOp::create(b, l, neg, arith::AddIOp::create(b, l, i, axisSize), i);
        SmallVector<Value> src(idx.begin(), idx.end());
        src[a] = clampIndex(b, l, wrapped, axisSize);
        return src;
      });
  ctx.setValue(node.output(0), result);
  return success();
}

/// ScatterElements (and the deprecated Scatter) as one generic over the data
/// shape plus a reduction loop k over the indices' axis: output element i
/// starts as data[i] and combines updates[j] for every j with j == i off the
/// axis, j_axis == k and (wrapped) indices[j] == i_axis, in increasing k
/// (so with reduction "none" the last duplicate wins, as in the reference).
LogicalResult convertScatterElements(ImportContext &ctx, const onnx::NodeProto &node) {
  if (node.input_size() < 3)
    return ctx.fail(node, "expects data, indices and updates");
  auto data = ctx.getTensor(node, node.input(0));
  auto indices = ctx.getTensor(node, node.input(1));
  auto updates = ctx.getTensor(node, node.input(2));
  if (failed(data) || failed(indices) || failed(updates))
    return failure();
  int64_t rank = tensorType(*data).getRank();
  if (tensorType(*indices).getRank() != rank || tensorType(*updates).getRank() != rank)
    return ctx.fail(node, "data, indices and updates must have the same rank");
  if (rank < 1)
    return ctx.fail(node, "data must have rank >= 1");
  auto axis = normalizeAxis(ctx.intAttr(node, "axis", 0), rank);
  if (!axis)
    return ctx.fail(node, "axis out of range");
  std::string reduction = ctx.stringAttr(node, "reduction", "none");
  if (reduction != "none" && reduction != "add" && reduction != "mul")
    return ctx.unsupported(node, "reduction '" + reduction + "'");
  Type et = tensorType(*data).getElementType();
  bool isFloat = isa<FloatType>(et);
  if (reduction != "none" && !isFloat && !isa<IntegerType>(et))
    return ctx.unsupported(node, "reduction on this element type");
  int64_t a = *axis;
  if (llvm::is_contained(tensorType(*indices).getShape(), 0)) {
    ctx.setValue(node.output(0), *data); // no updates
    return success();
  }
  SmallVector<OpFoldResult> sizes = ctx.dims(*data);
  Value axisSize = ctx.toIndexValue(ctx.dim(*data, a));
  SmallVector<Value> indexSizes;
  for (int64_t d = 0; d < rank; ++d)
    indexSizes.push_back(ctx.toIndexValue(ctx.dim(*indices, d)));
  // Loop dims: d0..d(rank-1) over data, d(rank) over the indices' axis.
  SmallVector<AffineExpr> kExpr{ctx.builder.getAffineDimExpr(rank)};
  SmallVector<AffineExpr> outExprs;
  for (int64_t d = 0; d < rank; ++d)
    outExprs.push_back(ctx.builder.getAffineDimExpr(d));
  // A dummy read of the indices along k gives the loop its range.
  Value kRange = ctx.empty({ctx.dim(*indices, a)}, ctx.builder.getI1Type());
  SmallVector<AffineMap> maps{AffineMap::get(rank + 1, 0, kExpr, &ctx.context),
                              AffineMap::get(rank + 1, 0, outExprs, &ctx.context)};
  SmallVector<utils::IteratorType> iterators(rank, utils::IteratorType::parallel);
  iterators.push_back(utils::IteratorType::reduction);
  Value result = linalg::GenericOp::create(
                     ctx.builder, ctx.loc, TypeRange{data->getType()}, ValueRange{kRange}, ValueRange{*data},
                     maps, iterators,
                     [&](OpBuilder &b, Location l, ValueRange args) {
                       Value acc = args[1];
                       Value zero = arith::ConstantIndexOp::create(b, l, 0);
                       Value one = arith::ConstantIndexOp::create(b, l, 1);
                       Value k = linalg::IndexOp::create(b, l, rank);
                       Value valid = arith::ConstantOp::create(b, l, b.getBoolAttr(true));
                       SmallVector<Value> j;
                       for (int64_t d = 0; d < rank; ++d) {
                         if (d == a) {
                           j.push_back(k);
                           continue;
                         }
                         Value i = linalg::IndexOp::create(b, l, d);
                         Value inRange = arith::CmpIOp::create(b, l, arith::CmpIPredicate::slt, i, indexSizes[d]);
                         valid = arith::AndIOp::create(b, l, valid, inRange);
                         Value last = arith::SubIOp::create(b, l, indexSizes[d], one);
                         j.push_back(arith::MinSIOp::create(b, l, i, last));
                       }
                       Value target = tensor::ExtractOp::create(b, l, *indices, j);
                       Value ti = arith::IndexCastOp::create(b, l, b.getIndexType(), target);
                       Value neg = arith::CmpIOp::create(b, l, arith::CmpIPredicate::slt, ti, zero);
                       ti = arith::SelectOp::create(b, l, neg, arith::AddIOp::create(b, l, ti, axisSize), ti);
                       Value hit = arith::CmpIOp::create(b, l, arith::CmpIPredicate::eq, ti,
                                                         linalg::IndexOp::create(b, l, a));
                       valid = arith::AndIOp::create(b, l, valid, hit);
                       Value u = tensor::ExtractOp::create(b, l, *updates, j);
                       Value combined = u;
                       if (reduction == "add")
                         combined = isFloat ? (Value)arith::AddFOp::create(b, l, acc, u)
                                            : (Value)arith::AddIOp::create(b, l, acc, u);
                       else if (reduction == "mul")
                         combined = isFloat ? (Value)arith::MulFOp::create(b, l, acc, u)
                                            : (Value)arith::MulIOp::create(b, l, acc, u);
                       linalg::YieldOp::create(b, l, (Value)arith::SelectOp::create(b, l, valid, combined, acc));
                     })
                     .getResult(0);
  ctx.recordDims(result, sizes);
  ctx.setValue(node.output(0), result);
  return success();
}

/// Reads index tuple component `t` of `indices` at batch position `batch`
/// (inside a generic body), wraps a negative value by `size` and clamps it.
Value ndIndexComponent(OpBuilder &b, Location l, Value indices, ArrayRef<Value> batch, int64_t t, Value size) {
  SmallVector<Value> at(batch.begin(), batch.end());
  at.push_back(arith::ConstantIndexOp::create(b, l, t));
  Value v = arith::IndexCastOp::create(b, l, b.getIndexType(), tensor::ExtractOp::create(b, l, indices, at));
  Value zero = arith::ConstantIndexOp::create(b, l, 0);
  Value neg = arith::CmpIOp::create(b, l, arith::CmpIPredicate::slt, v, zero);
  return arith::SelectOp::create(b, l, neg, arith::AddIOp::create(b, l, v, size), v);
}

/// GatherND (opset 11-12+, batch_dims): a gather-style generic over
/// indices.shape[:-1] + data.shape[batch_dims + m:], m = indices.shape[-1]
/// (must be static).
LogicalResult convertGatherND(ImportContext &ctx, const onnx::NodeProto &node) {
  auto data = ctx.getTensor(node, node.input(0));
  auto indices = ctx.getTensor(node, node.input(1));
  if (failed(data) || failed(indices))
    return failure();
  int64_t r = tensorType(*data).getRank(), q = tensorType(*indices).getRank();
  int64_t bd = ctx.intAttr(node, "batch_dims", 0);
  if (q < 1 || r < 1)
    return ctx.fail(node, "data and indices must have rank >= 1");
  int64_t m = tensorType(*indices).getDimSize(q - 1);
  if (ShapedType::isDynamic(m))
    return ctx.unsupported(node, "the last dim of indices must be static");
  if (bd < 0 || bd >= std::min(r, q) || bd + m > r)
    return ctx.fail(node, "batch_dims / index length out of range");
  SmallVector<OpFoldResult> outSizes;
  for (int64_t d = 0; d < q - 1; ++d)
    outSizes.push_back(ctx.dim(*indices, d));
  for (int64_t d = bd + m; d < r; ++d)
    outSizes.push_back(ctx.dim(*data, d));
  SmallVector<Value> dataSizes;
  for (int64_t d = 0; d < r; ++d)
    dataSizes.push_back(ctx.toIndexValue(ctx.dim(*data, d)));
  Value result = gatherGeneric(ctx, *data, outSizes, {}, {}, [&](OpBuilder &b, Location l, ArrayRef<Value> idx, ValueRange) {
    SmallVector<Value> src(idx.begin(), idx.begin() + bd);
    ArrayRef<Value> batch = idx.take_front(q - 1);
    for (int64_t t = 0; t < m; ++t)
      src.push_back(clampIndex(b, l, ndIndexComponent(b, l, *indices, batch, t, dataSizes[bd + t]), dataSizes[bd + t]));
    for (int64_t d = q - 1; d < (int64_t)idx.size(); ++d)
      src.push_back(idx[d]);
    return src;
  });
  ctx.setValue(node.output(0), result);
  return success();
}

/// ScatterND (reduction none/add/mul): one generic over the data shape plus
/// reduction loops over indices.shape[:-1]; output element i starts as
/// data[i] and combines updates[p, i[m:]] for every batch position p whose
/// (wrapped) index tuple equals i[:m], in lexicographic order of p (so with
/// "none" the last duplicate wins).
LogicalResult convertScatterND(ImportContext &ctx, const onnx::NodeProto &node) {
  if (node.input_size() < 3)
    return ctx.fail(node, "expects data, indices and updates");
  auto data = ctx.getTensor(node, node.input(0));
  auto indices = ctx.getTensor(node, node.input(1));
  auto updates = ctx.getTensor(node, node.input(2));
  if (failed(data) || failed(indices) || failed(updates))
    return failure();
  int64_t r = tensorType(*data).getRank(), q = tensorType(*indices).getRank();
  if (q < 1 || r < 1)
    return ctx.fail(node, "data and indices must have rank >= 1");
  int64_t m = tensorType(*indices).getDimSize(q - 1);
  if (ShapedType::isDynamic(m))
    return ctx.unsupported(node, "the last dim of indices must be static");
  if (m > r || tensorType(*updates).getRank() != q - 1 + r - m)
    return ctx.fail(node, "updates must have shape indices.shape[:-1] + data.shape[m:]");
  std::string reduction = ctx.stringAttr(node, "reduction", "none");
  if (reduction != "none" && reduction != "add" && reduction != "mul")
    return ctx.unsupported(node, "reduction '" + reduction + "'");
  Type et = tensorType(*data).getElementType();
  bool isFloat = isa<FloatType>(et);
  if (reduction != "none" && !isFloat && !isa<IntegerType>(et))
    return ctx.unsupported(node, "reduction on this element type");
  if (llvm::is_contained(tensorType(*indices).getShape(), 0)) {
    ctx.setValue(node.output(0), *data); // no updates
    return success();
  }
  SmallVector<OpFoldResult> sizes = ctx.dims(*data);
  SmallVector<Value> dataSizes;
  for (int64_t d = 0; d < r; ++d)
    dataSizes.push_back(ctx.toIndexValue(ctx.dim(*data, d)));
  SmallVector<OpFoldResult> batchSizes;
  SmallVector<AffineExpr> batchExprs, outExprs;
  for (int64_t d = 0; d < q - 1; ++d) {
    batchSizes.push_back(ctx.dim(*indices, d));
    batchExprs.push_back(ctx.builder.getAffineDimExpr(r + d));
  }
  for (int64_t d = 0; d < r; ++d)
    outExprs.push_back(ctx.builder.getAffineDimExpr(d));
  int64_t numLoops = r + q - 1;
  // A dummy operand over the batch dims gives the reduction loops their ranges.
  Value batchRange = ctx.empty(batchSizes, ctx.builder.getI1Type());
  SmallVector<AffineMap> maps{AffineMap::get(numLoops, 0, batchExprs, &ctx.context),
                              AffineMap::get(numLoops, 0, outExprs, &ctx.context)};
  SmallVector<utils::IteratorType> iterators(r, utils::IteratorType::parallel);
  iterators.append(q - 1, utils::IteratorType::reduction);
  Value result = linalg::GenericOp::create(
                     ctx.builder, ctx.loc, TypeRange{data->getType()}, ValueRange{batchRange}, ValueRange{*data},
                     maps, iterators,
                     [&](OpBuilder &b, Location l, ValueRange args) {
                       Value acc = args[1];
                       SmallVector<Value> i, p;
                       for (int64_t d = 0; d < r; ++d)
                         i.push_back(linalg::IndexOp::create(b, l, d));
                       for (int64_t d = 0; d < q - 1; ++d)
                         p.push_back(linalg::IndexOp::create(b, l, r + d));
                       Value match = arith::ConstantOp::create(b, l, b.getBoolAttr(true));
                       for (int64_t t = 0; t < m; ++t) {
                         Value v = ndIndexComponent(b, l, *indices, p, t, dataSizes[t]);
                         match = arith::AndIOp::create(
                             b, l, match, arith::CmpIOp::create(b, l, arith::CmpIPredicate::eq, v, i[t]));
                       }
                       SmallVector<Value> at(p.begin(), p.end());
                       at.append(i.begin() + m, i.end());
                       Value u = tensor::ExtractOp::create(b, l, *updates, at);
                       Value combined = u;
                       if (reduction == "add")
                         combined = isFloat ? (Value)arith::AddFOp::create(b, l, acc, u)
                                            : (Value)arith::AddIOp::create(b, l, acc, u);
                       else if (reduction == "mul")
                         combined = isFloat ? (Value)arith::MulFOp::create(b, l, acc, u)
                                            : (Value)arith::MulIOp::create(b, l, acc, u);
                       linalg::YieldOp::create(b, l, (Value)arith::SelectOp::create(b, l, match, combined, acc));
                     })
                     .getResult(0);
  ctx.recordDims(result, sizes);
  ctx.setValue(node.output(0), result);
  return success();
}

/// EyeLike: a 2-D tensor of the input's shape with ones where
/// column - row == k; element type from `dtype` or the input.
LogicalResult convertEyeLike(ImportContext &ctx, const onnx::NodeProto &node) {
  auto x = ctx.getTensor(node, node.input(0));
  if (failed(x))
    return failure();
  if (tensorType(*x).getRank() != 2)
    return ctx.fail(node, "input must be 2-D");
  Type et = tensorType(*x).getElementType();
  if (const onnx::AttributeProto *dtype = ctx.attr(node, "dtype")) {
    et = convertElementType(ctx.context, static_cast<int>(dtype->i()));
    if (!et)
      return ctx.unsupported(node, "dtype " + std::to_string(dtype->i()));
  }
  int64_t k = ctx.intAttr(node, "k", 0);
  SmallVector<OpFoldResult> sizes = ctx.dims(*x);
  Value init = ctx.empty(sizes, et);
  Value one = ctx.scalarConstant(et, 1), zero = ctx.scalarConstant(et, 0);
  SmallVector<utils::IteratorType> parallel(2, utils::IteratorType::parallel);
  Value result = linalg::GenericOp::create(
                     ctx.builder, ctx.loc, TypeRange{init.getType()}, ValueRange{}, ValueRange{init},
                     SmallVector<AffineMap>{ctx.builder.getMultiDimIdentityMap(2)}, parallel,
                     [&](OpBuilder &b, Location l, ValueRange) {
                       Value i = arith::IndexCastOp::create(b, l, b.getI64Type(), linalg::IndexOp::create(b, l, 0));
                       Value j = arith::IndexCastOp::create(b, l, b.getI64Type(), linalg::IndexOp::create(b, l, 1));
                       Value diag = arith::CmpIOp::create(b, l, arith::CmpIPredicate::eq, arith::SubIOp::create(b, l, j, i),
                                                          arith::ConstantOp::create(b, l, b.getI64IntegerAttr(k)));
                       linalg::YieldOp::create(b, l, (Value)arith::SelectOp::create(b, l, diag, one, zero));
                     })
                     .getResult(0);
  ctx.recordDims(result, sizes);
  ctx.setValue(node.output(0), result);
  return success();
}

/// ReverseSequence (opset 10): along time_axis, reverses the first
/// sequence_lens[b] elements of each batch entry b (runtime lengths, clamped
/// to the time dim); the rest is copied.
LogicalResult convertReverseSequence(ImportContext &ctx, const onnx::NodeProto &node) {
  if (node.input_size() < 2)
    return ctx.fail(node, "expects input and sequence_lens");
  auto x = ctx.getTensor(node, node.input(0));
  auto lens = ctx.getTensor(node, node.input(1));
  if (failed(x) || failed(lens))
    return failure();
  int64_t rank = tensorType(*x).getRank();
  if (rank < 2 || tensorType(*lens).getRank() != 1)
    return ctx.fail(node, "expects input of rank >= 2 and 1-D sequence_lens");
  int64_t timeAxis = ctx.intAttr(node, "time_axis", 0), batchAxis = ctx.intAttr(node, "batch_axis", 1);
  if (!((timeAxis == 0 && batchAxis == 1) || (timeAxis == 1 && batchAxis == 0)))
    return ctx.fail(node, "time_axis and batch_axis must be 0 and 1");
  Value timeSize = ctx.toIndexValue(ctx.dim(*x, timeAxis));
  SmallVector<OpFoldResult> sizes = ctx.dims(*x);
  SmallVector<AffineMap> maps{AffineMap::get(rank, 0, {ctx.builder.getAffineDimExpr(batchAxis)}, &ctx.context)};
  Value result = gatherGeneric(ctx, *x, sizes, ValueRange{*lens}, maps,
                               [&](OpBuilder &b, Location l, ArrayRef<Value> idx, ValueRange args) {
                                 Value len = arith::IndexCastOp::create(b, l, b.getIndexType(), args[0]);
                                 Value zero = arith::ConstantIndexOp::create(b, l, 0);
                                 len = arith::MinSIOp::create(b, l, arith::MaxSIOp::create(b, l, len, zero), timeSize);
                                 Value t = idx[timeAxis];
                                 Value inside = arith::CmpIOp::create(b, l, arith::CmpIPredicate::slt, t, len);
                                 Value reversed = arith::SubIOp::create(
                                     b, l, arith::SubIOp::create(b, l, len, arith::ConstantIndexOp::create(b, l, 1)), t);
                                 SmallVector<Value> src(idx.begin(), idx.end());
                                 src[timeAxis] = arith::SelectOp::create(b, l, inside, reversed, t);
                                 return src;
                               });
  ctx.setValue(node.output(0), result);
  return success();
}

/// OneHot (opset 9/11): depth must be a constant (it is the size of the new
/// axis); values = [off, on] may be a runtime tensor. Negative indices wrap
/// by depth (opset 11); out-of-range indices give an all-off row.
LogicalResult convertOneHot(ImportContext &ctx, const onnx::NodeProto &node) {
  if (node.input_size() < 3)
    return ctx.fail(node, "expects indices, depth and values");
  auto indices = ctx.getTensor(node, node.input(0));
  auto values = ctx.getTensor(node, node.input(2));
  if (failed(indices) || failed(values))
    return failure();
  // depth: the size of the new axis; read at run time when not a constant.
  OpFoldResult depth;
  if (auto c = ctx.getConstant(node.input(1)); c && c->getNumElements() == 1) {
    if (isa<FloatType>(c->getElementType()))
      depth = ctx.builder.getIndexAttr((int64_t)(*c->getValues<APFloat>().begin()).convertToDouble());
    else
      depth = ctx.builder.getIndexAttr((*c->getValues<APInt>().begin()).getSExtValue());
  } else {
    auto st = ctx.getShapeOperand(node, 1, "depth", /*allowFloat=*/true);
    if (failed(st))
      return failure();
    if (st->elements.size() != 1)
      return ctx.fail(node, "depth must hold exactly one value");
    depth = ctx.toFoldResult(st->elements[0]);
  }
  if (failed(ctx.check(node, ctx.compare(arith::CmpIPredicate::sge, depth, ctx.builder.getIndexAttr(1)),
                       "depth must be positive")))
    return failure();
  Value depthValue = ctx.toIndexValue(depth);
  auto vType = tensorType(*values);
  if (vType.getRank() != 1 || vType.getDimSize(0) != 2)
    return ctx.fail(node, "values must be a 2-element 1-D tensor");
  Type it = tensorType(*indices).getElementType();
  if (!isa<IntegerType>(it) && !isa<FloatType>(it))
    return ctx.unsupported(node, "indices element type");
  int64_t inRank = tensorType(*indices).getRank(), rank = inRank + 1;
  auto axis = normalizeAxis(ctx.intAttr(node, "axis", -1), rank);
  if (!axis)
    return ctx.fail(node, "axis out of range");
  int64_t a = *axis;
  SmallVector<OpFoldResult> sizes;
  SmallVector<AffineExpr> inExprs;
  for (int64_t d = 0, k = 0; d < rank; ++d) {
    if (d == a) {
      sizes.push_back(depth);
      continue;
    }
    sizes.push_back(ctx.dim(*indices, k++));
    inExprs.push_back(ctx.builder.getAffineDimExpr(d));
  }
  Type et = vType.getElementType();
  Value init = ctx.empty(sizes, et);
  SmallVector<AffineMap> maps{AffineMap::get(rank, 0, inExprs, &ctx.context),
                              ctx.builder.getMultiDimIdentityMap(rank)};
  SmallVector<utils::IteratorType> parallel(rank, utils::IteratorType::parallel);
  bool wrap = ctx.opset >= 11;
  Value result = linalg::GenericOp::create(
                     ctx.builder, ctx.loc, TypeRange{init.getType()}, ValueRange{*indices}, ValueRange{init}, maps,
                     parallel,
                     [&](OpBuilder &b, Location l, ValueRange args) {
                       Value i = args[0];
                       if (isa<FloatType>(it))
                         i = arith::FPToSIOp::create(b, l, b.getI64Type(), i);
                       else if (it.getIntOrFloatBitWidth() < 64)
                         i = arith::ExtSIOp::create(b, l, b.getI64Type(), i);
                       Value zero = arith::ConstantOp::create(b, l, b.getI64IntegerAttr(0));
                       Value dep = arith::IndexCastOp::create(b, l, b.getI64Type(), depthValue);
                       if (wrap) {
                         Value neg = arith::CmpIOp::create(b, l, arith::CmpIPredicate::slt, i, zero);
                         i = arith::SelectOp::create(b, l, neg, arith::AddIOp::create(b, l, i, dep), i);
                       }
                       Value j = arith::IndexCastOp::create(b, l, b.getI64Type(), linalg::IndexOp::create(b, l, a));
                       Value hit = arith::CmpIOp::create(b, l, arith::CmpIPredicate::eq, i, j);
                       Value off = tensor::ExtractOp::create(b, l, *values, ValueRange{arith::ConstantIndexOp::create(b, l, 0)});
                       Value on = tensor::ExtractOp::create(b, l, *values, ValueRange{arith::ConstantIndexOp::create(b, l, 1)});
                       linalg::YieldOp::create(b, l, (Value)arith::SelectOp::create(b, l, hit, on, off));
                     })
                     .getResult(0);
  ctx.recordDims(result, sizes);
  ctx.setValue(node.output(0), result);
  return success();
}

/// GridSample (opset 16, 4-D, static H_in/W_in) as one gather-style generic
/// over (N, C, H_out, W_out), following PyTorch's grid_sample (the ONNX
/// reference): unnormalize with align_corners, padding zeros/border/
/// reflection, modes bilinear, nearest (round half to even) and bicubic
/// (A = -0.75, padding applied per tap).
LogicalResult convertGridSample(ImportContext &ctx, const onnx::NodeProto &node) {
  if (node.input_size() < 2)
    return ctx.fail(node, "expects X and grid");
  auto x = ctx.getTensor(node, node.input(0));
  auto grid = ctx.getTensor(node, node.input(1));
  if (failed(x) || failed(grid))
    return failure();
  auto xType = tensorType(*x), gType = tensorType(*grid);
  Type et = xType.getElementType();
  if (xType.getRank() != 4 || gType.getRank() != 4)
    return ctx.unsupported(node, "only 4-D inputs are supported");
  if (!isa<FloatType>(et) || gType.getElementType() != et)
    return ctx.unsupported(node, "only floating-point inputs of one type are supported");
  if (xType.isDynamicDim(2) || xType.isDynamicDim(3))
    return ctx.unsupported(node, "input spatial dims must be static");
  if (!gType.isDynamicDim(3) && gType.getDimSize(3) != 2)
    return ctx.fail(node, "grid must be [N, H_out, W_out, 2]");
  std::string mode = ctx.stringAttr(node, "mode", "bilinear");
  std::string padding = ctx.stringAttr(node, "padding_mode", "zeros");
  bool align = ctx.intAttr(node, "align_corners", 0) != 0;
  if (mode != "bilinear" && mode != "nearest" && mode != "bicubic")
    return ctx.unsupported(node, "mode '" + mode + "'");
  if (padding != "zeros" && padding != "border" && padding != "reflection")
    return ctx.unsupported(node, "padding_mode '" + padding + "'");
  int64_t inH = xType.getDimSize(2), inW = xType.getDimSize(3);
  if (inH == 0 || inW == 0)
    return ctx.fail(node, "empty input spatial dims");
  SmallVector<OpFoldResult> sizes{ctx.dim(*x, 0), ctx.dim(*x, 1), ctx.dim(*grid, 1), ctx.dim(*grid, 2)};
  Value init = ctx.empty(sizes, et);
  auto gridMap = [&](int64_t component) {
    return AffineMap::get(4, 0,
                          {ctx.builder.getAffineDimExpr(0), ctx.builder.getAffineDimExpr(2),
                           ctx.builder.getAffineDimExpr(3), ctx.builder.getAffineConstantExpr(component)},
                          &ctx.context);
  };
  SmallVector<AffineMap> maps{gridMap(0), gridMap(1), ctx.builder.getMultiDimIdentityMap(4)};
  SmallVector<utils::IteratorType> parallel(4, utils::IteratorType::parallel);
  Value source = *x;
  Value result = linalg::GenericOp::create(
      ctx.builder, ctx.loc, TypeRange{init.getType()}, ValueRange{*grid, *grid}, ValueRange{init}, maps, parallel,
      [&](OpBuilder &b, Location l, ValueRange a) {
        auto f = [&](double v) -> Value { return arith::ConstantOp::create(b, l, b.getFloatAttr(et, v)); };
        auto add = [&](Value p, Value q) -> Value { return arith::AddFOp::create(b, l, p, q); };
        auto sub = [&](Value p, Value q) -> Value { return arith::SubFOp::create(b, l, p, q); };
        auto mul = [&](Value p, Value q) -> Value { return arith::MulFOp::create(b, l, p, q); };
        auto unnormalize = [&](Value g, int64_t size) -> Value {
          if (align)
            return mul(mul(add(g, f(1)), f(0.5)), f(size - 1));
          return mul(sub(mul(add(g, f(1)), f(size)), f(1)), f(0.5));
        };
        auto clip = [&](Value c, int64_t size) -> Value {
          return arith::MinimumFOp::create(b, l, arith::MaximumFOp::create(b, l, c, f(0)), f(size - 1));
        };
        auto reflectCoord = [&](Value c, int64_t twiceLow, int64_t twiceHigh) -> Value {
          if (twiceLow == twiceHigh)
            return f(0);
          double lo = twiceLow / 2.0, span = (twiceHigh - twiceLow) / 2.0;
          Value in = math::AbsFOp::create(b, l, sub(c, f(lo)));
          Value extra = arith::RemFOp::create(b, l, in, f(span));
          Value flips = math::FloorOp::create(b, l, arith::DivFOp::create(b, l, in, f(span)));
          Value half = mul(flips, f(0.5));
          Value even = arith::CmpFOp::create(b, l, arith::CmpFPredicate::OEQ, math::FloorOp::create(b, l, half), half);
          return arith::SelectOp::create(b, l, even, add(extra, f(lo)), add(sub(f(span), extra), f(lo)));
        };
        auto applyPadding = [&](Value c, int64_t size) -> Value {
          if (padding == "border")
            return clip(c, size);
          if (padding == "reflection") {
            c = align ? reflectCoord(c, 0, 2 * (size - 1)) : reflectCoord(c, -1, 2 * size - 1);
            return clip(c, size);
          }
          return c;
        };
        Value n = linalg::IndexOp::create(b, l, 0), ch = linalg::IndexOp::create(b, l, 1);
        // Value at integer-valued float coordinates, 0 when out of bounds.
        auto sample = [&](Value fx, Value fy) -> Value {
          Value inX = arith::AndIOp::create(b, l, arith::CmpFOp::create(b, l, arith::CmpFPredicate::OGE, fx, f(0)),
                                            arith::CmpFOp::create(b, l, arith::CmpFPredicate::OLE, fx, f(inW - 1)));
          Value inY = arith::AndIOp::create(b, l, arith::CmpFOp::create(b, l, arith::CmpFPredicate::OGE, fy, f(0)),
                                            arith::CmpFOp::create(b, l, arith::CmpFPredicate::OLE, fy, f(inH - 1)));
          Value inside = arith::AndIOp::create(b, l, inX, inY);
          // Out-of-bounds (or NaN) coordinates read element 0 and are masked.
          auto toIndex = [&](Value c, int64_t) -> Value {
            Value safe = arith::SelectOp::create(b, l, inside, c, f(0));
            Value i = arith::FPToSIOp::create(b, l, b.getI64Type(), safe);
            return arith::IndexCastOp::create(b, l, b.getIndexType(), i);
          };
          Value v = tensor::ExtractOp::create(b, l, source, ValueRange{n, ch, toIndex(fy, inH), toIndex(fx, inW)});
          return arith::SelectOp::create(b, l, inside, v, f(0));
        };
        Value ix = unnormalize(a[0], inW), iy = unnormalize(a[1], inH);
        Value out;
        if (mode == "nearest") {
          ix = applyPadding(ix, inW);
          iy = applyPadding(iy, inH);
          out = sample(math::RoundEvenOp::create(b, l, ix), math::RoundEvenOp::create(b, l, iy));
        } else if (mode == "bilinear") {
          ix = applyPadding(ix, inW);
          iy = applyPadding(iy, inH);
          Value x0 = math::FloorOp::create(b, l, ix), y0 = math::FloorOp::create(b, l, iy);
          Value x1 = add(x0, f(1)), y1 = add(y0, f(1));
          Value wx1 = sub(ix, x0), wx0 = sub(x1, ix), wy1 = sub(iy, y0), wy0 = sub(y1, iy);
          out = add(add(mul(sample(x0, y0), mul(wx0, wy0)), mul(sample(x1, y0), mul(wx1, wy0))),
                    add(mul(sample(x0, y1), mul(wx0, wy1)), mul(sample(x1, y1), mul(wx1, wy1))));
        } else {
          const double A = -0.75;
          auto conv1 = [&](Value t) -> Value { // ((A+2)t - (A+3)) t^2 + 1
            return add(mul(mul(sub(mul(f(A + 2), t), f(A + 3)), t), t), f(1));
          };
          auto conv2 = [&](Value t) -> Value { // ((A t - 5A) t + 8A) t - 4A
            return sub(mul(add(mul(sub(mul(f(A), t), f(5 * A)), t), f(8 * A)), t), f(4 * A));
          };
          auto coefficients = [&](Value t) -> SmallVector<Value> {
            return {conv2(add(t, f(1))), conv1(t), conv1(sub(f(1), t)), conv2(sub(f(2), t))};
          };
          Value x0 = math::FloorOp::create(b, l, ix), y0 = math::FloorOp::create(b, l, iy);
          SmallVector<Value> cx = coefficients(sub(ix, x0)), cy = coefficients(sub(iy, y0));
          out = f(0);
          for (int64_t j = 0; j < 4; ++j) {
            Value ty = applyPadding(add(y0, f(j - 1)), inH);
            Value row = f(0);
            for (int64_t i = 0; i < 4; ++i) {
              Value tx = applyPadding(add(x0, f(i - 1)), inW);
              row = add(row, mul(sample(tx, ty), cx[i]));
            }
            out = add(out, mul(row, cy[j]));
          }
        }
        linalg::YieldOp::create(b, l, out);
      }).getResult(0);
  ctx.recordDims(result, sizes);
  ctx.setValue(node.output(0), result);
  return success();
}

/// DepthToSpace / SpaceToDepth as reshape + transpose + reshape.
LogicalResult convertDepthSpace(ImportContext &ctx, const onnx::NodeProto &node, bool toSpace) {
  auto x = ctx.getTensor(node, node.input(0));
  if (failed(x))
    return failure();
  auto type = tensorType(*x);
  if (type.getRank() != 4 || type.isDynamicDim(1) || type.isDynamicDim(2) || type.isDynamicDim(3))
    return ctx.unsupported(node, "expects a 4-D input with static C, H, W");
  int64_t b = ctx.intAttr(node, "blocksize", 0);
  if (b <= 0)
    return ctx.fail(node, "blocksize must be positive");
  int64_t c = type.getDimSize(1), h = type.getDimSize(2), w = type.getDimSize(3);
  OpFoldResult n = ctx.dim(*x, 0);
  auto idx = [&](int64_t v) -> OpFoldResult { return ctx.builder.getIndexAttr(v); };
  Value result;
  if (toSpace) {
    if (c % (b * b))
      return ctx.fail(node, "channels are not divisible by blocksize^2");
    bool crd = ctx.stringAttr(node, "mode", "DCR") == "CRD";
    Value r = crd ? ctx.reshape(*x, {n, idx(c / (b * b)), idx(b), idx(b), idx(h), idx(w)})
                  : ctx.reshape(*x, {n, idx(b), idx(b), idx(c / (b * b)), idx(h), idx(w)});
    Value t = crd ? ctx.transpose(r, {0, 1, 4, 2, 5, 3}) : ctx.transpose(r, {0, 3, 4, 1, 5, 2});
    result = ctx.reshape(t, {n, idx(c / (b * b)), idx(h * b), idx(w * b)});
  } else {
    if (h % b || w % b)
      return ctx.fail(node, "spatial dims are not divisible by blocksize");
    Value r = ctx.reshape(*x, {n, idx(c), idx(h / b), idx(b), idx(w / b), idx(b)});
    Value t = ctx.transpose(r, {0, 3, 5, 1, 2, 4});
    result = ctx.reshape(t, {n, idx(c * b * b), idx(h / b), idx(w / b)});
  }
  ctx.setValue(node.output(0), result);
  return success();
}

} // namespace

LogicalResult convertPadAtRunTime(ImportContext &ctx, const onnx::NodeProto &node, Value input,
                                  const ShapeTensor &pads, const std::string &mode) {
  using P = arith::CmpIPredicate;
  auto type = tensorType(input);
  int64_t rank = type.getRank();
  Type et = type.getElementType();
  if ((int64_t)pads.elements.size() != 2 * rank)
    return ctx.fail(node, "pads has " + std::to_string(pads.elements.size()) +
                              " values for a rank-" + std::to_string(rank) + " input (needs " +
                              std::to_string(2 * rank) + ")");
  Value padValue;
  if (mode == "constant" && ImportContext::hasInput(node, 2)) {
    auto v = ctx.getTensor(node, node.input(2));
    if (failed(v))
      return failure();
    auto vType = tensorType(*v);
    if (!vType.hasStaticShape() || vType.getNumElements() != 1 || vType.getRank() > 1 ||
        vType.getElementType() != et)
      return ctx.fail(node, "constant_value must be a scalar of the input's element type");
    padValue = *v;
  }
  OpBuilder &b = ctx.builder;
  OpFoldResult zero = b.getIndexAttr(0);
  SmallVector<OpFoldResult> inDims = ctx.dims(input), outSizes;
  SmallVector<Value> lows, inSizes;
  for (int64_t d = 0; d < rank; ++d) {
    OpFoldResult low = ctx.toFoldResult(pads.elements[d]);
    OpFoldResult high = ctx.toFoldResult(pads.elements[d + rank]);
    OpFoldResult out = ctx.indexOp<arith::AddIOp>(ctx.indexOp<arith::AddIOp>(inDims[d], low), high);
    std::string dim = "dim " + std::to_string(d);
    if (failed(ctx.check(node, ctx.compare(P::sge, out, zero), "the pads of " + dim + " remove more than its size")))
      return failure();
    Value padded = ctx.either(ctx.compare(P::ne, low, zero), ctx.compare(P::ne, high, zero));
    if (mode != "constant" &&
        failed(ctx.check(node,
                         ctx.either(ctx.compare(P::sgt, inDims[d], zero),
                                    ctx.logicalNot(padded)),
                         "mode '" + mode + "' cannot pad the empty " + dim)))
      return failure();
    if (mode == "reflect" &&
        failed(ctx.check(node,
                         ctx.both(ctx.compare(P::slt, low, inDims[d]), ctx.compare(P::slt, high, inDims[d])),
                         "reflect pads of " + dim + " must be smaller than its size")))
      return failure();
    // The result reads a clamped input index even where it holds the pad
    // value, so the input must not be empty.
    if (mode == "constant" &&
        failed(ctx.check(node, ctx.compare(P::sgt, inDims[d], zero),
                         "constant padding of an empty input (" + dim +
                             " is 0) is not supported when the pads are known only at run time")))
      return failure();
    outSizes.push_back(out);
    lows.push_back(ctx.toIndexValue(low));
    inSizes.push_back(ctx.toIndexValue(inDims[d]));
  }
  bool reflect = mode == "reflect", constant = mode == "constant";
  Value init = ctx.empty(outSizes, et);
  SmallVector<utils::IteratorType> parallel(rank, utils::IteratorType::parallel);
  Value scalar = constant && !padValue ? ctx.scalarConstant(et, 0) : Value();
  Value result =
      linalg::GenericOp::create(
          b, ctx.loc, TypeRange{init.getType()}, ValueRange{}, ValueRange{init},
          SmallVector<AffineMap>{b.getMultiDimIdentityMap(rank)}, parallel,
          [&](OpBuilder &nb, Location l, ValueRange) {
            Value zeroI = arith::ConstantIndexOp::create(nb, l, 0);
            Value oneI = arith::ConstantIndexOp::create(nb, l, 1);
            Value inside = arith::ConstantOp::create(nb, l, nb.getBoolAttr(true));
            SmallVector<Value> src;
            for (int64_t d = 0; d < rank; ++d) {
              Value i = arith::SubIOp::create(nb, l, linalg::IndexOp::create(nb, l, d), lows[d]);
              Value last = arith::SubIOp::create(nb, l, inSizes[d], oneI);
              if (constant) {
                inside = arith::AndIOp::create(
                    nb, l, inside,
                    arith::AndIOp::create(nb, l, arith::CmpIOp::create(nb, l, P::sge, i, zeroI),
                                          arith::CmpIOp::create(nb, l, P::slt, i, inSizes[d])));
              } else if (reflect) {
                Value neg = arith::CmpIOp::create(nb, l, P::slt, i, zeroI);
                i = arith::SelectOp::create(nb, l, neg, arith::SubIOp::create(nb, l, zeroI, i), i);
                Value over = arith::CmpIOp::create(nb, l, P::sgt, i, last);
                i = arith::SelectOp::create(nb, l, over,
                                            arith::SubIOp::create(nb, l, arith::AddIOp::create(nb, l, last, last), i), i);
              }
              // Clamped so the read is in bounds also where the result is the pad value.
              src.push_back(arith::MaxSIOp::create(nb, l, arith::MinSIOp::create(nb, l, i, last), zeroI));
            }
            Value v = tensor::ExtractOp::create(nb, l, input, src);
            if (constant) {
              Value fill = scalar;
              if (!fill) {
                SmallVector<Value> at;
                if (tensorType(padValue).getRank() == 1)
                  at.push_back(zeroI);
                fill = tensor::ExtractOp::create(nb, l, padValue, at);
              }
              v = arith::SelectOp::create(nb, l, inside, v, fill);
            }
            linalg::YieldOp::create(nb, l, v);
          })
          .getResult(0);
  ctx.recordDims(result, outSizes);
  ctx.setValue(node.output(0), result);
  return success();
}

void registerShapeOps(OpRegistry &r) {
  r.add("Size", convertSize);
  r.add("Range", convertRange);
  r.add("Compress", convertCompress, 9);
  r.add("NonZero", convertNonZero, 9);
  r.add("Unique", convertUnique, 11);
  r.add("Tile", convertTile, 6);
  r.add("Trilu", convertTrilu);
  r.add("GatherElements", convertGatherElements);
  r.add("ScatterElements", convertScatterElements, 11);
  r.add("Scatter", convertScatterElements, 9, 10);
  r.add("GatherND", convertGatherND, 11);
  r.add("EyeLike", convertEyeLike, 9);
  r.add("OneHot", convertOneHot, 9);
  r.add("GridSample", convertGridSample, 16);
  r.add("ReverseSequence", convertReverseSequence, 10);
  r.add("ScatterND", convertScatterND, 11);
  r.add("DepthToSpace", [](ImportContext &c, const onnx::NodeProto &n) { return convertDepthSpace(c, n, true); });
  r.add("SpaceToDepth", [](ImportContext &c, const onnx::NodeProto &n) { return convertDepthSpace(c, n, false); });
  r.add("Shape", convertShape);
  r.add("Reshape", convertReshape, 5);
  r.add("Flatten", convertFlatten);
  r.add("Unsqueeze", convertUnsqueeze);
  r.add("Squeeze", convertSqueeze);
  r.add("Transpose", convertTranspose);
  r.add("Concat", convertConcat, 4);
  r.add("Slice", convertSlice);
  r.add("Split", convertSplit);
  r.add("Gather", convertGather);
  r.add("Expand", convertExpand);
  r.add("ConstantOfShape", convertConstantOfShape);
}

} // namespace turbine::onnx_frontend
