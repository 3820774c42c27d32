//===- ShapeOps.cpp - view/reshape, transpose/permute, slicing, cat -------===//
//
// Shape and data-movement ops: view/reshape/flatten/unflatten/(un)squeeze
// (expand/collapse through ImportContext::reshape, -1 inferred symbolically
// so a dynamic batch survives `x.view(b, s, h, d)`), transpose/permute
// (linalg.transpose), slice/select/chunk/split/unbind/cat/stack as
// gather-style generics (in-bounds tensor.extract, as the ONNX frontend
// does), expand/expand_as (broadcast generics), and tensor factories whose
// shape is known at import time: arange, ones/zeros/full(_like), triu/tril.
//===----------------------------------------------------------------------===//
#include "ImportContext.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"

using namespace mlir;

namespace turbine::torch_frontend {
namespace {

/// Product of sizes as an OpFoldResult (muli of the symbolic ones).
OpFoldResult productOf(ImportContext &ctx, ArrayRef<OpFoldResult> sizes) {
  int64_t c = 1;
  Value dyn;
  for (OpFoldResult s : sizes) {
    SymInt si = ctx.toSymDim(s);
    if (si.isConstant())
      c *= si.constant;
    else
      dyn = dyn ? (Value)arith::MulIOp::create(ctx.builder, ctx.loc, dyn, si.value) : si.value;
  }
  if (!dyn)
    return ctx.builder.getIndexAttr(c);
  if (c != 1)
    dyn = arith::MulIOp::create(ctx.builder, ctx.loc, dyn, ctx.indexConstant(c));
  return dyn;
}

/// Splits a product into constant factor and symbolic factors (looking
/// through muli and index constants).
void factor(Value v, int64_t &c, SmallVector<Value> &syms) {
  if (auto k = v.getDefiningOp<arith::ConstantIndexOp>()) {
    c *= k.value();
    return;
  }
  if (auto m = v.getDefiningOp<arith::MulIOp>()) {
    factor(m.getLhs(), c, syms);
    factor(m.getRhs(), c, syms);
    return;
  }
  syms.push_back(v);
}

/// Sizes for view/reshape with at most one -1, inferred symbolically.
FailureOr<SmallVector<OpFoldResult>> viewSizes(ImportContext &ctx, const TorchNode &node, Value x,
                                               const std::vector<SymInt> &requested) {
  SmallVector<OpFoldResult> sizes;
  int inferred = -1;
  for (size_t i = 0; i < requested.size(); ++i) {
    if (requested[i].isConstant() && requested[i].constant == -1) {
      if (inferred >= 0) {
        (void)ctx.fail(node, "only one dim may be -1");
        return failure();
      }
      inferred = i;
      sizes.push_back(ctx.builder.getIndexAttr(1));
      continue;
    }
    sizes.push_back(ctx.toFoldResult(requested[i]));
  }
  if (inferred < 0)
    return sizes;
  // total(input) / product(others)
  int64_t inC = 1, outC = 1;
  SmallVector<Value> inS, outS;
  for (OpFoldResult s : ctx.dims(x)) {
    SymInt si = ctx.toSymDim(s);
    if (si.isConstant()) inC *= si.constant;
    else factor(si.value, inC, inS);
  }
  for (size_t i = 0; i < sizes.size(); ++i) {
    if ((int)i == inferred)
      continue;
    SymInt si = ctx.toSymDim(sizes[i]);
    if (si.isConstant()) outC *= si.constant;
    else factor(si.value, outC, outS);
  }
  // Cancel common symbols.
  SmallVector<Value> rest;
  for (Value v : inS) {
    auto it = llvm::find(outS, v);
    if (it != outS.end())
      outS.erase(it);
    else
      rest.push_back(v);
  }
  if (outS.empty() && outC != 0 && inC % outC == 0) {
    SmallVector<OpFoldResult> parts;
    parts.push_back(ctx.builder.getIndexAttr(inC / outC));
    for (Value v : rest)
      parts.push_back(v);
    sizes[inferred] = productOf(ctx, parts);
    return sizes;
  }
  if (outS.empty() && rest.empty()) {
    (void)ctx.fail(node, "shape is invalid for an input of " + std::to_string(inC) + " elements");
    return failure();
  }
  // General case: divide at run time.
  OpFoldResult total = productOf(ctx, ctx.dims(x));
  SmallVector<OpFoldResult> others;
  for (size_t i = 0; i < sizes.size(); ++i)
    if ((int)i != inferred)
      others.push_back(sizes[i]);
  Value q = arith::DivSIOp::create(ctx.builder, ctx.loc, ctx.toIndexValue(total),
                                   ctx.toIndexValue(productOf(ctx, others)));
  sizes[inferred] = q;
  return sizes;
}

LogicalResult convertView(ImportContext &ctx, const TorchNode &node) {
  auto x = ctx.tensorInput(node, 0);
  if (failed(x))
    return failure();
  std::vector<SymInt> requested;
  if (node.kind == "aten::view_as" || node.kind == "aten::reshape_as") {
    auto other = ctx.tensorInput(node, 1);
    if (failed(other))
      return failure();
    for (OpFoldResult d : ctx.dims(*other))
      requested.push_back(ctx.toSymDim(d));
  } else {
    auto list = ctx.symIntListInput(node, 1);
    if (failed(list))
      return failure();
    requested = *list;
  }
  auto sizes = viewSizes(ctx, node, *x, requested);
  if (failed(sizes))
    return failure();
  ctx.setTensor(node, 0, ctx.reshape(*x, *sizes));
  return success();
}

LogicalResult convertFlatten(ImportContext &ctx, const TorchNode &node) {
  auto x = ctx.tensorInput(node, 0);
  auto s = ctx.intInput(node, 1), e = ctx.intInput(node, 2);
  if (failed(x) || failed(s) || failed(e))
    return failure();
  int64_t rank = tensorType(*x).getRank();
  if (rank == 0) {
    ctx.setTensor(node, 0, ctx.reshape(*x, {ctx.builder.getIndexAttr(1)}));
    return success();
  }
  auto start = normalizeDim(*s, rank), end = normalizeDim(*e, rank);
  if (!start || !end || *start > *end)
    return ctx.fail(node, "invalid start/end dims");
  SmallVector<OpFoldResult> dims = ctx.dims(*x), sizes(dims.begin(), dims.begin() + *start);
  sizes.push_back(productOf(ctx, ArrayRef<OpFoldResult>(dims).slice(*start, *end - *start + 1)));
  sizes.append(dims.begin() + *end + 1, dims.end());
  ctx.setTensor(node, 0, ctx.reshape(*x, sizes));
  return success();
}

LogicalResult convertUnflatten(ImportContext &ctx, const TorchNode &node) {
  auto x = ctx.tensorInput(node, 0);
  auto d = ctx.intInput(node, 1);
  auto parts = ctx.symIntListInput(node, 2);
  if (failed(x) || failed(d) || failed(parts))
    return failure();
  int64_t rank = tensorType(*x).getRank();
  auto dim = normalizeDim(*d, rank);
  if (!dim)
    return ctx.fail(node, "dim out of range");
  std::vector<SymInt> requested;
  SmallVector<OpFoldResult> dims = ctx.dims(*x);
  for (int64_t i = 0; i < rank; ++i) {
    if (i == *dim)
      requested.insert(requested.end(), parts->begin(), parts->end());
    else
      requested.push_back(ctx.toSymDim(dims[i]));
  }
  auto sizes = viewSizes(ctx, node, *x, requested);
  if (failed(sizes))
    return failure();
  ctx.setTensor(node, 0, ctx.reshape(*x, *sizes));
  return success();
}

LogicalResult convertUnsqueeze(ImportContext &ctx, const TorchNode &node) {
  auto x = ctx.tensorInput(node, 0);
  auto d = ctx.intInput(node, 1);
  if (failed(x) || failed(d))
    return failure();
  int64_t rank = tensorType(*x).getRank();
  auto dim = normalizeDim(*d, rank + 1);
  if (!dim)
    return ctx.fail(node, "dim out of range");
  SmallVector<OpFoldResult> sizes = ctx.dims(*x);
  sizes.insert(sizes.begin() + *dim, ctx.builder.getIndexAttr(1));
  ctx.setTensor(node, 0, ctx.reshape(*x, sizes));
  return success();
}

LogicalResult convertSqueeze(ImportContext &ctx, const TorchNode &node) {
  auto x = ctx.tensorInput(node, 0);
  if (failed(x))
    return failure();
  auto type = tensorType(*x);
  int64_t rank = type.getRank();
  std::vector<bool> drop(rank, false);
  if (node.inputs.size() > 1) {
    auto d = ctx.intInput(node, 1);
    if (failed(d))
      return failure();
    auto dim = normalizeDim(*d, rank);
    if (!dim)
      return ctx.fail(node, "dim out of range");
    if (rank > 0)
      drop[*dim] = !type.isDynamicDim(*dim) && type.getDimSize(*dim) == 1;
  } else {
    for (int64_t i = 0; i < rank; ++i)
      drop[i] = !type.isDynamicDim(i) && type.getDimSize(i) == 1;
  }
  SmallVector<OpFoldResult> sizes;
  for (int64_t i = 0; i < rank; ++i)
    if (!drop[i])
      sizes.push_back(ctx.dim(*x, i));
  ctx.setTensor(node, 0, ctx.reshape(*x, sizes));
  return success();
}

LogicalResult convertTranspose(ImportContext &ctx, const TorchNode &node) {
  auto x = ctx.tensorInput(node, 0);
  auto a = ctx.intInput(node, 1), b = ctx.intInput(node, 2);
  if (failed(x) || failed(a) || failed(b))
    return failure();
  int64_t rank = tensorType(*x).getRank();
  if (rank == 0) {
    ctx.setTensor(node, 0, *x);
    return success();
  }
  auto d0 = normalizeDim(*a, rank), d1 = normalizeDim(*b, rank);
  if (!d0 || !d1)
    return ctx.fail(node, "dim out of range");
  SmallVector<int64_t> perm;
  for (int64_t i = 0; i < rank; ++i)
    perm.push_back(i);
  std::swap(perm[*d0], perm[*d1]);
  ctx.setTensor(node, 0, *d0 == *d1 ? *x : ctx.transpose(*x, perm));
  return success();
}

LogicalResult convertPermute(ImportContext &ctx, const TorchNode &node) {
  auto x = ctx.tensorInput(node, 0);
  auto dims = ctx.intListInput(node, 1);
  if (failed(x) || failed(dims))
    return failure();
  int64_t rank = tensorType(*x).getRank();
  if ((int64_t)dims->size() != rank)
    return ctx.fail(node, "permutation has the wrong length");
  SmallVector<int64_t> perm;
  std::vector<bool> seen(rank, false);
  for (int64_t d : *dims) {
    auto n = normalizeDim(d, rank);
    if (!n || seen[*n])
      return ctx.fail(node, "invalid permutation");
    seen[*n] = true;
    perm.push_back(*n);
  }
  ctx.setTensor(node, 0, ctx.transpose(*x, perm));
  return success();
}

} // namespace

Value sliceAlong(ImportContext &ctx, Value x, int64_t dim, SymInt start, OpFoldResult size, int64_t step) {
  SmallVector<OpFoldResult> outSizes = ctx.dims(x);
  if (start == SymInt::of(0) && step == 1 && ctx.toSymDim(size) == ctx.toSymDim(outSizes[dim]))
    return x;
  outSizes[dim] = size;
  int64_t rank = outSizes.size();
  Value init = ctx.empty(outSizes, tensorType(x).getElementType());
  SmallVector<AffineMap> maps{ctx.builder.getMultiDimIdentityMap(rank)};
  SmallVector<utils::IteratorType> iterators(rank, utils::IteratorType::parallel);
  Value startValue = ctx.toIndexValue(ctx.toFoldResult(start));
  auto g = linalg::GenericOp::create(
      ctx.builder, ctx.loc, TypeRange{init.getType()}, ValueRange{}, ValueRange{init}, maps, iterators,
      [&](OpBuilder &b, Location l, ValueRange) {
        SmallVector<Value> idx;
        for (int64_t d = 0; d < rank; ++d) {
          Value i = linalg::IndexOp::create(b, l, d);
          if (d == dim) {
            if (step != 1)
              i = arith::MulIOp::create(b, l, i, arith::ConstantIndexOp::create(b, l, step));
            i = arith::AddIOp::create(b, l, i, startValue);
          }
          idx.push_back(i);
        }
        linalg::YieldOp::create(b, l, (Value)tensor::ExtractOp::create(b, l, x, idx));
      });
  ctx.recordDims(g.getResult(0), outSizes);
  return g.getResult(0);
}

namespace {

LogicalResult convertSlice(ImportContext &ctx, const TorchNode &node) {
  auto x = ctx.tensorInput(node, 0);
  auto d = ctx.intInput(node, 1);
  auto step = ctx.intInput(node, 4);
  if (failed(x) || failed(d) || failed(step))
    return failure();
  int64_t rank = tensorType(*x).getRank();
  auto dim = normalizeDim(*d, rank);
  if (!dim || rank == 0)
    return ctx.fail(node, "dim out of range");
  if (*step <= 0)
    return ctx.fail(node, "step must be positive");
  SymInt size = ctx.dimSym(*x, *dim);
  auto readBound = [&](size_t i, SymInt def) -> FailureOr<SymInt> {
    if (ctx.isNoneInput(node, i))
      return def;
    const TValue &v = ctx.input(node, i);
    if (v.kind != TValue::Kind::Int) {
      (void)ctx.fail(node, "slice bounds must be ints");
      return failure();
    }
    return v.intValue;
  };
  auto start = readBound(2, SymInt::of(0)), end = readBound(3, size);
  if (failed(start) || failed(end))
    return failure();
  // Clamp constant bounds against a constant size (Python slicing rules).
  auto clampBound = [&](SymInt b) -> SymInt {
    if (!b.isConstant() || !size.isConstant())
      return b;
    int64_t v = b.constant;
    if (v < 0)
      v += size.constant;
    return SymInt::of(std::min(std::max<int64_t>(v, 0), size.constant));
  };
  SymInt s = clampBound(*start), e = clampBound(*end);
  if (!size.isConstant()) {
    // Dynamic dim: INT64_MAX means the end; negative constants count from it.
    if (e.isConstant() && e.constant >= (int64_t(1) << 62))
      e = size;
    if ((s.isConstant() && s.constant < 0) || (e.isConstant() && e.constant < 0))
      return ctx.unsupported(node, "negative slice bounds on a dynamic dim");
  }
  OpFoldResult count;
  if (s.isConstant() && e.isConstant()) {
    count = ctx.builder.getIndexAttr(std::max<int64_t>(0, (e.constant - s.constant + *step - 1) / *step));
  } else {
    if (*step != 1)
      return ctx.unsupported(node, "a strided slice with dynamic bounds");
    Value ev = ctx.toIndexValue(ctx.toFoldResult(e)), sv = ctx.toIndexValue(ctx.toFoldResult(s));
    count = s == SymInt::of(0) ? OpFoldResult(ev) : OpFoldResult((Value)arith::SubIOp::create(ctx.builder, ctx.loc, ev, sv));
  }
  ctx.setTensor(node, 0, sliceAlong(ctx, *x, *dim, s, count, *step));
  return success();
}

/// aten::repeat_interleave(x, int repeats, dim): each element along `dim`
/// repeated `repeats` times (grouped-query attention's KV heads), a gather
/// generic reading x[..., i / repeats, ...]. A tensor of repeats, or no dim
/// (flattening), is unsupported.
LogicalResult convertRepeatInterleave(ImportContext &ctx, const TorchNode &node) {
  auto x = ctx.tensorInput(node, 0);
  if (failed(x))
    return failure();
  if (node.schema.find("Tensor repeats") != std::string::npos ||
      ctx.input(node, 1).kind != TValue::Kind::Int)
    return ctx.unsupported(node, "repeats given as a tensor");
  auto repeats = ctx.intInput(node, 1);
  if (failed(repeats))
    return failure();
  if (ctx.isNoneInput(node, 2))
    return ctx.unsupported(node, "repeat_interleave without dim (flattening)");
  auto d = ctx.intInput(node, 2);
  if (failed(d))
    return failure();
  int64_t rank = tensorType(*x).getRank();
  auto dim = normalizeDim(*d, rank);
  if (!dim || rank == 0)
    return ctx.fail(node, "dim out of range");
  if (*repeats < 1)
    return ctx.fail(node, "repeats must be positive");
  SmallVector<OpFoldResult> outSizes = ctx.dims(*x);
  if (*repeats == 1) {
    ctx.setTensor(node, 0, *x);
    return success();
  }
  SymInt size = ctx.toSymDim(outSizes[*dim]);
  outSizes[*dim] = size.isConstant()
                       ? OpFoldResult(ctx.builder.getIndexAttr(size.constant * *repeats))
                       : OpFoldResult((Value)arith::MulIOp::create(
                             ctx.builder, ctx.loc, ctx.toIndexValue(outSizes[*dim]),
                             arith::ConstantIndexOp::create(ctx.builder, ctx.loc, *repeats)));
  Value init = ctx.empty(outSizes, tensorType(*x).getElementType());
  SmallVector<AffineMap> maps{ctx.builder.getMultiDimIdentityMap(rank)};
  SmallVector<utils::IteratorType> iterators(rank, utils::IteratorType::parallel);
  Value source = *x;
  int64_t along = *dim, times = *repeats;
  auto g = linalg::GenericOp::create(
      ctx.builder, ctx.loc, TypeRange{init.getType()}, ValueRange{}, ValueRange{init}, maps,
      iterators, [&](OpBuilder &b, Location l, ValueRange) {
        SmallVector<Value> idx;
        for (int64_t i = 0; i < rank; ++i) {
          Value v = linalg::IndexOp::create(b, l, i);
          if (i == along)
            v = arith::DivUIOp::create(b, l, v, arith::ConstantIndexOp::create(b, l, times));
          idx.push_back(v);
        }
        linalg::YieldOp::create(b, l, (Value)tensor::ExtractOp::create(b, l, source, idx));
      });
  ctx.recordDims(g.getResult(0), outSizes);
  ctx.setTensor(node, 0, g.getResult(0));
  return success();
}

/// x.select(dim, i) where i is known only at run time (`x[:, t - 1]` with a
/// dynamic t): Python's negative indices count from the end, and an index
/// out of range is a run-time assert, never a read past the tensor.
Value selectAtRunTime(ImportContext &ctx, const TorchNode &node, Value x, int64_t dim,
                      SymInt index) {
  OpBuilder &b = ctx.builder;
  Location loc = ctx.loc;
  Value size = ctx.toIndexValue(ctx.dims(x)[dim]);
  Value i = ctx.toIndexValue(ctx.toFoldResult(index));
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value negative = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, i, zero);
  i = arith::SelectOp::create(b, loc, negative, arith::AddIOp::create(b, loc, i, size), i);
  Value inRange = arith::AndIOp::create(
      b, loc, arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, i, zero),
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, i, size));
  cf::AssertOp::create(b, loc, inRange,
                       "select: index out of range along dim " + std::to_string(dim) +
                           (node.location.empty() ? std::string() : " at " + node.location));
  return sliceAlong(ctx, x, dim, ctx.toSymDim(OpFoldResult(i)), b.getIndexAttr(1), 1);
}

