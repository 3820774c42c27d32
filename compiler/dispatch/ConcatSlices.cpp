//===- ConcatSlices.cpp - Concatenations written in place by their producers =//
//
// The pass turbine-write-concats-in-producers (ConcatSlices.h). Matching is
// by IR structure only: the select chain of the frontends' concatenation
// gather, whatever layout pass permuted its dims since (ChannelsLast moves
// the channel axis of an NCHW concat last; the match follows the index the
// select chain tests). Each operand becomes one slice update into the
// concatenated tensor; the destination flows through the updates in operand
// order, so the first dispatch creates the tensor and every later one
// writes its slice of the same storage (the host program gives in_place
// results their operand's register). Numerics are unchanged: every output
// element is the same operand element, copied.
//===----------------------------------------------------------------------===//
#include "dispatch/ConcatSlices.h"
#include "dispatch/SliceUpdates.h"

#include "turbine/compiler/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Matchers.h"

using namespace mlir;

namespace turbine::compiler {

#define GEN_PASS_DEF_WRITECONCATSINPRODUCERS
#include "turbine/compiler/Passes.h.inc"

namespace {

constexpr llvm::StringLiteral kConcatAttr = "turbine.concat";
constexpr llvm::StringLiteral kKernelOperandAttr = "turbine.kernel_operand";

std::optional<int64_t> constantIndex(Value v) {
  APInt value;
  if (!matchPattern(v, m_ConstantInt(&value)))
    return std::nullopt;
  return value.getSExtValue();
}

/// The dim of the linalg.index op defining `v`.
std::optional<int64_t> indexDim(Value v) {
  auto index = v.getDefiningOp<linalg::IndexOp>();
  if (!index)
    return std::nullopt;
  return static_cast<int64_t>(index.getDim());
}

/// For `cond` = i_d < E (slt / ult, or E > i_d): d and E.
std::optional<std::pair<int64_t, int64_t>> matchBelow(Value cond) {
  auto cmp = cond.getDefiningOp<arith::CmpIOp>();
  if (!cmp)
    return std::nullopt;
  Value index = cmp.getLhs(), bound = cmp.getRhs();
  arith::CmpIPredicate pred = cmp.getPredicate();
  if (pred == arith::CmpIPredicate::sgt || pred == arith::CmpIPredicate::ugt) {
    std::swap(index, bound);
    pred = arith::CmpIPredicate::slt;
  }
  if (pred != arith::CmpIPredicate::slt && pred != arith::CmpIPredicate::ult)
    return std::nullopt;
  std::optional<int64_t> d = indexDim(index), e = constantIndex(bound);
  if (!d || !e)
    return std::nullopt;
  return std::make_pair(*d, *e);
}

/// For the index `v` of an extract along the axis: the start s when v is
/// i_axis - s (subi, or addi of -s; s = 0 for i_axis itself), under clamps
/// (maxsi with at most 0, minsi with at least size - 1) that are the
/// identity where the operand is selected.
std::optional<int64_t> matchAxisIndex(Value v, int64_t axis, int64_t size) {
  while (true) {
    if (auto max = v.getDefiningOp<arith::MaxSIOp>()) {
      std::optional<int64_t> c = constantIndex(max.getRhs());
      Value other = max.getLhs();
      if (!c) {
        c = constantIndex(max.getLhs());
        other = max.getRhs();
      }
      if (!c || *c > 0)
        return std::nullopt;
      v = other;
      continue;
    }
    if (auto min = v.getDefiningOp<arith::MinSIOp>()) {
      std::optional<int64_t> c = constantIndex(min.getRhs());
      Value other = min.getLhs();
      if (!c) {
        c = constantIndex(min.getLhs());
        other = min.getRhs();
      }
      if (!c || *c < size - 1)
        return std::nullopt;
      v = other;
      continue;
    }
    break;
  }
  if (indexDim(v) == axis)
    return 0;
  if (auto sub = v.getDefiningOp<arith::SubIOp>()) {
    std::optional<int64_t> c = constantIndex(sub.getRhs());
    if (c && indexDim(sub.getLhs()) == axis)
      return *c;
  }
  if (auto add = v.getDefiningOp<arith::AddIOp>()) {
    std::optional<int64_t> c = constantIndex(add.getRhs());
    if (c && indexDim(add.getLhs()) == axis)
      return -*c;
  }
  return std::nullopt;
}

/// The operand an extract reads, if it reads it at the output's indices in
/// some order (the output dim of each source dim in `dims`; along the axis
/// at i_axis - start, with start returned in `start`).
Value matchPartExtract(Value v, linalg::GenericOp generic, int64_t axis, int64_t &start,
                       int64_t &size, SmallVector<int64_t> &dims) {
  auto extract = v.getDefiningOp<tensor::ExtractOp>();
  if (!extract || extract->getParentOp() != generic)
    return nullptr;
  Value source = extract.getTensor();
  auto type = dyn_cast<RankedTensorType>(source.getType());
  auto outType = cast<RankedTensorType>(generic.getResult(0).getType());
  if (!type || type.getRank() != outType.getRank() ||
      type.getElementType() != outType.getElementType())
    return nullptr;
  // Defined outside the generic (not in its body).
  if (generic->isAncestor(source.getParentBlock()->getParentOp()))
    return nullptr;
  // Each output dim but the axis read by exactly one source dim as i_d; the
  // remaining source dim is the axis, static.
  int64_t rank = type.getRank();
  dims.assign(rank, -1);
  SmallVector<bool> seen(rank, false);
  int64_t axisPosition = -1;
  for (auto [p, index] : llvm::enumerate(extract.getIndices())) {
    std::optional<int64_t> d = indexDim(index);
    if (d && *d != axis) {
      if (seen[*d])
        return nullptr;
      seen[*d] = true;
      dims[p] = *d;
    } else if (axisPosition < 0) {
      axisPosition = static_cast<int64_t>(p);
    } else {
      return nullptr;
    }
  }
  if (axisPosition < 0 || type.isDynamicDim(axisPosition))
    return nullptr;
  dims[axisPosition] = axis;
  size = type.getDimSize(axisPosition);
  std::optional<int64_t> s =
      matchAxisIndex(extract.getIndices()[axisPosition], axis, size);
  if (!s)
    return nullptr;
  start = *s;
  return source;
}

/// An operand whose producer can write it straight into its slice: the
/// result of a linalg op in the concatenation's block, used only by it, its
/// destination an empty tensor or a fill of one (like a padded result).
bool producerCanWriteSlice(Value source, Operation *concat) {
  auto producer = source.getDefiningOp<linalg::LinalgOp>();
  if (!producer || producer->getNumResults() != 1 ||
      producer->getBlock() != concat->getBlock() || !source.hasOneUse())
    return false;
  Value init = producer.getDpsInitOperand(0)->get();
  if (auto fill = init.getDefiningOp<linalg::FillOp>())
    init = fill.getOutputs()[0];
  return init.getDefiningOp<tensor::EmptyOp>() != nullptr;
}

struct WriteConcatsInProducersPass
    : impl::WriteConcatsInProducersBase<WriteConcatsInProducersPass> {
  void runOnOperation() override {
    SmallVector<Operation *> concats;
    for (auto func : getOperation().getOps<func::FuncOp>())
      func.walk([&](linalg::GenericOp op) {
        if (matchConcatGather(op))
          concats.push_back(op);
      });
    for (Operation *concat : concats)
      writeConcatInProducers(concat);
  }
};

} // namespace

std::optional<ConcatGatherInfo> matchConcatGather(Operation *op) {
  auto generic = dyn_cast<linalg::GenericOp>(op);
  if (!generic || generic.getNumDpsInputs() != 0 || generic.getNumDpsInits() != 1 ||
      generic.getNumReductionLoops() != 0 || generic->getNumResults() != 1 ||
      !generic.getDpsInits()[0].getDefiningOp<tensor::EmptyOp>() ||
      !generic.getMatchingIndexingMap(generic.getDpsInitOperand(0)).isIdentity())
    return std::nullopt;
  auto outType = cast<RankedTensorType>(generic.getResult(0).getType());
  auto yield = cast<linalg::YieldOp>(generic.getBody()->getTerminator());
  if (yield->getNumOperands() != 1)
    return std::nullopt;
  ConcatGatherInfo info;
  std::optional<int64_t> axis;
  int64_t end = 0;
  Value v = yield->getOperand(0);
  auto addPart = [&](Value value, int64_t partEnd) {
    int64_t start = 0, size = 0;
    SmallVector<int64_t> dims;
    Value source = matchPartExtract(value, generic, *axis, start, size, dims);
    if (!source || start != end || partEnd - start != size || size <= 0)
      return false;
    info.parts.push_back({source, start, size, dims});
    end = partEnd;
    return true;
  };
  while (auto select = v.getDefiningOp<arith::SelectOp>()) {
    if (select->getParentOp() != generic)
      return std::nullopt;
    auto below = matchBelow(select.getCondition());
    if (!below || (axis && below->first != *axis))
      return std::nullopt;
    axis = below->first;
    if (outType.isDynamicDim(*axis) || !addPart(select.getTrueValue(), below->second))
      return std::nullopt;
    v = select.getFalseValue();
  }
  if (!axis || !addPart(v, outType.getDimSize(*axis)))
    return std::nullopt;
  info.axis = *axis;
  return info;
}

bool isKernelOperandConstant(Operation *op) {
  return isa<arith::ConstantOp>(op) && op->hasAttr(kKernelOperandAttr);
}

bool isConcatSlice(Operation *op) { return isSliceUpdate(op) && op->hasAttr(kConcatAttr); }

bool writeConcatInProducers(Operation *op) {
  std::optional<ConcatGatherInfo> info = matchConcatGather(op);
  if (!info)
    return false;
  auto generic = cast<linalg::GenericOp>(op);
  auto outType = cast<RankedTensorType>(generic.getResult(0).getType());
  // An operand read in another layout (ShuffleNetV2's NCHW concats after
  // its channel shuffle) would be a transposing copy each: one gather over
  // the whole output measured faster (whole-model 1.06-1.15x slower with
  // the copies), so such a concat stays the gather.
  for (const ConcatPart &part : info->parts)
    if (!llvm::equal(part.dims, llvm::seq<int64_t>(0, outType.getRank())))
      return false;
  auto init = generic.getDpsInits()[0].getDefiningOp<tensor::EmptyOp>();
  SmallVector<OpFoldResult> outSizes = init.getMixedSizes();
  OpBuilder b(op);
  Location loc = op->getLoc();
  // Sizes of each slice: static where the operand's dim is (it must then
  // agree with a static output dim), else the output's dynamic size.
  SmallVector<SmallVector<OpFoldResult>> partSizes;
  for (const ConcatPart &part : info->parts) {
    auto type = cast<RankedTensorType>(part.source.getType());
    SmallVector<OpFoldResult> sizes(outType.getRank());
    for (int64_t p = 0; p < outType.getRank(); ++p) {
      int64_t d = part.dims[p];
      if (d == info->axis) {
        sizes[d] = b.getIndexAttr(part.size);
      } else if (!type.isDynamicDim(p)) {
        if (!outType.isDynamicDim(d) && outType.getDimSize(d) != type.getDimSize(p))
          return false;
        sizes[d] = b.getIndexAttr(type.getDimSize(p));
      } else {
        if (!outType.isDynamicDim(d))
          return false;
        sizes[d] = outSizes[d];
      }
    }
    partSizes.push_back(sizes);
  }
  Value dest = tensor::EmptyOp::create(b, loc, outSizes, outType.getElementType());
  for (auto [part, sizes] : llvm::zip(info->parts, partSizes)) {
    Value source = part.source;
    bool copied = true;
    if (!producerCanWriteSlice(source, op))
      source = identityCopy(b, loc, source);
    else
      copied = false;
    SmallVector<OpFoldResult> offsets(outType.getRank(), b.getIndexAttr(0));
    offsets[info->axis] = b.getIndexAttr(part.offset);
    // A copy's offset is a push constant: copies of equal shapes into equal
    // concatenations share one kernel (DenseNet-121: 727 kernels else).
    if (copied && part.offset != 0) {
      auto offset = arith::ConstantIndexOp::create(b, loc, part.offset);
      offset->setAttr(kKernelOperandAttr, b.getUnitAttr());
      offsets[info->axis] = offset.getResult();
    }
    SmallVector<OpFoldResult> strides(outType.getRank(), b.getIndexAttr(1));
    auto insert = tensor::InsertSliceOp::create(b, loc, source, dest, offsets, sizes, strides);
    insert->setAttr(kSliceUpdateAttr, b.getUnitAttr());
    insert->setAttr(kConcatAttr, b.getUnitAttr());
    dest = insert.getResult();
  }
  op->getResult(0).replaceAllUsesWith(dest);
  op->erase();
  if (init->use_empty())
    init->erase();
  return true;
}

} // namespace turbine::compiler
