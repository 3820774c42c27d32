//===- ClampedMaxPooling.cpp - Padded max pooling without its pad ---------===//
//
// A padded max pooling (ResNet's 3x3/2 stem pooling) reaches codegen as a
// pad gather (LowerPads.cpp) fused into the pooling's kernel. Tiled as it
// is, every workgroup tile first fills a padded scratch copy of its input
// window (index clamps, a select and a store per element), then pools that.
//
// A max over a window is unchanged by repeating an element of the window.
// With dilation 1 a window is a contiguous range, so where it overlaps the
// source, clamping an index that falls in the padding to the source's edge
// gives an element that is in the window too. So if the pad value is the
// pooling's initial value (it is: both the lowest float, or -inf) and every
// window overlaps the source, pooling the padded tensor equals
//   out[n, oh, ow, c] = max(init, max over kh, kw of
//       source[n, clamp(oh*sh + kh - ph), clamp(ow*sw + kw - pw), c])
// exactly, NaN and -inf included. That generic reads the source directly:
// tiled by one pixel and up to 32 channels, with the window loops tiled by
// 1, the vectorizer reads each window element as one contiguous channel
// vector (the clamps are scalar index arithmetic, once per pixel and
// window position) and the accumulator stays in registers.
//===----------------------------------------------------------------------===//
#include "targets/cpu/ClampedMaxPooling.h"
#include "global-opt/LowerPads.h"
#include "targets/cpu/GatherIndexing.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/Matchers.h"

#include <optional>

using namespace mlir;