LogicalResult convertSelect(ImportContext &ctx, const TorchNode &node) {
  auto x = ctx.tensorInput(node, 0);
  auto d = ctx.intInput(node, 1);
  if (failed(x) || failed(d))
    return failure();
  int64_t rank = tensorType(*x).getRank();
  auto dim = normalizeDim(*d, rank);
  if (!dim || rank == 0)
    return ctx.fail(node, "dim out of range");
  const TValue &indexValue = ctx.input(node, 2);
  if (indexValue.kind == TValue::Kind::Int && !indexValue.intValue.isConstant()) {
    Value sliced = selectAtRunTime(ctx, node, *x, *dim, indexValue.intValue);
    SmallVector<OpFoldResult> sizes = ctx.dims(sliced);
    sizes.erase(sizes.begin() + *dim);
    ctx.setTensor(node, 0, ctx.reshape(sliced, sizes));
    return success();
  }
  auto index = ctx.intInput(node, 2);
  if (failed(index))
    return failure();
  SymInt size = ctx.dimSym(*x, *dim);
  int64_t i = *index;
  if (i < 0) {
    if (!size.isConstant())
      return ctx.unsupported(node, "a negative index on a dynamic dim");
    i += size.constant;
  }
  if (size.isConstant() && (i < 0 || i >= size.constant))
    return ctx.fail(node, "index " + std::to_string(*index) + " is out of range");
  Value sliced = sliceAlong(ctx, *x, *dim, SymInt::of(i), ctx.builder.getIndexAttr(1), 1);
  SmallVector<OpFoldResult> sizes = ctx.dims(sliced);
  sizes.erase(sizes.begin() + *dim);
  ctx.setTensor(node, 0, ctx.reshape(sliced, sizes));
  return success();
}

