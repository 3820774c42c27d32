//===- DispatchFormation.cpp - Group linalg ops into kernels --------------===//
//
// Forms dispatch regions on the host functions and outlines each one into a
// kernel function with the Turbine kernel ABI:
//
//  * A region starts at a linalg op (its root: a contraction, convolution,
//    reduction, or an elementwise op with nothing to fuse into) and takes in
//    the chain of elementwise linalg.generic consumers that read the root's
//    result element for element and are its only users (so Gemm + bias + ReLU
//    is one kernel), plus the linalg.fill / tensor.empty ops that only
//    initialize its destinations, and the pad gathers (LowerPads.cpp) that
//    only feed an NHWC pooling or depthwise convolution: codegen computes the
//    padded input per workgroup tile into a tile-sized scratch buffer instead
//    of a separate kernel writing the whole padded tensor.
//  * A pad gather in front of a full convolution is written by the producer
//    of what it pads (PaddedResults.cpp): the producer's region takes in the
//    insert_slice into the zero-bordered tensor, so its kernel's result is
//    the padded tensor, and the producer's other consumers read the interior
//    through an extract_slice cloned into their kernels.
//  * Captured tensors become input bindings, results become output bindings,
//    dynamic dims of every binding and captured index values become push
//    constants, splat constants are cloned into the kernel.
//  * Regions form in every block of the host function, so the body of a host
//    loop (scf.while, from an ONNX Loop run at run time) gets its own
//    dispatches inside the loop.
//  * The host function keeps index arithmetic, tensor.dim, reshapes and one
//    turbine.dispatch per region, whose workgroup count is derived from the
//    region's workgroup tile sizes (the target's choice, recorded on the
//    kernel for codegen).
//  * A slice update (SliceUpdates.h: the identity copy of the slice and the
//    tensor.insert_slice marked turbine.slice_update that writes it) is one
//    region whose result is written in place: the insert's destination is
//    not an input binding but the `in_place` operand of the dispatch, whose
//    storage is the result's output binding (a KV cache global updated by
//    one step's slice, no copy of the whole tensor).
//  * A concatenation is a chain of slice updates (ConcatSlices.h): each
//    joins the region of the op computing its slice; the first one's
//    destination, a tensor.empty in its region, is its output binding (a
//    new tensor), the later ones update that tensor in place.
//  * A fused attention (turbine.attention, AttentionFusion.cpp) is a region
//    of its own, its destination's tensor.empty cloned in; its K / V (a KV
//    cache global) are input bindings like any tensor, read in place.
//  * Kernels are named after their root op and shapes (DispatchNames.h).
//===----------------------------------------------------------------------===//
#include "dispatch/ConcatSlices.h"
#include "dispatch/DispatchNames.h"
#include "dispatch/PaddedResults.h"
#include "dispatch/SliceUpdates.h"
#include "dispatch/WorkgroupTiling.h"
#include "global-opt/LowerPads.h"

#include "turbine/compiler/Dialect/TurbineDialect.h"
#include "turbine/compiler/Passes.h"
#include "turbine/compiler/Target.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/Passes.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/SetVector.h"

#include <algorithm>

using namespace mlir;

