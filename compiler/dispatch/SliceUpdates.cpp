//===- SliceUpdates.cpp - Slice updates written in place ------------------===//
//
// The pass turbine-update-slices-in-place and the kernel-side helper that
// dispatch formation calls (SliceUpdates.h). The safety argument for
// updating a global's storage in place: after the rewrite the only value
// that holds the global's current storage and is read after the update is
// the update's own result (which is stored back), so no reader can see the
// slice change under it. Readers are found conservatively: any use of
// another load of the global since its previous store, or of the value that
// store stored, makes the update copy first. Dispatch formation only moves
// ops later (to their region's last op), never earlier, and every such
// reader has been ruled out, so formation cannot create a hazard either.
//===----------------------------------------------------------------------===//
#include "dispatch/SliceUpdates.h"
#include "dispatch/DispatchNames.h"

#include "turbine/compiler/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MLProgram/IR/MLProgram.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"

using namespace mlir;

namespace turbine::compiler {

#define GEN_PASS_DEF_UPDATESLICESINPLACE
#include "turbine/compiler/Passes.h.inc"

bool isSliceUpdate(Operation *op) {
  return isa<tensor::InsertSliceOp>(op) && op->hasAttr(kSliceUpdateAttr);
}

Value identityCopy(OpBuilder &b, Location loc, Value source) {
  auto type = cast<RankedTensorType>(source.getType());
  SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(b, loc, source);
  Value empty = tensor::EmptyOp::create(b, loc, sizes, type.getElementType());
  int64_t rank = type.getRank();
  SmallVector<AffineMap> maps(2, b.getMultiDimIdentityMap(rank));
  SmallVector<utils::IteratorType> iterators(rank, utils::IteratorType::parallel);
  auto copy = linalg::GenericOp::create(
      b, loc, TypeRange{type}, ValueRange{source}, ValueRange{empty}, maps, iterators,
      [](OpBuilder &nb, Location l, ValueRange args) { linalg::YieldOp::create(nb, l, args[0]); });
  return copy.getResult(0);
}

namespace {

/// The mutable global `value` is a load of, or null.
ml_program::GlobalLoadOp loadOfGlobal(Value value) {
  return value.getDefiningOp<ml_program::GlobalLoadOp>();
}

bool sameGlobal(Operation *a, Operation *b) {
  auto symbolOf = [](Operation *op) { return op->getAttrOfType<SymbolRefAttr>("global"); };
  return symbolOf(a) && symbolOf(a) == symbolOf(b);
}

/// What a message calls the tensor `insert` updates.
std::string describeTarget(tensor::InsertSliceOp insert) {
  if (auto load = loadOfGlobal(insert.getDest()))
    return "global '" + load.getGlobal().getLeafReference().str() + "'";
  return "a tensor";
}

/// cf.assert per dim whose offset, size or extent is a run-time value:
/// 0 <= offset and offset + size <= extent. A static violation is an error.
LogicalResult checkBounds(tensor::InsertSliceOp insert) {
  OpBuilder b(insert);
  Location loc = insert.getLoc();
  auto destType = cast<RankedTensorType>(insert.getDest().getType());
  SmallVector<OpFoldResult> offsets = insert.getMixedOffsets(), sizes = insert.getMixedSizes();
  for (int64_t d = 0; d < destType.getRank(); ++d) {
    std::optional<int64_t> offset = getConstantIntValue(offsets[d]);
    std::optional<int64_t> size = getConstantIntValue(sizes[d]);
    std::optional<int64_t> extent;
    if (!destType.isDynamicDim(d))
      extent = destType.getDimSize(d);
    std::string what = "slice update of " + describeTarget(insert) + " out of bounds: dim " +
                       std::to_string(d) + " needs 0 <= offset and offset + size <= " +
                       (extent ? std::to_string(*extent) : std::string("its size"));
    if (offset && size && extent) {
      if (*offset < 0 || *offset + *size > *extent)
        return insert.emitError(what) << " (offset " << *offset << ", size " << *size << ")";
      continue;
    }
    Value offsetValue = getValueOrCreateConstantIndexOp(b, loc, offsets[d]);
    Value sizeValue = getValueOrCreateConstantIndexOp(b, loc, sizes[d]);
    Value extentValue = extent ? arith::ConstantIndexOp::create(b, loc, *extent).getResult()
                               : tensor::DimOp::create(b, loc, insert.getDest(), d).getResult();
    Value zero = arith::ConstantIndexOp::create(b, loc, 0);
    Value nonNegative =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, offsetValue, zero);
    Value end = arith::AddIOp::create(b, loc, offsetValue, sizeValue);
    Value fits = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sle, end, extentValue);
    Value inBounds = arith::AndIOp::create(b, loc, nonNegative, fits);
    cf::AssertOp::create(b, loc, inBounds, what);
  }
  return success();
}

