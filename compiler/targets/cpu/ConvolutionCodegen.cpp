//===- ConvolutionCodegen.cpp - Vector-level strategies for convolutions --===//
//
// Part of kernel codegen (CodegenStrategies.h): NCHW and NHWC convolutions,
// depthwise convolutions and pooling inside a workgroup tile become register
// tiles of pixels x channels (decomposed to 1-D and vectorized), packed-filter
// convolutions one such convolution per 32-channel tile (with blocked
// reductions for large filter slices, ConvolutionReductionBlocking.h), with
// their elementwise epilogue on the register tile; plain convolutions whose
// channel count is not a multiple of 32 split into channel segments of 32-,
// 16- and 8-wide register tiles; clamped max pooling tiles
// (ClampedMaxPooling.h).
//===----------------------------------------------------------------------===//
#include "targets/cpu/CodegenStrategies.h"
#include "targets/cpu/ClampedMaxPooling.h"
#include "targets/cpu/ConvolutionFilterPacking.h"
#include "targets/cpu/ConvolutionReductionBlocking.h"
#include "global-opt/LowerPads.h"
#include "dispatch/WorkgroupTiling.h"
#include "targets/cpu/CpuWorkgroupTiling.h"

#include "turbine/compiler/Dialect/TurbineDialect.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/TileUsingInterface.h"
#include "mlir/Dialect/SCF/Transforms/Transforms.h"
#include "mlir/Dialect/SCF/Utils/Utils.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tensor/Transforms/Transforms.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Dialect/Vector/Transforms/LoweringPatterns.h"
#include "mlir/Dialect/Vector/Transforms/VectorRewritePatterns.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include <algorithm>
#include <functional>
#include <limits>
#include <tuple>

using namespace mlir;

