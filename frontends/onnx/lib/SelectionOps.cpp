//===- SelectionOps.cpp - ONNX Compress, NonZero, Unique -----------------===//
//
// Ops whose result size is a count of data: a kernel counts, the host reads
// the count (the result's dynamic size), and generics find the positions
// (setFlagPositions, shared with other importers through ImportContext.h).
//===----------------------------------------------------------------------===//
#include "ImportContext.h"

#include <cmath>
#include <limits>

using namespace mlir;

namespace turbine::onnx_frontend {
namespace {

RankedTensorType tensorType(Value v) { return cast<RankedTensorType>(v.getType()); }

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

void registerSelectionOps(OpRegistry &r) {
  r.add("Compress", convertCompress, 9);
  r.add("NonZero", convertNonZero, 9);
  r.add("Unique", convertUnique, 11);
}

} // namespace turbine::onnx_frontend
