//===- PaddedResults.cpp - Producers that write their result padded -------===//
//
// A full NHWC convolution reads its input zero-padded. Fusing the pad into
// the convolution made each output-channel tile re-pad all input channels
// (measured slower), and a separate pad kernel reads the producer's result
// once more and writes a bordered copy (ResNet-18: 17 such kernels). Like
// IREE fusing a pad into its producer's dispatch, here the producer writes
// its result straight into the interior of the padded tensor:
//
//  * Host side (the pass turbine-write-pads-in-producers, before regions
//    form), for every pad gather not kept with a channel-local window op:
//      %p = pad_gather(%x)          ->  %p = tensor.insert_slice %x into
//                                             fill(0, empty(padded)) [low]
//    and every other use of %x (the next block's residual add, a 1x1
//    downsample convolution) reads tensor.extract_slice %p [low], which
//    dispatch formation clones into those consumers' kernels (a strided view
//    of the padded binding). The insert_slice joins %x's dispatch, whose
//    result becomes the padded tensor.
//  * Kernel side (after outlining): the producer's destination becomes
//    extract_slice(padded) (its tiles write the interior in place; the
//    insert_slice then bufferizes to nothing), and the border is four strip
//    fills (for two padded dims) sized to nothing except in workgroup
//    (0, 0, 0), so the border is written once and never over the interior.
//===----------------------------------------------------------------------===//
#include "dispatch/PaddedResults.h"
#include "global-opt/LowerPads.h"

#include "turbine/compiler/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/Matchers.h"

#include <functional>

using namespace mlir;