/// Splits `x` along `dim` into pieces of the given static sizes.
LogicalResult splitInto(ImportContext &ctx, const TorchNode &node, Value x, int64_t dim,
                        ArrayRef<int64_t> pieces, bool dropDim = false) {
  std::vector<TValue> parts;
  int64_t offset = 0;
  for (int64_t p : pieces) {
    Value part = sliceAlong(ctx, x, dim, SymInt::of(offset), ctx.builder.getIndexAttr(p), 1);
    if (dropDim) {
      SmallVector<OpFoldResult> sizes = ctx.dims(part);
      sizes.erase(sizes.begin() + dim);
      part = ctx.reshape(part, sizes);
    }
    parts.push_back(TValue::ofTensor(part));
    offset += p;
  }
  if (node.outputs.size() == 1 && node.kind != "aten::unsafe_chunk_single") {
    ctx.set(node.outputs[0], TValue::ofList(std::move(parts)));
    return success();
  }
  if (node.outputs.size() != parts.size())
    return ctx.fail(node, "produces " + std::to_string(parts.size()) + " pieces but the graph expects " +
                              std::to_string(node.outputs.size()));
  for (size_t i = 0; i < parts.size(); ++i)
    ctx.set(node.outputs[i], parts[i]);
  return success();
}

/// chunk(x, chunks, dim), split(x, split_size | sizes, dim), split_with_sizes, unbind.
LogicalResult convertSplit(ImportContext &ctx, const TorchNode &node) {
  auto x = ctx.tensorInput(node, 0);
  if (failed(x))
    return failure();
  int64_t rank = tensorType(*x).getRank();
  bool isUnbind = node.kind == "aten::unbind";
  auto d = ctx.intInput(node, isUnbind ? 1 : 2);
  if (failed(d))
    return failure();
  auto dim = normalizeDim(*d, rank);
  if (!dim || rank == 0)
    return ctx.fail(node, "dim out of range");
  SymInt size = ctx.dimSym(*x, *dim);
  if (!size.isConstant())
    return ctx.unsupported(node, "splitting along a dynamic dim");
  int64_t n = size.constant;
  SmallVector<int64_t> pieces;
  if (isUnbind) {
    pieces.assign(n, 1);
    return splitInto(ctx, node, *x, *dim, pieces, /*dropDim=*/true);
  }
  const TValue &arg = ctx.input(node, 1);
  if (arg.kind == TValue::Kind::List) {
    auto sizes = ctx.intListInput(node, 1);
    if (failed(sizes))
      return failure();
    int64_t total = 0;
    for (int64_t s : *sizes)
      total += s;
    if (total != n)
      return ctx.fail(node, "split sizes add up to " + std::to_string(total) + ", not " + std::to_string(n));
    pieces.assign(sizes->begin(), sizes->end());
  } else {
    auto k = ctx.intInput(node, 1);
    if (failed(k))
      return failure();
    if (*k <= 0)
      return ctx.fail(node, "chunks/split size must be positive");
    int64_t each = node.kind.find("chunk") != std::string::npos ? (n + *k - 1) / *k : *k;
    for (int64_t off = 0; off < n; off += each)
      pieces.push_back(std::min(each, n - off));
    if (pieces.empty())
      pieces.push_back(0);
  }
  return splitInto(ctx, node, *x, *dim, pieces);
}