/// True when `insert` may write the storage of the global its destination
/// loads (see the file comment): the load feeds only the insert, the insert
/// only a store back into the same global, all in one block, and since the
/// global's previous store in that block (or the block's start) no other
/// load of it is used, nothing else stores it, and the previous store's
/// value is used by that store alone.
bool canUpdateGlobalInPlace(tensor::InsertSliceOp insert) {
  ml_program::GlobalLoadOp load = loadOfGlobal(insert.getDest());
  if (!load || !load->hasOneUse() || !insert->hasOneUse())
    return false;
  auto store = dyn_cast<ml_program::GlobalStoreOp>(*insert->user_begin());
  if (!store || !sameGlobal(store, load) || store->getBlock() != insert->getBlock() ||
      load->getBlock() != insert->getBlock())
    return false;
  bool seenLoad = false;
  for (Operation *op = store->getPrevNode(); op; op = op->getPrevNode()) {
    if (op == load.getOperation()) {
      seenLoad = true;
      continue;
    }
    if (auto previous = dyn_cast<ml_program::GlobalStoreOp>(op); previous && sameGlobal(op, load))
      return seenLoad && previous.getValue().hasOneUse();
    bool hazard = false;
    op->walk([&](Operation *inner) {
      if (isa<ml_program::GlobalStoreOp>(inner) && sameGlobal(inner, load))
        hazard = true;
      if (isa<ml_program::GlobalLoadOp>(inner) && sameGlobal(inner, load) && !inner->use_empty())
        hazard = true;
    });
    if (hazard)
      return false;
  }
  return seenLoad;
}

/// A value whose storage only this insert will see: a linalg result used
/// only here, in the same block (it becomes a fresh dispatch result).
bool isFreshDestination(tensor::InsertSliceOp insert) {
  Value dest = insert.getDest();
  Operation *def = dest.getDefiningOp();
  return def && isa<linalg::LinalgOp>(def) && dest.hasOneUse() &&
         def->getBlock() == insert->getBlock();
}

LogicalResult rewriteInsert(tensor::InsertSliceOp insert) {
  for (OpFoldResult stride : insert.getMixedStrides())
    if (!isConstantIntValue(stride, 1))
      return insert.emitError("slice update of ")
             << describeTarget(insert) << ": only unit strides are supported";
  if (failed(checkBounds(insert)))
    return failure();
  OpBuilder b(insert);
  Location loc = insert.getLoc();
  if (auto load = loadOfGlobal(insert.getDest()); load && canUpdateGlobalInPlace(insert)) {
    load->setAttr(kUpdateOnlyAttr, b.getUnitAttr());
  } else if (!isFreshDestination(insert)) {
    Value copy = identityCopy(b, loc, insert.getDest());
    insert.getDestMutable().assign(copy);
  }
  Value source = identityCopy(b, loc, insert.getSource());
  insert.getSourceMutable().assign(source);
  insert->setAttr(kSliceUpdateAttr, b.getUnitAttr());
  return success();
}

