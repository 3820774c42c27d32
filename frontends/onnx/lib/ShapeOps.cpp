//===- ShapeOps.cpp - ONNX shape and data-movement ops --------------------===//
//
// Shape, Reshape, Flatten, Unsqueeze/Squeeze, Transpose, Concat, Slice, Split,
// Gather, Expand and ConstantOfShape. Ops on shape tensors (Shape-derived
// int64 tensors) are evaluated symbolically; ops on data become
// expand/collapse_shape, linalg.transpose, or gather-style linalg.generic ops
// whose tensor.extract indices are always in bounds.
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

/// Reads an int list from input `i` (opset >= some version) or attribute
/// `attrName`; fails with a message when it is not constant.
FailureOr<std::optional<std::vector<int64_t>>>
intListFromInputOrAttr(ImportContext &ctx, const onnx::NodeProto &node, int i,
                       const std::string &attrName, bool fromInput) {
  if (!fromInput)
    return ctx.intsAttr(node, attrName);
  if (!ImportContext::hasInput(node, i))
    return std::optional<std::vector<int64_t>>{};
  auto shape = ctx.getShapeTensor(node.input(i));
  if (!shape || !llvm::all_of(shape->elements, [](const SymDim &d) { return d.isConstant(); })) {
    (void)ctx.unsupported(node, "input '" + node.input(i) + "' (" + attrName +
                                    ") must be a constant");
    return failure();
  }
  std::vector<int64_t> values;
  for (const SymDim &d : shape->elements)
    values.push_back(d.constant);
  return std::optional<std::vector<int64_t>>(values);
}

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