namespace turbine::compiler {

#define GEN_PASS_DEF_FORMDISPATCHES
#include "turbine/compiler/Passes.h.inc"

namespace {

/// One dispatch region: ops in block order, the last one producing results.
struct DispatchRegion {
  SmallVector<Operation *> ops;
};

/// True if `consumer` is an all-parallel linalg.generic that reads `value`
/// element for element (identity map, same rank as its iteration space).
bool isElementwiseConsumerOf(Operation *consumer, Value value) {
  auto generic = dyn_cast<linalg::GenericOp>(consumer);
  if (!generic || generic.getNumReductionLoops() != 0 ||
      generic.getNumDpsInits() != 1)
    return false;
  for (OpOperand *input : generic.getDpsInputOperands()) {
    if (input->get() != value)
      continue;
    AffineMap map = generic.getMatchingIndexingMap(input);
    if (!map.isIdentity())
      return false;
  }
  return generic.getMatchingIndexingMap(generic.getDpsInitOperand(0))
      .isIdentity();
}

/// Adds the fill / empty ops that only initialize `op`'s destinations.
void addDestinationProducers(Operation *op, llvm::SetVector<Operation *> &ops,
                             const DenseSet<Operation *> &assigned) {
  auto dps = dyn_cast<DestinationStyleOpInterface>(op);
  if (!dps)
    return;
  for (OpOperand &init : dps.getDpsInitsMutable()) {
    Operation *producer = init.get().getDefiningOp();
    if (!producer || !producer->hasOneUse() || assigned.contains(producer) ||
        producer->getBlock() != op->getBlock())
      continue;
    if (isa<linalg::FillOp>(producer)) {
      ops.insert(producer);
      addDestinationProducers(producer, ops, assigned);
    } else if (isa<tensor::EmptyOp>(producer)) {
      ops.insert(producer);
    }
  }
}

/// A fill of an empty tensor used only as the destination of linalg ops: it
/// is cloned into each of their kernels instead of forming its own.
bool initializesOnlyADestination(Operation *op) {
  auto fill = dyn_cast<linalg::FillOp>(op);
  if (!fill || op->use_empty() ||
      !fill.getOutputs()[0].getDefiningOp<tensor::EmptyOp>())
    return false;
  return llvm::all_of(op->getUses(), [&](OpOperand &use) {
    auto user = dyn_cast<DestinationStyleOpInterface>(use.getOwner());
    return user && isa<linalg::LinalgOp>(use.getOwner()) &&
           user.isDpsInit(&use) &&
           use.getOwner()->getBlock() == op->getBlock();
  });
}

/// Adds the pad gathers that only feed `op`'s inputs (see above).
void addPadProducers(Operation *op, llvm::SetVector<Operation *> &ops,
                     const DenseSet<Operation *> &assigned) {
  if (!isChannelLocalWindow(op))
    return;
  for (Value operand : op->getOperands()) {
    Operation *producer = operand.getDefiningOp();
    if (producer && !assigned.contains(producer) && padsOnlyAWindowInput(producer))
      ops.insert(producer);
  }
}

SmallVector<DispatchRegion> formRegions(func::FuncOp func) {
  SmallVector<DispatchRegion> regions;
  DenseSet<Operation *> assigned;
  // Every block of the host function: the body of a host loop (scf.while)
  // forms its regions like the top level (a region never spans blocks).
  SmallVector<Block *> blocks;
  func.walk<WalkOrder::PreOrder>([&](Block *block) {
    if (!isa<linalg::LinalgOp>(block->getParentOp()))
      blocks.push_back(block);
  });
  for (Block *block : blocks)
  for (Operation &opRef : *block) {
    Operation *root = &opRef;
    // A fused attention (turbine.attention) is a region of its own: the
    // target lowers it as a whole, nothing fuses into it.
    bool attention = isa<AttentionOp>(root);
    if ((!isa<linalg::LinalgOp>(root) && !attention) || assigned.contains(root) ||
        initializesOnlyADestination(root) || padsOnlyAWindowInput(root))
      continue;
    llvm::SetVector<Operation *> ops;
    ops.insert(root);
    Operation *current = root;
    while (!attention && current->getNumResults() == 1 && current->getResult(0).hasOneUse()) {
      Operation *user = *current->getResult(0).getUsers().begin();
      if (user->getBlock() != root->getBlock() || assigned.contains(user) ||
          !isElementwiseConsumerOf(user, current->getResult(0)))
        break;
      ops.insert(user);
      current = user;
    }
    // The producer of a padded result writes it (PaddedResults.cpp).
    if (!attention && current->getNumResults() == 1 && current->getResult(0).hasOneUse()) {
      Operation *user = *current->getResult(0).getUsers().begin();
      if (isPaddedResult(user) && user->getBlock() == root->getBlock() &&
          !assigned.contains(user))
        ops.insert(user);
      // A slice update of what the chain computes: written in place.
      if (isSliceUpdate(user) && user->getBlock() == root->getBlock() &&
          !assigned.contains(user) &&
          cast<tensor::InsertSliceOp>(user).getSource() == current->getResult(0))
        ops.insert(user);
    }
    for (Operation *op : SmallVector<Operation *>(ops.begin(), ops.end())) {
      addDestinationProducers(op, ops, assigned);
      addPadProducers(op, ops, assigned);
    }
    DispatchRegion region;
    region.ops.assign(ops.begin(), ops.end());
    llvm::sort(region.ops,
               [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });
    for (Operation *op : region.ops)
      assigned.insert(op);
    regions.push_back(std::move(region));
  }
  return regions;
}

/// Host values for the dynamic dims of `value`, a tensor produced inside the
/// region: follows destination operands back to a tensor.empty or to a tensor
/// defined outside the region.
LogicalResult getHostDynamicDims(OpBuilder &b, Value value,
                                 const DenseSet<Operation *> &inRegion,
                                 SmallVectorImpl<Value> &dims) {
  auto type = cast<RankedTensorType>(value.getType());
  if (type.hasStaticShape())
    return success();
  Operation *def = value.getDefiningOp();
  if (!def || !inRegion.contains(def)) {
    for (int64_t i = 0; i < type.getRank(); ++i)
      if (type.isDynamicDim(i))
        dims.push_back(tensor::DimOp::create(b, value.getLoc(), value, i));
    return success();
  }
  if (auto empty = dyn_cast<tensor::EmptyOp>(def)) {
    dims.append(empty.getDynamicSizes().begin(), empty.getDynamicSizes().end());
    return success();
  }
  if (auto dps = dyn_cast<DestinationStyleOpInterface>(def)) {
    OpOperand *init = dps.getTiedOpOperand(cast<OpResult>(value));
    return getHostDynamicDims(b, init->get(), inRegion, dims);
  }
  return def->emitError("dispatch formation: cannot compute the shape of ")
         << value.getType() << " on the host";
}

/// Splat constants, scalars and tensor.empty (a shape, no data) are
/// rematerialized inside kernels rather than passed in.
bool shouldCloneIntoKernel(Value value) {
  if (value.getDefiningOp<tensor::EmptyOp>())
    return true;
  // The interior of a padded result: a view of the padded input binding.
  if (Operation *def = value.getDefiningOp(); def && isPaddedResultInterior(def))
    return true;
  // A concatenation that is the prefix of a larger one: a view of its tensor.
  if (Operation *def = value.getDefiningOp(); def && isConcatPrefix(def))
    return true;
  // A fill of an empty tensor shared by several regions (CSE merges equal
  // fills): each kernel fills its own destination instead of reading one.
  if (auto fill = value.getDefiningOp<linalg::FillOp>())
    return fill.getOutputs()[0].getDefiningOp<tensor::EmptyOp>() != nullptr;
  auto constant = value.getDefiningOp<arith::ConstantOp>();
  if (!constant || isKernelOperandConstant(constant))
    return false;
  if (auto dense = dyn_cast<DenseElementsAttr>(constant.getValue()))
    return dense.isSplat();
  return true;
}

/// The kernel name of a region: after its root op and shapes, a slice
/// update after the global it updates, a concatenation's slice after the op
/// writing it (`concat_copy_<extents>` when that is the identity copy).
std::string describeRegion(ArrayRef<Operation *> ops, ArrayRef<Value> results,
                           const Target &target) {
  Operation *first = results.front().getDefiningOp();
  if (!first || !isSliceUpdate(first))
    return describeDispatchRegion(ops, target);
  if (!isConcatSlice(first))
    return describeSliceUpdate(first);
  Value source = cast<tensor::InsertSliceOp>(first).getSource();
  auto copy = source.getDefiningOp<linalg::GenericOp>();
  if (copy && copy.getNumDpsInputs() == 1 && llvm::all_of(copy.getIndexingMapsArray(), [](AffineMap m) {
        return m.isIdentity();
      }) && isa<BlockArgument>(copy.getBody()->getTerminator()->getOperand(0)) &&
      llvm::count_if(ops, [](Operation *op) { return isa<linalg::LinalgOp>(op); }) == 1)
    return "concat_copy_" +
           formatExtents(cast<RankedTensorType>(source.getType()).getShape()) + "_" +
           resultElementTypeName(copy);
  return describeDispatchRegion(ops, target);
}

class RegionOutliner {
public:
  RegionOutliner(func::FuncOp func, ModuleOp kernels, SymbolTable &kernelNames,
                 const Target &target, const CompileOptions &options)
      : func(func), kernels(kernels), kernelNames(kernelNames), target(target),
        options(options) {}