struct UpdateSlicesInPlacePass : impl::UpdateSlicesInPlaceBase<UpdateSlicesInPlacePass> {
  void runOnOperation() override {
    SmallVector<tensor::InsertSliceOp> inserts;
    for (auto func : getOperation().getOps<func::FuncOp>())
      func.walk([&](tensor::InsertSliceOp insert) {
        // Padded results (PaddedResults.h) and updates already formed stay.
        if (insert->getAttrs().empty() || !llvm::any_of(insert->getAttrs(), [](NamedAttribute a) {
              return a.getName().getValue().starts_with("turbine.");
            }))
          inserts.push_back(insert);
      });
    for (tensor::InsertSliceOp insert : inserts)
      if (failed(rewriteInsert(insert)))
        return signalPassFailure();
  }
};

} // namespace

LogicalResult writeSliceUpdateInPlace(Operation *op) {
  auto insert = dyn_cast<tensor::InsertSliceOp>(op);
  if (!insert)
    return failure();
  Value source = insert.getSource();
  auto producer = source.getDefiningOp<linalg::LinalgOp>();
  if (!producer || producer->getNumResults() != 1)
    return failure();
  OpOperand *init = producer.getDpsInitOperand(0);
  Operation *oldInit = init->get().getDefiningOp();
  auto fill = dyn_cast_or_null<linalg::FillOp>(oldInit);
  Value fresh = fill ? fill.getOutputs()[0] : init->get();
  auto empty = fresh.getDefiningOp<tensor::EmptyOp>();
  if (!empty)
    return failure();
  Location loc = insert.getLoc();
  // The empty tensor may also be the destination of the ops before the
  // producer (a convolution accumulating into fill(empty), its epilogue
  // writing into the same empty: it then accumulates in the output). When
  // every use is a destination, all of them become the slice, so those ops
  // write the slice in place too instead of a temporary.
  bool onlyDestinations = llvm::all_of(empty->getUses(), [](OpOperand &use) {
    auto dps = dyn_cast<DestinationStyleOpInterface>(use.getOwner());
    return dps && dps.isDpsInit(&use);
  });
  if (!empty->hasOneUse() && onlyDestinations) {
    Operation *after = empty;
    for (Value operand : insert->getOperands()) {
      Operation *def = operand.getDefiningOp();
      if (operand == source || !def)
        continue;
      if (def->getBlock() != empty->getBlock() || producer->isBeforeInBlock(def))
        return failure();
      if (after->isBeforeInBlock(def))
        after = def;
    }
    OpBuilder b(empty->getContext());
    b.setInsertionPointAfter(after);
    Value slice = tensor::ExtractSliceOp::create(
        b, loc, cast<RankedTensorType>(source.getType()), insert.getDest(),
        insert.getMixedOffsets(), insert.getMixedSizes(), insert.getMixedStrides());
    empty.getResult().replaceAllUsesWith(slice);
    empty->erase();
    return success();
  }
  OpBuilder b(producer);
  Value slice = tensor::ExtractSliceOp::create(
      b, loc, cast<RankedTensorType>(source.getType()), insert.getDest(),
      insert.getMixedOffsets(), insert.getMixedSizes(), insert.getMixedStrides());
  Value newInit = slice;
  if (fill)
    newInit = linalg::FillOp::create(b, loc, fill.getInputs()[0], slice).getResult(0);
  init->set(newInit);
  if (fill && fill->use_empty())
    fill->erase();
  return success();
}

std::string describeSliceUpdate(Operation *op) {
  auto insert = cast<tensor::InsertSliceOp>(op);
  std::string name = "update_slice";
  if (auto load = loadOfGlobal(insert.getDest())) {
    name = "update_";
    for (char c : load.getGlobal().getLeafReference().getValue())
      name += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  }
  auto type = cast<RankedTensorType>(insert.getSource().getType());
  return name + "_" + formatExtents(type.getShape()) + "_" + resultElementTypeName(op);
}

} // namespace turbine::compiler