/// Tensors of a list input.
FailureOr<SmallVector<Value>> tensorList(ImportContext &ctx, const TorchNode &node, size_t i) {
  TValue &list = ctx.input(node, i);
  if (list.kind != TValue::Kind::List) {
    (void)ctx.fail(node, "expects a list of tensors");
    return failure();
  }
  SmallVector<Value> out;
  for (TValue &e : list.elements) {
    if (!e.isTensor()) {
      (void)ctx.fail(node, "expects a list of tensors");
      return failure();
    }
    if (!e.tensor)
      e.tensor = ctx.materializeConstant(*e.constant);
    if (!e.tensor) {
      (void)ctx.unsupported(node, "a constant of an unsupported dtype");
      return failure();
    }
    out.push_back(e.tensor);
  }
  return out;
}

/// Concatenates along `dim` with a select chain over clamped extracts.
FailureOr<Value> concat(ImportContext &ctx, const TorchNode &node, SmallVector<Value> inputs, int64_t dim) {
  // Empty 1-D tensors are skipped, as torch does.
  llvm::erase_if(inputs, [&](Value v) {
    auto t = tensorType(v);
    return t.getRank() == 1 && !t.isDynamicDim(0) && t.getDimSize(0) == 0;
  });
  if (inputs.empty()) {
    (void)ctx.fail(node, "nothing to concatenate");
    return failure();
  }
  if (inputs.size() == 1)
    return inputs[0];
  Type et = tensorType(inputs[0]).getElementType();
  SmallVector<OpFoldResult> outSizes = ctx.dims(inputs[0]);
  int64_t rank = outSizes.size();
  SmallVector<OpFoldResult> offsets{ctx.builder.getIndexAttr(0)};
  for (Value v : inputs) {
    if (tensorType(v).getRank() != rank || tensorType(v).getElementType() != et) {
      (void)ctx.fail(node, "inputs must have the same rank and dtype");
      return failure();
    }
    SmallVector<OpFoldResult> pair{offsets.back(), ctx.dim(v, dim)};
    SymInt a = ctx.toSymDim(pair[0]), b = ctx.toSymDim(pair[1]);
    if (a.isConstant() && b.isConstant())
      offsets.push_back(ctx.builder.getIndexAttr(a.constant + b.constant));
    else
      offsets.push_back((Value)arith::AddIOp::create(ctx.builder, ctx.loc, ctx.toIndexValue(pair[0]), ctx.toIndexValue(pair[1])));
  }
  outSizes[dim] = offsets.back();
  Value init = ctx.empty(outSizes, et);
  SmallVector<Value> offsetValues, lastValues;
  for (size_t k = 0; k < inputs.size(); ++k) {
    offsetValues.push_back(ctx.toIndexValue(offsets[k]));
    Value size = ctx.toIndexValue(ctx.dim(inputs[k], dim));
    lastValues.push_back(arith::SubIOp::create(ctx.builder, ctx.loc, size, ctx.indexConstant(1)));
  }
  SmallVector<AffineMap> maps{ctx.builder.getMultiDimIdentityMap(rank)};
  SmallVector<utils::IteratorType> iterators(rank, utils::IteratorType::parallel);
  auto g = linalg::GenericOp::create(
      ctx.builder, ctx.loc, TypeRange{init.getType()}, ValueRange{}, ValueRange{init}, maps, iterators,
      [&](OpBuilder &b, Location l, ValueRange) {
        SmallVector<Value> idx;
        for (int64_t d = 0; d < rank; ++d)
          idx.push_back(linalg::IndexOp::create(b, l, d));
        Value zero = arith::ConstantIndexOp::create(b, l, 0);
        Value result;
        for (int64_t k = inputs.size() - 1; k >= 0; --k) {
          SmallVector<Value> in(idx);
          Value local = arith::SubIOp::create(b, l, idx[dim], offsetValues[k]);
          in[dim] = arith::MinSIOp::create(b, l, arith::MaxSIOp::create(b, l, local, zero), lastValues[k]);
          Value v = tensor::ExtractOp::create(b, l, inputs[k], in);
          if (!result) {
            result = v;
            continue;
          }
          Value inK = arith::CmpIOp::create(b, l, arith::CmpIPredicate::slt, idx[dim], offsetValues[k + 1]);
          result = arith::SelectOp::create(b, l, inK, v, result);
        }
        linalg::YieldOp::create(b, l, result);
      });
  ctx.recordDims(g.getResult(0), outSizes);
  return g.getResult(0);
}

