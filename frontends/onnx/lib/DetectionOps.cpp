//===- DetectionOps.cpp - ONNX NonMaxSuppression -> linalg ----------------===//
//
// NonMaxSuppression (opsets 10, 11): per (batch, class) the greedy
// selection of ONNX Runtime: among the boxes whose score exceeds
// score_threshold, repeatedly take the highest score (ties: lower box index)
// and drop every remaining box whose IoU with it exceeds iou_threshold, at
// most max_output_boxes_per_class times. The greedy loop is unrolled at
// import time over the (static, at most kMaxBoxes) number of boxes: step t
// is one reduction generic that picks a box per (batch, class) and one
// generic that updates the "still a candidate" flags. The picks of every
// step, flagged valid when a box was found and t < max_output_boxes_per_class
// (read on the host at run time), are compacted by a counting kernel whose
// count the host reads (setFlagPositions): the output is [count, 3] rows of
// (batch, class, box) in batch, class, selection order, as ONNX specifies.
// Straightforward rather than fast: O(boxes^2) work per (batch, class) in
// 2 * boxes kernels; meant for the small box counts of tests and
// post-processing of few candidates.
//===----------------------------------------------------------------------===//
#include "ImportContext.h"

using namespace mlir;

namespace turbine::onnx_frontend {
namespace {

/// Largest static box count the unrolled greedy selection accepts.
constexpr int64_t kMaxBoxes = 64;

/// Reads a float threshold tensor (rank 0 or one element) in a kernel.
Value readThreshold(OpBuilder &b, Location l, Value tensor, Type et) {
  auto type = cast<RankedTensorType>(tensor.getType());
  SmallVector<Value> indices(type.getRank(), arith::ConstantIndexOp::create(b, l, 0));
  Value v = tensor::ExtractOp::create(b, l, tensor, indices);
  return convertScalar(b, l, v, et);
}

/// True (i1) when boxes `a` and `b` (4 coordinates each, as in the input)
/// overlap with IoU > `threshold`, computed as ONNX Runtime does.
Value suppresses(OpBuilder &b, Location l, ArrayRef<Value> a, ArrayRef<Value> c, bool centerFormat,
                 Value threshold) {
  auto fc = [&](double v) -> Value { return arith::ConstantOp::create(b, l, b.getFloatAttr(threshold.getType(), v)); };
  // Per box: (yMin, xMin, yMax, xMax).
  auto corners = [&](ArrayRef<Value> v) -> SmallVector<Value, 4> {
    if (centerFormat) { // (x_center, y_center, width, height)
      Value halfW = arith::DivFOp::create(b, l, v[2], fc(2)), halfH = arith::DivFOp::create(b, l, v[3], fc(2));
      return {arith::SubFOp::create(b, l, v[1], halfH), arith::SubFOp::create(b, l, v[0], halfW),
              arith::AddFOp::create(b, l, v[1], halfH), arith::AddFOp::create(b, l, v[0], halfW)};
    }
    // (y1, x1, y2, x2), corners in either order.
    return {arith::MinimumFOp::create(b, l, v[0], v[2]), arith::MinimumFOp::create(b, l, v[1], v[3]),
            arith::MaximumFOp::create(b, l, v[0], v[2]), arith::MaximumFOp::create(b, l, v[1], v[3])};
  };
  SmallVector<Value, 4> p = corners(a), q = corners(c);
  Value iyMin = arith::MaximumFOp::create(b, l, p[0], q[0]), ixMin = arith::MaximumFOp::create(b, l, p[1], q[1]);
  Value iyMax = arith::MinimumFOp::create(b, l, p[2], q[2]), ixMax = arith::MinimumFOp::create(b, l, p[3], q[3]);
  Value intersection =
      arith::MulFOp::create(b, l, arith::MaximumFOp::create(b, l, arith::SubFOp::create(b, l, iyMax, iyMin), fc(0)),
                            arith::MaximumFOp::create(b, l, arith::SubFOp::create(b, l, ixMax, ixMin), fc(0)));
  auto area = [&](ArrayRef<Value> v) -> Value {
    return arith::MulFOp::create(b, l, arith::SubFOp::create(b, l, v[2], v[0]), arith::SubFOp::create(b, l, v[3], v[1]));
  };
  Value areaP = area(p), areaQ = area(q);
  Value unionArea = arith::SubFOp::create(b, l, arith::AddFOp::create(b, l, areaP, areaQ), intersection);
  auto positive = [&](Value v) -> Value { return arith::CmpFOp::create(b, l, arith::CmpFPredicate::OGT, v, fc(0)); };
  Value valid = arith::AndIOp::create(
      b, l, arith::AndIOp::create(b, l, positive(intersection), positive(areaP)),
      arith::AndIOp::create(b, l, positive(areaQ), positive(unionArea)));
  Value iou = arith::DivFOp::create(b, l, intersection, unionArea);
  return arith::AndIOp::create(b, l, valid, arith::CmpFOp::create(b, l, arith::CmpFPredicate::OGT, iou, threshold));
}

LogicalResult convertNonMaxSuppression(ImportContext &ctx, const onnx::NodeProto &node) {
  using P = arith::CmpIPredicate;
  if (node.input_size() < 2)
    return ctx.fail(node, "expects inputs boxes and scores");
  auto boxes = ctx.getTensor(node, node.input(0));
  auto scores = ctx.getTensor(node, node.input(1));
  if (failed(boxes) || failed(scores))
    return failure();
  auto boxesType = cast<RankedTensorType>(boxes->getType());
  auto scoresType = cast<RankedTensorType>(scores->getType());
  Type et = boxesType.getElementType();
  if (boxesType.getRank() != 3 || boxesType.isDynamicDim(2) || boxesType.getDimSize(2) != 4 || !isa<FloatType>(et))
    return ctx.fail(node, "boxes must be a float tensor [batch, boxes, 4]");
  if (scoresType.getRank() != 3 || scoresType.getElementType() != et)
    return ctx.fail(node, "scores must be [batch, classes, boxes] of the boxes' element type");
  if (boxesType.isDynamicDim(1) || boxesType.getDimSize(1) > kMaxBoxes)
    return ctx.unsupported(node, "a number of boxes that is dynamic or above " + std::to_string(kMaxBoxes) +
                                     " (the greedy selection is unrolled over the boxes at import time)");
  int64_t numBoxes = boxesType.getDimSize(1);
  int64_t centerPointBox = ctx.intAttr(node, "center_point_box", 0);
  if (centerPointBox != 0 && centerPointBox != 1)
    return ctx.fail(node, "center_point_box must be 0 or 1");
  bool centerFormat = centerPointBox == 1;
  OpBuilder &b = ctx.builder;
  Location loc = ctx.loc;
  MLIRContext *mc = &ctx.context;
  OpFoldResult maxOut = b.getIndexAttr(0);
  if (ImportContext::hasInput(node, 2)) {
    auto m = ctx.getShapeOperand(node, 2, "max_output_boxes_per_class");
    if (failed(m))
      return failure();
    if (m->elements.size() != 1)
      return ctx.fail(node, "max_output_boxes_per_class must hold one value");
    maxOut = ctx.toFoldResult(m->elements[0]);
  }
  Value thresholds[2]; // iou_threshold, score_threshold (null: absent)
  for (int i = 3; i <= 4; ++i) {
    if (!ImportContext::hasInput(node, i))
      continue;
    auto t = ctx.getTensor(node, node.input(i));
    if (failed(t))
      return failure();
    auto type = cast<RankedTensorType>(t->getType());
    if (!isa<FloatType>(type.getElementType()) || !type.hasStaticShape() || type.getNumElements() != 1)
      return ctx.fail(node, std::string(i == 3 ? "iou_threshold" : "score_threshold") +
                                " must be a one-element float tensor");
    thresholds[i - 3] = *t;
  }
  Value iouThreshold = thresholds[0], scoreThreshold = thresholds[1];
  if (numBoxes == 0)
    return ctx.unsupported(node, "zero boxes");

  SmallVector<OpFoldResult> classSizes{ctx.dim(*scores, 0), ctx.dim(*scores, 1)};
  SmallVector<OpFoldResult> candidateSizes{classSizes[0], classSizes[1], b.getIndexAttr(numBoxes)};
  auto d = [&](unsigned i) { return b.getAffineDimExpr(i); };
  AffineMap all = b.getMultiDimIdentityMap(3);
  AffineMap perClass = AffineMap::get(3, 0, {d(0), d(1)}, mc);
  using IT = utils::IteratorType;
  SmallVector<IT> parallel3(3, IT::parallel);
  Type i64 = b.getI64Type(), i1 = b.getI1Type();

  // alive[b, c, n]: box n is still a candidate of (b, c).
  Value aliveInit = ctx.empty(candidateSizes, i1);
  Value alive = linalg::GenericOp::create(
                    b, loc, TypeRange{aliveInit.getType()}, ValueRange{*scores}, ValueRange{aliveInit},
                    SmallVector<AffineMap>{all, all}, parallel3,
                    [&](OpBuilder &nb, Location l, ValueRange a) {
                      Value ok = arith::ConstantOp::create(nb, l, nb.getBoolAttr(true));
                      if (scoreThreshold)
                        ok = arith::CmpFOp::create(nb, l, arith::CmpFPredicate::OGT, a[0],
                                                   readThreshold(nb, l, scoreThreshold, et));
                      linalg::YieldOp::create(nb, l, ok);
                    })
                    .getResult(0);
  ctx.recordDims(alive, candidateSizes);

  Value boxTensor = *boxes;
  SmallVector<Value> picks;
  for (int64_t step = 0; step < numBoxes; ++step) {
    // The best remaining candidate per (b, c): highest score, then lowest index; -1 when none.
    Value scoreInit = ctx.filled(classSizes, ctx.scalarConstant(et, 0));
    Value indexInit = ctx.filled(classSizes, arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(-1)));
    auto pick = linalg::GenericOp::create(
        b, loc, TypeRange{scoreInit.getType(), indexInit.getType()}, ValueRange{*scores, alive},
        ValueRange{scoreInit, indexInit}, SmallVector<AffineMap>{all, all, perClass, perClass},
        SmallVector<IT>{IT::parallel, IT::parallel, IT::reduction}, [&](OpBuilder &nb, Location l, ValueRange a) {
          Value s = a[0], bestS = a[2], bestI = a[3];
          Value n = arith::IndexCastOp::create(nb, l, i64, linalg::IndexOp::create(nb, l, 2));
          Value none = arith::CmpIOp::create(nb, l, P::slt, bestI, arith::ConstantOp::create(nb, l, nb.getI64IntegerAttr(0)));
          Value higher = arith::CmpFOp::create(nb, l, arith::CmpFPredicate::OGT, s, bestS);
          Value tie = arith::AndIOp::create(nb, l, arith::CmpFOp::create(nb, l, arith::CmpFPredicate::OEQ, s, bestS),
                                            arith::CmpIOp::create(nb, l, P::slt, n, bestI));
          Value better = arith::OrIOp::create(nb, l, none, arith::OrIOp::create(nb, l, higher, tie));
          Value take = arith::AndIOp::create(nb, l, a[1], better);
          linalg::YieldOp::create(nb, l, ValueRange{arith::SelectOp::create(nb, l, take, s, bestS),
                                                    arith::SelectOp::create(nb, l, take, n, bestI)});
        });
    Value picked = pick.getResult(1);
    ctx.recordDims(picked, classSizes);
    picks.push_back(picked);
    if (step + 1 == numBoxes)
      break;
    // Drop the pick and the candidates it suppresses.
    Value nextInit = ctx.empty(candidateSizes, i1);
    alive = linalg::GenericOp::create(
                b, loc, TypeRange{nextInit.getType()}, ValueRange{alive, picked}, ValueRange{nextInit},
                SmallVector<AffineMap>{all, perClass, all}, parallel3,
                [&](OpBuilder &nb, Location l, ValueRange a) {
                  Value batch = linalg::IndexOp::create(nb, l, 0), n = linalg::IndexOp::create(nb, l, 2);
                  Value p = a[1];
                  Value found = arith::CmpIOp::create(nb, l, P::sge, p, arith::ConstantOp::create(nb, l, nb.getI64IntegerAttr(0)));
                  Value pIndex = arith::IndexCastOp::create(
                      nb, l, nb.getIndexType(),
                      arith::MaxSIOp::create(nb, l, p, arith::ConstantOp::create(nb, l, nb.getI64IntegerAttr(0))));
                  SmallVector<Value> mine, theirs;
                  for (int64_t k = 0; k < 4; ++k) {
                    Value kIndex = arith::ConstantIndexOp::create(nb, l, k);
                    mine.push_back(tensor::ExtractOp::create(nb, l, boxTensor, ValueRange{batch, n, kIndex}));
                    theirs.push_back(tensor::ExtractOp::create(nb, l, boxTensor, ValueRange{batch, pIndex, kIndex}));
                  }
                  Value threshold = iouThreshold ? readThreshold(nb, l, iouThreshold, et)
                                                 : (Value)arith::ConstantOp::create(nb, l, nb.getFloatAttr(et, 0));
                  Value isPick = arith::CmpIOp::create(nb, l, P::eq, pIndex, n);
                  Value gone = arith::OrIOp::create(nb, l, isPick, suppresses(nb, l, mine, theirs, centerFormat, threshold));
                  Value keep = arith::AndIOp::create(
                      nb, l, a[0],
                      arith::XOrIOp::create(nb, l, arith::AndIOp::create(nb, l, found, gone),
                                            arith::ConstantOp::create(nb, l, nb.getBoolAttr(true))));
                  linalg::YieldOp::create(nb, l, keep);
                })
                .getResult(0);
    ctx.recordDims(alive, candidateSizes);
  }