namespace turbine::compiler {

#define GEN_PASS_DEF_WRITEPADSINPRODUCERS
#include "turbine/compiler/Passes.h.inc"

namespace {

constexpr llvm::StringLiteral kPaddedResultAttr = "turbine.padded_result";
constexpr llvm::StringLiteral kPaddedInteriorAttr = "turbine.padded_interior";

/// The destination tied to `result` (a linalg op's only result) when it is
/// an empty tensor or a fill of one: the op overwrites it, so it can as well
/// write into a slice of another tensor.
OpOperand *freshDestination(Value result) {
  auto linalgOp = result.getDefiningOp<linalg::LinalgOp>();
  if (!linalgOp || linalgOp->getNumResults() != 1)
    return nullptr;
  OpOperand *init = linalgOp.getDpsInitOperand(0);
  Value tensor = init->get();
  if (auto fill = tensor.getDefiningOp<linalg::FillOp>())
    tensor = fill.getOutputs()[0];
  return tensor.getDefiningOp<tensor::EmptyOp>() ? init : nullptr;
}

struct WritePadsInProducersPass : impl::WritePadsInProducersBase<WritePadsInProducersPass> {
  void runOnOperation() override {
    SmallVector<Operation *> padGathers;
    for (auto func : getOperation().getOps<func::FuncOp>())
      func.walk([&](linalg::GenericOp op) {
        if (isPadGather(op) && !padsOnlyAWindowInput(op))
          padGathers.push_back(op);
      });
    for (Operation *padGather : padGathers)
      writePadInProducer(padGather);
  }
};

} // namespace

bool isChannelLocalWindow(Operation *op) {
  return isa<linalg::DepthwiseConv2DNhwcHwcOp, linalg::PoolingNhwcMaxOp,
             linalg::PoolingNhwcSumOp>(op);
}

bool padsOnlyAWindowInput(Operation *op) {
  if (!isPadGather(op) || !op->hasOneUse())
    return false;
  OpOperand &use = *op->getUses().begin();
  auto user = dyn_cast<DestinationStyleOpInterface>(use.getOwner());
  return user && isChannelLocalWindow(use.getOwner()) && user.isDpsInput(&use) &&
         use.getOwner()->getBlock() == op->getBlock();
}

bool isPaddedResult(Operation *op) {
  return isa<tensor::InsertSliceOp>(op) && op->hasAttr(kPaddedResultAttr);
}

bool isPaddedResultInterior(Operation *op) {
  return isa<tensor::ExtractSliceOp>(op) && op->hasAttr(kPaddedInteriorAttr);
}

bool writePadInProducer(Operation *padGather) {
  std::optional<PadGatherInfo> info = matchPadGather(padGather);
  if (!info || !matchPattern(info->padValue, m_Constant()))
    return false;
  Value x = info->source;
  Operation *producer = x.getDefiningOp();
  Block *block = padGather->getBlock();
  if (!producer || producer->getBlock() != block || isa<linalg::FillOp>(producer) ||
      isPadGather(producer) || !freshDestination(x))
    return false;
  auto paddedEmpty =
      cast<linalg::GenericOp>(padGather).getDpsInits()[0].getDefiningOp<tensor::EmptyOp>();
  if (!paddedEmpty)
    return false;
  // The other uses must become uses of a view inside dispatches: inputs of
  // linalg ops after the pad (never a destination: the view is read-only).
  for (OpOperand &use : x.getUses()) {
    Operation *user = block->findAncestorOpInBlock(*use.getOwner());
    if (user == padGather)
      continue;
    auto linalgUser = dyn_cast_or_null<linalg::LinalgOp>(user);
    if (!linalgUser || !padGather->isBeforeInBlock(user) ||
        (use.getOwner() == user && !linalgUser.isDpsInput(&use)))
      return false;
  }

  OpBuilder b(padGather);
  Location loc = padGather->getLoc();
  auto xType = cast<RankedTensorType>(x.getType());
  SmallVector<OpFoldResult> paddedSizes = paddedEmpty.getMixedSizes();
  SmallVector<OpFoldResult> offsets, sizes, strides;
  for (int64_t d = 0; d < xType.getRank(); ++d) {
    offsets.push_back(b.getIndexAttr(info->low[d]));
    strides.push_back(b.getIndexAttr(1));
    bool padded = info->low[d] != 0 || info->high[d] != 0;
    OpFoldResult size = padded ? b.getIndexAttr(xType.getDimSize(d)) : paddedSizes[d];
    // The view must have x's type: static dims of x static in the view.
    std::optional<int64_t> staticSize = getConstantIntValue(size);
    if (xType.isDynamicDim(d) ? staticSize.has_value()
                              : staticSize != xType.getDimSize(d))
      return false;
    sizes.push_back(size);
  }
  Value empty = tensor::EmptyOp::create(b, loc, paddedSizes, xType.getElementType());
  Value border = linalg::FillOp::create(b, loc, info->padValue, empty).getResult(0);
  auto insert = tensor::InsertSliceOp::create(b, loc, x, border, offsets, sizes, strides);
  insert->setAttr(kPaddedResultAttr, b.getUnitAttr());
  auto interior =
      tensor::ExtractSliceOp::create(b, loc, xType, insert.getResult(), offsets, sizes, strides);
  interior->setAttr(kPaddedInteriorAttr, b.getUnitAttr());
  x.replaceUsesWithIf(interior.getResult(), [&](OpOperand &use) {
    return use.getOwner() != insert &&
           block->findAncestorOpInBlock(*use.getOwner()) != padGather;
  });
  padGather->getResult(0).replaceAllUsesWith(insert.getResult());
  padGather->erase();
  return true;
}

FailureOr<Value> writePaddedResultInPlace(Operation *paddedResult, Value output,
                                          ValueRange workgroupIds) {
  auto insert = dyn_cast<tensor::InsertSliceOp>(paddedResult);
  if (!insert)
    return failure();
  auto borderFill = insert.getDest().getDefiningOp<linalg::FillOp>();
  auto paddedEmpty =
      borderFill ? borderFill.getOutputs()[0].getDefiningOp<tensor::EmptyOp>() : nullptr;
  Value x = insert.getSource();
  OpOperand *init = freshDestination(x);
  if (!paddedEmpty || !init || !x.hasOneUse())
    return failure();
  SmallVector<OpFoldResult> paddedSizes = paddedEmpty.getMixedSizes();
  SmallVector<OpFoldResult> offsets = insert.getMixedOffsets(), sizes = insert.getMixedSizes(),
                            strides = insert.getMixedStrides();
  // Padded dims: static low, size and padded size; the others untouched.
  struct Strip {
    int64_t dim, offset, extent;
  };
  SmallVector<Strip> strips;
  for (size_t d = 0; d < offsets.size(); ++d) {
    std::optional<int64_t> low = getConstantIntValue(offsets[d]);
    if (!low || !isConstantIntValue(strides[d], 1))
      return failure();
    if (*low == 0 && isEqualConstantIntOrValue(paddedSizes[d], sizes[d]))
      continue;
    std::optional<int64_t> padded = getConstantIntValue(paddedSizes[d]);
    std::optional<int64_t> size = getConstantIntValue(sizes[d]);
    if (!padded || !size)
      return failure();
    if (*low > 0)
      strips.push_back({static_cast<int64_t>(d), 0, *low});
    if (*padded - *low - *size > 0)
      strips.push_back({static_cast<int64_t>(d), *low + *size, *padded - *low - *size});
  }

  Operation *producer = x.getDefiningOp();
  OpBuilder b(producer);
  Location loc = insert.getLoc();
  Value padValue = borderFill.getInputs()[0];
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value first;
  for (Value id : workgroupIds) {
    Value isZero = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, id, zero);
    first = first ? arith::AndIOp::create(b, loc, first, isZero).getResult() : isZero;
  }
  // The output binding itself: everything below writes into it in place (an
  // empty tensor would be replaced by the binding for one of its uses only,
  // and the strips' slices of it would get a buffer of their own).
  Value padded = bufferization::ToTensorOp::create(b, loc, paddedEmpty.getType(), output,
                                                   /*restrict=*/true, /*writable=*/true);
  for (const Strip &strip : strips) {
    SmallVector<OpFoldResult> stripOffsets(offsets.size(), b.getIndexAttr(0));
    SmallVector<OpFoldResult> stripSizes = paddedSizes;
    stripOffsets[strip.dim] = b.getIndexAttr(strip.offset);
    Value extent = arith::ConstantIndexOp::create(b, loc, strip.extent);
    stripSizes[strip.dim] =
        first ? arith::SelectOp::create(b, loc, first, extent, zero).getResult() : extent;
    Value slice =
        tensor::ExtractSliceOp::create(b, loc, padded, stripOffsets, stripSizes, strides);
    Value filled = linalg::FillOp::create(b, loc, padValue, slice).getResult(0);
    padded = tensor::InsertSliceOp::create(b, loc, filled, padded, stripOffsets, stripSizes,
                                           strides);
  }
  Value interior = tensor::ExtractSliceOp::create(b, loc, cast<RankedTensorType>(x.getType()),
                                                  padded, offsets, sizes, strides);
  Operation *oldInit = init->get().getDefiningOp();
  Value newInit = interior;
  if (auto initFill = dyn_cast<linalg::FillOp>(oldInit))
    newInit = linalg::FillOp::create(b, loc, initFill.getInputs()[0], interior).getResult(0);
  init->set(newInit);

  b.setInsertionPoint(insert);
  auto inPlace = tensor::InsertSliceOp::create(b, loc, x, padded, offsets, sizes, strides);
  inPlace->setAttr(kPaddedResultAttr, b.getUnitAttr());
  insert.getResult().replaceAllUsesWith(inPlace.getResult());
  insert->erase();
  // The old destinations, now unused.
  std::function<void(Operation *)> eraseIfDead = [&](Operation *op) {
    if (!op || !op->use_empty())
      return;
    SmallVector<Operation *> producers;
    for (Value operand : op->getOperands())
      producers.push_back(operand.getDefiningOp());
    op->erase();
    for (Operation *producer : producers)
      if (producer && isa<linalg::FillOp, tensor::EmptyOp>(producer))
        eraseIfDead(producer);
  };
  eraseIfDead(borderFill);
  eraseIfDead(oldInit);
  return inPlace.getResult();
}

} // namespace turbine::compiler