namespace turbine::compiler {
namespace {

constexpr llvm::StringLiteral kClampedMaxPoolingMarker = "turbine.clamped_max_pooling";

/// The float constant `v` is, if it is one.
std::optional<APFloat> floatConstant(Value v) {
  APFloat value(0.0f);
  if (!v || !matchPattern(v, m_ConstantFloat(&value)))
    return std::nullopt;
  return value;
}

struct PaddedPooling {
  Value source;           // The unpadded NHWC tensor.
  int64_t padH = 0, padW = 0; // Low pads.
};

/// `pool`'s input as a pad gather of an NHWC source padded in H and W only,
/// with `pool`'s initial value, where every window overlaps the source.
std::optional<PaddedPooling> matchPaddedPooling(linalg::PoolingNhwcMaxOp pool) {
  if (!pool.hasPureTensorSemantics())
    return std::nullopt;
  Value padded = pool.getInputs()[0];
  auto gather = padded.getDefiningOp<linalg::GenericOp>();
  if (!gather || !isPadGather(gather) || !padded.hasOneUse() ||
      !gather.getIndexingMapsArray()[0].isIdentity())
    return std::nullopt;
  auto yield = cast<linalg::YieldOp>(gather.getBody()->getTerminator());
  auto select = yield.getOperand(0).getDefiningOp<arith::SelectOp>();
  auto extract = select.getTrueValue().getDefiningOp<tensor::ExtractOp>();
  // The pad value must be the pooling's initial value.
  auto fill = pool.getOutputs()[0].getDefiningOp<linalg::FillOp>();
  std::optional<APFloat> padValue = floatConstant(select.getFalseValue());
  std::optional<APFloat> initValue = fill ? floatConstant(fill.value()) : std::nullopt;
  if (!padValue || !initValue || !padValue->bitwiseIsEqual(*initValue))
    return std::nullopt;
  auto sourceType = dyn_cast<RankedTensorType>(extract.getTensor().getType());
  auto outType = dyn_cast<RankedTensorType>(pool.getResultTypes()[0]);
  if (!sourceType || sourceType.getRank() != 4 || !outType)
    return std::nullopt;
  // Source dim d read at loop d, shifted by lows[d]; batch and channels not
  // padded (a pad gather of such a dim would select the pad value for some
  // of its elements).
  SmallVector<int64_t> lows;
  for (auto [dim, index] : llvm::enumerate(extract.getIndices())) {
    // A unit dim's index folds to the constant 0 (a static batch of 1);
    // so does a unit dim's clamp when that dim is padded, which this
    // rewrite does not handle (the padded dim must be a unit dim too).
    if (sourceType.getDimSize(dim) == 1 && matchPattern(index, m_Zero()) &&
        cast<RankedTensorType>(padded.getType()).getDimSize(dim) == 1) {
      lows.push_back(0);
      continue;
    }
    std::optional<PadGatherIndex> read = matchPadGatherIndex(index);
    if (!read || read->loop != static_cast<int64_t>(dim) ||
        ((dim == 0 || dim == 3) && read->clamped))
      return std::nullopt;
    lows.push_back(read->low);
  }
  auto window = cast<RankedTensorType>(pool.getInputs()[1].getType());
  for (int axis = 0; axis < 2; ++axis) {
    if (pool.getDilations().getValues<int64_t>()[axis] != 1)
      return std::nullopt;
    int64_t size = sourceType.getDimSize(1 + axis), out = outType.getDimSize(1 + axis);
    int64_t kernel = window.getDimSize(axis), stride = pool.getStrides().getValues<int64_t>()[axis];
    int64_t low = lows[1 + axis];
    if (ShapedType::isDynamic(size) || ShapedType::isDynamic(out) ||
        ShapedType::isDynamic(kernel) || low < 0)
      return std::nullopt;
    // The first window must end at or after the source's start, the last
    // one start at or before its end.
    if (kernel - 1 - low < 0 || (out - 1) * stride - low > size - 1)
      return std::nullopt;
  }
  return PaddedPooling{extract.getTensor(), lows[1], lows[2]};
}

/// Replaces `pool` (matched as `padded`) by the clamped-window generic.
void rewriteToClampedWindow(RewriterBase &rewriter, linalg::PoolingNhwcMaxOp pool,
                            const PaddedPooling &padded) {
  Location loc = pool.getLoc();
  MLIRContext *ctx = pool.getContext();
  auto sourceType = cast<RankedTensorType>(padded.source.getType());
  int64_t strides[2] = {pool.getStrides().getValues<int64_t>()[0],
                        pool.getStrides().getValues<int64_t>()[1]};
  int64_t lows[2] = {padded.padH, padded.padW};
  AffineExpr d0, d1, d2, d3, d4, d5;
  bindDims(ctx, d0, d1, d2, d3, d4, d5);
  // Loops (n, oh, ow, kh, kw, c): channels innermost, so that the
  // vectorizer sees the source read as contiguous along the vector.
  SmallVector<AffineMap> maps = {AffineMap::get(6, 0, {d3, d4}, ctx),
                                 AffineMap::get(6, 0, {d0, d1, d2, d5}, ctx)};
  SmallVector<utils::IteratorType> iterators = {
      utils::IteratorType::parallel,  utils::IteratorType::parallel,
      utils::IteratorType::parallel,  utils::IteratorType::reduction,
      utils::IteratorType::reduction, utils::IteratorType::parallel};
  Operation *gather = pool.getInputs()[0].getDefiningOp();
  rewriter.setInsertionPoint(pool);
  auto generic = linalg::GenericOp::create(
      rewriter, loc, pool.getResultTypes(), ValueRange{pool.getInputs()[1]},
      ValueRange{pool.getOutputs()[0]}, maps, iterators,
      [&](OpBuilder &b, Location l, ValueRange args) {
        Value zero = arith::ConstantIndexOp::create(b, l, 0);
        SmallVector<Value> indices = {linalg::IndexOp::create(b, l, 0)};
        for (int axis = 0; axis < 2; ++axis) {
          // clamp(o * stride + k - low, 0, size - 1)
          Value o = linalg::IndexOp::create(b, l, 1 + axis);
          Value k = linalg::IndexOp::create(b, l, 3 + axis);
          Value scaled = arith::MulIOp::create(
              b, l, o, arith::ConstantIndexOp::create(b, l, strides[axis]));
          Value shifted = arith::AddIOp::create(b, l, scaled, k);
          if (lows[axis] != 0)
            shifted = arith::SubIOp::create(b, l, shifted,
                                            arith::ConstantIndexOp::create(b, l, lows[axis]));
          Value last = arith::ConstantIndexOp::create(b, l, sourceType.getDimSize(1 + axis) - 1);
          indices.push_back(arith::MinSIOp::create(
              b, l, arith::MaxSIOp::create(b, l, shifted, zero), last));
        }
        indices.push_back(linalg::IndexOp::create(b, l, 5));
        Value element = tensor::ExtractOp::create(b, l, padded.source, indices);
        Value max = arith::MaximumFOp::create(b, l, args[1], element);
        linalg::YieldOp::create(b, l, max);
      });
  generic->setAttr(kClampedMaxPoolingMarker, UnitAttr::get(ctx));
  rewriter.replaceOp(pool, generic->getResults());
  if (gather->use_empty())
    rewriter.eraseOp(gather);
}

} // namespace

void rewritePaddedMaxPoolings(RewriterBase &rewriter, func::FuncOp kernel) {
  SmallVector<std::pair<linalg::PoolingNhwcMaxOp, PaddedPooling>> matched;
  kernel.walk([&](linalg::PoolingNhwcMaxOp pool) {
    if (std::optional<PaddedPooling> padded = matchPaddedPooling(pool))
      matched.push_back({pool, *padded});
  });
  for (auto &[pool, padded] : matched)
    rewriteToClampedWindow(rewriter, pool, padded);
}

bool isClampedMaxPooling(Operation *op) {
  return isa<linalg::GenericOp>(op) && op->hasAttr(kClampedMaxPoolingMarker);
}

bool lowerClampedMaxPoolingTile(RewriterBase &rewriter, Operation *op) {
  auto tile = dyn_cast<linalg::GenericOp>(op);
  if (!tile || !isClampedMaxPooling(op) || !tile.hasPureTensorSemantics())
    return false;
  SmallVector<int64_t> ranges = tile.getStaticLoopRanges();
  if (llvm::any_of(ranges, ShapedType::isDynamic) || ranges[0] != 1 || ranges[1] != 1 ||
      ranges[2] != 1)
    return false;
  tensor::ExtractOp extract;
  tile.getBody()->walk([&](tensor::ExtractOp e) { extract = e; });
  if (!extract)
    return false;
  Location loc = op->getLoc();
  rewriter.setInsertionPoint(op);
  auto vectorType = VectorType::get({ranges[5]}, rewriter.getF32Type());
  Value zero = arith::ConstantIndexOp::create(rewriter, loc, 0);
  // The initial values: the fill's constant when the output tile is a fill
  // (vectorized or not; then written over in full, its store dropped),
  // else read from the tile.
  Value out = tile.getDpsInits()[0];
  SmallVector<Value> outIndices(4, zero);
  Value init;
  DenseElementsAttr splat;
  if (auto fillWrite = out.getDefiningOp<vector::TransferWriteOp>();
      fillWrite && matchPattern(fillWrite.getVector(), m_Constant(&splat)) && splat.isSplat()) {
    init = arith::ConstantOp::create(
        rewriter, loc, DenseElementsAttr::get(vectorType, splat.getSplatValue<Attribute>()));
    out = fillWrite.getBase();
  } else if (auto fill = out.getDefiningOp<linalg::FillOp>()) {
    init = vector::BroadcastOp::create(rewriter, loc, vectorType, fill.value());
    out = fill.getDpsInits()[0];
  } else {
    init = vector::TransferReadOp::create(rewriter, loc, vectorType, out, outIndices,
                                          /*padding=*/std::nullopt, ArrayRef<bool>{true});
  }
  SmallVector<Value> values = {init};
  for (int64_t kh = 0; kh < ranges[3]; ++kh)
    for (int64_t kw = 0; kw < ranges[4]; ++kw) {
      Value khValue = arith::ConstantIndexOp::create(rewriter, loc, kh);
      Value kwValue = arith::ConstantIndexOp::create(rewriter, loc, kw);
      SmallVector<Value> indices = evaluateAt(rewriter, op, extract.getIndices(),
                                              {zero, zero, zero, khValue, kwValue, zero});
      values.push_back(vector::TransferReadOp::create(rewriter, loc, vectorType,
                                                      extract.getTensor(), indices,
                                                      /*padding=*/std::nullopt,
                                                      ArrayRef<bool>{true}));
    }
  // Pairwise: maximum is associative and commutative (NaN absorbing,
  // -0 < +0), so the tree gives the same value as the window loop.
  while (values.size() > 1) {
    SmallVector<Value> next;
    for (size_t i = 0; i + 1 < values.size(); i += 2)
      next.push_back(arith::MaximumFOp::create(rewriter, loc, values[i], values[i + 1]));
    if (values.size() % 2)
      next.push_back(values.back());
    values = std::move(next);
  }
  Value written = vector::TransferWriteOp::create(rewriter, loc, values[0], out, outIndices,
                                                  ArrayRef<bool>{true})
                      .getResult();
  rewriter.replaceOp(op, written);
  return true;
}

} // namespace turbine::compiler
