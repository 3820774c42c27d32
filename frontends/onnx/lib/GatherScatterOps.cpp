//===- GatherScatterOps.cpp - ONNX gathers and scatters ------------------===//
//
// Gather, GatherElements, GatherND (gather-style linalg.generics whose
// tensor.extract indices are clamped, so always in bounds; Gather on shape
// tensors is symbolic), ScatterElements / Scatter and ScatterND (a generic
// over the output that finds, per position, the last update written there,
// with the reductions of opset 16+), and ReverseSequence.
//===----------------------------------------------------------------------===//
#include "ImportContext.h"

#include <cmath>
#include <limits>

using namespace mlir;

namespace turbine::onnx_frontend {
namespace {

RankedTensorType tensorType(Value v) { return cast<RankedTensorType>(v.getType()); }

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
  // (Found by the onnx fuzzer: f16 indices made IR that did not verify.)
  if (!isa<IntegerType>(tensorType(*indices).getElementType()))
    return ctx.fail(node, "indices must be integers");
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
  // (Found by the onnx fuzzer: f16 lengths made IR that did not verify.)
  if (!isa<IntegerType>(tensorType(*lens).getElementType()))
    return ctx.fail(node, "sequence_lens must be integers");
  int64_t timeAxis = ctx.intAttr(node, "time_axis", 0), batchAxis = ctx.intAttr(node, "batch_axis", 1);
  if (!((timeAxis == 0 && batchAxis == 1) || (timeAxis == 1 && batchAxis == 0)))
    return ctx.fail(node, "time_axis and batch_axis must be 0 and 1");
  // One length per batch element (checked at run time when dynamic; another
  // static length made IR that did not verify).
  if (failed(ctx.check(node, ctx.compare(arith::CmpIPredicate::eq, ctx.dim(*lens, 0), ctx.dim(*x, batchAxis)),
                       "sequence_lens must have one entry per batch element")))
    return failure();
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

} // namespace

void registerGatherScatterOps(OpRegistry &r) {
  r.add("GatherElements", convertGatherElements);
  r.add("ScatterElements", convertScatterElements, 11);
  r.add("Scatter", convertScatterElements, 9, 10);
  r.add("GatherND", convertGatherND, 11);
  r.add("ReverseSequence", convertReverseSequence, 10);
  r.add("ScatterND", convertScatterND, 11);
  r.add("Gather", convertGather);
}

} // namespace turbine::onnx_frontend