namespace turbine::compiler {

/// 2-D NCHW convolution inside a workgroup tile: one output row of up to 32
/// pixels for 8 output channels at a time, input channels by 8, kernel rows
/// by 1 (kernel columns whole). Such tiles are 1-D convolutions once the unit
/// dims are dropped (decomposition), which the vectorizer handles when their
/// shapes are static; the tile sizes divide the static extents so that they
/// are.
void tileConvolution(RewriterBase &rewriter, linalg::Conv2DNchwFchwOp op) {
  // Loops: n, f, oh, ow, c, kh, kw.
  SmallVector<int64_t> ranges =
      cast<linalg::LinalgOp>(op.getOperation()).getStaticLoopRanges();
  if (llvm::any_of(ArrayRef<int64_t>(ranges).drop_front(), ShapedType::isDynamic))
    return;
  SmallVector<int64_t> tiles = {1,
                                largestDivisorAtMost(ranges[1], 8),
                                1,
                                largestDivisorAtMost(ranges[3], 32),
                                largestDivisorAtMost(ranges[4], 8),
                                1,
                                0};
  (void)tileOp(rewriter, cast<TilingInterface>(op.getOperation()), tiles);
}

namespace {

/// Pixels of an NHWC register tile of `channels` channels (one or two
/// vector registers) in a row of `width` output pixels (a divisor of it):
/// as many as `tiles.accumulators` registers hold (AVX-512: up to 16 for
/// 16 channels or fewer, up to 8 for 32; AVX2: up to 12 for 8, up to 6 for
/// 16). A two-register tile whose width has no divisor from half that to
/// that (13, 27, 55: SqueezeNet's images) takes as many pixels as the
/// register file holds besides a filter row and a broadcast (AVX-512: 14
/// pixels, 28 zmm accumulators) rather than 1 to 3; so does a
/// one-register tile of a 16-register file (AVX2: 13 pixels).
int64_t registerTilePixels(int64_t width, int64_t channels, const RegisterTiles &tiles) {
  int64_t vectors = std::max<int64_t>(1, channels / tiles.lanes);
  int64_t budget = tiles.accumulators / vectors;
  int64_t pixels = largestDivisorAtMost(width, budget);
  if (2 * pixels >= budget || (vectors == 1 && tiles.registers > 16))
    return pixels;
  return largestDivisorAtMost(width, (tiles.registers - 2 - vectors) / vectors);
}

/// Register tile (pixels, channels) of up to `channels` channels (a power of
/// two) in a row of `width` output pixels: registerTilePixels. On a
/// 16-register file, a two-register tile with few pixels (widths 7 and 14
/// have no divisor from 3 to 6) takes one register of channels when that
/// holds more accumulators (AVX2: 7 x 8 for 1 x 16).
std::pair<int64_t, int64_t> registerTileOf(int64_t width, int64_t channels,
                                           const RegisterTiles &tiles) {
  int64_t pixels = registerTilePixels(width, channels, tiles);
  if (tiles.registers <= 16 && channels > tiles.lanes) {
    int64_t narrow = registerTilePixels(width, tiles.lanes, tiles);
    if (narrow > pixels * (channels / tiles.lanes))
      return {narrow, tiles.lanes};
  }
  return {pixels, channels};
}

/// Register tile (pixels, channels) of an NHWC convolution or pooling with
/// static loop ranges `ranges` (n, oh, ow, f|c, ...): the largest power of
/// two dividing the channels up to matmulColumns (two vector registers)
/// and registerTileOf (AVX-512: 8 x 32, or 16 x 16 when a tile has 16
/// channels or fewer).
std::pair<int64_t, int64_t> channelsLastRegisterTile(ArrayRef<int64_t> ranges,
                                                     const RegisterTiles &tiles) {
  // A power of two: vectors of other widths (24 channels) lower to shuffles
  // that cost 10-30x.
  return registerTileOf(ranges[2], largestPowerOfTwoDivisorAtMost(ranges[3], tiles.matmulColumns),
                        tiles);
}

/// Bytes between the input pixels that neighbouring output pixels of an
/// NHWC convolution or pooling `op` read (stride x channels x element
/// size), or 0 if not static. The channels are those of the tensor the
/// input is a slice of (a reduction block of 64 channels reads pixels of
/// all 2048 in memory).
int64_t inputPixelStepBytes(linalg::LinalgOp op) {
  Value source = op.getDpsInputs()[0];
  while (auto slice = source.getDefiningOp<tensor::ExtractSliceOp>())
    if (slice.getSourceType().getRank() == 4 && slice.getType().getRank() == 4 &&
        slice.hasUnitStride())
      source = slice.getSource();
    else
      break;
  auto input = dyn_cast<RankedTensorType>(source.getType());
  AffineMap map = op.getMatchingIndexingMap(op.getDpsInputOperand(0));
  if (!input || input.getRank() != 4 || input.isDynamicDim(3) || map.getNumResults() != 4 ||
      !input.getElementType().isIntOrFloat())
    return 0;
  // The stride: how far the input's W index moves from ow = 0 to ow = 1
  // (d2; every other loop at 0).
  auto wAt = [&](int64_t ow) {
    SmallVector<AffineExpr> point(map.getNumDims(), getAffineConstantExpr(0, op.getContext()));
    point[2] = getAffineConstantExpr(ow, op.getContext());
    return map.getResult(2).replaceDims(point);
  };
  auto stride = dyn_cast<AffineConstantExpr>(simplifyAffineExpr(wAt(1) - wAt(0), 0, 0));
  if (!stride)
    return 0;
  return stride.getValue() * input.getDimSize(3) * input.getElementTypeBitWidth() / 8;
}

/// Output rows of an NHWC register tile of `pixels` x `channels` of `op`
/// (a tile whose loop ranges are `ranges`: n, oh, ow, f|c, ...): 2 on a
/// 16-register file when one row holds fewer than 8 accumulators and two
/// rows fit with a filter row and a broadcast (AVX2: 14 and 7 pixels of 8
/// channels, whose 7 accumulators per broadcast and filter load left the
/// 3x3 convolutions of ResNet's 14x14 stage at ~45 GFLOP/s), the tile's
/// rows are static and even, and the input pixels are not a multiple of
/// 4 KiB apart (1024 channels; 512 at stride 2): those all fall in one L1
/// set, whose 8 ways two rows' 14 pixels overflow (ResNet-50's 1x1
/// convolutions of 1024 channels: ~18 GFLOP/s with two rows, ~40 with
/// one); else 1.
int64_t registerTileRows(linalg::LinalgOp op, ArrayRef<int64_t> ranges, int64_t pixels,
                         int64_t channels, const RegisterTiles &tiles) {
  int64_t vectors = std::max<int64_t>(1, channels / tiles.lanes);
  int64_t accumulators = pixels * vectors;
  int64_t step = inputPixelStepBytes(op);
  if (tiles.registers > 16 || accumulators >= 8 || step == 0 || step % 4096 == 0 ||
      2 * accumulators + vectors + 1 > tiles.registers || ShapedType::isDynamic(ranges[1]) ||
      ranges[1] % 2 != 0)
    return 1;
  return 2;
}

/// A convolution register tile of several output rows (registerTileRows),
/// its reduction loops already tiled by 1: one 1-row convolution per row,
/// next to each other in the innermost reduction loop (the rows' loop
/// unrolled), so that each is decomposed to a 1-D convolution and
/// vectorized with accumulators of its own. Returns them, or `tile` alone
/// when it has one row or could not be split.
SmallVector<Operation *> splitRegisterTileRows(RewriterBase &rewriter, Operation *tile) {
  auto conv = cast<linalg::LinalgOp>(tile);
  SmallVector<int64_t> ranges = conv.getStaticLoopRanges();
  // A column of one pixel stays whole: it decomposes to a 1-D convolution
  // along the rows.
  if (ShapedType::isDynamic(ranges[1]) || ranges[1] <= 1 || ranges[2] == 1)
    return {tile};
  SmallVector<int64_t> byRow(conv.getNumLoops(), 0);
  byRow[1] = 1;
  scf::SCFTilingOptions options;
  options.setTileSizes(getAsIndexOpFoldResult(rewriter.getContext(), byRow));
  rewriter.setInsertionPoint(tile);
  FailureOr<scf::SCFTilingResult> split =
      scf::tileUsingSCF(rewriter, cast<TilingInterface>(tile), options);
  if (failed(split) || split->loops.size() != 1)
    return {tile};
  rewriter.replaceOp(tile, split->replacements);
  auto loop = cast<scf::ForOp>(split->loops[0].getOperation());
  Block *parent = loop->getBlock();
  OperationName rowOp = split->tiledOps.front()->getName();
  if (failed(loopUnrollFull(loop)))
    return {split->tiledOps.front()};
  SmallVector<Operation *> rows;
  for (Operation &op : *parent)
    if (op.getName() == rowOp)
      rows.push_back(&op);
  return rows;
}

/// Output channels [offset, offset + size) of a plain NHWC convolution tile,
/// register tiles of `channels` channels each.
struct ChannelSegment {
  int64_t offset;
  int64_t size;
  int64_t channels;
};

/// The channel segments of a plain NHWC convolution (linalg.conv_2d_nhwc_hwcf)
/// or ungrouped packed convolution tile whose static output channel extent
/// is not a multiple of the register tile's columns (32 with AVX-512;
/// workgroup tiles of splitChannelsWorkgroupTile, filter tiles of 40 or
/// 24): the multiples of those columns in register tiles that wide, then
/// of half of them, and so on down to 1 channel (58 with AVX2: 48 in tiles
/// of 16, 8, 2). Empty for other ops and extents (their register tiles are
/// a power of two dividing the extent).
SmallVector<ChannelSegment> channelSegments(Operation *op, const RegisterTiles &tiles) {
  if (!isa<linalg::Conv2DNhwcHwcfOp>(op) &&
      !(isPackedConvolution(op) && !isGroupedPackedConvolution(op)))
    return {};
  SmallVector<int64_t> ranges = cast<linalg::LinalgOp>(op).getStaticLoopRanges();
  int64_t extent = ranges[3];
  const int64_t widest = tiles.matmulColumns;
  if (ShapedType::isDynamic(extent) || extent < widest - 8 || extent % widest == 0)
    return {};
  SmallVector<ChannelSegment> segments;
  int64_t offset = 0;
  for (int64_t width = widest; width >= 1; width /= 2) {
    int64_t size = (extent - offset) / width * width;
    if (size == 0)
      continue;
    segments.push_back({offset, size, width});
    offset += size;
  }
  return segments;
}

/// A part [offset, offset + size) of one loop of a convolution tile.
struct LoopPart {
  int64_t offset;
  int64_t size;
};

/// Splits `conv` (an NHWC convolution tile) and, when non-null, `epilogue`
/// (the elementwise op reading its result) into one convolution (and
/// epilogue) per part of loop `dim` (2: the output row's pixels, 3: the
/// output channels; the same loop of both), each on its slices of the
/// operands; returns the pieces (epilogue null without one), empty if
/// it could not split (the ops are then as they were). Each piece writes a
/// slice of the previous piece's result (the original destination for the
/// first), so that bufferization keeps them all in place. A segment's
/// convolution accumulates into a fill of its own when the original one
/// did (a tile-sized empty tensor's, with an epilogue), so that the fill
/// fuses into its register tiles.
SmallVector<std::pair<linalg::GenericOp, linalg::LinalgOp>>
splitLoop(RewriterBase &rewriter, linalg::LinalgOp conv, linalg::GenericOp epilogue,
          unsigned dim, ArrayRef<LoopPart> parts) {
  Location loc = conv.getLoc();
  auto convTiling = cast<TilingInterface>(conv.getOperation());
  Operation *last = epilogue ? epilogue.getOperation() : conv.getOperation();
  rewriter.setInsertionPoint(last);
  SmallVector<Range> convDomain = convTiling.getIterationDomain(rewriter);
  SmallVector<Range> epilogueDomain;
  if (epilogue)
    epilogueDomain = cast<TilingInterface>(epilogue.getOperation()).getIterationDomain(rewriter);
  auto fill = conv.getDpsInits()[0].getDefiningOp<linalg::FillOp>();
  // The tensor the pieces' results are inserted into, one after the other.
  Value base = epilogue ? epilogue.getDpsInits()[0]
                        : (fill ? fill.getOutputs()[0] : conv.getDpsInits()[0]);
  Value result = base;
  SmallVector<std::pair<linalg::GenericOp, linalg::LinalgOp>> pieces;
  SmallVector<Operation *> made;
  // On failure: erase what was made (users first, whatever their order in
  // `made`).
  auto undo = [&] {
    for (bool erased = true; erased;) {
      erased = false;
      for (Operation *&op : made)
        if (op && op->use_empty()) {
          rewriter.eraseOp(op);
          op = nullptr;
          erased = true;
        }
    }
    return SmallVector<std::pair<linalg::GenericOp, linalg::LinalgOp>>{};
  };
  for (const LoopPart &part : parts) {
    auto tileOf = [&](ArrayRef<Range> domain, SmallVector<OpFoldResult> &offsets,
                      SmallVector<OpFoldResult> &sizes) {
      for (auto [i, range] : llvm::enumerate(domain)) {
        offsets.push_back(i == dim ? rewriter.getIndexAttr(part.offset) : range.offset);
        sizes.push_back(i == dim ? rewriter.getIndexAttr(part.size) : range.size);
      }
    };
    SmallVector<OpFoldResult> offsets, sizes;
    tileOf(convDomain, offsets, sizes);
    FailureOr<TilingResult> convTile = convTiling.getTiledImplementation(rewriter, offsets, sizes);
    if (failed(convTile) || convTile->tiledOps.size() != 1)
      return undo();
    llvm::append_range(made, convTile->generatedSlices);
    made.push_back(convTile->tiledOps[0]);
    auto tiledConv = cast<linalg::LinalgOp>(convTile->tiledOps[0]);
    Operation *writer = tiledConv;
    linalg::GenericOp tiledEpilogue;
    SmallVector<OpFoldResult> resultOffsets, resultSizes;
    if (epilogue) {
      SmallVector<OpFoldResult> epilogueOffsets, epilogueSizes;
      tileOf(epilogueDomain, epilogueOffsets, epilogueSizes);
      auto epilogueTiling = cast<TilingInterface>(epilogue.getOperation());
      FailureOr<TilingResult> epilogueTile =
          epilogueTiling.getTiledImplementation(rewriter, epilogueOffsets, epilogueSizes);
      if (failed(epilogueTile) || epilogueTile->tiledOps.size() != 1)
        return undo();
      llvm::append_range(made, epilogueTile->generatedSlices);
      made.push_back(epilogueTile->tiledOps[0]);
      tiledEpilogue = dyn_cast<linalg::GenericOp>(epilogueTile->tiledOps[0]);
      if (!tiledEpilogue ||
          failed(epilogueTiling.getResultTilePosition(rewriter, 0, epilogueOffsets,
                                                      epilogueSizes, resultOffsets,
                                                      resultSizes)))
        return undo();
      // The epilogue's slice of the convolution's result is the segment's
      // convolution.
      for (auto [original, tiled] : llvm::zip(epilogue.getDpsInputOperands(),
                                              tiledEpilogue.getDpsInputOperands()))
        if (original->get() == conv->getResult(0)) {
          if (tiled->get().getType() != tiledConv->getResult(0).getType())
            return undo();
          rewriter.modifyOpInPlace(tiledEpilogue,
                                   [&] { tiled->set(tiledConv->getResult(0)); });
        }
      writer = tiledEpilogue;
      // The convolution's own accumulator: a fill of a tile-sized empty
      // tensor, or a slice of the original fill's destination.
      if (fill) {
        auto slice = tiledConv.getDpsInits()[0].getDefiningOp<tensor::ExtractSliceOp>();
        if (!slice)
          return undo();
        rewriter.setInsertionPoint(tiledConv);
        Value fillDest;
        if (fill.getOutputs()[0].getDefiningOp<tensor::EmptyOp>())
          fillDest = tensor::EmptyOp::create(rewriter, loc, slice.getMixedSizes(),
                                             getElementTypeOrSelf(slice.getType()));
        else
          fillDest = tensor::ExtractSliceOp::create(
              rewriter, loc, fill.getOutputs()[0], slice.getMixedOffsets(),
              slice.getMixedSizes(), slice.getMixedStrides());
        auto ownFill = linalg::FillOp::create(rewriter, loc, fill.getInputs()[0], fillDest);
        made.append({fillDest.getDefiningOp(), ownFill});
        rewriter.modifyOpInPlace(tiledConv, [&] {
          tiledConv.getDpsInitsMutable()[0].set(ownFill.getResult(0));
        });
        rewriter.setInsertionPoint(last);
      }
    } else if (failed(convTiling.getResultTilePosition(rewriter, 0, offsets, sizes,
                                                       resultOffsets, resultSizes))) {
      return undo();
    }
    // The piece writes its slice of the previous piece's result (filled
    // first where the original convolution's accumulator was a fill).
    SmallVector<OpFoldResult> strides(resultOffsets.size(), rewriter.getIndexAttr(1));
    auto writerOp = cast<DestinationStyleOpInterface>(writer);
    rewriter.setInsertionPoint(writer);
    Value slice = tensor::ExtractSliceOp::create(
        rewriter, loc, cast<RankedTensorType>(writer->getResult(0).getType()), result,
        resultOffsets, resultSizes, strides);
    made.push_back(slice.getDefiningOp());
    if (!epilogue && fill) {
      auto ownFill = linalg::FillOp::create(rewriter, loc, fill.getInputs()[0], slice);
      made.push_back(ownFill);
      slice = ownFill.getResult(0);
    }
    rewriter.modifyOpInPlace(writer, [&] { writerOp.getDpsInitsMutable()[0].set(slice); });
    rewriter.setInsertionPoint(last);
    auto insert = tensor::InsertSliceOp::create(rewriter, loc, writer->getResult(0), result,
                                                resultOffsets, resultSizes, strides);
    made.push_back(insert);
    result = insert.getResult();
    pieces.push_back({tiledEpilogue, tiledConv});
  }
  rewriter.replaceAllUsesWith(last->getResult(0), result);
  // The untiled ops, their slices and the original fill are dead now, but
  // for sizes read off them (the segments' dynamic batch): read those off
  // the destination the pieces were inserted into.
  SmallVector<Operation *> dead = {epilogue, conv, fill};
  for (Operation *op : dead) {
    if (!op)
      continue;
    for (Operation *user : llvm::make_early_inc_range(op->getResult(0).getUsers()))
      if (auto dim = dyn_cast<tensor::DimOp>(user)) {
        rewriter.setInsertionPoint(dim);
        rewriter.replaceOpWithNewOp<tensor::DimOp>(dim, base, dim.getIndex());
      }
  }
  for (Operation *op : dead) {
    if (!op)
      continue;
    for (Operation *user : llvm::make_early_inc_range(op->getUsers()))
      if (user->use_empty() && isa<tensor::ExtractSliceOp>(user))
        rewriter.eraseOp(user);
    if (op->use_empty())
      rewriter.eraseOp(op);
  }
  return pieces;
}

/// The loop parts of channel or pixel segments (splitLoop).
template <typename Segment>
SmallVector<LoopPart> loopParts(ArrayRef<Segment> segments) {
  return llvm::map_to_vector(segments,
                             [](const Segment &s) { return LoopPart{s.offset, s.size}; });
}

/// Estimated cycles per FMA of an NHWC convolution register tile of `rows`
/// x `pixels` output pixels x `vectors` registers of channels (one input
/// channel per step: a filter row load per vector, a broadcast per pixel)
/// on a core with two FMA pipes and two vector loads a cycle, each
/// accumulator's FMAs about 5 cycles apart (latency). On a 16-register
/// file (AVX2) broadcasts from memory take an FP pipe besides a load (AMD
/// Zen 3 by llvm-mca: `vbroadcastss` takes FP1 or FP2, so three FP pipes
/// share the FMAs and the broadcasts); AVX-512's are embedded in the FMA
/// and take a load only. 0.5 is the FMA bound (AVX2's 6 x 16, AVX-512's
/// 8 x 32); on AVX2 the 7 x 8 and 2 x 7 x 8 tiles of 7- and 14-pixel rows
/// cost 0.67 (broadcast-bound), 4 x 16 0.63 (latency); AVX-512's 1 x 32
/// tile of a 109-pixel row (a prime: SqueezeNet 1.0's stem) 2.5.
double registerTileCost(int64_t rows, int64_t pixels, int64_t vectors,
                        const RegisterTiles &tiles) {
  double fmas = rows * pixels * vectors;
  double broadcasts = rows * pixels;
  double fmaPipes = tiles.registers <= 16 ? std::max(fmas / 2, (fmas + broadcasts) / 3) : fmas / 2;
  double cycles = std::max({fmaPipes, (broadcasts + vectors) / 2, 5.0});
  return cycles / fmas;
}

/// Input channels (the innermost reduction loop) below which a row is not
/// split into pixel segments on a 16-register CPU (pixelSegments).
constexpr int64_t kMinSegmentedChannels = 64;

/// A part of an NHWC convolution tile's output row and the register tile
/// (rows x pixels x channels) its piece is tiled by.
struct PixelSegment {
  int64_t offset;
  int64_t size;
  int64_t rows;
  int64_t pixels;
  int64_t channels;
};

/// The cheapest register tile (registerTileCost) of `width` pixels in
/// `rowExtent` output rows for up to `channels` channels (a power of two)
/// that the register file holds with a filter row and a broadcast (its
/// sizes divide the extents; at most `maxPixels` pixels), and its cost; cost
/// infinity if none.
std::pair<PixelSegment, double> cheapestRegisterTile(int64_t width, int64_t rowExtent,
                                                     int64_t channels, int64_t maxPixels,
                                                     const RegisterTiles &tiles) {
  PixelSegment best{0, width, 1, 1, 0};
  double bestCost = std::numeric_limits<double>::infinity();
  // Fewer rows first, then fewer accumulators: ties go to the first.
  for (int64_t rows = 1; rows <= rowExtent; ++rows)
    for (int64_t vectors = 1; vectors * tiles.lanes <= channels; vectors *= 2)
      for (int64_t pixels = 1; pixels <= width; ++pixels) {
        int64_t accumulators = rows * pixels * vectors;
        if (width % pixels != 0 || rowExtent % rows != 0 || rows * pixels > maxPixels ||
            accumulators > tiles.accumulators || accumulators + vectors + 1 > tiles.registers)
          continue;
        if (double cost = registerTileCost(rows, pixels, vectors, tiles);
            cost < bestCost - 1e-9) {
          best = {0, width, rows, pixels, vectors * tiles.lanes};
          bestCost = cost;
        }
      }
  return {best, bestCost};
}

/// The output row of an NHWC convolution tile (ranges n, oh, ow, f, ...)
/// split in two: the most pixels that the widest tile of one row (AVX2:
/// 6 x 16, AVX-512: 8 x 32) covers, and the rest in the cheapest tile of
/// its own (cheapestRegisterTile: 2 rows x 2 x 16 for the 2 pixels left of
/// a 14-pixel row, 7 rows x 1 x 8 for the last column of a 7 x 7 image,
/// 5 x 32 for the last of a 109-pixel row) — when that costs less
/// (registerTileCost) than the `rows` x `pixels` x `channels` tile whose
/// pixels divide the row (AVX2: 2 x 7 x 8 for 14, 4 x 16 for 28 and 56:
/// 1.2-1.45x slower than 6 x 16 by GFLOP/s of 3x3 convolutions of 256
/// channels; AVX-512: 1 x 32 for a prime 109, 1.66x slower). On AVX-512
/// that is only rows with no divisor near 8 (its 7- and 14-pixel rows take
/// full 7 x 32 tiles). Empty when not, and for depthwise convolutions and
/// pooling (no broadcast). A grouped convolution's tiles stay within its
/// register channels (packedConvolutionRegisterChannels).
SmallVector<PixelSegment> pixelSegments(linalg::LinalgOp op, int64_t rows, int64_t pixels,
                                        int64_t channels, const RegisterTiles &tiles) {
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  if (ranges.size() < 4 ||
      !(isa<linalg::Conv2DNhwcHwcfOp>(op.getOperation()) || isPackedConvolution(op)) ||
      llvm::any_of(ArrayRef<int64_t>(ranges).take_front(4).drop_front(), ShapedType::isDynamic) ||
      channels < tiles.lanes)
    return {};
  int64_t width = ranges[2];
  // AVX2, few input channels per kernel position (the innermost reduction
  // loop): the cost model's steady state is not reached. 6 x 16 tiles ran
  // MobileNetV2's 1x1 convolutions of 16 to 32 channels 1.2-1.8x slower in
  // the model and ResNet's stem (3 channels, 7 x 7) 1.1x slower. AVX-512
  // segments only rows whose divisor tiles are far worse (SqueezeNet 1.0's
  // stem of 3 channels, 109-pixel rows: 5.1 -> 3.1 ms).
  if (tiles.registers <= 16 && ranges.back() < kMinSegmentedChannels)
    return {};
  int64_t widestChannels = largestPowerOfTwoDivisorAtMost(ranges[3], tiles.matmulColumns);
  if (int64_t packed = packedConvolutionRegisterChannels(op))
    widestChannels = std::min(widestChannels, packed);
  int64_t vectors = widestChannels / tiles.lanes;
  if (vectors == 0)
    return {};
  int64_t widest = std::min(tiles.accumulators / vectors,
                            (tiles.registers - vectors - 1) / vectors);
  int64_t main = width / widest * widest;
  if (main == 0 || main == width)
    return {};
  int64_t step = inputPixelStepBytes(op);
  // Input pixels a multiple of 4 KiB apart fall in one set of the 8-way
  // L1: at most 7 pixels per tile (2 x 7 lost half the speed of 1 x 7 on
  // ResNet-50's 1x1 convolutions of 1024 channels, registerTileRows); so
  // too if the step is not known.
  int64_t maxPixels =
      step == 0 || step % 4096 == 0 ? 7 : std::numeric_limits<int64_t>::max();
  auto [rest, restCost] =
      cheapestRegisterTile(width - main, ranges[1], vectors * tiles.lanes, maxPixels, tiles);
  double split = main * registerTileCost(1, widest, vectors, tiles) + (width - main) * restCost;
  double whole =
      width * registerTileCost(rows, pixels, std::max<int64_t>(1, channels / tiles.lanes), tiles);
  if (!(split < 0.9 * whole))
    return {};
  rest.offset = main;
  return {{0, main, 1, widest, vectors * tiles.lanes}, rest};
}

} // namespace

/// NHWC convolution or pooling inside a workgroup tile, as register tiles of
/// output pixels of one row by channels (channelsLastRegisterTile; AVX-512:
/// 8 x 32, 16 x 16 for narrow layers), one kernel position and
/// (convolution) one input channel at a time: the convolution's tile is then
/// a matmul step like tileMatmul's register tile (8x32x1 on AVX-512), whose
/// accumulators stay in registers across the kh, kw and c loops. Sizes divide
/// the (static) extents; unit rows make them 1-D once decomposed.
void tileChannelsLastWindow(RewriterBase &rewriter, linalg::LinalgOp op,
                            const RegisterTiles &registers) {
  // Loops: n, oh, ow, f|c, kh, kw[, c].
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  if (llvm::any_of(ArrayRef<int64_t>(ranges).drop_front(), ShapedType::isDynamic))
    return;
  auto tileBy = [&](linalg::LinalgOp conv, int64_t rows, int64_t pixels, int64_t channels) {
    SmallVector<int64_t> tiles = {1, rows, pixels, channels, 1, 1};
    if (ranges.size() == 7)
      tiles.push_back(1);
    if (Operation *tile = tileOp(rewriter, cast<TilingInterface>(conv.getOperation()), tiles))
      (void)splitRegisterTileRows(rewriter, tile);
  };
  // Pooling on AVX-512: nothing is reused between channels (no filter row,
  // no broadcast), so a tile reads as much of each pixel as it can: up to
  // 8 registers of channels (a power of two: a vector<96xf32> lowered to
  // scalar inserts), as many pixels as the accumulators hold (SqueezeNet's
  // 3x3 / 2 max poolings of 128-512 channels: 0.6-0.85x the time of 8 or 6
  // pixels x 32 channels on AMD Zen 4; not measured on AVX2, which keeps
  // the convolutions' tiles).
  if (registers.registers > 16 &&
      isa<linalg::PoolingNhwcMaxOp, linalg::PoolingNhwcSumOp>(op.getOperation()) &&
      ranges[3] % registers.lanes == 0) {
    int64_t vectors = largestPowerOfTwoDivisorAtMost(ranges[3] / registers.lanes, 8);
    int64_t pixels = largestDivisorAtMost(ranges[2], registers.accumulators / vectors);
    tileBy(op, 1, pixels, vectors * registers.lanes);
    return;
  }
  // Register tiles of rows x pixels x channels, or the widest tiles for
  // most of the row and another for the rest (pixelSegments).
  auto tileRows = [&](linalg::LinalgOp conv, int64_t rows, int64_t pixels, int64_t channels) {
    if (SmallVector<PixelSegment> segments =
            pixelSegments(conv, rows, pixels, channels, registers);
        !segments.empty()) {
      auto pieces = splitLoop(rewriter, conv, nullptr, 2, loopParts<PixelSegment>(segments));
      for (auto [piece, segment] : llvm::zip(pieces, segments))
        tileBy(piece.second, segment.rows, segment.pixels, segment.channels);
      if (!pieces.empty())
        return;
    }
    tileBy(conv, rows, pixels, channels);
  };
  // Output channels a multiple of 8 but not of 32: 32-wide register tiles
  // for most of them, 16 / 8 for the rest; two rows where registerTileRows
  // says so, as below (AVX2: 7 x 8 tiles of 14-pixel rows).
  if (SmallVector<ChannelSegment> segments = channelSegments(op, registers); !segments.empty()) {
    auto pieces = splitLoop(rewriter, op, nullptr, 3, loopParts<ChannelSegment>(segments));
    for (auto [piece, segment] : llvm::zip(pieces, segments)) {
      auto [pixels, channels] = registerTileOf(ranges[2], segment.channels, registers);
      tileRows(piece.second, registerTileRows(piece.second, ranges, pixels, channels, registers),
               pixels, channels);
    }
    if (!pieces.empty())
      return;
  }
  // 16 zmm accumulators: 8 pixels x 32 channels, or 16 x 16 when a tile
  // has 16 channels or fewer (the first layers of small CNNs); AVX2: 12
  // ymm, 6 x 16.
  auto [pixels, channels] = channelsLastRegisterTile(ranges, registers);
  tileRows(op, registerTileRows(op, ranges, pixels, channels, registers), pixels, channels);
}

/// A padded max pooling read at clamped indices (ClampedMaxPooling.h) inside
/// a workgroup tile, the fill of its output fused: tiles of one pixel by up
/// to 32 channels, each lowered to one contiguous channel vector read from
/// the unpadded source per window position (the clamps are scalar index
/// arithmetic) max-ed as a tree with the fill's vector, all in registers.
/// Returns the ops it made that the caller must leave alone; empty if it
/// could not tile (the op is then as it was).
SmallVector<Operation *> tileClampedMaxPooling(RewriterBase &rewriter, linalg::LinalgOp op,
                                               const RegisterTiles &tiles) {
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  if (llvm::any_of(ArrayRef<int64_t>(ranges).drop_front(), ShapedType::isDynamic))
    return {};
  // Loops: n, oh, ow, kh, kw, c.
  int64_t channels = largestPowerOfTwoDivisorAtMost(ranges[5], tiles.matmulColumns);
  scf::SCFTileAndFuseOptions options;
  options.tilingOptions.setTileSizes(
      getAsIndexOpFoldResult(op.getContext(), {1, 1, 1, 0, 0, channels}));
  rewriter.setInsertionPoint(op);
  FailureOr<scf::SCFTileAndFuseResult> result =
      scf::tileConsumerAndFuseProducersUsingSCF(rewriter, cast<TilingInterface>(*op), options);
  if (failed(result))
    return {};
  for (auto [original, replacement] : result->replacements)
    rewriter.replaceAllUsesWith(original, replacement);
  // The untiled pooling and the fill of its output are dead now, but for
  // loop bounds read off the fill: read them off the fill's destination.
  auto fill = op.getDpsInits()[0].getDefiningOp<linalg::FillOp>();
  if (op->use_empty())
    rewriter.eraseOp(op);
  if (fill) {
    for (Operation *user : llvm::make_early_inc_range(fill->getResult(0).getUsers()))
      if (auto dim = dyn_cast<tensor::DimOp>(user)) {
        rewriter.setInsertionPoint(dim);
        rewriter.replaceOpWithNewOp<tensor::DimOp>(dim, fill.getDpsInits()[0], dim.getIndex());
      }
    if (fill->use_empty())
      rewriter.eraseOp(fill);
  }
  // Ops left as they are (not vectorized) go to `made`; the others are
  // replaced and erased.
  SmallVector<Operation *> made;
  for (Operation *fused : result->tiledAndFusedOps) {
    auto tile = dyn_cast<linalg::LinalgOp>(fused);
    if (!tile)
      continue;
    SmallVector<int64_t> shape = tile.getStaticLoopRanges();
    if (llvm::any_of(shape, ShapedType::isDynamic)) {
      made.push_back(fused);
      continue;
    }
    if (isa<linalg::FillOp>(fused)) {
      if (!vectorizeOp(rewriter, fused, shape))
        made.push_back(fused);
      continue;
    }
    if (!isClampedMaxPooling(fused)) {
      made.push_back(fused);
      continue;
    }
    if (!lowerClampedMaxPoolingTile(rewriter, fused))
      made.push_back(fused);
  }
  return made;
}

/// An NHWC convolution (named, depthwise or packed-filter) whose only use is
/// `epilogue`, an all-parallel generic that reads it element for element
/// (bias, batch norm, activation, residual add): the convolution, or null.
linalg::LinalgOp convolutionBeforeEpilogue(linalg::GenericOp epilogue) {
  if (!epilogue.hasPureTensorSemantics() || hasI1Operand(epilogue) || epilogue.getNumLoops() != 4 ||
      epilogue.getNumParallelLoops() != 4 || epilogue.getNumResults() != 1 ||
      !epilogue.getMatchingIndexingMap(epilogue.getDpsInitOperand(0)).isIdentity())
    return nullptr;
  for (OpOperand *input : epilogue.getDpsInputOperands()) {
    auto conv = input->get().getDefiningOp<linalg::LinalgOp>();
    if (!conv || !input->get().hasOneUse() ||
        !epilogue.getMatchingIndexingMap(input).isIdentity() ||
        !(isa<linalg::Conv2DNhwcHwcfOp, linalg::DepthwiseConv2DNhwcHwcOp>(conv.getOperation()) ||
          isPackedConvolution(conv)))
      continue;
    SmallVector<int64_t> ranges = conv.getStaticLoopRanges();
    if (llvm::any_of(ArrayRef<int64_t>(ranges).drop_front(), ShapedType::isDynamic))
      return nullptr;
    // Whole filter tiles, or parts of one (a group of a grouped one).
    int64_t filterTile = packedConvolutionTile(conv);
    if (filterTile && ranges[3] % filterTile != 0 && filterTile % ranges[3] != 0)
      return nullptr;
    return conv;
  }
  return nullptr;
}

namespace {

/// A fused fill tile whose destination is a static slice of an empty tensor
/// gets a static empty tensor of the slice's shape instead. With a dynamic
/// batch the workgroup's accumulator is `tensor.empty(%n) : ?xHxWxF`, whose
/// slices do not fold after register tiling: it bufferized to one heap
/// allocation per workgroup that every register tile zero-filled, stored
/// its accumulators to and read them back from for the epilogue (every
/// convolution of every zoo model, whose batch is dynamic). A tile-sized
/// empty tensor leaves nothing in memory once the fill's zeros and the
/// accumulators are forwarded.
void fillTileIntoOwnEmpty(RewriterBase &rewriter, linalg::FillOp fill) {
  auto slice = fill.getOutputs()[0].getDefiningOp<tensor::ExtractSliceOp>();
  if (!slice || !slice.getSource().getDefiningOp<tensor::EmptyOp>())
    return;
  auto type = cast<RankedTensorType>(slice.getType());
  if (!type.hasStaticShape())
    return;
  rewriter.setInsertionPoint(slice);
  Value empty = tensor::EmptyOp::create(rewriter, slice.getLoc(), type.getShape(),
                                        type.getElementType());
  rewriter.modifyOpInPlace(fill, [&] { fill.getOutputsMutable()[0].set(empty); });
}

} // namespace

namespace {

SmallVector<Operation *> tileConvolutionWithEpilogueBy(RewriterBase &rewriter,
                                                       linalg::GenericOp epilogue,
                                                       linalg::LinalgOp conv,
                                                       int64_t pixels, int64_t channels,
                                                       int64_t rows);

/// tileConvolutionWithEpilogueBy with register tiles of `rows` x `pixels` x
/// `channels`, or on AVX2 the widest tiles for most of the row and another
/// for the rest (pixelSegments).
SmallVector<Operation *> tileConvolutionRowsWithEpilogue(RewriterBase &rewriter,
                                                         linalg::GenericOp epilogue,
                                                         linalg::LinalgOp conv, int64_t rows,
                                                         int64_t pixels, int64_t channels,
                                                         const RegisterTiles &tiles) {
  if (SmallVector<PixelSegment> segments = pixelSegments(conv, rows, pixels, channels, tiles);
      !segments.empty()) {
    auto pieces = splitLoop(rewriter, conv, epilogue, 2, loopParts<PixelSegment>(segments));
    SmallVector<Operation *> made;
    for (auto [piece, segment] : llvm::zip(pieces, segments))
      llvm::append_range(made, tileConvolutionWithEpilogueBy(rewriter, piece.first, piece.second,
                                                             segment.pixels, segment.channels,
                                                             segment.rows));
    if (!pieces.empty())
      return made;
  }
  return tileConvolutionWithEpilogueBy(rewriter, epilogue, conv, pixels, channels, rows);
}

} // namespace

/// A convolution and its elementwise epilogue, register tile by register
/// tile: the epilogue is tiled (1, 1, pixels, channels) with the
/// convolution and the fill of its accumulator fused into each tile, whose
/// reduction loops (kh, kw[, c]) are then tiled by 1. After vectorization
/// the accumulators start as zeros in registers, stay there across the
/// reduction and go through the epilogue before the one store of the
/// result tile: no pass over the convolution's result in memory. Returns
/// the convolution tiles it made (for the caller to leave alone; the fill
/// and epilogue tiles are already vectors), empty if it could not tile (the
/// ops are then as they were). A plain convolution with channel segments
/// gets one such tiling per segment.
SmallVector<Operation *> tileConvolutionWithEpilogue(RewriterBase &rewriter,
                                                     linalg::GenericOp epilogue,
                                                     linalg::LinalgOp conv,
                                                     const RegisterTiles &tiles) {
  // Output channels a multiple of 8 but not of 32: one convolution and
  // epilogue per channel segment, each with its own register tiles (and
  // rows: registerTileRows).
  if (SmallVector<ChannelSegment> segments = channelSegments(conv, tiles); !segments.empty()) {
    int64_t width = conv.getStaticLoopRanges()[2];
    auto pieces = splitLoop(rewriter, conv, epilogue, 3, loopParts<ChannelSegment>(segments));
    SmallVector<Operation *> made;
    for (auto [piece, segment] : llvm::zip(pieces, segments)) {
      // A packed convolution's segment lies in one filter tile: a named
      // convolution on its static filter slice, which register tiles of
      // any offset can slice (the packed generic's f floordiv T cannot
      // be sliced statically at a loop's offsets).
      linalg::LinalgOp segmentConv = piece.second;
      if (isPackedConvolution(segmentConv)) {
        SmallVector<Operation *> lowered = lowerPackedConvolutionTiles(rewriter, segmentConv);
        if (lowered.size() != 1)
          continue; // Left to the generic strategy.
        segmentConv = cast<linalg::LinalgOp>(lowered.front());
      }
      auto [pixels, channels] = registerTileOf(width, segment.channels, tiles);
      int64_t rows = registerTileRows(segmentConv, segmentConv.getStaticLoopRanges(), pixels,
                                      channels, tiles);
      llvm::append_range(made, tileConvolutionRowsWithEpilogue(rewriter, piece.first,
                                                               segmentConv, rows, pixels,
                                                               channels, tiles));
    }
    if (!pieces.empty())
      return made;
  }
  SmallVector<int64_t> ranges = conv.getStaticLoopRanges();
  auto [pixels, channels] = channelsLastRegisterTile(ranges, tiles);
  // Packed: one filter tile (32 channels), or the power of two dividing a
  // group's filter tile, with 16 pixels then for 16 channels or fewer (at
  // most the register tile's channels: half a filter tile with AVX2).
  if (int64_t packed = packedConvolutionRegisterChannels(conv))
    std::tie(pixels, channels) =
        registerTileOf(ranges[2], std::min(packed, tiles.matmulColumns), tiles);
  return tileConvolutionRowsWithEpilogue(rewriter, epilogue, conv,
                                         registerTileRows(conv, ranges, pixels, channels, tiles),
                                         pixels, channels, tiles);
}

namespace {

/// tileConvolutionWithEpilogue with register tiles of `rows` x `pixels` x
/// `channels`.
SmallVector<Operation *> tileConvolutionWithEpilogueBy(RewriterBase &rewriter,
                                                       linalg::GenericOp epilogue,
                                                       linalg::LinalgOp conv,
                                                       int64_t pixels, int64_t channels,
                                                       int64_t rows) {
  scf::SCFTileAndFuseOptions options;
  options.tilingOptions.setTileSizes(
      getAsIndexOpFoldResult(epilogue.getContext(), {1, rows, pixels, channels}));
  // A pad gather fused into the workgroup tile (DispatchFormation.cpp) stays
  // there: it fills the padded input of the whole workgroup tile once, and
  // the register tiles read that scratch tile without bounds checks.
  options.setFusionControlFn(
      [](tensor::ExtractSliceOp, OpResult producer,
         bool) -> std::optional<scf::SCFTileAndFuseOptions::ControlFnResult> {
        if (isPadGather(producer.getOwner()))
          return std::nullopt;
        return scf::SCFTileAndFuseOptions::ControlFnResult{};
      });
  FailureOr<scf::SCFTileAndFuseResult> result =
      tileEpilogueWithProducers(rewriter, epilogue, conv, options);
  if (failed(result))
    return {};
  SmallVector<Operation *> made;
  for (Operation *op : result->tiledAndFusedOps) {
    auto fused = dyn_cast<linalg::LinalgOp>(op);
    if (!fused)
      continue;
    // The fill tile's destination: a tile-sized empty tensor of its own.
    if (auto fill = dyn_cast<linalg::FillOp>(op))
      fillTileIntoOwnEmpty(rewriter, fill);
    // The epilogue and fill tiles: one vector each, so that the fill's
    // zeros and the convolution's result reach the accumulators and the
    // epilogue by forwarding, not through memory.
    if (isa<linalg::FillOp, linalg::GenericOp>(op) && !isPackedConvolution(op)) {
      SmallVector<int64_t> shape = fused.getStaticLoopRanges();
      if (llvm::any_of(shape, ShapedType::isDynamic))
        continue;
      vectorizeOp(rewriter, op, shape);
      continue;
    }
    if (!(isa<linalg::Conv2DNhwcHwcfOp, linalg::DepthwiseConv2DNhwcHwcOp>(op) ||
          isPackedConvolution(op)))
      continue;
    SmallVector<Operation *> tiles = {op};
    if (isPackedConvolution(op))
      tiles = lowerPackedConvolutionTiles(rewriter, op);
    for (Operation *tile : tiles) {
      unsigned numLoops = cast<linalg::LinalgOp>(tile).getNumLoops();
      SmallVector<int64_t> reductionTiles(numLoops, 0);
      for (unsigned i = 4; i < numLoops; ++i)
        reductionTiles[i] = 1;
      if (Operation *tiled = tileOp(rewriter, cast<TilingInterface>(tile), reductionTiles))
        llvm::append_range(made, splitRegisterTileRows(rewriter, tiled));
    }
  }
  return made;
}

/// `dest` <- `source` (same shape), as an all-parallel generic.
linalg::GenericOp copyTile(RewriterBase &rewriter, Location loc, Value source, Value dest) {
  auto type = cast<RankedTensorType>(dest.getType());
  AffineMap identity = rewriter.getMultiDimIdentityMap(type.getRank());
  SmallVector<utils::IteratorType> parallel(type.getRank(), utils::IteratorType::parallel);
  return linalg::GenericOp::create(
      rewriter, loc, TypeRange{type}, ValueRange{source}, ValueRange{dest},
      ArrayRef<AffineMap>{identity, identity}, parallel,
      [](OpBuilder &b, Location loc, ValueRange args) {
        linalg::YieldOp::create(b, loc, args[0]);
      });
}


/// Makes a blocked convolution accumulate in a tile-sized scratch tensor
/// (contiguous, so that its pixels do not collide in L1 as those of a wide
/// NHWC result, 2 KB apart, do) unless it already does (its accumulator is
/// a fill of a tensor.empty: the convolution feeds an epilogue); the result
/// is copied to the original accumulator's place after the reduction. The
/// fill or copy in and the copy out are vectorized here.
void accumulateInScratch(RewriterBase &rewriter, linalg::LinalgOp conv) {
  Value init = conv.getDpsInits()[0];
  auto fill = init.getDefiningOp<linalg::FillOp>();
  if (fill && fill.getOutputs()[0].getDefiningOp<tensor::EmptyOp>())
    return;
  auto type = cast<RankedTensorType>(init.getType());
  Location loc = conv.getLoc();
  rewriter.setInsertionPoint(conv);
  SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(rewriter, loc, init);
  Value empty = tensor::EmptyOp::create(rewriter, loc, sizes, type.getElementType());
  Value dest = init;
  linalg::LinalgOp copyIn;
  if (fill) {
    copyIn = linalg::FillOp::create(rewriter, loc, fill.getInputs()[0], empty);
    dest = fill.getOutputs()[0];
  } else {
    copyIn = copyTile(rewriter, loc, init, empty);
  }
  rewriter.modifyOpInPlace(conv, [&] { conv.getDpsInitsMutable()[0].set(copyIn->getResult(0)); });
  rewriter.setInsertionPointAfter(conv);
  linalg::GenericOp copyOut = copyTile(rewriter, loc, conv->getResult(0), dest);
  rewriter.replaceAllUsesExcept(conv->getResult(0), copyOut.getResult(0), copyOut);
  tileAndVectorizeGeneric(rewriter, copyIn);
  tileAndVectorizeGeneric(rewriter, copyOut);
}

} // namespace

/// A convolution with a packed filter (ConvolutionFilterPacking.cpp): each
/// 32-channel tile becomes an NHWC convolution over its contiguous filter
/// slice, tiled like any other; if that is not possible (output channels
/// not static), the generic strategy keeps it correct.
/// With `blockReduction` (ConvolutionReductionBlocking.h), each channel
/// tile's reduction is first tiled into blocks (kernel position, up to 64
/// input channels) outside its register tiles.
void tilePackedConvolution(RewriterBase &rewriter, linalg::LinalgOp op,
                           bool blockReduction, const RegisterTiles &tiles) {
  SmallVector<Operation *> convolutions = lowerPackedConvolutionTiles(rewriter, op);
  if (convolutions.empty()) {
    tileAndVectorizeGeneric(rewriter, op);
    return;
  }
  for (Operation *convolution : convolutions) {
    if (blockReduction) {
      accumulateInScratch(rewriter, cast<linalg::LinalgOp>(convolution));
      if (Operation *block = tileReductionBlocks(rewriter, convolution))
        convolution = block;
    }
    tileChannelsLastWindow(rewriter, cast<linalg::LinalgOp>(convolution), tiles);
  }
}

/// Rewrites the unit-height convolution and pooling tiles as 1-D ones and
/// vectorizes those with static shapes.
void vectorizeConvolutions(RewriterBase &rewriter, func::FuncOp kernel) {
  RewritePatternSet patterns(kernel.getContext());
  linalg::populateDecomposeConvolutionPatterns(patterns);
  (void)applyPatternsGreedily(kernel, std::move(patterns));
  SmallVector<linalg::LinalgOp> convolutions;
  kernel.walk([&](linalg::LinalgOp op) {
    if (isa<linalg::Conv1DNcwFcwOp, linalg::Conv1DNwcWcfOp, linalg::DepthwiseConv1DNwcWcOp,
            linalg::PoolingNwcMaxOp, linalg::PoolingNwcSumOp>(op.getOperation()) &&
        op.hasPureTensorSemantics() &&
        !llvm::any_of(op.getStaticLoopRanges(), ShapedType::isDynamic))
      convolutions.push_back(op);
  });
  for (linalg::LinalgOp op : convolutions)
    vectorizeOp(rewriter, op, {});
}

} // namespace turbine::compiler
