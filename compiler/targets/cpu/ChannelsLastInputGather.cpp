//===- ChannelsLastInputGather.cpp - NCHW image into padded NHWC, by rows -===//
//
// A CNN's first convolution runs channels-last (ChannelsLastConvolutions.cpp)
// on a zero-padded NHWC copy of the NCHW image: one pad gather (LowerPads.cpp)
// that reads source[n, c, clamp(h - ph), clamp(w - pw)] for output
// (n, h, w, c). With 3 channels innermost, the generic vector strategy
// would make 3-wide vectors of gathered elements; this strategy instead
// works along an output row, whose W x C floats are contiguous:
//   - the interior pixels [pw, pw + W) in blocks of 16: per channel one
//     contiguous 16-float load of the source row (its width is contiguous),
//     selected against the padding value when the row itself is padding,
//     then interleaved into (pixel, channel) order by a chain of two-input
//     vector.shuffles per 16 output floats (vpermt2ps), and stored as
//     contiguous 16-float vectors; W % 16 pixels left over get one shorter
//     block of the same form;
//   - the left and right padding columns as constant vectors.
// Source indices and the row's in-bounds flag come from a clone of the
// gather's own index arithmetic evaluated at the block's first pixel, so
// this holds for any workgroup tiling of the rows, as long as a tile
// covers whole rows (all of W and C; the workgroup tiles do for these).
//===----------------------------------------------------------------------===//
#include "targets/cpu/ChannelsLastInputGather.h"
#include "global-opt/LowerPads.h"
#include "targets/cpu/GatherIndexing.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Matchers.h"

using namespace mlir;