LogicalResult convertReshape(ImportContext &ctx, const onnx::NodeProto &node) {
  if (node.input_size() < 2)
    return ctx.fail(node, "expects 2 inputs");
  auto target = ctx.getShapeTensor(node.input(1));
  if (!target)
    return ctx.unsupported(node, "the target shape '" + node.input(1) +
                                     "' must be computable at import time (constant or derived from shapes)");
  bool allowZero = ctx.opset >= 14 && ctx.intAttr(node, "allowzero", 0) != 0;
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

LogicalResult convertUnsqueeze(ImportContext &ctx, const onnx::NodeProto &node) {
  auto axes = intListFromInputOrAttr(ctx, node, 1, "axes", ctx.opset >= 13);
  if (failed(axes))
    return failure();
  if (!*axes)
    return ctx.fail(node, "missing axes");
  if (ctx.isShapeLike(node.input(0))) {
    ShapeTensor data = *ctx.getShapeTensor(node.input(0));
    if (data.isScalar && (*axes)->size() == 1) {
      data.isScalar = false;
      ctx.setShapeTensor(node.output(0), data);
      return success();
    }
  }
  auto x = ctx.getTensor(node, node.input(0));
  if (failed(x))
    return failure();
  int64_t outRank = tensorType(*x).getRank() + (int64_t)(*axes)->size();
  std::vector<bool> isNew(outRank, false);
  for (int64_t a : **axes) {
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
  auto axes = intListFromInputOrAttr(ctx, node, 1, "axes", ctx.opset >= 13);
  if (failed(axes))
    return failure();
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
  if (*axes) {
    for (int64_t a : **axes) {
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
                   ArrayRef<OpFoldResult> sizes, ArrayRef<int64_t> steps) {
  int64_t rank = tensorType(input).getRank();
  bool identity = true;
  for (int64_t d = 0; d < rank; ++d) {
    SymDim s = ctx.toSymDim(starts[d]);
    identity &= s.isConstant() && s.constant == 0 && steps[d] == 1 &&
                ctx.toSymDim(sizes[d]) == ctx.toSymDim(ctx.dim(input, d));
  }
  if (identity)
    return input;
  SmallVector<Value> startValues;
  for (OpFoldResult s : starts)
    startValues.push_back(ctx.toIndexValue(s));
  Value init = ctx.empty(sizes, tensorType(input).getElementType());
  SmallVector<AffineMap> maps{ctx.builder.getMultiDimIdentityMap(rank)};
  SmallVector<utils::IteratorType> iterators(rank, utils::IteratorType::parallel);
  auto generic = linalg::GenericOp::create(
      ctx.builder, ctx.loc, TypeRange{init.getType()}, ValueRange{}, ValueRange{init}, maps,
      iterators, [&](OpBuilder &b, Location l, ValueRange) {
        SmallVector<Value> idx;
        for (int64_t d = 0; d < rank; ++d) {
          Value i = linalg::IndexOp::create(b, l, d);
          if (steps[d] != 1)
            i = arith::MulIOp::create(b, l, i, arith::ConstantIndexOp::create(b, l, steps[d]));
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

LogicalResult convertSlice(ImportContext &ctx, const onnx::NodeProto &node) {
  bool fromInputs = ctx.opset >= 10;
  auto starts = intListFromInputOrAttr(ctx, node, 1, "starts", fromInputs);
  if (failed(starts))
    return failure();
  auto ends = intListFromInputOrAttr(ctx, node, 2, "ends", fromInputs);
  if (failed(ends))
    return failure();
  auto axes = intListFromInputOrAttr(ctx, node, 3, "axes", fromInputs);
  if (failed(axes))
    return failure();
  auto steps = intListFromInputOrAttr(ctx, node, 4, "steps", fromInputs);
  if (failed(steps))
    return failure();
  if (!*starts || !*ends || (*starts)->size() != (*ends)->size())
    return ctx.fail(node, "starts and ends are missing or of different lengths");
  size_t count = (*starts)->size();
  std::vector<int64_t> axesList, stepsList(count, 1);
  if (*axes)
    axesList = **axes;
  else
    for (size_t k = 0; k < count; ++k)
      axesList.push_back(k);
  if (*steps)
    stepsList = **steps;
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
    int64_t s = clampStatic((**starts)[0], n, step, false);
    int64_t e = clampStatic((**ends)[0], n, step, true);
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
    int64_t start = (**starts)[k], end = (**ends)[k];
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
      return ctx.unsupported(node, "negative steps on a dynamic dim");
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
  ctx.setValue(node.output(0), stridedSlice(ctx, *x, startSizes, outSizes, stepPerDim));
  return success();
}

LogicalResult convertSplit(ImportContext &ctx, const onnx::NodeProto &node) {
  auto x = ctx.getTensor(node, node.input(0));
  if (failed(x))
    return failure();
  int64_t rank = tensorType(*x).getRank();
  auto axis = normalizeAxis(ctx.intAttr(node, "axis", 0), rank);
  if (!axis)
    return ctx.fail(node, "axis out of range");
  auto split = intListFromInputOrAttr(ctx, node, 1, "split", ctx.opset >= 13);
  if (failed(split))
    return failure();
  int64_t outputs = node.output_size();
  SymDim total = ctx.toSymDim(ctx.dim(*x, *axis));
  SmallVector<OpFoldResult> partSizes;
  if (*split) {
    if ((int64_t)(*split)->size() != outputs)
      return ctx.fail(node, "split has " + std::to_string((*split)->size()) + " sizes for " +
                                std::to_string(outputs) + " outputs");
    for (int64_t s : **split)
      partSizes.push_back(ctx.builder.getIndexAttr(s));
  } else {
    if (!total.isConstant())
      return ctx.unsupported(node, "equal split of a dynamic dim");
    int64_t chunk = (total.constant + outputs - 1) / outputs;
    for (int64_t k = 0; k < outputs; ++k)
      partSizes.push_back(ctx.builder.getIndexAttr(
          std::max<int64_t>(0, std::min(chunk, total.constant - k * chunk))));
  }
  int64_t offset = 0;
  for (int64_t k = 0; k < outputs; ++k) {
    SmallVector<OpFoldResult> starts(rank, ctx.builder.getIndexAttr(0));
    starts[*axis] = ctx.builder.getIndexAttr(offset);
    SmallVector<OpFoldResult> sizes = ctx.dims(*x);
    sizes[*axis] = partSizes[k];
    offset += ctx.toSymDim(partSizes[k]).constant;
    if (!node.output(k).empty())
      ctx.setValue(node.output(k), stridedSlice(ctx, *x, starts, sizes, SmallVector<int64_t>(rank, 1)));
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
  auto shape = ctx.getShapeTensor(node.input(1));
  if (!shape)
    return ctx.unsupported(node, "the shape input must be computable at import time");
  auto x = ctx.getTensor(node, node.input(0));
  if (failed(x))
    return failure();
  auto type = tensorType(*x);
  int64_t rank = std::max<int64_t>(type.getRank(), shape->elements.size());
  SmallVector<OpFoldResult> sizes;
  for (int64_t d = 0; d < rank; ++d) {
    int64_t k = d - (rank - type.getRank());
    int64_t j = d - (rank - (int64_t)shape->elements.size());
    std::optional<SymDim> fromShape;
    if (j >= 0)
      fromShape = shape->elements[j];
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
  auto shape = ctx.getShapeTensor(node.input(0));
  if (!shape)
    return ctx.unsupported(node, "the shape input must be computable at import time");
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

/// Range with constant start/limit/delta becomes a constant.
LogicalResult convertRange(ImportContext &ctx, const onnx::NodeProto &node) {
  if (node.input_size() != 3)
    return ctx.fail(node, "expects 3 inputs");
  SmallVector<DenseElementsAttr> args;
  for (int i = 0; i < 3; ++i) {
    auto c = ctx.getConstant(node.input(i));
    if (!c || c->getNumElements() != 1)
      return ctx.unsupported(node, "start, limit and delta must be constant scalars");
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
  auto repeats = ctx.getShapeTensor(node.input(1));
  int64_t rank = tensorType(*x).getRank();
  if (!repeats || (int64_t)repeats->elements.size() != rank ||
      !llvm::all_of(repeats->elements, [](const SymDim &d) { return d.isConstant() && d.constant >= 0; }))
    return ctx.unsupported(node, "repeats must be non-negative constants, one per dim");
  SmallVector<OpFoldResult> inSizes = ctx.dims(*x), outSizes;
  SmallVector<Value> inSizeValues;
  for (int64_t d = 0; d < rank; ++d) {
    outSizes.push_back(product(ctx, {inSizes[d], ctx.builder.getIndexAttr(repeats->elements[d].constant)}));
    inSizeValues.push_back(ctx.toIndexValue(inSizes[d]));
  }
  Value result = gatherGeneric(ctx, *x, outSizes, {}, {}, [&](OpBuilder &b, Location l, ArrayRef<Value> idx, ValueRange) {
    SmallVector<Value> src;
    for (int64_t d = 0; d < rank; ++d)
      src.push_back(repeats->elements[d].constant == 1 ? idx[d]
                                                       : (Value)arith::RemSIOp::create(b, l, idx[d], inSizeValues[d]));
    return src;
  });
  ctx.setValue(node.output(0), result);
  return success();
}

LogicalResult convertTrilu(ImportContext &ctx, const onnx::NodeProto &node) {
  auto x = ctx.getTensor(node, node.input(0));
  if (failed(x))
    return failure();
  int64_t rank = tensorType(*x).getRank();
  if (rank < 2)
    return ctx.fail(node, "input must have rank >= 2");
  int64_t k = 0;
  if (ImportContext::hasInput(node, 1)) {
    auto kt = ctx.getShapeTensor(node.input(1));
    if (!kt || kt->elements.size() != 1 || !kt->elements[0].isConstant())
      return ctx.unsupported(node, "k must be a constant");
    k = kt->elements[0].constant;
  }
  bool upper = ctx.intAttr(node, "upper", 1) != 0;
  Type et = tensorType(*x).getElementType();
  SmallVector<OpFoldResult> sizes = ctx.dims(*x);
  Value init = ctx.empty(sizes, et);
  SmallVector<AffineMap> maps{ctx.builder.getMultiDimIdentityMap(rank), ctx.builder.getMultiDimIdentityMap(rank)};
  SmallVector<utils::IteratorType> iterators(rank, utils::IteratorType::parallel);
  Value zero = ctx.scalarConstant(et, 0);
  auto g = linalg::GenericOp::create(
      ctx.builder, ctx.loc, TypeRange{init.getType()}, ValueRange{*x}, ValueRange{init}, maps, iterators,
      [&](OpBuilder &b, Location l, ValueRange a) {
        Value i = linalg::IndexOp::create(b, l, rank - 2);
        Value j = linalg::IndexOp::create(b, l, rank - 1);
        Value diff = arith::SubIOp::create(b, l, j, i);
        Value kv = arith::ConstantIndexOp::create(b, l, k);
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

void registerShapeOps(OpRegistry &r) {
  r.add("Size", convertSize);
  r.add("Range", convertRange);
  r.add("Tile", convertTile, 6);
  r.add("Trilu", convertTrilu);
  r.add("GatherElements", convertGatherElements);
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
