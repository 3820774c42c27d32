//===- TensorBuilder.cpp - IR building shared by the frontends ------------===//
#include "turbine/frontends/TensorBuilder.h"

#include "llvm/Support/MathExtras.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StructuredOpsUtils.h"

#include <algorithm>

using namespace mlir;

namespace turbine::frontends {

Value TensorBuilder::indexConstant(int64_t value) {
  return arith::ConstantIndexOp::create(builder, loc, value);
}

OpFoldResult TensorBuilder::dim(Value tensor, int64_t i) {
  auto type = cast<RankedTensorType>(tensor.getType());
  if (!type.isDynamicDim(i))
    return builder.getIndexAttr(type.getDimSize(i));
  auto it = dimMemo.find({tensor, i});
  if (it != dimMemo.end())
    return it->second;
  Value d = tensor::DimOp::create(builder, loc, tensor, i);
  dimMemo[{tensor, i}] = d;
  return d;
}

SmallVector<OpFoldResult> TensorBuilder::dims(Value tensor) {
  SmallVector<OpFoldResult> result;
  int64_t rank = cast<RankedTensorType>(tensor.getType()).getRank();
  for (int64_t i = 0; i < rank; ++i)
    result.push_back(dim(tensor, i));
  return result;
}

void TensorBuilder::recordDims(Value tensor, ArrayRef<OpFoldResult> sizes) {
  auto type = cast<RankedTensorType>(tensor.getType());
  for (auto [i, size] : llvm::enumerate(sizes))
    if (type.isDynamicDim(i))
      if (auto v = dyn_cast<Value>(size))
        dimMemo[{tensor, static_cast<int64_t>(i)}] = v;
}

Value TensorBuilder::toIndexValue(OpFoldResult ofr) {
  if (auto v = dyn_cast<Value>(ofr))
    return v;
  return indexConstant(cast<IntegerAttr>(cast<Attribute>(ofr)).getInt());
}

OpFoldResult TensorBuilder::toFoldResult(const SymDim &d) {
  if (d.isConstant())
    return builder.getIndexAttr(d.constant);
  return d.value;
}

SymDim TensorBuilder::toSymDim(OpFoldResult ofr) {
  if (auto attr = dyn_cast<Attribute>(ofr))
    return SymDim::of(cast<IntegerAttr>(attr).getInt());
  Value v = cast<Value>(ofr);
  if (auto c = v.getDefiningOp<arith::ConstantIndexOp>())
    return SymDim::of(c.value());
  return SymDim::of(v);
}

Value TensorBuilder::empty(ArrayRef<OpFoldResult> sizes, Type elementType) {
  Value e = tensor::EmptyOp::create(builder, loc, sizes, elementType);
  recordDims(e, sizes);
  return e;
}

Value TensorBuilder::filled(ArrayRef<OpFoldResult> sizes, Value fillValue) {
  Value e = empty(sizes, fillValue.getType());
  Value f = linalg::FillOp::create(builder, loc, ValueRange{fillValue}, ValueRange{e})
                .getResult(0);
  recordDims(f, sizes);
  return f;
}

namespace {
/// Product of a group of dims: a constant factor times a multiset of symbols.
struct DimProduct {
  int64_t constant = 1;
  bool overflowed = false; // a product past int64: equal to nothing
  SmallVector<Value> symbols; // kept sorted by pointer

