//===- SliceConcatOps.cpp - ONNX Concat, Slice, Split --------------------===//
//
// Concat (symbolic on shape tensors; on data one generic that selects, per
// output position, the input holding it), Slice (a gather-style generic
// out[i] = in[start + i*step]; starts/ends/axes/steps read at run time get
// ONNX's normalization and clamping as index arithmetic) and Split (one
// slice per output).
//===----------------------------------------------------------------------===//
#include "ImportContext.h"

#include <cmath>
#include <limits>

using namespace mlir;

namespace turbine::onnx_frontend {
namespace {

RankedTensorType tensorType(Value v) { return cast<RankedTensorType>(v.getType()); }

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
  if (rank == 0) // normalizeAxis accepts axis 0 of a scalar (regress-concat-scalars)
    return ctx.fail(node, "cannot concatenate rank-0 tensors");
  auto axisOpt = normalizeAxis(axisAttr, rank);
  if (!axisOpt)
    return ctx.fail(node, "axis out of range");
  int64_t axis = *axisOpt;
  SmallVector<Value> parts;
  for (Value v : inputs) {
    auto t = tensorType(v);
    if (t.getRank() != rank)
      return ctx.fail(node, "inputs have different ranks");
    if (t.getElementType() != tensorType(inputs[0]).getElementType())
      return ctx.fail(node, "inputs have different element types");
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
  if (rank == 0) // normalizeAxis accepts axis 0 of a scalar; Split has no dim to split
    return ctx.fail(node, "cannot split a rank-0 tensor");
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

} // namespace

void registerSliceConcatOps(OpRegistry &r) {
  r.add("Concat", convertConcat, 4);
  r.add("Slice", convertSlice);
  r.add("Split", convertSplit);
}

} // namespace turbine::onnx_frontend
