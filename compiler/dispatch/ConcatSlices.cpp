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
constexpr llvm::StringLiteral kConcatPrefixAttr = "turbine.concat_prefix";

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
/// result of a linalg op in `block`, read by nothing but the concatenations
/// `concats` (the last of which, `info`, has it once), its destination an
/// empty tensor or a fill of one (like a padded result).
bool producerCanWriteSlice(Value source, Block *block, ArrayRef<Operation *> concats,
                           const ConcatGatherInfo &info) {
  auto producer = source.getDefiningOp<linalg::LinalgOp>();
  if (!producer || producer->getNumResults() != 1 || producer->getBlock() != block ||
      llvm::count_if(info.parts, [&](const ConcatPart &p) { return p.source == source; }) != 1 ||
      llvm::any_of(source.getUsers(), [&](Operation *user) {
        return llvm::none_of(concats, [&](Operation *c) { return c->isAncestor(user); });
      }))
    return false;
  Value init = producer.getDpsInitOperand(0)->get();
  if (auto fill = init.getDefiningOp<linalg::FillOp>())
    init = fill.getOutputs()[0];
  return init.getDefiningOp<tensor::EmptyOp>() != nullptr;
}

/// The sizes of each part's slice: static where the operand's dim is (it
/// must then agree with a static output dim), else the output's dynamic
/// size; none when that cannot be, or when an operand is read in another
/// layout (ShuffleNetV2's NCHW concats after its channel shuffle: transposing
/// copies measured 1.06-1.15x slower than the gather over the whole output,
/// so such a concat stays the gather).
std::optional<SmallVector<SmallVector<OpFoldResult>>>
partSliceSizes(Builder &b, const ConcatGatherInfo &info, RankedTensorType outType,
               ArrayRef<OpFoldResult> outSizes) {
  SmallVector<SmallVector<OpFoldResult>> partSizes;
  for (const ConcatPart &part : info.parts) {
    if (!llvm::equal(part.dims, llvm::seq<int64_t>(0, outType.getRank())))
      return std::nullopt;
    auto type = cast<RankedTensorType>(part.source.getType());
    SmallVector<OpFoldResult> sizes(outType.getRank());
    for (int64_t d = 0; d < outType.getRank(); ++d) {
      if (d == info.axis) {
        sizes[d] = b.getIndexAttr(part.size);
      } else if (!type.isDynamicDim(d)) {
        if (!outType.isDynamicDim(d) && outType.getDimSize(d) != type.getDimSize(d))
          return std::nullopt;
        sizes[d] = b.getIndexAttr(type.getDimSize(d));
      } else {
        if (!outType.isDynamicDim(d))
          return std::nullopt;
        sizes[d] = outSizes[d];
      }
    }
    partSizes.push_back(sizes);
  }
  return partSizes;
}

/// Inserts `part` into `dest` as a slice update: its own value when its
/// producer writes it there, else an identity copy of it. The offset is a
/// push constant: copies of equal shapes into equal concatenations share one
/// kernel (DenseNet-121: 727 kernels else), and so do equal producers (the
/// layers of a DenseNet block).
Value insertPart(OpBuilder &b, Location loc, const ConcatPart &part, int64_t axis,
                 ArrayRef<OpFoldResult> sizes, Value dest, bool producerWrites) {
  int64_t rank = static_cast<int64_t>(sizes.size());
  Value source = producerWrites ? part.source : identityCopy(b, loc, part.source);
  SmallVector<OpFoldResult> offsets(rank, b.getIndexAttr(0));
  offsets[axis] = b.getIndexAttr(part.offset);
  if (part.offset != 0) {
    auto offset = arith::ConstantIndexOp::create(b, loc, part.offset);
    offset->setAttr(kKernelOperandAttr, b.getUnitAttr());
    offsets[axis] = offset.getResult();
  }
  SmallVector<OpFoldResult> strides(rank, b.getIndexAttr(1));
  auto insert = tensor::InsertSliceOp::create(b, loc, source, dest, offsets, sizes, strides);
  insert->setAttr(kSliceUpdateAttr, b.getUnitAttr());
  insert->setAttr(kConcatAttr, b.getUnitAttr());
  return insert.getResult();
}

