//===- LowerPads.cpp - tensor.pad as a gathering linalg.generic -----------===//
//
// Frontends pad with upstream tensor.pad (ONNX Conv/pool pads and Pad,
// TOSA's tosa-to-linalg). Global-opt first lets layout rewrites see the pads
// (ChannelsLastConvolutions.cpp moves a pad to the other side of a
// transpose), then turns every tensor.pad with a constant padding value into
// one linalg.generic over the padded shape: element i reads the source at
// clamp(i - low) and selects the padding value outside. Dispatch formation
// and codegen handle that like any gathering generic.
//===----------------------------------------------------------------------===//
#include "global-opt/LowerPads.h"

#include "turbine/compiler/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"

using namespace mlir;

namespace turbine::compiler {

#define GEN_PASS_DEF_LOWERPADS
#include "turbine/compiler/Passes.h.inc"
FailureOr<Value> lowerPad(IRRewriter &rewriter, tensor::PadOp pad) {
  Value padValue = pad.getConstantPaddingValue();
  if (!padValue)
    return pad.emitError("tensor.pad whose padding value is not constant");
  rewriter.setInsertionPoint(pad);
  Location loc = pad.getLoc();
  Value source = pad.getSource();
  auto type = cast<RankedTensorType>(pad.getResultType());
  int64_t rank = type.getRank();
  SmallVector<OpFoldResult> low = pad.getMixedLowPad(), high = pad.getMixedHighPad();
  SmallVector<OpFoldResult> sizes;
  SmallVector<Value> sourceSizes, lowValues;
  for (int64_t d = 0; d < rank; ++d) {
    lowValues.push_back(getValueOrCreateConstantIndexOp(rewriter, loc, low[d]));
    sourceSizes.push_back(getValueOrCreateConstantIndexOp(
        rewriter, loc, tensor::getMixedSize(rewriter, loc, source, d)));
    if (!type.isDynamicDim(d)) {
      sizes.push_back(rewriter.getIndexAttr(type.getDimSize(d)));
      continue;
    }
    Value highValue = getValueOrCreateConstantIndexOp(rewriter, loc, high[d]);
    Value grown = arith::AddIOp::create(rewriter, loc, sourceSizes[d], lowValues[d]);
    sizes.push_back(arith::AddIOp::create(rewriter, loc, grown, highValue).getResult());
  }
  Value init = tensor::EmptyOp::create(rewriter, loc, sizes, type.getElementType());
  SmallVector<AffineMap> maps{rewriter.getMultiDimIdentityMap(rank)};
  SmallVector<utils::IteratorType> iterators(rank, utils::IteratorType::parallel);
  auto padded = [&](int64_t d) {
    return !isConstantIntValue(low[d], 0) || !isConstantIntValue(high[d], 0);
  };
  auto generic = linalg::GenericOp::create(
      rewriter, loc, TypeRange{type}, ValueRange{}, ValueRange{init}, maps, iterators,
      [&](OpBuilder &b, Location l, ValueRange) {
        SmallVector<Value> indices;
        Value inside;
        Value zero = arith::ConstantIndexOp::create(b, l, 0);
        Value one = arith::ConstantIndexOp::create(b, l, 1);
        for (int64_t d = 0; d < rank; ++d) {
          Value i = linalg::IndexOp::create(b, l, d);
          if (!padded(d)) {
            indices.push_back(i);
            continue;
          }
          Value shifted = arith::SubIOp::create(b, l, i, lowValues[d]);
          Value geZero = arith::CmpIOp::create(b, l, arith::CmpIPredicate::sge, shifted, zero);
          Value ltSize =
              arith::CmpIOp::create(b, l, arith::CmpIPredicate::slt, shifted, sourceSizes[d]);
          Value ok = arith::AndIOp::create(b, l, geZero, ltSize);
          inside = inside ? arith::AndIOp::create(b, l, inside, ok).getResult() : ok;
          Value last = arith::SubIOp::create(b, l, sourceSizes[d], one);
          indices.push_back(arith::MinSIOp::create(
              b, l, arith::MaxSIOp::create(b, l, shifted, zero), last));
        }
        Value v = tensor::ExtractOp::create(b, l, source, indices);
        if (inside)
          v = arith::SelectOp::create(b, l, inside, v, padValue);
        linalg::YieldOp::create(b, l, v);
      });
  rewriter.replaceOp(pad, generic.getResult(0));
  return generic.getResult(0);
}


bool isPadGather(Operation *op) {
  auto generic = dyn_cast<linalg::GenericOp>(op);
  if (!generic || generic.getNumDpsInputs() != 0 || generic.getNumDpsInits() != 1)
    return false;
  auto yield = cast<linalg::YieldOp>(generic.getBody()->getTerminator());
  auto select = yield.getOperand(0).getDefiningOp<arith::SelectOp>();
  if (!select || !select.getTrueValue().getDefiningOp<tensor::ExtractOp>())
    return false;
  Operation *padValue = select.getFalseValue().getDefiningOp();
  return !padValue || !generic.getBody()->findAncestorOpInBlock(*padValue);
}

namespace {

/// `value` is `linalg.index dim` (inside the gather's body).
bool isLoopIndex(Value value, int64_t dim) {
  auto index = value.getDefiningOp<linalg::IndexOp>();
  return index && static_cast<int64_t>(index.getDim()) == dim;
}

/// Index `value` of an unpadded dim: the loop index, or 0 where both
/// extents are 1 (canonicalization folds a unit loop's index).
bool isUnpaddedIndex(Value value, int64_t dim, RankedTensorType source,
                     RankedTensorType result) {
  if (isLoopIndex(value, dim))
    return true;
  APInt c;
  return matchPattern(value, m_ConstantInt(&c)) && c.isZero() &&
         source.getDimSize(dim) == 1 && result.getDimSize(dim) == 1;
}

/// Collects the leaves of a tree of arith.andi.
void collectConjuncts(Value value, SmallVectorImpl<Value> &leaves) {
  if (auto andOp = value.getDefiningOp<arith::AndIOp>()) {
    collectConjuncts(andOp.getLhs(), leaves);
    collectConjuncts(andOp.getRhs(), leaves);
    return;
  }
  leaves.push_back(value);
}

/// `value` is `cmpi predicate, lhs, constant c`: returns c.
std::optional<int64_t> comparedWithConstant(Value value, arith::CmpIPredicate predicate,
                                            Value lhs) {
  auto cmp = value.getDefiningOp<arith::CmpIOp>();
  APInt c;
  if (!cmp || cmp.getPredicate() != predicate || cmp.getLhs() != lhs ||
      !matchPattern(cmp.getRhs(), m_ConstantInt(&c)))
    return std::nullopt;
  return c.getSExtValue();
}

} // namespace

std::optional<PadGatherInfo> matchPadGather(Operation *op) {
  if (!isPadGather(op))
    return std::nullopt;
  auto generic = cast<linalg::GenericOp>(op);
  auto yield = cast<linalg::YieldOp>(generic.getBody()->getTerminator());
  auto select = yield.getOperand(0).getDefiningOp<arith::SelectOp>();
  auto extract = select.getTrueValue().getDefiningOp<tensor::ExtractOp>();
  auto sourceType = cast<RankedTensorType>(extract.getTensor().getType());
  auto resultType = cast<RankedTensorType>(generic.getResult(0).getType());
  int64_t rank = resultType.getRank();
  if (sourceType.getRank() != rank || extract.getIndices().size() != static_cast<size_t>(rank))
    return std::nullopt;
  PadGatherInfo info;
  info.source = extract.getTensor();
  info.padValue = select.getFalseValue();
  SmallVector<Value> expectedConjuncts;
  for (int64_t d = 0; d < rank; ++d) {
    Value index = extract.getIndices()[d];
    if (isUnpaddedIndex(index, d, sourceType, resultType)) {
      info.low.push_back(0);
      info.high.push_back(0);
      continue;
    }
    // minsi(maxsi(shifted, 0), size - 1) with shifted = i - low (or i).
    if (sourceType.isDynamicDim(d) || resultType.isDynamicDim(d))
      return std::nullopt;
    int64_t size = sourceType.getDimSize(d);
    auto min = index.getDefiningOp<arith::MinSIOp>();
    auto max = min ? min.getLhs().getDefiningOp<arith::MaxSIOp>() : arith::MaxSIOp();
    APInt last, zero;
    if (!max || !matchPattern(min.getRhs(), m_ConstantInt(&last)) ||
        last.getSExtValue() != size - 1 || !matchPattern(max.getRhs(), m_ConstantInt(&zero)) ||
        !zero.isZero())
      return std::nullopt;
    Value shifted = max.getLhs();
    int64_t low = 0;
    if (auto sub = shifted.getDefiningOp<arith::SubIOp>()) {
      APInt c;
      if (!isLoopIndex(sub.getLhs(), d) || !matchPattern(sub.getRhs(), m_ConstantInt(&c)))
        return std::nullopt;
      low = c.getSExtValue();
    } else if (!isLoopIndex(shifted, d)) {
      return std::nullopt;
    }
    int64_t high = resultType.getDimSize(d) - size - low;
    if (low < 0 || high < 0)
      return std::nullopt;
    info.low.push_back(low);
    info.high.push_back(high);
    expectedConjuncts.push_back(shifted);
  }
  // The select's condition: shifted >= 0 and shifted < size for exactly the
  // padded dims.
  SmallVector<Value> conjuncts;
  collectConjuncts(select.getCondition(), conjuncts);
  if (conjuncts.size() != 2 * expectedConjuncts.size())
    return std::nullopt;
  int64_t padded = 0;
  for (int64_t d = 0; d < rank; ++d) {
    if (isUnpaddedIndex(extract.getIndices()[d], d, sourceType, resultType))
      continue;
    Value shifted = expectedConjuncts[padded++];
    bool lowerBound = false, upperBound = false;
    for (Value c : conjuncts) {
      if (std::optional<int64_t> v = comparedWithConstant(c, arith::CmpIPredicate::sge, shifted))
        lowerBound |= *v == 0;
      if (std::optional<int64_t> v = comparedWithConstant(c, arith::CmpIPredicate::slt, shifted))
        upperBound |= *v == sourceType.getDimSize(d);
    }
    if (!lowerBound || !upperBound)
      return std::nullopt;
  }
  return info;
}

namespace {

struct LowerPadsPass : impl::LowerPadsBase<LowerPadsPass> {
  void runOnOperation() override {
    SmallVector<tensor::PadOp> pads;
    getOperation().walk([&](tensor::PadOp pad) { pads.push_back(pad); });
    IRRewriter rewriter(&getContext());
    for (tensor::PadOp pad : pads)
      if (failed(lowerPad(rewriter, pad)))
        return signalPassFailure();
  }
};

} // namespace

} // namespace turbine::compiler