  // selected[b, c, t] = the box of step t, or -1 (none found, or t >= max_output_boxes_per_class).
  Value maxOutValue = ctx.toIndexValue(maxOut);
  Value selectedInit = ctx.empty(candidateSizes, i64);
  SmallVector<AffineMap> maps(picks.size(), perClass);
  maps.push_back(all);
  Value selected = linalg::GenericOp::create(
                       b, loc, TypeRange{selectedInit.getType()}, picks, ValueRange{selectedInit}, maps, parallel3,
                       [&](OpBuilder &nb, Location l, ValueRange a) {
                         Value t = linalg::IndexOp::create(nb, l, 2);
                         Value v = a[0];
                         for (int64_t j = 1; j < (int64_t)picks.size(); ++j)
                           v = arith::SelectOp::create(
                               nb, l, arith::CmpIOp::create(nb, l, P::eq, t, arith::ConstantIndexOp::create(nb, l, j)),
                               a[j], v);
                         Value allowed = arith::CmpIOp::create(nb, l, P::slt, t, maxOutValue);
                         v = arith::SelectOp::create(nb, l, allowed, v,
                                                     arith::ConstantOp::create(nb, l, nb.getI64IntegerAttr(-1)));
                         linalg::YieldOp::create(nb, l, v);
                       })
                       .getResult(0);
  ctx.recordDims(selected, candidateSizes);
  OpFoldResult total = ctx.indexOp<arith::MulIOp>(ctx.indexOp<arith::MulIOp>(classSizes[0], classSizes[1]),
                                                  b.getIndexAttr(numBoxes));
  Value flat = ctx.reshape(selected, {total});
  Value flagsInit = ctx.empty({total}, i1);
  Value flags = linalg::GenericOp::create(
                    b, loc, TypeRange{flagsInit.getType()}, ValueRange{flat}, ValueRange{flagsInit},
                    SmallVector<AffineMap>(2, b.getMultiDimIdentityMap(1)), SmallVector<IT>{IT::parallel},
                    [&](OpBuilder &nb, Location l, ValueRange a) {
                      linalg::YieldOp::create(nb, l, (Value)arith::CmpIOp::create(
                                                         nb, l, P::sge, a[0],
                                                         arith::ConstantOp::create(nb, l, nb.getI64IntegerAttr(0))));
                    })
                    .getResult(0);
  ctx.recordDims(flags, {total});
  auto [positions, count] = setFlagPositions(ctx, flags);