/// True when concatenation `a`'s operands are the first operands of `b`'s,
/// at the same places, along the same axis, with fewer of them.
bool isPrefixOf(const ConcatGatherInfo &a, Operation *aOp, const ConcatGatherInfo &b,
                Operation *bOp) {
  auto aType = cast<RankedTensorType>(aOp->getResult(0).getType());
  auto bType = cast<RankedTensorType>(bOp->getResult(0).getType());
  if (a.axis != b.axis || a.parts.size() >= b.parts.size() ||
      aOp->getBlock() != bOp->getBlock() || aType.getRank() != bType.getRank() ||
      aType.getElementType() != bType.getElementType())
    return false;
  for (int64_t d = 0; d < aType.getRank(); ++d)
    if (d != a.axis && aType.getDimSize(d) != bType.getDimSize(d))
      return false;
  for (auto [x, y] : llvm::zip(a.parts, b.parts))
    if (x.source != y.source || x.offset != y.offset || x.size != y.size)
      return false;
  return true;
}

/// The later of two ops of one block (either may be null).
Operation *later(Operation *a, Operation *b) {
  if (!a || !b)
    return a ? a : b;
  return a->isBeforeInBlock(b) ? b : a;
}

/// The op of `block` that `v` is defined by (or inside), null when `v` is
/// defined outside the block (it then dominates all of it).
Operation *definingOpIn(Block *block, Value v) {
  Operation *def = v.getDefiningOp();
  return def ? block->findAncestorOpInBlock(*def) : nullptr;
}

/// DenseNet's dense blocks concatenate [x0, x1], then [x0, x1, x2], ...,
/// [x0, .., xn]: each concatenation's operands are the first ones of the
/// next. Rewritten one by one, every concatenation would copy all its
/// operands into a tensor of its own (quadratic in n, a copy kernel per
/// concatenation size). Instead the largest, `root`, is written once, in
/// operand order, each x_j by its producer where it can (x_j is then used by
/// this chain only), each update placed right after its operand is
/// computed; every smaller member is the prefix of the chain's tensor once
/// its last operand is in: an extract_slice marked turbine.concat_prefix,
/// which dispatch formation clones into the readers' kernels (a strided view
/// of the tensor). Later updates write only past a member's prefix, so a
/// reader of it sees the same bytes whenever it runs. Returns false, with
/// the IR unchanged, when the order of definitions does not allow it.
bool writeConcatFamily(Operation *root, const ConcatGatherInfo &info,
                       ArrayRef<std::pair<Operation *, size_t>> members) {
  auto generic = cast<linalg::GenericOp>(root);
  auto outType = cast<RankedTensorType>(generic.getResult(0).getType());
  auto init = generic.getDpsInits()[0].getDefiningOp<tensor::EmptyOp>();
  Block *block = root->getBlock();
  OpBuilder b(root);
  auto partSizes = partSliceSizes(b, info, outType, init.getMixedSizes());
  if (!partSizes)
    return false;
  // Where each update goes: after its operand, the previous update and
  // (the first) the tensor's dynamic sizes.
  SmallVector<Operation *> after(info.parts.size());
  Operation *previous = nullptr;
  for (Value size : init.getDynamicSizes())
    previous = later(previous, definingOpIn(block, size));
  for (auto [j, part] : llvm::enumerate(info.parts))
    previous = after[j] = later(previous, definingOpIn(block, part.source));
  for (auto [member, length] : members)
    for (Operation *user : member->getUsers()) {
      Operation *use = block->findAncestorOpInBlock(*user);
      if (!use || (after[length - 1] && !after[length - 1]->isBeforeInBlock(use)))
        return false;
    }
  SmallVector<Operation *> family = {root};
  for (auto [member, length] : members)
    family.push_back(member);
  // Each operand's producer writes it in place where it can, unless it reads
  // a member itself: it would then read and write the chain's tensor in one
  // kernel (and bufferization would copy what it reads).
  SmallVector<bool> producerWrites;
  for (const ConcatPart &part : info.parts) {
    Operation *producer = part.source.getDefiningOp();
    producerWrites.push_back(
        producerCanWriteSlice(part.source, block, family, info) &&
        llvm::none_of(producer->getOperands(),
                      [&](Value v) { return llvm::is_contained(family, v.getDefiningOp()); }));
  }
  Location loc = root->getLoc();
  auto setInsertionAfter = [&](Operation *op) {
    if (op)
      b.setInsertionPointAfter(op);
    else
      b.setInsertionPointToStart(block);
  };
  setInsertionAfter(after[0]);
  Value dest = tensor::EmptyOp::create(b, loc, init.getMixedSizes(), outType.getElementType());
  for (auto [j, part] : llvm::enumerate(info.parts)) {
    if (j > 0)
      setInsertionAfter(later(after[j], dest.getDefiningOp()));
    dest = insertPart(b, loc, part, info.axis, (*partSizes)[j], dest, producerWrites[j]);
    for (auto [member, length] : members) {
      if (length != j + 1)
        continue;
      auto memberType = cast<RankedTensorType>(member->getResult(0).getType());
      SmallVector<OpFoldResult> sizes = init.getMixedSizes();
      sizes[info.axis] = b.getIndexAttr(memberType.getDimSize(info.axis));
      SmallVector<OpFoldResult> zeros(outType.getRank(), b.getIndexAttr(0));
      SmallVector<OpFoldResult> ones(outType.getRank(), b.getIndexAttr(1));
      auto prefix = tensor::ExtractSliceOp::create(b, loc, memberType, dest, zeros, sizes, ones);
      prefix->setAttr(kConcatPrefixAttr, b.getUnitAttr());
      member->getResult(0).replaceAllUsesWith(prefix.getResult());
    }
  }
  root->getResult(0).replaceAllUsesWith(dest);
  for (Operation *op : family) {
    Operation *empty = cast<linalg::GenericOp>(op).getDpsInits()[0].getDefiningOp();
    op->erase();
    if (empty->use_empty())
      empty->erase();
  }
  return true;
}