  LogicalResult outline(const DispatchRegion &region);

private:
  func::FuncOp func;
  ModuleOp kernels;
  SymbolTable &kernelNames;
  const Target &target;
  const CompileOptions &options;
};

LogicalResult RegionOutliner::outline(const DispatchRegion &region) {
  MLIRContext *ctx = func.getContext();
  DenseSet<Operation *> inRegion(region.ops.begin(), region.ops.end());
  Operation *last = region.ops.back();
  Location loc = last->getLoc();

  // Values the region uses from outside, and values it defines for outside.
  llvm::SetVector<Value> captured;
  for (Operation *op : region.ops) {
    for (Value operand : op->getOperands())
      if (!inRegion.contains(operand.getDefiningOp()))
        captured.insert(operand);
    for (Region &nested : op->getRegions()) {
      llvm::SetVector<Value> above;
      getUsedValuesDefinedAbove(nested, above);
      for (Value v : above)
        if (!inRegion.contains(v.getDefiningOp()))
          captured.insert(v);
    }
  }
  // What is cloned into the kernel needs its own operands there too.
  for (size_t i = 0; i < captured.size(); ++i)
    if (shouldCloneIntoKernel(captured[i]))
      captured.insert(captured[i].getDefiningOp()->operand_begin(),
                      captured[i].getDefiningOp()->operand_end());
  SmallVector<Value> results;
  for (Operation *op : region.ops)
    for (Value result : op->getResults())
      if (llvm::any_of(result.getUsers(), [&](Operation *user) {
            return !inRegion.contains(user);
          }))
        results.push_back(result);
  if (results.empty())
    return success(); // Dead region: leave it to canonicalization.
  // Slice updates write the storage of their destination (the dispatch's
  // in_place operands): their results come first, their destinations are
  // not input bindings.
  // A slice update whose destination is a tensor.empty in the region (the
  // first slice of a concatenation, ConcatSlices.h) writes a new tensor: its
  // result is an output binding like any, and the empty is that binding.
  auto updateOf = [&](Value result) -> tensor::InsertSliceOp {
    Operation *def = result.getDefiningOp();
    return def && isSliceUpdate(def) ? cast<tensor::InsertSliceOp>(def) : nullptr;
  };
  auto writesNewTensor = [&](tensor::InsertSliceOp update) {
    Operation *dest = update.getDest().getDefiningOp();
    return dest && inRegion.contains(dest) && isa<tensor::EmptyOp>(dest);
  };
  SmallVector<Value> inPlace;
  std::stable_partition(results.begin(), results.end(), [&](Value result) {
    tensor::InsertSliceOp update = updateOf(result);
    return update && !writesNewTensor(update);
  });
  for (Value result : results)
    if (tensor::InsertSliceOp update = updateOf(result); update && !writesNewTensor(update))
      inPlace.push_back(update.getDest());
  for (Value dest : inPlace) {
    if (llvm::count(inPlace, dest) > 1 ||
        llvm::any_of(region.ops, [&](Operation *op) {
          return llvm::any_of(op->getOpOperands(), [&](OpOperand &use) {
            return use.get() == dest && !(isSliceUpdate(op) && use.getOperandNumber() == 1);
          });
        }))
      return last->emitError("dispatch formation: a slice update's destination is also read "
                             "in its kernel");
  }

  SmallVector<Value> inputTensors, scalars, cloned;
  for (Value v : captured) {
    if (llvm::is_contained(inPlace, v))
      continue;
    if (shouldCloneIntoKernel(v))
      cloned.push_back(v);
    else if (isa<RankedTensorType>(v.getType()))
      inputTensors.push_back(v);
    else if (v.getType().isIntOrIndex())
      scalars.push_back(v);
    else
      return last->emitError("dispatch formation: cannot pass a value of type ")
             << v.getType() << " from the host to a kernel";
  }

  // Host side: dims of every binding, then captured scalars.
  OpBuilder hb(last);
  SmallVector<Value> constants;
  for (Value input : inputTensors)
    if (failed(getHostDynamicDims(hb, input, inRegion, constants)))
      return failure();
  SmallVector<Value> resultDims;
  for (Value result : results)
    if (failed(getHostDynamicDims(hb, result, inRegion, resultDims)))
      return failure();
  constants.append(resultDims.begin(), resultDims.end());
  for (Value s : scalars)
    constants.push_back(s.getType().isIndex()
                            ? s
                            : arith::IndexCastOp::create(hb, loc,
                                                         hb.getIndexType(), s)
                                  .getResult());

  // A padded result is tiled (and its grid sized) like the value it pads.
  Value tiled = results.front();
  SmallVector<Value> tiledDims(resultDims);
  if (Operation *def = tiled.getDefiningOp();
      def && (isPaddedResult(def) || isSliceUpdate(def))) {
    tiled = cast<tensor::InsertSliceOp>(def).getSource();
    tiledDims.clear();
    if (failed(getHostDynamicDims(hb, tiled, inRegion, tiledDims)))
      return failure();
  }
  // Workgroup grid from the target's tiles of the first result.
  WorkgroupTiling tiling = target.workgroupTiling(region.ops, tiled, options);
  SmallVector<Value> firstDims;
  {
    auto type = cast<RankedTensorType>(tiled.getType());
    size_t dyn = 0;
    for (int64_t i = 0; i < type.getRank(); ++i)
      firstDims.push_back(type.isDynamicDim(i)
                              ? tiledDims[dyn++]
                              : arith::ConstantIndexOp::create(
                                    hb, loc, type.getDimSize(i))
                                    .getResult());
  }
  SmallVector<Value> workgroups;
  for (int axis = 0; axis < 3; ++axis) {
    int64_t dim = tiling.gridDims[axis];
    if (dim < 0) {
      workgroups.push_back(arith::ConstantIndexOp::create(hb, loc, 1));
      continue;
    }
    Value tile =
        arith::ConstantIndexOp::create(hb, loc, tiling.tileSizes[dim]);
    workgroups.push_back(
        arith::CeilDivSIOp::create(hb, loc, firstDims[dim], tile));
  }

  // Kernel side.
  std::string name = uniqueKernelName(kernelNames, describeRegion(region.ops, results, target));
  auto ptrType = LLVM::LLVMPointerType::get(ctx);
  auto indexType = IndexType::get(ctx);
  auto kernelType = FunctionType::get(
      ctx, {ptrType, indexType, indexType, indexType}, {});
  OpBuilder kb = OpBuilder::atBlockEnd(kernels.getBody());
  auto kernel = func::FuncOp::create(kb, loc, name, kernelType);
  kernelNames.insert(kernel);
  kernel->setAttr(kKernelAttr, kb.getUnitAttr());
  setWorkgroupTiling(kernel, tiling);
  Block *entry = kernel.addEntryBlock();
  kb.setInsertionPointToStart(entry);
  Value state = entry->getArgument(0);

  int64_t nextConstant = 0;
  auto pushConstant = [&]() {
    return PushConstantOp::create(kb, loc, kb.getIndexType(), state, nextConstant++).getResult();
  };
  int64_t nextBinding = 0;
  auto binding = [&](RankedTensorType type) {
    SmallVector<Value> dims;
    for (int64_t i = 0; i < type.getRank(); ++i)
      if (type.isDynamicDim(i))
        dims.push_back(pushConstant());
    auto memrefType = MemRefType::get(type.getShape(), type.getElementType());
    return BindingOp::create(kb, loc, memrefType, state, nextBinding++, dims)
        .getResult();
  };

  IRMapping mapping;
  for (Value input : inputTensors) {
    auto type = cast<RankedTensorType>(input.getType());
    Value buffer = binding(type);
    Value tensor = bufferization::ToTensorOp::create(
        kb, loc, type, buffer, /*restrict=*/true, /*writable=*/false);
    mapping.map(input, tensor);
  }
  SmallVector<Value> outputBuffers;
  for (Value result : results)
    outputBuffers.push_back(binding(cast<RankedTensorType>(result.getType())));
  // The destination of a slice update is its output binding, writable.
  for (auto [dest, buffer] : llvm::zip(inPlace, outputBuffers))
    mapping.map(dest, bufferization::ToTensorOp::create(kb, loc, dest.getType(), buffer,
                                                        /*restrict=*/true, /*writable=*/true)
                          .getResult());
  // The destination of a concatenation's first slice is its output binding.
  DenseSet<Operation *> boundEmpties;
  for (auto [result, buffer] : llvm::zip(results, outputBuffers))
    if (tensor::InsertSliceOp update = updateOf(result); update && writesNewTensor(update)) {
      Value dest = update.getDest();
      mapping.map(dest, bufferization::ToTensorOp::create(kb, loc, dest.getType(), buffer,
                                                          /*restrict=*/true, /*writable=*/true)
                            .getResult());
      boundEmpties.insert(dest.getDefiningOp());
    }
  for (Value s : scalars) {
    Value c = pushConstant();
    if (!s.getType().isIndex())
      c = arith::IndexCastOp::create(kb, loc, s.getType(), c);
    mapping.map(s, c);
  }
  // Definitions in program order (they may lie in different blocks when the
  // region is inside a host loop).
  DenseMap<Operation *, int64_t> order;
  func.walk<WalkOrder::PreOrder>(
      [&](Operation *op) { order[op] = static_cast<int64_t>(order.size()); });
  llvm::sort(cloned, [&](Value a, Value b) {
    return order.lookup(a.getDefiningOp()) < order.lookup(b.getDefiningOp());
  });
  for (Value v : cloned)
    mapping.map(v, kb.clone(*v.getDefiningOp(), mapping)->getResult(0));
  DenseSet<Value> inputTensorsInKernel;
  for (Value input : inputTensors)
    inputTensorsInKernel.insert(mapping.lookup(input));
  for (Operation *op : region.ops) {
    if (boundEmpties.contains(op))
      continue;
    Operation *clone = kb.clone(*op, mapping);
    // An op accumulating into a tensor the kernel only reads gets a copy of
    // it as destination; codegen fuses that copy per tile like a fill, so
    // results are written in place into the output binding.
    auto dps = dyn_cast<DestinationStyleOpInterface>(clone);
    if (!dps)
      continue;
    for (OpOperand &init : dps.getDpsInitsMutable()) {
      if (!inputTensorsInKernel.contains(init.get()))
        continue;
      OpBuilder cb(clone);
      Value source = init.get();
      SmallVector<OpFoldResult> sizes =
          tensor::getMixedSizes(cb, loc, source);
      Value empty = tensor::EmptyOp::create(
          cb, loc, sizes, cast<RankedTensorType>(source.getType()).getElementType());
      Value copy =
          linalg::CopyOp::create(cb, loc, source, empty).getResult(0);
      init.set(copy);
    }
  }
  for (auto [result, buffer] : llvm::zip(results, outputBuffers)) {
    Operation *op = result.getDefiningOp();
    if (!op || !isPaddedResult(op))
      continue;
    FailureOr<Value> padded =
        writePaddedResultInPlace(mapping.lookup(result).getDefiningOp(), buffer,
                                 entry->getArguments().slice(1, 3));
    if (failed(padded))
      return op->emitError("dispatch formation: cannot write the padded result in place");
    mapping.map(result, *padded);
  }
  for (Value result : results)
    if (updateOf(result) && failed(writeSliceUpdateInPlace(mapping.lookup(result).getDefiningOp())))
      return result.getDefiningOp()->emitError(
          "dispatch formation: cannot write the slice update in place");
  for (auto [result, buffer] : llvm::zip(results, outputBuffers)) {
    auto op = bufferization::MaterializeInDestinationOp::create(
        kb, loc, TypeRange{}, mapping.lookup(result), buffer);
    op.setRestrict(true);
    op.setWritable(true);
  }
  func::ReturnOp::create(kb, loc);

  // Replace the region on the host.
  SmallVector<Type> resultTypes;
  for (Value r : results)
    resultTypes.push_back(r.getType());
  auto dispatch = DispatchOp::create(
      hb, loc, resultTypes, FlatSymbolRefAttr::get(ctx, name), workgroups,
      inputTensors, constants, resultDims, inPlace);
  for (auto [result, replacement] : llvm::zip(results, dispatch.getResults()))
    result.replaceUsesWithIf(replacement, [&](OpOperand &use) {
      return !inRegion.contains(use.getOwner());
    });
  for (Operation *op : llvm::reverse(region.ops)) {
    op->dropAllUses();
    op->erase();
  }
  return success();
}

} // namespace

namespace {

struct FormDispatchesPass : impl::FormDispatchesBase<FormDispatchesPass> {
  using Base::Base;
  void runOnOperation() override;
};

void FormDispatchesPass::runOnOperation() {
  ModuleOp module = getOperation();
  const Target *targetImpl = findTarget(target);
  if (!targetImpl) {
    module.emitError("dispatch formation: unknown target '") << target << "'";
    return signalPassFailure();
  }
  ModuleOp kernels = getKernelsModule(module, /*create=*/true);
  SymbolTable kernelNames(kernels);
  CompileOptions options;
  options.targetCpu = targetCpu;
  SmallVector<func::FuncOp> functions(module.getOps<func::FuncOp>());
  for (func::FuncOp func : functions) {
    if (func.isDeclaration())
      continue;
    if (!func.getBody().hasOneBlock()) {
      func.emitError("dispatch formation expects single-block functions");
      return signalPassFailure();
    }
    RegionOutliner outliner(func, kernels, kernelNames, *targetImpl, options);
    for (const DispatchRegion &region : formRegions(func))
      if (failed(outliner.outline(region)))
        return signalPassFailure();
  }
}

} // namespace

} // namespace turbine::compiler