LogicalResult convertCat(ImportContext &ctx, const TorchNode &node) {
  auto inputs = tensorList(ctx, node, 0);
  auto d = ctx.intInput(node, 1);
  if (failed(inputs) || failed(d))
    return failure();
  if (inputs->empty())
    return ctx.fail(node, "nothing to concatenate");
  bool stack = node.kind == "aten::stack";
  int64_t rank = tensorType((*inputs)[0]).getRank() + (stack ? 1 : 0);
  auto dim = normalizeDim(*d, rank);
  if (!dim)
    return ctx.fail(node, "dim out of range");
  if (stack)
    for (Value &v : *inputs) {
      SmallVector<OpFoldResult> sizes = ctx.dims(v);
      sizes.insert(sizes.begin() + *dim, ctx.builder.getIndexAttr(1));
      v = ctx.reshape(v, sizes);
    }
  auto r = concat(ctx, node, *inputs, *dim);
  if (failed(r))
    return failure();
  ctx.setTensor(node, 0, *r);
  return success();
}

LogicalResult convertExpand(ImportContext &ctx, const TorchNode &node) {
  auto x = ctx.tensorInput(node, 0);
  if (failed(x))
    return failure();
  std::vector<SymInt> requested;
  if (node.kind == "aten::expand_as") {
    auto other = ctx.tensorInput(node, 1);
    if (failed(other))
      return failure();
    for (OpFoldResult d : ctx.dims(*other))
      requested.push_back(ctx.toSymDim(d));
  } else {
    auto list = ctx.symIntListInput(node, 1);
    if (failed(list))
      return failure();
    requested = *list;
  }
  int64_t rank = tensorType(*x).getRank(), outRank = requested.size();
  if (outRank < rank)
    return ctx.fail(node, "cannot expand to fewer dims");
  SmallVector<OpFoldResult> sizes;
  for (int64_t i = 0; i < outRank; ++i) {
    int64_t k = i - (outRank - rank);
    if (requested[i].isConstant() && requested[i].constant == -1) {
      if (k < 0)
        return ctx.fail(node, "-1 is not allowed for a new leading dim");
      sizes.push_back(ctx.dim(*x, k));
    } else {
      sizes.push_back(ctx.toFoldResult(requested[i]));
    }
  }
  ctx.setTensor(node, 0, ctx.broadcastTo(*x, sizes));
  return success();
}

