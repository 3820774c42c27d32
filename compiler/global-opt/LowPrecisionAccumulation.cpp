//===- LowPrecisionAccumulation.cpp - f16/bf16 contractions sum in f32 -----===//
//
// turbine-accumulate-in-f32 (Passes.td): a named contraction or convolution
// over f16/bf16 tensors is rebuilt with an f32 accumulator — the named op's
// own region builder casts its inputs to the accumulator type (arith.extf) —
// and its result is rounded back by an elementwise truncf, which elementwise
// fusion merges into the consumers. Named ops stay named, so the target's
// matmul and convolution strategies still recognize them.
//===----------------------------------------------------------------------===//
#include "turbine/compiler/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"

using namespace mlir;

namespace turbine::compiler {

#define GEN_PASS_DEF_ACCUMULATEINF32
#include "turbine/compiler/Passes.h.inc"

namespace {

bool isLowPrecisionFloat(Type t) { return isa<Float16Type, BFloat16Type>(t); }

/// `value`'s elements converted to `elementType` by CastOp (arith.extf or
/// arith.truncf), as an identity linalg.generic.
template <typename CastOp>
Value castElements(OpBuilder &b, Location loc, Value value, Type elementType) {
  auto type = cast<RankedTensorType>(value.getType());
  SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(b, loc, value);
  Value empty = tensor::EmptyOp::create(b, loc, sizes, elementType);
  int64_t rank = type.getRank();
  SmallVector<AffineMap> maps(2, b.getMultiDimIdentityMap(rank));
  SmallVector<utils::IteratorType> iterators(rank, utils::IteratorType::parallel);
  return linalg::GenericOp::create(
             b, loc, TypeRange{type.clone(elementType)}, ValueRange{value}, ValueRange{empty},
             maps, iterators,
             [elementType](OpBuilder &nb, Location l, ValueRange args) {
               linalg::YieldOp::create(nb, l, CastOp::create(nb, l, elementType, args[0]).getResult());
             })
      .getResult(0);
}

/// `init` as an f32 tensor: a fill of the same value when it is one, else
/// its elements extended.
Value widenInit(OpBuilder &b, Location loc, Value init) {
  auto fill = init.getDefiningOp<linalg::FillOp>();
  if (!fill)
    return castElements<arith::ExtFOp>(b, loc, init, b.getF32Type());
  SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(b, loc, init);
  Value empty = tensor::EmptyOp::create(b, loc, sizes, b.getF32Type());
  Value value = arith::ExtFOp::create(b, loc, b.getF32Type(), fill.getInputs()[0]);
  return linalg::FillOp::create(b, loc, value, empty).getResult(0);
}

template <typename OpTy>
bool widen(OpBuilder &b, Operation *op) {
  auto named = dyn_cast<OpTy>(op);
  if (!named || !named.hasPureTensorSemantics() || named.getNumDpsInits() != 1 ||
      op->getNumResults() != 1)
    return false;
  auto resultType = cast<RankedTensorType>(op->getResult(0).getType());
  if (!isLowPrecisionFloat(resultType.getElementType()))
    return false;
  for (Value input : named.getDpsInputs())
    if (!isLowPrecisionFloat(getElementTypeOrSelf(input.getType())))
      return false;
  b.setInsertionPoint(op);
  Location loc = op->getLoc();
  Value init = widenInit(b, loc, named.getDpsInits()[0]);
  SmallVector<NamedAttribute> attributes;
  for (NamedAttribute a : op->getAttrs())
    if (a.getName() != "operandSegmentSizes")
      attributes.push_back(a);
  auto wide = OpTy::create(b, loc, TypeRange{init.getType()}, named.getDpsInputs(),
                           ValueRange{init}, attributes);
  op->getResult(0).replaceAllUsesWith(
      castElements<arith::TruncFOp>(b, loc, wide->getResult(0), resultType.getElementType()));
  op->erase();
  return true;
}

struct AccumulateInF32Pass : impl::AccumulateInF32Base<AccumulateInF32Pass> {
  void runOnOperation() override {
    SmallVector<Operation *> candidates;
    getOperation().walk([&](linalg::LinalgOp op) { candidates.push_back(op); });
    OpBuilder b(&getContext());
    for (Operation *op : candidates)
      (void)(widen<linalg::MatmulOp>(b, op) || widen<linalg::BatchMatmulOp>(b, op) ||
             widen<linalg::MatvecOp>(b, op) || widen<linalg::VecmatOp>(b, op) ||
             widen<linalg::BatchMatvecOp>(b, op) || widen<linalg::Conv1DNwcWcfOp>(b, op) ||
             widen<linalg::Conv1DNcwFcwOp>(b, op) || widen<linalg::Conv2DNhwcHwcfOp>(b, op) ||
             widen<linalg::Conv2DNchwFchwOp>(b, op) || widen<linalg::Conv2DNgchwFgchwOp>(b, op) ||
             widen<linalg::Conv3DNdhwcDhwcfOp>(b, op) || widen<linalg::Conv3DNcdhwFcdhwOp>(b, op) ||
             widen<linalg::DepthwiseConv2DNhwcHwcOp>(b, op) ||
             widen<linalg::DepthwiseConv2DNchwChwOp>(b, op));
  }
};

} // namespace
} // namespace turbine::compiler
