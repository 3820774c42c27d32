//===- StatefulImport.cpp - Mutated buffers as ml_program globals ---------===//
//
// Private to the TorchScript frontend: the stateful import (ImportOptions::
// functions). Freezing keeps the buffers the methods mutate as attributes
// (prim::GetAttr chains from self, resolved to dotted paths by the loader);
// each becomes `ml_program.global private mutable @"<path>"` with the
// buffer's value as initial value (a zero buffer is a splat zero: zero-filled
// per instance, not stored).
//
// Reads: a prim::GetAttr of a state tensor is an ml_program.global_load; the
// slices / selects of it (and of those) are recorded as views (the global
// and the chain of nodes from the load). Writes: `aten::copy_(view, src)`
// (what `self.k_cache[:, :, pos:pos + t] = k` scripts to) becomes
//   %c = global_load; %u = tensor.insert_slice src' into %c[offsets][sizes];
//   global_store %u
// with src' = src cast to the buffer's dtype and broadcast to the view's
// shape, offsets/sizes from the chain (slices of step 1 and selects). A view
// read after its global was stored is re-read: a fresh load and the chain's
// nodes converted again, so every read sees the writes before it in program
// order (TorchScript's aliasing semantics for these views).
// `buffer[:, :, positions] = values` (aten::index_put_ with one index
// tensor) and `index_copy_(dim, positions, values)` write one row update per
// position (a static count, at most 256). Other in-place ops on state
// (add_, accumulating index_put_, ...) are errors naming the op.
// The compiler makes the update one kernel writing the global's storage in
// place, bounds-checked at run time (turbine-update-slices-in-place).
//===----------------------------------------------------------------------===//
#include "ImportContext.h"

#include "mlir/Dialect/MLProgram/IR/MLProgram.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"

#include <algorithm>

using namespace mlir;