/// Element type of a factory: its dtype argument, else `fallback`.
FailureOr<Type> factoryType(ImportContext &ctx, const TorchNode &node, size_t i, Type fallback) {
  if (i >= node.inputs.size() || ctx.isNoneInput(node, i))
    return fallback;
  auto code = ctx.intInput(node, i);
  if (failed(code))
    return failure();
  Type t = elementTypeOfDtypeCode(ctx.context, *code);
  if (!t) {
    (void)ctx.unsupported(node, "dtype code " + std::to_string(*code));
    return failure();
  }
  return t;
}

/// arange(end), arange(start, end), arange(start, end, step) + dtype etc.
LogicalResult convertArange(ImportContext &ctx, const TorchNode &node) {
  size_t n = node.inputs.size();
  size_t numbers = n == 5 ? 1 : n == 6 ? 2 : 3;
  TValue start = numbers >= 2 ? ctx.input(node, 0) : TValue::ofInt(0);
  TValue end = ctx.input(node, numbers >= 2 ? 1 : 0);
  TValue step = numbers == 3 ? ctx.input(node, 2) : TValue::ofInt(1);
  bool anyFloat = start.kind == TValue::Kind::Float || end.kind == TValue::Kind::Float ||
                  step.kind == TValue::Kind::Float;
  auto et = factoryType(ctx, node, numbers, anyFloat ? (Type)ctx.builder.getF32Type() : (Type)ctx.builder.getI64Type());
  if (failed(et))
    return failure();
  OpFoldResult count;
  double s0, st;
  if (start.kind == TValue::Kind::Int && end.kind == TValue::Kind::Int && step.kind == TValue::Kind::Int &&
      start.intValue.isConstant() && step.intValue.isConstant() && step.intValue.constant == 1 &&
      !end.intValue.isConstant()) {
    Value e = end.intValue.value;
    count = start.intValue.constant == 0
                ? OpFoldResult(e)
                : OpFoldResult((Value)arith::SubIOp::create(ctx.builder, ctx.loc, e, ctx.indexConstant(start.intValue.constant)));
    s0 = start.intValue.constant;
    st = 1;
  } else {
    auto a = ctx.floatInput(node, numbers >= 2 ? 0 : 0);
    if (numbers == 1)
      a = 0.0;
    auto b = ctx.floatInput(node, numbers >= 2 ? 1 : 0);
    FailureOr<double> c = numbers == 3 ? ctx.floatInput(node, 2) : FailureOr<double>(1.0);
    if (failed(a) || failed(b) || failed(c))
      return failure();
    if (*c == 0)
      return ctx.fail(node, "step must be nonzero");
    int64_t len = std::max<int64_t>(0, (int64_t)std::ceil((*b - *a) / *c));
    count = ctx.builder.getIndexAttr(len);
    s0 = *a;
    st = *c;
  }
  Value init = ctx.empty({count}, *et);
  SmallVector<AffineMap> maps{ctx.builder.getMultiDimIdentityMap(1)};
  SmallVector<utils::IteratorType> iterators(1, utils::IteratorType::parallel);
  Type t = *et;
  auto g = linalg::GenericOp::create(
      ctx.builder, ctx.loc, TypeRange{init.getType()}, ValueRange{}, ValueRange{init}, maps, iterators,
      [&](OpBuilder &b, Location l, ValueRange) {
        Value i = linalg::IndexOp::create(b, l, 0);
        Value v;
        if (isa<FloatType>(t)) {
          Value fi = ImportContext::castScalar(b, l, i, t);
          v = arith::AddFOp::create(b, l, arith::ConstantOp::create(b, l, b.getFloatAttr(t, s0)),
                                    arith::MulFOp::create(b, l, fi, arith::ConstantOp::create(b, l, b.getFloatAttr(t, st))));
        } else {
          Value ii = ImportContext::castScalar(b, l, i, t);
          v = arith::AddIOp::create(b, l, arith::ConstantOp::create(b, l, b.getIntegerAttr(t, (int64_t)s0)),
                                    arith::MulIOp::create(b, l, ii, arith::ConstantOp::create(b, l, b.getIntegerAttr(t, (int64_t)st))));
        }
        linalg::YieldOp::create(b, l, v);
      });
  ctx.recordDims(g.getResult(0), {count});
  ctx.setTensor(node, 0, g.getResult(0));
  return success();
}

