//===- AttentionFusion.cpp - q.k^T.scale (+mask) -> softmax -> .v as one op ===//
//
// turbine-fuse-attention: finds scaled-dot-product attention as the
// frontends lower it to linalg (the TorchScript importer's form of
// `softmax(q @ k.transpose(2, 3) * scale + mask, -1) @ v`) and replaces it
// with one turbine.attention, which dispatch formation keeps as a dispatch
// of its own and the target lowers into an online-softmax loop nest, so the
// [B, H, T, L] score and probability tensors are never written.
//
// The pattern, from the second matmul backwards (4-D tensors [B, H, ., .]
// are collapsed to [B*H, ., .] around each linalg.batch_matmul):
//
//   out    = batch_matmul(collapse(P), collapse(Vx))            [B*H, T, D]
//   P      = exp(E) / sum_s exp(E)       (two generics: the reduction and
//   E      = S - max_s S                  the division; max a reduction)
//   S      = X + mask   (optional; mask [T, L] read at (t, s))
//   X      = Y * c  or  Y / c             (optional; c a scalar constant or
//                                          torch.jit.trace's 0-d constant)
//   Y      = expand(batch_matmul(collapse(Q), collapse(transpose(Kx))))
//
// Kx and Vx may be read through gathers that only take a prefix of dim 2
// (`cache[:, :, :pos + t]`, a KV cache's used part) or repeat heads
// (`repeat_interleave(g, dim=1)`: head h reads h / g, grouped-query
// attention), or through a tensor.extract_slice of a prefix; the fused op
// reads the gathers' source directly, with the prefix length as
// `key_length`, so neither copy is made. Anything else (a softmax over
// another axis, a mask that is not added, a scale that is not a constant)
// is left alone.
//===----------------------------------------------------------------------===//
#include "turbine/compiler/Dialect/TurbineDialect.h"
#include "turbine/compiler/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/SetVector.h"

#include <cmath>
#include <optional>

using namespace mlir;