namespace turbine::torch_frontend {

namespace {

bool isViewKind(const std::string &kind) { return kind == "aten::slice" || kind == "aten::select"; }

bool allZero(const std::vector<char> &bytes) {
  return std::all_of(bytes.begin(), bytes.end(), [](char c) { return c == 0; });
}

/// A fresh load of `global`.
Value loadGlobal(ImportContext &ctx, const std::string &global) {
  RankedTensorType type = ctx.state->globals.at(global);
  return ml_program::GlobalLoadOp::create(
             ctx.builder, ctx.loc, type,
             SymbolRefAttr::get(ctx.builder.getStringAttr(global)))
      .getResult();
}

/// `a + b` as a SymInt.
SymInt addSym(ImportContext &ctx, SymInt a, SymInt b) {
  if (a.isConstant() && b.isConstant())
    return SymInt::of(a.constant + b.constant);
  Value sum = arith::AddIOp::create(ctx.builder, ctx.loc, ctx.toIndexValue(ctx.toFoldResult(a)),
                                    ctx.toIndexValue(ctx.toFoldResult(b)));
  return SymInt::of(sum);
}

} // namespace

LogicalResult declareStateGlobals(ImportContext &ctx, ModuleOp module, std::string &error) {
  OpBuilder &b = ctx.builder;
  b.setInsertionPointToEnd(module.getBody());
  for (const TorchConstant &c : ctx.graph.state) {
    Type et = elementTypeOf(ctx.context, c.dtype);
    if (!et) {
      error = ctx.origin + ": module state '" + c.name + "' has unsupported dtype " + c.dtypeName;
      return failure();
    }
    auto type = RankedTensorType::get(c.shape, et);
    Attribute value;
    if (allZero(c.data))
      value = DenseElementsAttr::get(type, b.getZeroAttr(et));
    else if (et.isInteger(1))
      return error = ctx.origin + ": boolean module state '" + c.name + "' is not supported",
             failure();
    else
      value = DenseElementsAttr::getFromRawBuffer(type, ArrayRef<char>(c.data.data(), c.data.size()));
    ml_program::GlobalOp::create(b, ctx.loc, b.getStringAttr(c.name), TypeAttr::get(type),
                                 /*is_mutable=*/b.getUnitAttr(), value, b.getStringAttr("private"));
    ctx.state->globals[c.name] = type;
    ctx.state->epochs[c.name] = 0;
  }
  return success();
}

LogicalResult importStateAttribute(ImportContext &ctx, const TorchNode &node) {
  int out = node.outputs.at(0);
  if (ctx.graph.values[out].kind != TorchTypeKind::Tensor) {
    // A submodule: only its own attributes are ever read.
    TValue v;
    v.kind = TValue::Kind::String;
    v.text = node.attributePath;
    ctx.set(out, v);
    return success();
  }
  auto it = ctx.state->globals.find(node.attributePath);
  if (it == ctx.state->globals.end())
    return ctx.fail(node, "attribute '" + node.attributePath +
                              "' is read as a tensor but is not module state");
  ctx.setTensor(node, 0, loadGlobal(ctx, node.attributePath));
  ctx.state->views[out] = StateView{node.attributePath, out, {}, ctx.state->epochs[node.attributePath]};
  return success();
}

LogicalResult refreshStateViews(ImportContext &ctx, const TorchNode &node) {
  for (int id : node.inputs) {
    auto it = ctx.state->views.find(id);
    if (it == ctx.state->views.end())
      continue;
    StateView view = it->second;
    int64_t epoch = ctx.state->epochs[view.global];
    if (view.epoch == epoch)
      continue;
    // Re-read: a fresh load, then the chain's nodes converted again on it.
    ctx.set(view.root, TValue::ofTensor(loadGlobal(ctx, view.global)));
    ctx.state->views[view.root].epoch = epoch;
    for (const TorchNode *step : view.chain) {
      if (failed(ctx.reimportNode(ctx, *step)))
        return failure();
      ctx.state->views[step->outputs.at(0)].epoch = epoch;
    }
    // `id` may be another name of the chain's end (copy_'s result).
    int last = view.chain.empty() ? view.root : view.chain.back()->outputs.at(0);
    if (last != id)
      ctx.set(id, ctx.value(last));
    ctx.state->views[id].epoch = epoch;
  }
  return success();
}

bool writesState(ImportContext &ctx, const TorchNode &node) {
  return !node.inputs.empty() && isInplaceKind(node.kind) &&
         ctx.state->views.count(node.inputs[0]);
}

namespace {

/// Where a view lies in its global: offset and size per global dim, and the
/// global dims the view still has (selects drop theirs).
struct ViewPlacement {
  std::vector<SymInt> offsets, sizes;
  std::vector<int64_t> live;
};

FailureOr<ViewPlacement> placeView(ImportContext &ctx, const StateView &view) {
  RankedTensorType globalType = ctx.state->globals.at(view.global);
  int64_t rank = globalType.getRank();
  ViewPlacement p;
  p.offsets.assign(rank, SymInt::of(0));
  for (int64_t d = 0; d < rank; ++d) {
    p.sizes.push_back(SymInt::of(globalType.getDimSize(d)));
    p.live.push_back(d);
  }
  for (const TorchNode *step : view.chain) {
    auto dimArg = ctx.intInput(*step, 1);
    if (failed(dimArg))
      return failure();
    auto dim = normalizeDim(*dimArg, static_cast<int64_t>(p.live.size()));
    if (!dim)
      return ctx.fail(*step, "dim out of range");
    int64_t g = p.live[*dim];
    SymInt extent = p.sizes[g];
    auto bound = [&](size_t i, SymInt def) -> FailureOr<SymInt> {
      if (ctx.isNoneInput(*step, i))
        return def;
      const TValue &v = ctx.input(*step, i);
      if (v.kind != TValue::Kind::Int)
        return ctx.fail(*step, "slice bounds of module state must be ints");
      SymInt b = v.intValue;
      // Python's negative indices count from the end (constants only).
      if (b.isConstant() && b.constant < 0 && extent.isConstant())
        b = SymInt::of(b.constant + extent.constant);
      if (b.isConstant() && extent.isConstant() && b.constant > extent.constant)
        b = extent;
      return b;
    };
    if (step->kind == "aten::select") {
      auto index = bound(2, SymInt::of(0));
      if (failed(index))
        return failure();
      p.offsets[g] = addSym(ctx, p.offsets[g], *index);
      p.sizes[g] = SymInt::of(1);
      p.live.erase(p.live.begin() + *dim);
      continue;
    }
    auto stepArg = ctx.intInput(*step, 4);
    if (failed(stepArg))
      return failure();
    if (*stepArg != 1)
      return ctx.unsupported(*step, "a strided slice of module state that is assigned to");
    auto start = bound(2, SymInt::of(0));
    auto end = bound(3, extent);
    if (failed(start) || failed(end))
      return failure();
    // INT64_MAX (an open end) means the extent.
    SymInt e = end->isConstant() && end->constant >= (int64_t(1) << 62) ? extent : *end;
    SymInt count;
    if (start->isConstant() && e.isConstant())
      count = SymInt::of(std::max<int64_t>(0, e.constant - start->constant));
    else
      count = SymInt::of((Value)arith::SubIOp::create(
          ctx.builder, ctx.loc, ctx.toIndexValue(ctx.toFoldResult(e)),
          ctx.toIndexValue(ctx.toFoldResult(*start))));
    p.offsets[g] = addSym(ctx, p.offsets[g], *start);
    p.sizes[g] = count;
  }
  return p;
}

/// The sizes of the view, one per live dim.
SmallVector<OpFoldResult> viewSizes(ImportContext &ctx, const ViewPlacement &p) {
  SmallVector<OpFoldResult> sizes;
  for (int64_t g : p.live)
    sizes.push_back(ctx.toFoldResult(p.sizes[g]));
  return sizes;
}

/// `value` (the global's dtype, the view's shape) written over the view:
/// an insert_slice into a fresh load of the global, stored back.
void storeIntoView(ImportContext &ctx, const std::string &global, const ViewPlacement &p,
                   Value value) {
  RankedTensorType globalType = ctx.state->globals.at(global);
  int64_t rank = globalType.getRank();
  // Back to the global's rank (selected dims are 1).
  SmallVector<OpFoldResult> fullSizes;
  for (int64_t g = 0; g < rank; ++g)
    fullSizes.push_back(ctx.toFoldResult(p.sizes[g]));
  if (p.live.size() != static_cast<size_t>(rank))
    value = ctx.reshape(value, fullSizes);
  SmallVector<int64_t> staticSizes;
  for (OpFoldResult f : fullSizes) {
    std::optional<int64_t> c = getConstantIntValue(f);
    staticSizes.push_back(c ? *c : ShapedType::kDynamic);
  }
  auto sliceType = RankedTensorType::get(staticSizes, globalType.getElementType());
  if (value.getType() != sliceType)
    value = tensor::CastOp::create(ctx.builder, ctx.loc, sliceType, value);
  SmallVector<OpFoldResult> offsetFolds, strides(rank, ctx.builder.getIndexAttr(1));
  for (const SymInt &o : p.offsets)
    offsetFolds.push_back(ctx.toFoldResult(o));
  Value current = loadGlobal(ctx, global);
  Value updated = tensor::InsertSliceOp::create(ctx.builder, ctx.loc, value, current, offsetFolds,
                                                fullSizes, strides);
  ml_program::GlobalStoreOp::create(ctx.builder, ctx.loc,
                                    SymbolRefAttr::get(ctx.builder.getStringAttr(global)),
                                    updated);
  ++ctx.state->epochs[global];
}

/// `source` cast to the global's dtype and broadcast to `sizes`; fails when
/// its rank exceeds theirs.
FailureOr<Value> valueFor(ImportContext &ctx, const TorchNode &node, const StateView &view,
                          Value source, ArrayRef<OpFoldResult> sizes) {
  RankedTensorType globalType = ctx.state->globals.at(view.global);
  Value value = ctx.castTensor(source, globalType.getElementType());
  int64_t srcRank = tensorType(value).getRank();
  if (srcRank > static_cast<int64_t>(sizes.size()))
    return ctx.fail(node, "assigning a rank-" + std::to_string(srcRank) + " value to a rank-" +
                              std::to_string(sizes.size()) + " view of module state '" +
                              view.global + "'");
  return ctx.broadcastTo(value, sizes);
}

/// The most positions one index_put_ / index_copy_ on module state writes:
/// each is its own in-place row update.
constexpr int64_t kMaxIndexedRows = 256;

/// `view[..., index[i], ...] = source[..., i, ...]` along view dim `dim` for
/// every i of the 1-D integer tensor `index` (index_copy_, and index_put_
/// with one index tensor): one in-place row update per position, negative
/// positions counted from the end, out-of-range positions a run-time error
/// (the update's bounds check).
LogicalResult storeIndexedRows(ImportContext &ctx, const TorchNode &node, const StateView &view,
                               int64_t dim, Value index, Value source) {
  FailureOr<ViewPlacement> placed = placeView(ctx, view);
  if (failed(placed))
    return failure();
  auto indexType = tensorType(index);
  if (indexType.getRank() != 1 || !isa<IntegerType>(indexType.getElementType()) ||
      indexType.getElementType().isInteger(1))
    return ctx.unsupported(node, "an index into module state that is not a 1-D integer tensor");
  int64_t count = indexType.getDimSize(0);
  if (ShapedType::isDynamic(count) || count > kMaxIndexedRows)
    return ctx.unsupported(node, "indexed writes into module state take a static number of at "
                                 "most " + std::to_string(kMaxIndexedRows) +
                                 " positions (use slice assignment, buffer[:, pos:pos + n] = "
                                 "value, for a run of positions)");
  auto dimIndex = normalizeDim(dim, static_cast<int64_t>(placed->live.size()));
  if (!dimIndex)
    return ctx.fail(node, "dim " + std::to_string(dim) + " out of range");
  int64_t g = placed->live[*dimIndex];
  SmallVector<OpFoldResult> sizes = viewSizes(ctx, *placed);
  sizes[*dimIndex] = ctx.builder.getIndexAttr(count);
  FailureOr<Value> value = valueFor(ctx, node, view, source, sizes);
  if (failed(value))
    return failure();
  OpBuilder &b = ctx.builder;
  Value extent = ctx.toIndexValue(ctx.toFoldResult(placed->sizes[g]));
  Value zero = arith::ConstantIndexOp::create(b, ctx.loc, 0);
  for (int64_t i = 0; i < count; ++i) {
    Value at = arith::ConstantIndexOp::create(b, ctx.loc, i);
    Value position = tensor::ExtractOp::create(b, ctx.loc, index, ValueRange{at});
    position = arith::IndexCastOp::create(b, ctx.loc, b.getIndexType(), position);
    Value negative = arith::CmpIOp::create(b, ctx.loc, arith::CmpIPredicate::slt, position, zero);
    Value wrapped = arith::AddIOp::create(b, ctx.loc, position, extent);
    position = arith::SelectOp::create(b, ctx.loc, negative, wrapped, position);
    Value row = sliceAlong(ctx, *value, *dimIndex, SymInt::of(i), b.getIndexAttr(1), 1);
    ViewPlacement p = *placed;
    p.offsets[g] = addSym(ctx, p.offsets[g], SymInt::of(position));
    p.sizes[g] = SymInt::of(1);
    storeIntoView(ctx, view.global, p, row);
  }
  return success();
}

} // namespace

LogicalResult importStateWrite(ImportContext &ctx, const TorchNode &node) {
  const StateView view = ctx.state->views.at(node.inputs[0]);
  if (node.kind == "aten::copy_") {
    FailureOr<ViewPlacement> placed = placeView(ctx, view);
    auto src = ctx.tensorInput(node, 1);
    if (failed(placed) || failed(src))
      return failure();
    FailureOr<Value> value = valueFor(ctx, node, view, *src, viewSizes(ctx, *placed));
    if (failed(value))
      return failure();
    storeIntoView(ctx, view.global, *placed, *value);
  } else if (node.kind == "aten::index_copy_") {
    // index_copy_(self, dim, index, source)
    auto dim = ctx.intInput(node, 1);
    auto index = ctx.tensorInput(node, 2);
    auto src = ctx.tensorInput(node, 3);
    if (failed(dim) || failed(index) || failed(src) ||
        failed(storeIndexedRows(ctx, node, view, *dim, *index, *src)))
      return failure();
  } else if (node.kind == "aten::index_put_") {
    // index_put_(self, indices: Tensor?[], values, accumulate): one index
    // tensor, the other entries None (`buffer[:, :, positions] = values`).
    auto accumulate = ctx.boolInput(node, 3);
    if (failed(accumulate))
      return failure();
    if (*accumulate)
      return ctx.unsupported(node, "index_put_ with accumulate=True on module state");
    const TValue &indices = ctx.input(node, 1);
    int64_t dim = -1;
    Value index;
    for (size_t i = 0; indices.kind == TValue::Kind::List && i < indices.elements.size(); ++i) {
      const TValue &e = indices.elements[i];
      if (e.isNone())
        continue;
      if (dim >= 0 || !e.isTensor())
        return ctx.unsupported(node, "indexed writes into module state take one index tensor "
                                     "(the other dims sliced with ':')");
      dim = static_cast<int64_t>(i);
      index = e.tensor;
    }
    if (dim < 0)
      return ctx.unsupported(node, "index_put_ on module state without an index tensor");
    auto src = ctx.tensorInput(node, 2);
    if (failed(src) || failed(storeIndexedRows(ctx, node, view, dim, index, *src)))
      return failure();
  } else {
    return ctx.unsupported(node, "in-place '" + node.kind + "' on module state '" + view.global +
                                     "' (slice assignment `buffer[...] = value`, copy_, "
                                     "index_copy_ and index_put_ update module state)");
  }
  // The op returns the view (now holding the value): re-read on use.
  auto out = ctx.tensorInput(node, 0);
  if (failed(out))
    return failure();
  ctx.setTensor(node, 0, *out);
  ctx.state->views[node.outputs.at(0)] = view;
  ctx.state->views[node.outputs.at(0)].epoch = -1;
  return success();
}

void recordStateView(ImportContext &ctx, const TorchNode &node) {
  if (!isViewKind(node.kind) || node.inputs.empty() || node.outputs.empty())
    return;
  auto it = ctx.state->views.find(node.inputs[0]);
  if (it == ctx.state->views.end())
    return;
  StateView view = it->second;
  view.chain.push_back(&node);
  ctx.state->views[node.outputs[0]] = view;
}

} // namespace turbine::torch_frontend