/// ones/zeros/full(size, [fill], dtype, ...) and *_like(x, [fill], dtype, ...).
LogicalResult convertFactory(ImportContext &ctx, const TorchNode &node) {
  const std::string &k = node.kind;
  bool like = k.find("_like") != std::string::npos;
  bool full = k.rfind("aten::full", 0) == 0;
  SmallVector<OpFoldResult> sizes;
  Type fallback = ctx.builder.getF32Type();
  if (like) {
    auto x = ctx.tensorInput(node, 0);
    if (failed(x))
      return failure();
    sizes = ctx.dims(*x);
    fallback = tensorType(*x).getElementType();
  } else {
    auto list = ctx.symIntListInput(node, 0);
    if (failed(list))
      return failure();
    for (const SymInt &s : *list)
      sizes.push_back(ctx.toFoldResult(s));
  }
  double fill = k.find("ones") != std::string::npos ? 1.0 : 0.0;
  size_t dtypeIndex = 1;
  if (full) {
    const TValue &f = ctx.input(node, 1);
    if (f.kind == TValue::Kind::Float && !like)
      fallback = ctx.builder.getF32Type();
    else if (f.kind == TValue::Kind::Int && !like)
      fallback = ctx.builder.getI64Type();
    else if (f.kind == TValue::Kind::Bool && !like)
      fallback = ctx.builder.getI1Type();
    auto v = ctx.floatInput(node, 1);
    if (failed(v))
      return failure();
    fill = *v;
    dtypeIndex = 2;
  }
  auto et = factoryType(ctx, node, dtypeIndex, fallback);
  if (failed(et))
    return failure();
  ctx.setTensor(node, 0, ctx.filled(sizes, ctx.scalarConstant(*et, fill)));
  return success();
}

