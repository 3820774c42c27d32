//===- SortOps.cpp - ONNX TopK -> rank-and-select linalg generics ----------===//
//
// TopK (opsets 1, 10, 11; K an attribute, a constant, or read on the host at
// run time) without a sort, as plain linalg.generics. The order
// is "larger first" (smaller first for largest=0), equal values by smaller
// index, as ONNX specifies. A small constant K (<= kMaxSelectionPasses) takes
// K selection passes, O(n) each: pass j reduces the axis to the best element
// that comes after pass j-1's pick, and a last generic gathers the K picks.
// Otherwise the elements are ranked:
//   1. rank[.., i, ..] = number of elements along the axis that come before
//      element i in the requested order (larger first, or smaller first for
//      largest=0; equal values ordered by smaller index, as ONNX specifies),
//      a reduction over a second copy of the axis: O(n^2) per row;
//   2. for each output position j < K along the axis, values/indices take the
//      element whose rank is j (a reduction over the axis: O(n * K)).
// Output is always sorted (allowed for sorted=0). Straightforward rather than
// fast: no sort, O(n * K) or O(n^2) work per row.
//===----------------------------------------------------------------------===//
#include "ImportContext.h"

using namespace mlir;

namespace turbine::onnx_frontend {
namespace {

/// Largest constant K that uses selection passes instead of ranking.
constexpr int64_t kMaxSelectionPasses = 16;

/// TopK by K selection passes (see the file comment); returns values and
/// int64 indices with K along `axis`.
std::pair<Value, Value> topKBySelection(ImportContext &ctx, Value source, int64_t axis, int64_t k,
                                        bool largest) {
  OpBuilder &b = ctx.builder;
  MLIRContext *mc = &ctx.context;
  auto type = cast<RankedTensorType>(source.getType());
  int64_t rank = type.getRank();
  Type et = type.getElementType();
  bool isFloat = isa<FloatType>(et);
  Type i64 = b.getI64Type();
  SmallVector<AffineExpr> pickedExprs;
  for (int64_t d = 0; d < rank; ++d)
    pickedExprs.push_back(d == axis ? b.getAffineConstantExpr(0) : b.getAffineDimExpr(d));
  AffineMap identity = b.getMultiDimIdentityMap(rank);
  AffineMap picked = AffineMap::get(rank, 0, pickedExprs, mc); // the axis read/written at 0
  SmallVector<utils::IteratorType> iterators(rank, utils::IteratorType::parallel);
  iterators[axis] = utils::IteratorType::reduction;
  SmallVector<OpFoldResult> pickSizes = ctx.dims(source);
  pickSizes[axis] = b.getIndexAttr(1);
  Value noIndex = arith::ConstantOp::create(b, ctx.loc, b.getI64IntegerAttr(-1));
  SmallVector<Value> values, indices;
  for (int64_t j = 0; j < k; ++j) {
    Value valueInit = ctx.filled(pickSizes, ctx.scalarConstant(et, 0));
    Value indexInit = ctx.filled(pickSizes, noIndex);
    SmallVector<Value> ins{source};
    SmallVector<AffineMap> maps{identity};
    if (j > 0) {
      ins.append({values.back(), indices.back()});
      maps.append({picked, picked});
    }
    maps.append({picked, picked});
    auto pass = linalg::GenericOp::create(
        b, ctx.loc, TypeRange{valueInit.getType(), indexInit.getType()}, ins, ValueRange{valueInit, indexInit},
        maps, iterators, [&](OpBuilder &nb, Location l, ValueRange args) {
          Value v = args[0];
          Value i = arith::IndexCastOp::create(nb, l, i64, linalg::IndexOp::create(nb, l, axis));
          Value bestV = args[args.size() - 2], bestI = args.back();
          auto cmp = [&](bool greater, Value lhs, Value rhs) -> Value {
            if (isFloat)
              return arith::CmpFOp::create(nb, l, greater ? arith::CmpFPredicate::OGT : arith::CmpFPredicate::OLT,
                                           lhs, rhs);
            return arith::CmpIOp::create(nb, l, greater ? arith::CmpIPredicate::sgt : arith::CmpIPredicate::slt, lhs,
                                         rhs);
          };
          auto equal = [&](Value lhs, Value rhs) -> Value {
            return isFloat ? (Value)arith::CmpFOp::create(nb, l, arith::CmpFPredicate::OEQ, lhs, rhs)
                           : (Value)arith::CmpIOp::create(nb, l, arith::CmpIPredicate::eq, lhs, rhs);
          };
          // (v, i) comes before (w, n) in the output order.
          auto before = [&](Value v1, Value i1, Value v2, Value i2) -> Value {
            Value tie = arith::AndIOp::create(nb, l, equal(v1, v2),
                                              arith::CmpIOp::create(nb, l, arith::CmpIPredicate::slt, i1, i2));
            return arith::OrIOp::create(nb, l, cmp(largest, v1, v2), tie);
          };
          Value none = arith::CmpIOp::create(nb, l, arith::CmpIPredicate::slt, bestI,
                                             arith::ConstantOp::create(nb, l, nb.getI64IntegerAttr(0)));
          Value take = arith::OrIOp::create(nb, l, none, before(v, i, bestV, bestI));
          if (j > 0) // only elements after the previous pick
            take = arith::AndIOp::create(nb, l, take, before(args[1], args[2], v, i));
          linalg::YieldOp::create(nb, l, ValueRange{arith::SelectOp::create(nb, l, take, v, bestV),
                                                    arith::SelectOp::create(nb, l, take, i, bestI)});
        });
    ctx.recordDims(pass.getResult(0), pickSizes);
    ctx.recordDims(pass.getResult(1), pickSizes);
    values.push_back(pass.getResult(0));
    indices.push_back(pass.getResult(1));
  }
  // Gather the picks: output position j along the axis reads pick j.
  SmallVector<OpFoldResult> outSizes = pickSizes;
  outSizes[axis] = b.getIndexAttr(k);
  Value valuesOut = ctx.empty(outSizes, et), indicesOut = ctx.empty(outSizes, i64);
  SmallVector<Value> ins(values);
  ins.append(indices);
  SmallVector<AffineMap> maps(2 * k, picked);
  maps.append({identity, identity});
  SmallVector<utils::IteratorType> parallel(rank, utils::IteratorType::parallel);
  auto gather = linalg::GenericOp::create(
      b, ctx.loc, TypeRange{valuesOut.getType(), indicesOut.getType()}, ins, ValueRange{valuesOut, indicesOut},
      maps, parallel, [&](OpBuilder &nb, Location l, ValueRange args) {
        Value position = linalg::IndexOp::create(nb, l, axis);
        Value v = args[0], i = args[k];
        for (int64_t j = 1; j < k; ++j) {
          Value isJ = arith::CmpIOp::create(nb, l, arith::CmpIPredicate::eq, position,
                                            arith::ConstantIndexOp::create(nb, l, j));
          v = arith::SelectOp::create(nb, l, isJ, args[j], v);
          i = arith::SelectOp::create(nb, l, isJ, args[k + j], i);
        }
        linalg::YieldOp::create(nb, l, ValueRange{v, i});
      });
  ctx.recordDims(gather.getResult(0), outSizes);
  ctx.recordDims(gather.getResult(1), outSizes);
  return {gather.getResult(0), gather.getResult(1)};
}

LogicalResult convertTopK(ImportContext &ctx, const onnx::NodeProto &node) {
  auto x = ctx.getTensor(node, node.input(0));
  if (failed(x))
    return failure();
  auto type = cast<RankedTensorType>(x->getType());
  int64_t rank = type.getRank();
  Type et = type.getElementType();
  bool isFloat = isa<FloatType>(et);
  if (!isFloat && !isa<IntegerType>(et))
    return ctx.unsupported(node, "element type must be floating-point or integer");
  if (rank == 0)
    return ctx.fail(node, "input must have rank >= 1");
  auto axis = normalizeAxis(ctx.intAttr(node, "axis", -1), rank);
  if (!axis)
    return ctx.fail(node, "axis out of range");
  bool largest = ctx.intAttr(node, "largest", 1) != 0;
  SymDim k;
  if (ctx.opset < 10) {
    const onnx::AttributeProto *a = ctx.attr(node, "k");
    if (!a)
      return ctx.fail(node, "missing attribute 'k'");
    k = SymDim::of(a->i());
  } else {
    // Known at import time (constant or derived from shapes), else read on
    // the host at run time.
    auto shape = ctx.getShapeOperand(node, 1, "K");
    if (failed(shape))
      return failure();
    if (shape->elements.size() != 1)
      return ctx.fail(node, "K must hold exactly one value");
    k = shape->elements[0];
  }
  if (!k.isConstant()) {
    OpFoldResult kValue = ctx.toFoldResult(k);
    if (failed(ctx.check(node,
                         ctx.both(ctx.compare(arith::CmpIPredicate::sge, kValue, ctx.builder.getIndexAttr(0)),
                                  ctx.compare(arith::CmpIPredicate::sle, kValue, ctx.dim(*x, *axis))),
                         "K must lie in [0, size of the axis]")))
      return failure();
  }
  if (k.isConstant()) {
    if (k.constant < 0)
      return ctx.fail(node, "K must be non-negative");
    if (!type.isDynamicDim(*axis) && k.constant > type.getDimSize(*axis))
      return ctx.fail(node, "K = " + std::to_string(k.constant) + " exceeds the axis length " +
                                std::to_string(type.getDimSize(*axis)));
  }

  if (k.isConstant() && k.constant >= 1 && k.constant <= kMaxSelectionPasses) {
    auto [values, indices] = topKBySelection(ctx, *x, *axis, k.constant, largest);
    ctx.setValue(node.output(0), values);
    if (node.output_size() > 1 && !node.output(1).empty())
      ctx.setValue(node.output(1), indices);
    return success();
  }

  OpBuilder &b = ctx.builder;
  MLIRContext *mc = &ctx.context;
  Type i64 = b.getI64Type();
  int64_t a = *axis;
  auto dimsWithAxisAt = [&](unsigned loop) {
    SmallVector<AffineExpr> exprs;
    for (int64_t d = 0; d < rank; ++d)
      exprs.push_back(b.getAffineDimExpr(d == a ? loop : d));
    return AffineMap::get(rank + 1, 0, exprs, mc);
  };
  AffineMap outer = dimsWithAxisAt(a);            // (.., i, ..)
  AffineMap other = dimsWithAxisAt(rank);         // (.., i', ..)
  SmallVector<utils::IteratorType> iterators(rank, utils::IteratorType::parallel);
  iterators.push_back(utils::IteratorType::reduction);
  Value source = *x;

  // 1. rank of every element along the axis.
  SmallVector<OpFoldResult> inSizes = ctx.dims(source);
  Value zero64 = arith::ConstantOp::create(b, ctx.loc, b.getI64IntegerAttr(0));
  Value rankInit = ctx.filled(inSizes, zero64);
  Value ranks = linalg::GenericOp::create(
                    b, ctx.loc, TypeRange{rankInit.getType()}, ValueRange{source, source},
                    ValueRange{rankInit}, SmallVector<AffineMap>{outer, other, outer}, iterators,
                    [&](OpBuilder &nb, Location l, ValueRange args) {
                      Value mine = args[0], theirs = args[1];
                      Value i = linalg::IndexOp::create(nb, l, a);
                      Value j = linalg::IndexOp::create(nb, l, rank);
                      Value before;
                      if (isFloat)
                        before = arith::CmpFOp::create(nb, l, largest ? arith::CmpFPredicate::OGT : arith::CmpFPredicate::OLT,
                                                       theirs, mine);
                      else
                        before = arith::CmpIOp::create(nb, l, largest ? arith::CmpIPredicate::sgt : arith::CmpIPredicate::slt,
                                                       theirs, mine);
                      Value equal = isFloat ? (Value)arith::CmpFOp::create(nb, l, arith::CmpFPredicate::OEQ, theirs, mine)
                                            : (Value)arith::CmpIOp::create(nb, l, arith::CmpIPredicate::eq, theirs, mine);
                      Value earlier = arith::CmpIOp::create(nb, l, arith::CmpIPredicate::ult, j, i);
                      before = arith::OrIOp::create(nb, l, before, arith::AndIOp::create(nb, l, equal, earlier));
                      Value inc = arith::ExtUIOp::create(nb, l, nb.getI64Type(), before);
                      linalg::YieldOp::create(nb, l, (Value)arith::AddIOp::create(nb, l, args[2], inc));
                    })
                    .getResult(0);
  ctx.recordDims(ranks, inSizes);

  // 2. output position j takes the element of rank j.
  SmallVector<OpFoldResult> outSizes = inSizes;
  outSizes[a] = ctx.toFoldResult(k);
  Value valuesInit = ctx.filled(outSizes, ctx.scalarConstant(et, 0));
  Value indicesInit = ctx.filled(outSizes, zero64);
  AffineMap identity = AffineMap::getMultiDimIdentityMap(rank + 1, mc).getMajorSubMap(rank);
  auto select = linalg::GenericOp::create(
      b, ctx.loc, TypeRange{valuesInit.getType(), indicesInit.getType()}, ValueRange{source, ranks},
      ValueRange{valuesInit, indicesInit}, SmallVector<AffineMap>{other, other, identity, identity}, iterators,
      [&](OpBuilder &nb, Location l, ValueRange args) {
        Value j = arith::IndexCastOp::create(nb, l, i64, linalg::IndexOp::create(nb, l, a));
        Value i = arith::IndexCastOp::create(nb, l, i64, linalg::IndexOp::create(nb, l, rank));
        Value hit = arith::CmpIOp::create(nb, l, arith::CmpIPredicate::eq, args[1], j);
        linalg::YieldOp::create(nb, l, ValueRange{arith::SelectOp::create(nb, l, hit, args[0], args[2]),
                                                  arith::SelectOp::create(nb, l, hit, i, args[3])});
      });
  ctx.recordDims(select.getResult(0), outSizes);
  ctx.recordDims(select.getResult(1), outSizes);
  ctx.setValue(node.output(0), select.getResult(0));
  if (node.output_size() > 1 && !node.output(1).empty())
    ctx.setValue(node.output(1), select.getResult(1));
  return success();
}

} // namespace

void registerSortOps(OpRegistry &r) { r.add("TopK", convertTopK); }

} // namespace turbine::onnx_frontend