  void multiplyConstant(int64_t c) {
    // (Found by the onnx fuzzer: a reshape of huge dims overflowed here.)
    overflowed |= llvm::MulOverflow(constant, c, constant);
  }
  void multiply(const SymDim &d) {
    if (d.isConstant()) {
      multiplyConstant(d.constant);
      return;
    }
    multiplyValue(d.value);
  }
  /// Looks through index constants and muli so `d*16` matches `d` times 16.
  void multiplyValue(Value v) {
    if (auto c = v.getDefiningOp<arith::ConstantIndexOp>()) {
      multiplyConstant(c.value());
      return;
    }
    if (auto m = v.getDefiningOp<arith::MulIOp>()) {
      multiplyValue(m.getLhs());
      multiplyValue(m.getRhs());
      return;
    }
    symbols.push_back(v);
    llvm::sort(symbols, [](Value a, Value b) {
      return a.getAsOpaquePointer() < b.getAsOpaquePointer();
    });
  }
  bool operator==(const DimProduct &o) const {
    return !overflowed && !o.overflowed && constant == o.constant && symbols == o.symbols;
  }
  /// True when this product's symbols are a strict sub-multiset of `o`'s.
  bool symbolsStrictlyWithin(const DimProduct &o) const {
    if (symbols.size() >= o.symbols.size())
      return false;
    SmallVector<Value> rest(o.symbols.begin(), o.symbols.end());
    for (Value s : symbols) {
      auto it = llvm::find(rest, s);
      if (it == rest.end())
        return false;
      rest.erase(it);
    }
    return true;
  }
};
} // namespace

Value TensorBuilder::reshape(Value input, ArrayRef<OpFoldResult> sizes) {
  auto srcType = cast<RankedTensorType>(input.getType());
  SmallVector<SymDim> src, dst;
  for (OpFoldResult d : dims(input))
    src.push_back(toSymDim(d));
  for (OpFoldResult d : sizes)
    dst.push_back(toSymDim(d));
  SmallVector<int64_t> resultShape;
  SmallVector<OpFoldResult> resultSizes;
  for (const SymDim &d : dst) {
    resultShape.push_back(d.isConstant() ? d.constant : ShapedType::kDynamic);
    resultSizes.push_back(toFoldResult(d));
  }
  auto resultType = RankedTensorType::get(resultShape, srcType.getElementType());
  if (src.size() == dst.size() && llvm::equal(src, dst))
    return input;

  int64_t n = src.size(), m = dst.size();
  if (m == 0) // everything is 1: collapse to rank 0
    return tensor::CollapseShapeOp::create(builder, loc, resultType, input,
                                           ArrayRef<ReassociationIndices>{});
  if (n == 0) {
    Value r = tensor::ExpandShapeOp::create(builder, loc, resultType, input,
                                            ArrayRef<ReassociationIndices>{}, resultSizes);
    recordDims(r, resultSizes);
    return r;
  }

  // Group src and dst dims so each group has equal products.
  SmallVector<ReassociationIndices> srcGroups, dstGroups;
  bool clear = true;
  int64_t i = 0, j = 0;
  while (clear && (i < n || j < m)) {
    ReassociationIndices sg, dg;
    DimProduct sp, dp;
    auto growSrc = [&] { sg.push_back(i); sp.multiply(src[i++]); };
    auto growDst = [&] { dg.push_back(j); dp.multiply(dst[j++]); };
    if (i < n)
      growSrc();
    if (j < m)
      growDst();
    while (!(sp == dp)) {
      bool wantSrc;
      if (sp.symbolsStrictlyWithin(dp))
        wantSrc = true;
      else if (dp.symbolsStrictlyWithin(sp))
        wantSrc = false;
      else if (sp.symbols == dp.symbols && sp.constant != dp.constant)
        wantSrc = sp.constant < dp.constant;
      else {
        clear = false;
        break;
      }
      if (wantSrc && i < n)
        growSrc();
      else if (!wantSrc && j < m)
        growDst();
      else {
        clear = false;
        break;
      }
    }
    if (!clear)
      break;
    // Trailing unit dims on one side join the previous group.
    if (sg.empty() || dg.empty()) {
      if (srcGroups.empty()) {
        clear = false;
        break;
      }
      srcGroups.back().append(sg.begin(), sg.end());
      dstGroups.back().append(dg.begin(), dg.end());
      continue;
    }
    srcGroups.push_back(sg);
    dstGroups.push_back(dg);
  }
  if (!clear) {
    srcGroups.assign(1, ReassociationIndices{});
    dstGroups.assign(1, ReassociationIndices{});
    for (int64_t k = 0; k < n; ++k)
      srcGroups[0].push_back(k);
    for (int64_t k = 0; k < m; ++k)
      dstGroups[0].push_back(k);
  }

  Value current = input;
  bool needCollapse = llvm::any_of(srcGroups, [](auto &g) { return g.size() != 1; });
  if (needCollapse) {
    current = tensor::CollapseShapeOp::create(builder, loc, current, srcGroups);
    // Record collapsed dims that equal a single symbol.
    SmallVector<OpFoldResult> collapsedSizes;
    for (auto &g : dstGroups) {
      DimProduct p;
      for (int64_t k : g)
        p.multiply(dst[k]);
      if (g.size() == 1)
        collapsedSizes.push_back(toFoldResult(dst[g[0]]));
      else if (p.symbols.size() == 1 && p.constant == 1)
        collapsedSizes.push_back(p.symbols[0]);
      else
        collapsedSizes.push_back(builder.getIndexAttr(0)); // ignored unless dynamic value
    }
    if (clear)
      recordDims(current, collapsedSizes);
  }
  bool needExpand = llvm::any_of(dstGroups, [](auto &g) { return g.size() != 1; });
  if (needExpand) {
    // expand_shape wants a dynamic source dim for every group holding a
    // dynamic result dim (sizes read at run time split a static dim), and a
    // static one, their product, for a group of static result dims (a
    // dynamic dim that the target shape says is static: ViT's attention
    // reshapes a slice whose end was computed from shapes).
    auto currentType = cast<RankedTensorType>(current.getType());
    SmallVector<int64_t> castShape(currentType.getShape());
    for (auto [g, group] : llvm::enumerate(dstGroups)) {
      if (llvm::any_of(group, [&](int64_t k) { return ShapedType::isDynamic(resultShape[k]); })) {
        castShape[g] = ShapedType::kDynamic;
        continue;
      }
      // (A product past int64, a reshape refused later: found by the onnx
      // fuzzer under UBSan.)
      int64_t product = 1;
      bool overflowed = false;
      for (int64_t k : group)
        overflowed |= llvm::MulOverflow(product, resultShape[k], product);
      castShape[g] = overflowed ? ShapedType::kDynamic : product;
    }
    if (castShape != SmallVector<int64_t>(currentType.getShape()))
      current = tensor::CastOp::create(builder, loc, currentType.clone(castShape), current);
    current = tensor::ExpandShapeOp::create(builder, loc, resultType, current, dstGroups,
                                            resultSizes);
  }
  // A dim the source has dynamic and the target static (or the reverse)
  // without an expand: say so with a cast, so the result has the type asked for.
  if (current.getType() != resultType)
    current = tensor::CastOp::create(builder, loc, resultType, current);
  recordDims(current, resultSizes);
  return current;
}

Value TensorBuilder::transpose(Value input, ArrayRef<int64_t> perm) {
  SmallVector<OpFoldResult> inSizes = dims(input), outSizes;
  for (int64_t p : perm)
    outSizes.push_back(inSizes[p]);
  Value init = empty(outSizes, cast<RankedTensorType>(input.getType()).getElementType());
  Value result = linalg::TransposeOp::create(builder, loc, input, init, perm)->getResult(0);
  recordDims(result, outSizes);
  return result;
}

AffineMap droppedDimsMap(MLIRContext *context, ArrayRef<bool> mask) {
  SmallVector<AffineExpr> exprs;
  for (auto [d, reduced] : llvm::enumerate(mask))
    if (!reduced)
      exprs.push_back(getAffineDimExpr(d, context));
  return AffineMap::get(mask.size(), 0, exprs, context);
}

Value reduceDims(TensorBuilder &ctx, Value input, ArrayRef<bool> reduceMask, Value initValue,
                 const CombineFn &combine) {
  int64_t rank = reduceMask.size();
  SmallVector<OpFoldResult> sizes;
  SmallVector<utils::IteratorType> iterators;
  for (int64_t d = 0; d < rank; ++d) {
    if (!reduceMask[d])
      sizes.push_back(ctx.dim(input, d));
    iterators.push_back(reduceMask[d] ? utils::IteratorType::reduction
                                      : utils::IteratorType::parallel);
  }
  Value init = ctx.filled(sizes, initValue);
  SmallVector<AffineMap> maps{ctx.builder.getMultiDimIdentityMap(rank),
                              droppedDimsMap(ctx.builder.getContext(), reduceMask)};
  Value result = linalg::GenericOp::create(ctx.builder, ctx.loc, TypeRange{init.getType()},
                                           ValueRange{input}, ValueRange{init}, maps, iterators,
                                           [&](OpBuilder &b, Location l, ValueRange a) {
                                             linalg::YieldOp::create(b, l, combine(b, l, a[1], a[0]));
                                           })
                     .getResult(0);
  ctx.recordDims(result, sizes);
  return result;
}

Result<llvm::SmallVector<mlir::OpFoldResult>>
TensorBuilder::broadcastSizes(mlir::ValueRange inputs) {
  int64_t rank = 0;
  for (mlir::Value v : inputs)
    rank = std::max(rank, mlir::cast<mlir::RankedTensorType>(v.getType()).getRank());
  llvm::SmallVector<mlir::OpFoldResult> sizes;
  for (int64_t d = 0; d < rank; ++d) {
    std::optional<int64_t> staticSize;
    std::optional<mlir::OpFoldResult> dynamicSize;
    for (mlir::Value v : inputs) {
      auto type = mlir::cast<mlir::RankedTensorType>(v.getType());
      int64_t k = d - (rank - type.getRank());
      if (k < 0)
        continue;
      if (type.isDynamicDim(k)) {
        if (!dynamicSize)
          dynamicSize = dim(v, k);
        continue;
      }
      int64_t size = type.getDimSize(k);
      if (size == 1)
        continue;
      if (staticSize && *staticSize != size)
        return Status::error("operands are not broadcastable (dim " + std::to_string(d) + ": " +
                             std::to_string(*staticSize) + " vs " + std::to_string(size) + ")");
      staticSize = size;
    }
    if (staticSize)
      sizes.push_back(builder.getIndexAttr(*staticSize));
    else if (dynamicSize)
      sizes.push_back(*dynamicSize);
    else
      sizes.push_back(builder.getIndexAttr(1));
  }
  return sizes;
}

Result<mlir::OpFoldResult> windowOutputSize(TensorBuilder &ctx, mlir::OpFoldResult inSize,
                                            PoolingWindow &w, int d, WindowError &kind) {
  // A stride of 0 divided by zero below (found by the torchscript fuzzer:
  // fuzz/corpus/torchscript/regress-conv-stride-0).
  if (w.strides[d] < 1 || w.dilations[d] < 1 || w.kernel[d] < 1) {
    kind = WindowError::Invalid;
    return Status::error("strides, dilations and kernel sizes must be positive");
  }
  int64_t span = w.dilations[d] * (w.kernel[d] - 1) + 1;
  SymDim s = ctx.toSymDim(inSize);
  if (s.isConstant()) {
    int64_t padded = s.constant + w.padLow[d] + w.padHigh[d];
    if (padded < span) {
      kind = WindowError::Invalid;
      return Status::error("window is larger than the padded input");
    }
    int64_t out = (padded - span) / w.strides[d] + 1;
    if (w.ceilMode) {
      out = (padded - span + w.strides[d] - 1) / w.strides[d] + 1;
      // The last window must start inside the input or the low padding.
      if ((out - 1) * w.strides[d] >= s.constant + w.padLow[d])
        --out;
      int64_t needed = (out - 1) * w.strides[d] + span;
      if (needed > padded)
        w.padHigh[d] += needed - padded;
    }
    return OpFoldResult(ctx.builder.getIndexAttr(out));
  }
  if (w.ceilMode) {
    kind = WindowError::Unsupported;
    return Status::error("ceil_mode on a dynamic spatial dim");
  }
  mlir::OpBuilder &b = ctx.builder;
  mlir::Value v = mlir::arith::AddIOp::create(
      b, ctx.loc, s.value, ctx.indexConstant(w.padLow[d] + w.padHigh[d] - span));
  v = mlir::arith::DivSIOp::create(b, ctx.loc, v, ctx.indexConstant(w.strides[d]));
  v = mlir::arith::AddIOp::create(b, ctx.loc, v, ctx.indexConstant(1));
  return OpFoldResult(v);
}

} // namespace turbine::frontends