struct WriteConcatsInProducersPass
    : impl::WriteConcatsInProducersBase<WriteConcatsInProducersPass> {
  void runOnOperation() override {
    SmallVector<std::pair<Operation *, ConcatGatherInfo>> concats;
    for (auto func : getOperation().getOps<func::FuncOp>())
      func.walk([&](linalg::GenericOp op) {
        if (std::optional<ConcatGatherInfo> info = matchConcatGather(op))
          concats.push_back({op, std::move(*info)});
      });
    // Families of concatenations each the prefix of the next (DenseNet),
    // all found before any is rewritten. A family is rewritten only if none
    // of its members belongs to another and no operand is another family's
    // concatenation (rewriting erases them).
    struct Family {
      Operation *root;
      const ConcatGatherInfo *info;
      SmallVector<std::pair<Operation *, size_t>> members;
    };
    SmallVector<Family> families;
    DenseMap<Operation *, int> memberships;
    for (auto &[root, info] : concats) {
      if (llvm::any_of(concats, [&](auto &other) {
            return isPrefixOf(info, root, other.second, other.first);
          }))
        continue;
      Family family{root, &info, {}};
      for (auto &[member, memberInfo] : concats)
        if (isPrefixOf(memberInfo, member, info, root)) {
          family.members.push_back({member, memberInfo.parts.size()});
          ++memberships[member];
        }
      if (!family.members.empty()) {
        ++memberships[root];
        families.push_back(std::move(family));
      }
    }
    DenseSet<Operation *> done;
    for (Family &family : families) {
      auto alone = [&](Operation *op) { return memberships.lookup(op) == 1; };
      if (!llvm::all_of(family.members, [&](auto &m) { return alone(m.first); }) ||
          llvm::any_of(family.info->parts, [&](const ConcatPart &part) {
            return memberships.contains(part.source.getDefiningOp());
          }))
        continue;
      if (writeConcatFamily(family.root, *family.info, family.members)) {
        done.insert(family.root);
        for (auto [member, length] : family.members)
          done.insert(member);
      }
    }
    for (auto &[concat, info] : concats)
      if (!done.contains(concat))
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

bool isConcatPrefix(Operation *op) {
  return isa<tensor::ExtractSliceOp>(op) && op->hasAttr(kConcatPrefixAttr);
}

bool writeConcatInProducers(Operation *op) {
  std::optional<ConcatGatherInfo> info = matchConcatGather(op);
  if (!info)
    return false;
  auto generic = cast<linalg::GenericOp>(op);
  auto outType = cast<RankedTensorType>(generic.getResult(0).getType());
  auto init = generic.getDpsInits()[0].getDefiningOp<tensor::EmptyOp>();
  OpBuilder b(op);
  Location loc = op->getLoc();
  auto partSizes = partSliceSizes(b, *info, outType, init.getMixedSizes());
  if (!partSizes)
    return false;
  Value dest = tensor::EmptyOp::create(b, loc, init.getMixedSizes(), outType.getElementType());
  for (auto [part, sizes] : llvm::zip(info->parts, *partSizes)) {
    dest = insertPart(b, loc, part, info->axis, sizes, dest,
                      producerCanWriteSlice(part.source, op->getBlock(), {op}, *info));
  }
  op->getResult(0).replaceAllUsesWith(dest);
  op->erase();
  if (init->use_empty())
    init->erase();
  return true;
}

} // namespace turbine::compiler
