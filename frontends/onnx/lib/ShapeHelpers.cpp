//===- ShapeHelpers.cpp - helpers of the ONNX shape-op files -------------===//
//
// What the shape, slicing, gather and layout handlers share (declared in
// ImportContext.h): products of sizes, shape lists from an input or an
// attribute, constant values of shape tensors, index clamping and the
// gather-style generic whose extract indices are always in bounds.
//===----------------------------------------------------------------------===//
#include "ImportContext.h"

#include <cmath>
#include <limits>

using namespace mlir;

namespace turbine::onnx_frontend {
namespace {

RankedTensorType tensorType(Value v) { return cast<RankedTensorType>(v.getType()); }

} // namespace

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

/// Clamps an index value into [0, size-1] (inside a generic body).
Value clampIndex(OpBuilder &b, Location l, Value idx, Value size) {
  Value zero = arith::ConstantIndexOp::create(b, l, 0);
  Value one = arith::ConstantIndexOp::create(b, l, 1);
  Value last = arith::SubIOp::create(b, l, size, one);
  return arith::MinSIOp::create(b, l, arith::MaxSIOp::create(b, l, idx, zero), last);
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

} // namespace turbine::onnx_frontend