  // Row j: (batch, class, box) of flat position positions[j].
  SmallVector<OpFoldResult> outSizes{count, b.getIndexAttr(3)};
  Value classCount = ctx.toIndexValue(classSizes[1]);
  Value outInit = ctx.empty(outSizes, i64);
  Value result = linalg::GenericOp::create(
                     b, loc, TypeRange{outInit.getType()}, ValueRange{positions}, ValueRange{outInit},
                     SmallVector<AffineMap>{AffineMap::get(2, 0, {d(0)}, mc), b.getMultiDimIdentityMap(2)},
                     SmallVector<IT>{IT::parallel, IT::parallel}, [&](OpBuilder &nb, Location l, ValueRange a) {
                       Value column = linalg::IndexOp::create(nb, l, 1);
                       Value p = arith::IndexCastOp::create(nb, l, nb.getIndexType(), a[0]);
                       Value steps = arith::ConstantIndexOp::create(nb, l, numBoxes);
                       Value perBatch = arith::MulIOp::create(nb, l, classCount, steps);
                       Value batch = arith::DivUIOp::create(nb, l, p, perBatch);
                       Value cls = arith::RemUIOp::create(nb, l, arith::DivUIOp::create(nb, l, p, steps), classCount);
                       Value box = tensor::ExtractOp::create(nb, l, flat, ValueRange{p});
                       auto asI64 = [&](Value v) -> Value { return arith::IndexCastOp::create(nb, l, i64, v); };
                       auto isColumn = [&](int64_t k) -> Value {
                         return arith::CmpIOp::create(nb, l, P::eq, column, arith::ConstantIndexOp::create(nb, l, k));
                       };
                       Value v = arith::SelectOp::create(nb, l, isColumn(0), asI64(batch),
                                                         arith::SelectOp::create(nb, l, isColumn(1), asI64(cls), box));
                       linalg::YieldOp::create(nb, l, v);
                     })
                     .getResult(0);
  ctx.recordDims(result, outSizes);
  ctx.setValue(node.output(0), result);
  return success();
}

} // namespace

void registerDetectionOps(OpRegistry &r) { r.add("NonMaxSuppression", convertNonMaxSuppression, 10); }

} // namespace turbine::onnx_frontend