/// triu/tril(x, diagonal): zero below/above the diagonal of the last two dims.
LogicalResult convertTriangle(ImportContext &ctx, const TorchNode &node) {
  bool upper = node.kind.rfind("aten::triu", 0) == 0;
  auto x = ctx.tensorInput(node, 0);
  if (failed(x))
    return failure();
  // The diagonal may be a run-time int (a causal mask at position pos).
  SymInt diagonal = SymInt::of(0);
  if (node.inputs.size() > 1 && !ctx.isNoneInput(node, 1)) {
    const TValue &d = ctx.input(node, 1);
    if (d.kind != TValue::Kind::Int)
      return ctx.fail(node, "diagonal must be an int");
    diagonal = d.intValue;
  }
  Value diagonalValue =
      diagonal.isConstant() ? Value() : ctx.toIndexValue(ctx.toFoldResult(diagonal));
  int64_t rank = tensorType(*x).getRank();
  if (rank < 2)
    return ctx.fail(node, "expects a tensor of rank >= 2");
  Type et = tensorType(*x).getElementType();
  auto r = ctx.elementwiseTensors(node, ValueRange{*x}, et, [&](OpBuilder &b, Location l, ValueRange a) -> Value {
    Value i = linalg::IndexOp::create(b, l, rank - 2), j = linalg::IndexOp::create(b, l, rank - 1);
    Value diff = arith::SubIOp::create(b, l, j, i);
    Value dc = diagonalValue ? diagonalValue
                             : (Value)arith::ConstantIndexOp::create(b, l, diagonal.constant);
    Value keep = arith::CmpIOp::create(b, l, upper ? arith::CmpIPredicate::sge : arith::CmpIPredicate::sle, diff, dc);
    Value zero = isa<FloatType>(et) ? (Value)arith::ConstantOp::create(b, l, b.getFloatAttr(et, 0.0))
                                    : (Value)arith::ConstantOp::create(b, l, b.getIntegerAttr(et, 0));
    return arith::SelectOp::create(b, l, keep, a[0], zero);
  });
  if (failed(r))
    return failure();
  ctx.setTensor(node, 0, *r);
  return success();
}

} // namespace

void registerShapeOps(OpRegistry &r) {
  for (const char *k : {"aten::view", "aten::reshape", "aten::view_as", "aten::reshape_as",
                        "aten::_reshape_alias"})
    r.add(k, convertView);
  r.add("aten::flatten", convertFlatten);
  r.add("aten::unflatten", convertUnflatten);
  r.addWithInplace("aten::unsqueeze", convertUnsqueeze);
  r.addWithInplace("aten::squeeze", convertSqueeze);
  r.addWithInplace("aten::transpose", convertTranspose);
  r.add("aten::permute", convertPermute);
  r.add("aten::slice", convertSlice);
  r.add("aten::select", convertSelect);
  r.add("aten::repeat_interleave", convertRepeatInterleave);
  for (const char *k : {"aten::chunk", "aten::split", "aten::split_with_sizes", "aten::unsafe_chunk",
                        "aten::unsafe_split", "aten::unbind"})
    r.add(k, convertSplit);
  r.add("aten::cat", convertCat);
  r.add("aten::concat", convertCat);
  r.add("aten::stack", convertCat);
  r.add("aten::expand", convertExpand);
  r.add("aten::expand_as", convertExpand);
  r.add("aten::arange", convertArange);
  for (const char *k : {"aten::ones", "aten::zeros", "aten::full", "aten::ones_like",
                        "aten::zeros_like", "aten::full_like"})
    r.add(k, convertFactory);
  r.addWithInplace("aten::triu", convertTriangle);
  r.addWithInplace("aten::tril", convertTriangle);
}

} // namespace turbine::torch_frontend
