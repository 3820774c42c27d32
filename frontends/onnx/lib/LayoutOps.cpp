//===- LayoutOps.cpp - ONNX Transpose, Tile, DepthToSpace ----------------===//
//
// Ops that rearrange elements without data-dependent indexing: Transpose
// (linalg.transpose), Tile (a generic reading the input modulo its size) and
// DepthToSpace / SpaceToDepth (reshape, transpose, reshape).
//===----------------------------------------------------------------------===//
#include "ImportContext.h"

#include <cmath>
#include <limits>

using namespace mlir;

namespace turbine::onnx_frontend {
namespace {

RankedTensorType tensorType(Value v) { return cast<RankedTensorType>(v.getType()); }

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

void registerLayoutOps(OpRegistry &r) {
  r.add("Tile", convertTile, 6);
  r.add("DepthToSpace", [](ImportContext &c, const onnx::NodeProto &n) { return convertDepthSpace(c, n, true); });
  r.add("SpaceToDepth", [](ImportContext &c, const onnx::NodeProto &n) { return convertDepthSpace(c, n, false); });
  r.add("Transpose", convertTranspose);
}

} // namespace turbine::onnx_frontend
