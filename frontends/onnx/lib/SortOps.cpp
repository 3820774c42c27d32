//===- SortOps.cpp - ONNX TopK -> rank-and-select linalg generics ----------===//
//
// TopK (opsets 1, 10, 11) by ranking instead of sorting, which needs no
// loop-carried state and so stays two plain linalg.generics:
//   1. rank[.., i, ..] = number of elements along the axis that come before
//      element i in the requested order (larger first, or smaller first for
//      largest=0; equal values ordered by smaller index, as ONNX specifies),
//      a reduction over a second copy of the axis: O(n^2) per row;
//   2. for each output position j < K along the axis, values/indices take the
//      element whose rank is j (a reduction over the axis: O(n * K)).
// Output is always sorted (allowed for sorted=0). Honest and simple, meant for
// the moderate axis lengths TopK sees in models; not a fast sort.
//===----------------------------------------------------------------------===//
#include "ImportContext.h"

using namespace mlir;

namespace turbine::onnx_frontend {
namespace {

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
    if (!ImportContext::hasInput(node, 1))
      return ctx.fail(node, "missing input 'K'");
    auto shape = ctx.getShapeTensor(node.input(1));
    if (!shape || shape->elements.size() != 1)
      return ctx.unsupported(node, "input 'K' ('" + node.input(1) +
                                       "') must be a one-element integer tensor known at import time "
                                       "(constant or derived from shapes)");
    k = shape->elements[0];
  }
  if (k.isConstant()) {
    if (k.constant < 0)
      return ctx.fail(node, "K must be non-negative");
    if (!type.isDynamicDim(*axis) && k.constant > type.getDimSize(*axis))
      return ctx.fail(node, "K = " + std::to_string(k.constant) + " exceeds the axis length " +
                                std::to_string(type.getDimSize(*axis)));
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