namespace turbine::compiler {
namespace {

constexpr llvm::StringLiteral kMarker = "turbine.channels_last_input_gather";
constexpr int64_t kBlockPixels = 16;
constexpr int64_t kMaxChannels = 8;
// Floats per zmm: the interleaved output is built and stored in such pieces.
constexpr int64_t kLanes = 16;

// Marker values: [output width, channels, left padding, source width].
enum MarkerField { OutWidth, Channels, PadLeft, SourceWidth, NumFields };

std::optional<SmallVector<int64_t>> matchGather(linalg::GenericOp gather) {
  if (!isPadGather(gather) || gather.getNumLoops() != 4 ||
      !gather.getIndexingMapsArray()[0].isIdentity())
    return std::nullopt;
  auto outType = cast<RankedTensorType>(gather.getResultTypes()[0]);
  int64_t outWidth = outType.getDimSize(2), channels = outType.getDimSize(3);
  if (ShapedType::isDynamic(outWidth) || ShapedType::isDynamic(channels) ||
      channels > kMaxChannels || !outType.getElementType().isF32())
    return std::nullopt;
  auto yield = cast<linalg::YieldOp>(gather.getBody()->getTerminator());
  auto select = yield.getOperand(0).getDefiningOp<arith::SelectOp>();
  auto extract = select.getTrueValue().getDefiningOp<tensor::ExtractOp>();
  if (!select.getFalseValue().getDefiningOp<arith::ConstantOp>())
    return std::nullopt;
  auto sourceType = cast<RankedTensorType>(extract.getTensor().getType());
  if (sourceType.getRank() != 4)
    return std::nullopt;
  // Which loop reads each source dim: each loop at most once (a unit dim's
  // index folds to the constant 0: a static batch of 1, one channel); the
  // source's innermost (contiguous) dim by the output's w, and no other;
  // the output's n and c not padded. The emitted code evaluates the
  // gather's own index arithmetic per channel, so that is all it needs.
  SmallVector<bool> loopUsed(4, false);
  std::optional<PadGatherIndex> width;
  for (auto [dim, index] : llvm::enumerate(extract.getIndices())) {
    if (sourceType.getDimSize(dim) == 1 && matchPattern(index, m_Zero()))
      continue;
    std::optional<PadGatherIndex> read = matchPadGatherIndex(index);
    if (!read || loopUsed[read->loop] || ((read->loop == 0 || read->loop == 3) && read->clamped))
      return std::nullopt;
    loopUsed[read->loop] = true;
    if (read->loop == 2) {
      if (dim != 3)
        return std::nullopt;
      width = read;
    }
  }
  if (!width)
    return std::nullopt;
  int64_t sourceWidth = sourceType.getDimSize(3), padLeft = width->low;
  if (ShapedType::isDynamic(sourceWidth) || padLeft < 0 || padLeft + sourceWidth > outWidth)
    return std::nullopt;
  return SmallVector<int64_t>{outWidth, channels, padLeft, sourceWidth};
}

/// Writes `pixels` (<= kBlockPixels) interior pixels of the output row
/// (n, h) starting at pixel `w` into `row` (the tile, collapsed to
/// (n, h, w * c)); returns the updated tile.
Value emitBlock(OpBuilder &b, Location loc, linalg::GenericOp tile, Value row, Value n, Value h,
                Value w, int64_t pixels, int64_t channels, Value padValue) {
  auto yield = cast<linalg::YieldOp>(tile.getBody()->getTerminator());
  auto select = yield.getOperand(0).getDefiningOp<arith::SelectOp>();
  auto extract = select.getTrueValue().getDefiningOp<tensor::ExtractOp>();
  Value source = extract.getTensor();
  auto vectorType = VectorType::get({pixels}, b.getF32Type());
  Value padVector = vector::BroadcastOp::create(b, loc, vectorType, padValue);
  SmallVector<Value> perChannel;
  for (int64_t k = 0; k < channels; ++k) {
    Value c = arith::ConstantIndexOp::create(b, loc, k);
    // The source indices and the in-bounds flag of the block's first pixel.
    SmallVector<Value> wanted(extract.getIndices());
    wanted.push_back(select.getCondition());
    SmallVector<Value> read = evaluateAt(b, tile, wanted, {n, h, w, c});
    Value inside = read.pop_back_val();
    Value loaded = vector::TransferReadOp::create(b, loc, vectorType, source, read,
                                                  /*padding=*/std::nullopt,
                                                  ArrayRef<bool>{true});
    // The block's pixels are all inside in w: `inside` is the row's flag.
    perChannel.push_back(arith::SelectOp::create(b, loc, inside, loaded, padVector));
  }
  // Output float j of the block is channel j % C of pixel j / C.
  Value start = arith::MulIOp::create(b, loc, w, arith::ConstantIndexOp::create(b, loc, channels));
  int64_t total = pixels * channels;
  for (int64_t first = 0; first < total; first += kLanes) {
    int64_t lanes = std::min(kLanes, total - first);
    Value piece;
    int64_t pieceLanes = 0;
    for (int64_t k = 0; k < channels; ++k) {
      SmallVector<int64_t> mask(lanes);
      bool uses = false;
      for (int64_t j = 0; j < lanes; ++j) {
        int64_t flat = first + j;
        if (flat % channels == k) {
          mask[j] = (piece ? pieceLanes : 0) + flat / channels;
          uses = true;
        } else {
          mask[j] = piece ? j : vector::ShuffleOp::kPoisonIndex;
        }
      }
      if (!uses)
        continue;
      Value other = perChannel[k];
      piece = vector::ShuffleOp::create(b, loc, piece ? piece : other, other, mask);
      pieceLanes = lanes;
    }
    Value offset =
        arith::AddIOp::create(b, loc, start, arith::ConstantIndexOp::create(b, loc, first));
    row = vector::TransferWriteOp::create(b, loc, piece, row, ValueRange{n, h, offset},
                                          ArrayRef<bool>{true})
              .getResult();
  }
  return row;
}

/// Writes `count` padding pixels from pixel `first` of row (n, h).
Value emitPadding(OpBuilder &b, Location loc, Value row, Value n, Value h, int64_t first,
                  int64_t count, int64_t channels, Value padValue) {
  if (count == 0)
    return row;
  auto type = VectorType::get({count * channels}, b.getF32Type());
  Value pad = vector::BroadcastOp::create(b, loc, type, padValue);
  Value offset = arith::ConstantIndexOp::create(b, loc, first * channels);
  return vector::TransferWriteOp::create(b, loc, pad, row, ValueRange{n, h, offset},
                                         ArrayRef<bool>{true})
      .getResult();
}

} // namespace

void markChannelsLastInputGathers(func::FuncOp kernel) {
  kernel.walk([&](linalg::GenericOp gather) {
    if (std::optional<SmallVector<int64_t>> fields = matchGather(gather))
      gather->setAttr(kMarker, DenseI64ArrayAttr::get(gather.getContext(), *fields));
  });
}

bool lowerChannelsLastInputGather(RewriterBase &rewriter, Operation *op) {
  auto tile = dyn_cast<linalg::GenericOp>(op);
  auto fields = op->getAttrOfType<DenseI64ArrayAttr>(kMarker);
  if (!tile || !fields || fields.size() != NumFields || !tile.hasPureTensorSemantics())
    return false;
  int64_t outWidth = fields[OutWidth], channels = fields[Channels];
  int64_t padLeft = fields[PadLeft], sourceWidth = fields[SourceWidth];
  auto tileType = cast<RankedTensorType>(tile.getResultTypes()[0]);
  if (tileType.getDimSize(2) != outWidth || tileType.getDimSize(3) != channels)
    return false;
  Location loc = op->getLoc();
  rewriter.setInsertionPoint(op);
  Value init = tile.getDpsInits()[0];
  auto yield = cast<linalg::YieldOp>(tile.getBody()->getTerminator());
  Value padValue = yield.getOperand(0).getDefiningOp<arith::SelectOp>().getFalseValue();
  if (Operation *def = padValue.getDefiningOp(); def && tile->isAncestor(def))
    padValue = rewriter.clone(*def)->getResult(0);
  SmallVector<ReassociationIndices> rowsOf = {{0}, {1}, {2, 3}};
  Value rows = tensor::CollapseShapeOp::create(rewriter, loc, init, rowsOf);
  Value zero = arith::ConstantIndexOp::create(rewriter, loc, 0);
  Value one = arith::ConstantIndexOp::create(rewriter, loc, 1);
  Value batch = tensor::DimOp::create(rewriter, loc, init, 0);
  Value height = tensor::DimOp::create(rewriter, loc, init, 1);
  auto batchLoop = scf::ForOp::create(rewriter, loc, zero, batch, one, ValueRange{rows});
  rewriter.setInsertionPointToStart(batchLoop.getBody());
  Value n = batchLoop.getInductionVar();
  auto rowLoop = scf::ForOp::create(rewriter, loc, zero, height, one,
                                    ValueRange{batchLoop.getRegionIterArgs()[0]});
  scf::YieldOp::create(rewriter, loc, rowLoop.getResults());
  rewriter.setInsertionPointToStart(rowLoop.getBody());
  Value h = rowLoop.getInductionVar();
  Value row = rowLoop.getRegionIterArgs()[0];
  row = emitPadding(rewriter, loc, row, n, h, 0, padLeft, channels, padValue);
  row = emitPadding(rewriter, loc, row, n, h, padLeft + sourceWidth,
                    outWidth - padLeft - sourceWidth, channels, padValue);
  int64_t fullBlocks = sourceWidth / kBlockPixels;
  if (fullBlocks > 0) {
    Value first = arith::ConstantIndexOp::create(rewriter, loc, padLeft);
    Value end = arith::ConstantIndexOp::create(rewriter, loc, padLeft + fullBlocks * kBlockPixels);
    Value step = arith::ConstantIndexOp::create(rewriter, loc, kBlockPixels);
    auto blockLoop = scf::ForOp::create(rewriter, loc, first, end, step, ValueRange{row});
    rewriter.setInsertionPointToStart(blockLoop.getBody());
    Value written = emitBlock(rewriter, loc, tile, blockLoop.getRegionIterArgs()[0], n, h,
                              blockLoop.getInductionVar(), kBlockPixels, channels, padValue);
    scf::YieldOp::create(rewriter, loc, written);
    rewriter.setInsertionPointAfter(blockLoop);
    row = blockLoop.getResult(0);
  }
  if (int64_t left = sourceWidth % kBlockPixels) {
    Value w = arith::ConstantIndexOp::create(rewriter, loc, padLeft + fullBlocks * kBlockPixels);
    row = emitBlock(rewriter, loc, tile, row, n, h, w, left, channels, padValue);
  }
  scf::YieldOp::create(rewriter, loc, row);
  rewriter.setInsertionPointAfter(batchLoop);
  Value result = tensor::ExpandShapeOp::create(rewriter, loc, tileType, batchLoop.getResult(0),
                                               rowsOf, tensor::getMixedSizes(rewriter, loc, init));
  rewriter.replaceOp(op, result);
  return true;
}

} // namespace turbine::compiler