namespace turbine::compiler {

#define GEN_PASS_DEF_FUSEATTENTION
#include "turbine/compiler/Passes.h.inc"

namespace {

/// `value` = collapse_shape(src [a, b, c, d]) into [a*b, c, d]: src.
Value throughHeadCollapse(Value value) {
  auto collapse = value.getDefiningOp<tensor::CollapseShapeOp>();
  if (!collapse || collapse.getSrcType().getRank() != 4)
    return {};
  SmallVector<ReassociationIndices> groups = collapse.getReassociationIndices();
  if (groups.size() != 3 || groups[0] != ReassociationIndices{0, 1} ||
      groups[1] != ReassociationIndices{2} || groups[2] != ReassociationIndices{3})
    return {};
  return collapse.getSrc();
}

/// `value` = expand_shape(src [a*b, c, d]) into [a, b, c, d]: src.
Value throughHeadExpand(Value value) {
  auto expand = value.getDefiningOp<tensor::ExpandShapeOp>();
  if (!expand || expand.getResultType().getRank() != 4)
    return {};
  SmallVector<ReassociationIndices> groups = expand.getReassociationIndices();
  if (groups.size() != 3 || groups[0] != ReassociationIndices{0, 1} ||
      groups[1] != ReassociationIndices{2} || groups[2] != ReassociationIndices{3})
    return {};
  return expand.getSrc();
}

/// The single op of `generic`'s body before the yield, of type OpTy, whose
/// result is yielded; null otherwise.
template <typename OpTy> OpTy yieldedOp(linalg::GenericOp generic) {
  Block &body = generic.getRegion().front();
  auto yield = cast<linalg::YieldOp>(body.getTerminator());
  if (yield.getNumOperands() != 1)
    return {};
  return yield.getOperand(0).getDefiningOp<OpTy>();
}

bool isIdentity4(linalg::GenericOp generic, OpOperand *operand) {
  AffineMap map = generic.getMatchingIndexingMap(operand);
  return map.isIdentity() && map.getNumDims() == 4;
}

/// (d0, d1, d2, d3) -> (d0, d1, d2): the row of a reduction over the last dim.
bool isRowMap(AffineMap map) {
  return map.getNumDims() == 4 && map.getNumResults() == 3 && map.isProjectedPermutation() &&
         map.getDimPosition(0) == 0 && map.getDimPosition(1) == 1 && map.getDimPosition(2) == 2;
}

/// A 4-D generic over [B, H, T, S] with one identity-mapped input, reducing
/// the last dim into a row-mapped init that is a fill of `initValue`; its
/// body combines `out` and f(in) with Combine. Returns the input.
template <typename Combine>
Value matchRowReduction(Value result, double initValue, bool expOfInput) {
  auto generic = result.getDefiningOp<linalg::GenericOp>();
  if (!generic || generic.getNumDpsInputs() != 1 || generic.getNumDpsInits() != 1 ||
      generic.getNumLoops() != 4 || generic.getNumReductionLoops() != 1 ||
      generic.getIteratorTypesArray()[3] != utils::IteratorType::reduction)
    return {};
  if (!isIdentity4(generic, generic.getDpsInputOperand(0)) ||
      !isRowMap(generic.getMatchingIndexingMap(generic.getDpsInitOperand(0))))
    return {};
  auto fill = generic.getDpsInits()[0].getDefiningOp<linalg::FillOp>();
  FloatAttr init;
  if (!fill || !matchPattern(fill.getInputs()[0], m_Constant(&init)) ||
      init.getValueAsDouble() != initValue)
    return {};
  auto combine = yieldedOp<Combine>(generic);
  if (!combine)
    return {};
  Block &body = generic.getRegion().front();
  Value in = body.getArgument(0), out = body.getArgument(1);
  Value other;
  if (combine->getOperand(0) == out)
    other = combine->getOperand(1);
  else if (combine->getOperand(1) == out)
    other = combine->getOperand(0);
  else
    return {};
  if (expOfInput) {
    auto exp = other.getDefiningOp<math::ExpOp>();
    if (!exp || exp.getOperand() != in)
      return {};
  } else if (other != in) {
    return {};
  }
  return generic.getDpsInputs()[0];
}

/// What a K or V operand reads: `source` [B, KH, S, D], query head h reading
/// head h / group, keys [0, dim 2 of the operand).
struct KeyValueSource {
  Value source;
  int64_t group = 1;
};

/// One gather level: an input-less 4-D generic yielding
/// tensor.extract %src[i0, i1 / g (or i1), i2, i3] (i0 may be constant 0 for
/// a batch of 1). Returns the source and g.
std::optional<KeyValueSource> matchHeadOrPrefixGather(Value value) {
  auto generic = value.getDefiningOp<linalg::GenericOp>();
  if (!generic || generic.getNumDpsInputs() != 0 || generic.getNumDpsInits() != 1 ||
      generic.getNumLoops() != 4 || generic.getNumReductionLoops() != 0 ||
      !generic.getIndexingMapsArray()[0].isIdentity())
    return std::nullopt;
  auto extract = yieldedOp<tensor::ExtractOp>(generic);
  if (!extract || extract.getIndices().size() != 4)
    return std::nullopt;
  Value source = extract.getTensor();
  if (source.getParentRegion() == &generic.getRegion())
    return std::nullopt;
  auto sourceType = cast<RankedTensorType>(source.getType());
  auto resultType = cast<RankedTensorType>(value.getType());
  auto isIndex = [](Value v, int64_t dim) {
    auto index = v.getDefiningOp<linalg::IndexOp>();
    return index && index.getDim() == static_cast<uint64_t>(dim);
  };
  ValueRange indices = extract.getIndices();
  bool batchOk = isIndex(indices[0], 0) ||
                 (matchPattern(indices[0], m_Zero()) && sourceType.getDimSize(0) == 1 &&
                  resultType.getDimSize(0) == 1);
  if (!batchOk || !isIndex(indices[2], 2) || !isIndex(indices[3], 3))
    return std::nullopt;
  KeyValueSource result{source, 1};
  if (!isIndex(indices[1], 1)) {
    auto div = indices[1].getDefiningOp<arith::DivUIOp>();
    APInt group;
    if (!div || !isIndex(div.getLhs(), 1) || !matchPattern(div.getRhs(), m_ConstantInt(&group)) ||
        group.getSExtValue() < 1)
      return std::nullopt;
    result.group = group.getSExtValue();
  }
  return result;
}

/// Follows prefix / head gathers and prefix extract_slices back to the
/// tensor they read.
KeyValueSource resolveKeyValue(Value value) {
  KeyValueSource result{value, 1};
  while (true) {
    if (auto gathered = matchHeadOrPrefixGather(result.source)) {
      result.source = gathered->source;
      result.group *= gathered->group;
      continue;
    }
    if (auto slice = result.source.getDefiningOp<tensor::ExtractSliceOp>()) {
      auto srcType = slice.getSourceType();
      if (slice.getResultType().getRank() == 4 && srcType.getRank() == 4 &&
          llvm::all_of(slice.getMixedOffsets(), isZeroInteger) &&
          llvm::all_of(slice.getMixedStrides(), [](OpFoldResult s) { return isOneInteger(s); })) {
        SmallVector<OpFoldResult> sizes = slice.getMixedSizes();
        bool prefixOnly = true;
        for (int64_t dim : {0, 1, 3}) {
          std::optional<int64_t> size = getConstantIntValue(sizes[dim]);
          prefixOnly &= size && !srcType.isDynamicDim(dim) && *size == srcType.getDimSize(dim);
        }
        if (prefixOnly) {
          result.source = slice.getSource();
          continue;
        }
      }
    }
    return result;
  }
}

/// The value of `v`, a scalar in `generic`'s body: a float constant, a
/// block argument reading a 0-d (or splat) constant tensor input through a
/// map with no results, or an extf / truncf of one of those.
std::optional<double> constantScalar(linalg::GenericOp generic, Value v) {
  FloatAttr attr;
  if (matchPattern(v, m_Constant(&attr)))
    return attr.getValueAsDouble();
  if (auto trunc = v.getDefiningOp<arith::TruncFOp>())
    return constantScalar(generic, trunc.getIn());
  if (auto ext = v.getDefiningOp<arith::ExtFOp>())
    return constantScalar(generic, ext.getIn());
  auto arg = dyn_cast<BlockArgument>(v);
  if (!arg || arg.getOwner() != &generic.getRegion().front() ||
      arg.getArgNumber() >= generic.getNumDpsInputs())
    return std::nullopt;
  OpOperand *input = generic.getDpsInputOperand(arg.getArgNumber());
  DenseElementsAttr dense;
  if (generic.getMatchingIndexingMap(input).getNumResults() != 0 ||
      !matchPattern(input->get(), m_Constant(&dense)) || !dense.isSplat() ||
      !isa<FloatType>(dense.getElementType()))
    return std::nullopt;
  return dense.getSplatValue<APFloat>().convertToDouble();
}

/// Canonicalization composes `k.transpose(1, 2)` (heads out of [B, S, H, D])
/// and `.transpose(2, 3)` (kᵀ) into one [0, 2, 3, 1] transpose, as
/// nn.MultiheadAttention's import has it. Where such a transpose feeds a
/// batch_matmul's right-hand side it is split back into the two, so the
/// match sees kᵀ of a [B, H, S, D] key; unfused, fusion composes them again.
void splitComposedKeyTransposes(ModuleOp module) {
  SmallVector<linalg::TransposeOp> composed;
  module.walk([&](linalg::TransposeOp t) {
    if (t.getPermutation() != ArrayRef<int64_t>{0, 2, 3, 1} || !t->hasOneUse())
      return;
    auto collapse = dyn_cast<tensor::CollapseShapeOp>(*t->getUsers().begin());
    if (collapse && collapse->hasOneUse() &&
        isa<linalg::BatchMatmulOp>(*collapse->getUsers().begin()))
      composed.push_back(t);
  });
  for (linalg::TransposeOp t : composed) {
    OpBuilder b(t);
    Location loc = t.getLoc();
    auto inType = cast<RankedTensorType>(t.getInput().getType());
    SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(b, loc, t.getInput());
    SmallVector<OpFoldResult> headsFirst{sizes[0], sizes[2], sizes[1], sizes[3]};
    Value empty = tensor::EmptyOp::create(b, loc, headsFirst, inType.getElementType());
    Value keys = linalg::TransposeOp::create(b, loc, t.getInput(), empty,
                                             ArrayRef<int64_t>{0, 2, 1, 3})
                     ->getResult(0);
    auto kt = linalg::TransposeOp::create(b, loc, keys, t.getInit(),
                                          ArrayRef<int64_t>{0, 1, 3, 2});
    t->replaceAllUsesWith(kt->getResults());
    t->erase();
  }
}

/// One match of the pattern (see the file comment).
struct AttentionMatch {
  linalg::BatchMatmulOp output;
  Value query, key, value, keyOperand, mask;
  /// When the query reaches the matmul collapsed from another shape (the
  /// importer's rotary embedding leaves [B, H, T, D/2, 2]): the flat
  /// [B*H, T, D] query and B, H to expand it with.
  Value flatQuery;
  int64_t batch = 0, heads = 0;
  double scale = 1.0;
  int64_t group = 1;
};

std::optional<AttentionMatch> matchAttention(linalg::BatchMatmulOp pv) {
  AttentionMatch m;
  m.output = pv;
  Value probs = throughHeadCollapse(pv.getDpsInputs()[0]);
  Value vx = throughHeadCollapse(pv.getDpsInputs()[1]);
  if (!probs || !vx)
    return std::nullopt;
  // P = exp(E) / sum
  auto normalize = probs.getDefiningOp<linalg::GenericOp>();
  if (!normalize || normalize.getNumDpsInputs() != 2 || normalize.getNumReductionLoops() != 0 ||
      normalize.getNumLoops() != 4 || !isIdentity4(normalize, normalize.getDpsInputOperand(0)) ||
      !isRowMap(normalize.getMatchingIndexingMap(normalize.getDpsInputOperand(1))))
    return std::nullopt;
  {
    auto div = yieldedOp<arith::DivFOp>(normalize);
    Block &body = normalize.getRegion().front();
    auto exp = div ? div.getLhs().getDefiningOp<math::ExpOp>() : math::ExpOp();
    if (!div || !exp || exp.getOperand() != body.getArgument(0) ||
        div.getRhs() != body.getArgument(1))
      return std::nullopt;
  }
  Value shifted = normalize.getDpsInputs()[0];
  Value sum = normalize.getDpsInputs()[1];
  if (matchRowReduction<arith::AddFOp>(sum, 0.0, /*expOfInput=*/true) != shifted)
    return std::nullopt;
  // E = S - max
  auto subtract = shifted.getDefiningOp<linalg::GenericOp>();
  if (!subtract || subtract.getNumDpsInputs() != 2 || subtract.getNumReductionLoops() != 0 ||
      subtract.getNumLoops() != 4 || !isIdentity4(subtract, subtract.getDpsInputOperand(0)) ||
      !isRowMap(subtract.getMatchingIndexingMap(subtract.getDpsInputOperand(1))))
    return std::nullopt;
  {
    auto sub = yieldedOp<arith::SubFOp>(subtract);
    Block &body = subtract.getRegion().front();
    if (!sub || sub.getLhs() != body.getArgument(0) || sub.getRhs() != body.getArgument(1))
      return std::nullopt;
  }
  Value scores = subtract.getDpsInputs()[0];
  Value rowMax = subtract.getDpsInputs()[1];
  Value maxInput = matchRowReduction<arith::MaximumFOp>(rowMax, -INFINITY, false);
  if (!maxInput)
    maxInput = matchRowReduction<arith::MaxNumFOp>(rowMax, -INFINITY, false);
  if (maxInput != scores)
    return std::nullopt;
  // S = X + mask (optional): mask [T, L] read at (d2, d3).
  Value x = scores;
  if (auto add = scores.getDefiningOp<linalg::GenericOp>();
      add && add.getNumDpsInputs() == 2 && add.getNumReductionLoops() == 0 &&
      add.getNumLoops() == 4 && yieldedOp<arith::AddFOp>(add)) {
    auto addf = yieldedOp<arith::AddFOp>(add);
    Block &body = add.getRegion().front();
    if (!((addf.getLhs() == body.getArgument(0) && addf.getRhs() == body.getArgument(1)) ||
          (addf.getLhs() == body.getArgument(1) && addf.getRhs() == body.getArgument(0))))
      return std::nullopt;
    MLIRContext *ctx = add.getContext();
    AffineMap maskMap = AffineMap::get(
        4, 0, {getAffineDimExpr(2, ctx), getAffineDimExpr(3, ctx)}, ctx);
    for (int i = 0; i < 2; ++i) {
      OpOperand *candidate = add.getDpsInputOperand(i);
      OpOperand *other = add.getDpsInputOperand(1 - i);
      if (add.getMatchingIndexingMap(candidate) == maskMap && isIdentity4(add, other) &&
          cast<RankedTensorType>(candidate->get().getType()).getRank() == 2) {
        m.mask = candidate->get();
        x = other->get();
        break;
      }
    }
    if (!m.mask)
      return std::nullopt; // An addition of something else: not this pattern.
    // A splat mask adds one value to every score: softmax does not see it
    // (a finite one), or it drops every key (-inf: left to the unfused form).
    DenseElementsAttr splat;
    if (matchPattern(m.mask, m_Constant(&splat)) && splat.isSplat()) {
      if (!std::isfinite(splat.getSplatValue<APFloat>().convertToDouble()))
        return std::nullopt;
      m.mask = Value();
    }
  }
  // X = Y * c or Y / c (optional); c a constant scalar, or a 0-d constant
  // tensor input (torch.jit.trace's f64 scalar, truncated in the body).
  Value y = x;
  if (auto scale = x.getDefiningOp<linalg::GenericOp>();
      scale && scale.getNumDpsInputs() >= 1 && scale.getNumReductionLoops() == 0 &&
      scale.getNumLoops() == 4) {
    OpOperand *data = nullptr;
    for (OpOperand *input : scale.getDpsInputOperands())
      if (isIdentity4(scale, input))
        data = data ? nullptr : input; // exactly one identity-mapped input
    if (!data)
      return std::nullopt;
    Block &body = scale.getRegion().front();
    Value in = body.getArgument(data->getOperandNumber());
    std::optional<double> c;
    if (auto mul = yieldedOp<arith::MulFOp>(scale)) {
      Value other = mul.getLhs() == in ? mul.getRhs() : mul.getRhs() == in ? mul.getLhs() : Value();
      c = other ? constantScalar(scale, other) : std::nullopt;
    } else if (auto div = yieldedOp<arith::DivFOp>(scale)) {
      if (div.getLhs() == in)
        if ((c = constantScalar(scale, div.getRhs())) && *c != 0.0)
          c = 1.0 / *c;
    }
    if (!c)
      return std::nullopt;
    m.scale = *c;
    y = data->get();
  }
  // Y = expand(batch_matmul(collapse(Q), collapse(transpose(Kx)))).
  Value qkFlat = throughHeadExpand(y);
  auto qk = qkFlat ? qkFlat.getDefiningOp<linalg::BatchMatmulOp>() : linalg::BatchMatmulOp();
  if (!qk || !qk->hasOneUse() ||
      !llvm::all_of(qk.getDpsInits(), [](Value init) {
        auto fill = init.getDefiningOp<linalg::FillOp>();
        return fill && matchPattern(fill.getInputs()[0], m_AnyZeroFloat());
      }))
    return std::nullopt;
  // The output matmul accumulates into zeros too.
  auto pvFill = pv.getDpsInits()[0].getDefiningOp<linalg::FillOp>();
  if (!pvFill || !matchPattern(pvFill.getInputs()[0], m_AnyZeroFloat()))
    return std::nullopt;
  m.query = throughHeadCollapse(qk.getDpsInputs()[0]);
  if (!m.query) {
    auto scoresType = cast<RankedTensorType>(y.getType());
    auto flatType = cast<RankedTensorType>(qk.getDpsInputs()[0].getType());
    if (scoresType.isDynamicDim(0) || scoresType.isDynamicDim(1) || flatType.isDynamicDim(0))
      return std::nullopt;
    m.flatQuery = qk.getDpsInputs()[0];
    m.batch = scoresType.getDimSize(0);
    m.heads = scoresType.getDimSize(1);
    SmallVector<int64_t> shape{m.batch, m.heads, flatType.getDimSize(1), flatType.getDimSize(2)};
    m.query = m.flatQuery; // typed below through `shape`
    if (flatType.getElementType() != Float32Type::get(flatType.getContext()))
      return std::nullopt;
  }
  Value kt = throughHeadCollapse(qk.getDpsInputs()[1]);
  auto transpose = kt ? kt.getDefiningOp<linalg::TransposeOp>() : linalg::TransposeOp();
  if (!transpose || transpose.getPermutation() != ArrayRef<int64_t>{0, 1, 3, 2})
    return std::nullopt;
  Value kx = transpose.getInput();
  KeyValueSource key = resolveKeyValue(kx), value = resolveKeyValue(vx);
  if (key.group != value.group)
    return std::nullopt;
  for (Value t : {m.query, key.source, value.source})
    if (!cast<RankedTensorType>(t.getType()).getElementType().isF32())
      return std::nullopt;
  auto qType = cast<RankedTensorType>(m.query.getType());
  if (m.flatQuery) {
    auto flat = cast<RankedTensorType>(m.flatQuery.getType());
    qType = RankedTensorType::get({m.batch, m.heads, flat.getDimSize(1), flat.getDimSize(2)},
                                  flat.getElementType());
  }
  auto kType = cast<RankedTensorType>(key.source.getType());
  auto vType = cast<RankedTensorType>(value.source.getType());
  // Heads: H = KH * group, static; head_dim static (the vector width).
  if (qType.isDynamicDim(1) || kType.isDynamicDim(1) ||
      qType.getDimSize(1) != kType.getDimSize(1) * key.group)
    return std::nullopt;
  if (qType.isDynamicDim(3) || kType.getDimSize(3) != qType.getDimSize(3) ||
      vType.getDimSize(3) != qType.getDimSize(3) || kType.getShape() != vType.getShape())
    return std::nullopt;
  m.key = key.source;
  m.value = value.source;
  m.keyOperand = kx;
  m.group = key.group;
  return m;
}

/// Dim `dim` of `value` on the host, read from where its shape comes from
/// (a destination's tensor.empty, a slice's sizes) rather than from `value`,
/// so that the gathers producing it die.
Value hostDim(OpBuilder &b, Location loc, Value value, int64_t dim) {
  auto type = cast<RankedTensorType>(value.getType());
  if (!type.isDynamicDim(dim))
    return arith::ConstantIndexOp::create(b, loc, type.getDimSize(dim));
  if (auto empty = value.getDefiningOp<tensor::EmptyOp>())
    return empty.getDynamicSize(dim);
  if (auto slice = value.getDefiningOp<tensor::ExtractSliceOp>())
    if (slice.getResultType().getRank() == type.getRank())
      if (auto size = dyn_cast<Value>(slice.getMixedSizes()[dim]))
        return size;
  if (auto dps = value.getDefiningOp<DestinationStyleOpInterface>())
    return hostDim(b, loc, dps.getTiedOpOperand(cast<OpResult>(value))->get(), dim);
  return tensor::DimOp::create(b, loc, value, dim);
}

void rewrite(const AttentionMatch &m) {
  linalg::BatchMatmulOp pv = m.output;
  OpBuilder b(pv);
  Location loc = pv.getLoc();
  Value query = m.query;
  if (m.flatQuery) {
    auto flat = cast<RankedTensorType>(m.flatQuery.getType());
    SmallVector<OpFoldResult> shape{b.getIndexAttr(m.batch), b.getIndexAttr(m.heads)};
    shape.push_back(flat.isDynamicDim(1) ? OpFoldResult(tensor::DimOp::create(b, loc, m.flatQuery, 1).getResult())
                                         : OpFoldResult(b.getIndexAttr(flat.getDimSize(1))));
    shape.push_back(b.getIndexAttr(flat.getDimSize(2)));
    auto type = RankedTensorType::get({m.batch, m.heads, flat.getDimSize(1), flat.getDimSize(2)},
                                      flat.getElementType());
    query = tensor::ExpandShapeOp::create(b, loc, type, m.flatQuery,
                                          SmallVector<ReassociationIndices>{{0, 1}, {2}, {3}},
                                          shape);
  }
  Value keyLength = hostDim(b, loc, m.keyOperand, 2);
  SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(b, loc, query);
  Value init = tensor::EmptyOp::create(b, loc, sizes, b.getF32Type());
  auto attention =
      AttentionOp::create(b, loc, init.getType(), query, m.key, m.value, keyLength, init,
                          m.mask, b.getF32FloatAttr(static_cast<float>(m.scale)));
  Value flat = tensor::CollapseShapeOp::create(
      b, loc, pv.getResult(0).getType(), attention.getResult(),
      SmallVector<ReassociationIndices>{{0, 1}, {2}, {3}});
  pv.getResult(0).replaceAllUsesWith(flat);
  pv.erase();
}

struct FuseAttentionPass : impl::FuseAttentionBase<FuseAttentionPass> {
  void runOnOperation() override {
    splitComposedKeyTransposes(getOperation());
    SmallVector<AttentionMatch> matches;
    getOperation().walk([&](linalg::BatchMatmulOp pv) {
      if (std::optional<AttentionMatch> m = matchAttention(pv))
        matches.push_back(*m);
    });
    llvm::SetVector<Block *> blocks;
    for (const AttentionMatch &m : matches) {
      blocks.insert(m.output->getBlock());
      rewrite(m);
    }
    // What only fed the matched ops (matmuls, softmax, gathers) is dead now.
    for (Block *block : blocks) {
      bool erased = true;
      while (erased) {
        erased = false;
        for (Operation &op : llvm::make_early_inc_range(llvm::reverse(*block)))
          if (isOpTriviallyDead(&op)) {
            op.erase();
            erased = true;
          }
      }
    }
  }
};

} // namespace

} // namespace turbine::compiler
