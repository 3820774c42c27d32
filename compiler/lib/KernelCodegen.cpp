//===- KernelCodegen.cpp - Tile, vectorize and bufferize every kernel -----===//
//
// Per kernel function (on tensors, as dispatch formation left it):
//  1. Workgroup level: tile the op producing the kernel's first result with
//     the kernel's workgroup tiles and fuse its producers (fill, matmul, ...)
//     into the tile loops; the loops then stride over workgroups
//     (lb + id * step, step * count), so one call computes one workgroup's
//     tiles.
//  2. Vector level, per op inside the workgroup tile:
//       matmul / batch_matmul / packed matmul (MatmulDataTiling.h): K tiled
//       by 256, rows split at the last multiple of 8; the full rows get an
//       8x32x1 register tile whose M and N loops are peeled so full tiles
//       are static; those are vectorized to vector.contract (lowered to
//       outer products = FMAs); leftover rows (small or dynamic batch, GEMV)
//       go one row at a time, 1x128x1 then 1x32x1; partial tiles (N = 10)
//       are vectorized with masks;
//       NHWC convolutions and pooling: register tiles of 8 pixels x 32
//       channels (16 x 16 for narrow layers), decomposed to 1-D and
//       vectorized; packed-filter convolutions (ConvolutionFilterPacking.cpp)
//       become one such convolution per 32-channel tile; those with large
//       filter slices and small images (ConvolutionReductionBlocking.h)
//       first get their reduction tiled into blocks outside the register
//       tiles, accumulate in a scratch tile and prefetch filter blocks; a
//       max pooling whose pad joined its kernel reads the unpadded source at
//       clamped indices (ClampedMaxPooling.h), one pixel x 32 channels at a
//       time; the padded NHWC copy of a few-channel NCHW image is built by
//       rows with shuffles (ChannelsLastInputGather.h);
//       everything else: inner loop tiled by 64, outer loops by 1, vectorized
//       with masks for partial tiles (elementwise, broadcast, transpose,
//       reductions, pads); other gathers stay scalar for now.
//     Loop-carried tiles are then hoisted into iter_args on tensors, so the
//     matmul accumulator stays in registers across K.
//  3. One-shot bufferization writing results in place into output bindings,
//     vector lowering, and lowering to the LLVM dialect.
//===----------------------------------------------------------------------===//
#include "ChannelsLastInputGather.h"
#include "ClampedMaxPooling.h"
#include "ConvolutionFilterPacking.h"
#include "ConvolutionReductionBlocking.h"
#include "LowerPads.h"
#include "MatmulDataTiling.h"
#include "MatmulEpilogueInPlace.h"
#include "MatmulKernelPacking.h"
#include "PaddedResults.h"
#include "Phases.h"
#include "WorkgroupTiling.h"

#include "turbine/compiler/Dialect/TurbineDialect.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/OneShotAnalysis.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/Transforms.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Hoisting.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/MemRef/Transforms/Transforms.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/TileUsingInterface.h"
#include "mlir/Dialect/SCF/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tensor/Transforms/Transforms.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Dialect/Vector/Transforms/LoweringPatterns.h"
#include "mlir/Dialect/Vector/Transforms/VectorRewritePatterns.h"
#include "mlir/Interfaces/ValueBoundsOpInterface.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "mlir/Transforms/LoopInvariantCodeMotionUtils.h"
#include "mlir/Transforms/Passes.h"

#include <cstdlib>
#include <functional>

using namespace mlir;

namespace turbine::compiler {

LogicalResult lowerKernelsToLLVM(ModuleOp kernels, const CompileOptions &options);

namespace {

constexpr int64_t kMatmulTileK = 256;
constexpr int64_t kMatmulRegisterM = 8;
constexpr int64_t kMatmulRegisterN = 32;
// Columns of the one-row register tile (rows left over, GEMV): 8 zmm.
constexpr int64_t kGemvColumns = 128;
constexpr int64_t kVectorWidth = 64;

/// Tiles `op` with `tileSizes` (scf.for loops, no fusion). Returns the tiled
/// op, or null if tiling failed (the op is left as it was).
Operation *tileOp(RewriterBase &rewriter, TilingInterface op,
                  ArrayRef<int64_t> tileSizes) {
  if (llvm::all_of(tileSizes, [](int64_t t) { return t == 0; }))
    return op;
  scf::SCFTilingOptions options;
  options.setTileSizes(getAsIndexOpFoldResult(op.getContext(), tileSizes));
  rewriter.setInsertionPoint(op);
  FailureOr<scf::SCFTilingResult> tiled =
      scf::tileUsingSCF(rewriter, op, options);
  if (failed(tiled) || tiled->tiledOps.empty())
    return nullptr;
  rewriter.replaceOp(op, tiled->replacements);
  return tiled->tiledOps.front();
}

bool isMatmulLike(Operation *op) {
  return isa<linalg::MatmulOp, linalg::BatchMatmulOp>(op) || isPackedMatmul(op);
}

/// Vectorizes `op` with the given vector sizes (masked where its shape is
/// dynamic). Leaves the op alone if the vectorizer cannot handle it (returns
/// false then; true once `op` is replaced and erased).
bool vectorizeOp(RewriterBase &rewriter, Operation *op,
                 ArrayRef<int64_t> vectorSizes) {
  rewriter.setInsertionPoint(op);
  // One flag per vector dim: the vectorizer indexes them unchecked.
  SmallVector<bool> scalableDims(vectorSizes.size(), false);
  FailureOr<linalg::VectorizationResult> result = linalg::vectorize(
      rewriter, op, vectorSizes, scalableDims,
      /*vectorizeNDExtract=*/true, /*flatten1DDepthwiseConv=*/false,
      /*assumeDynamicDimsMatchVecSizes=*/false,
      /*createNamedContraction=*/isMatmulLike(op));
  if (failed(result))
    return false;
  if (op->getNumResults() == 0)
    rewriter.eraseOp(op);
  else
    rewriter.replaceOp(op, result->replacements);
  return true;
}

/// Static upper bounds of `op`'s loops: its static extents, or for a dynamic
/// extent the tile size it was tiled with (partial tiles are smaller).
std::optional<SmallVector<int64_t>>
boundedLoopRanges(linalg::LinalgOp op, ArrayRef<int64_t> tileSizes) {
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  SmallVector<int64_t> bounds;
  for (auto [i, r] : llvm::enumerate(ranges)) {
    if (!ShapedType::isDynamic(r)) {
      bounds.push_back(r);
      continue;
    }
    if (i < tileSizes.size() && tileSizes[i] > 0) {
      bounds.push_back(tileSizes[i]);
      continue;
    }
    return std::nullopt;
  }
  return bounds;
}


/// Tiles a matmul's rows with the register tile (`rows` x 32 columns x 1 k;
/// a packed matmul's row tile spans one whole panel) and peels the row and
/// column loops so that full tiles get static shapes; partial tiles keep
/// dynamic shapes bounded by the tile and are vectorized with masks later.
void tileMatmulRegisters(RewriterBase &rewriter, Operation *op, int64_t rows,
                         int64_t columns) {
  auto linalgOp = cast<linalg::LinalgOp>(op);
  unsigned numLoops = linalgOp.getNumLoops();
  bool packed = isPackedMatmul(op);
  unsigned mDim = packed ? 1 : numLoops - 3;
  SmallVector<int64_t> registerTiles(numLoops, 1);
  registerTiles[mDim] = rows;
  if (packed)
    registerTiles[2] = 0; // n0: the whole panel width (32).
  else
    registerTiles[numLoops - 2] = columns;
  scf::SCFTilingOptions options;
  options.setTileSizes(getAsIndexOpFoldResult(op->getContext(), registerTiles));
  rewriter.setInsertionPoint(op);
  FailureOr<scf::SCFTilingResult> tiled =
      scf::tileUsingSCF(rewriter, cast<TilingInterface>(op), options);
  if (failed(tiled))
    return;
  rewriter.replaceOp(op, tiled->replacements);
  // One loop per tiled dim, outermost first.
  auto loopOf = [&](unsigned dim) -> scf::ForOp {
    unsigned index = 0;
    for (unsigned d = 0; d < dim; ++d)
      index += registerTiles[d] > 0;
    if (registerTiles[dim] == 0 || index >= tiled->loops.size())
      return nullptr;
    return dyn_cast<scf::ForOp>(tiled->loops[index].getOperation());
  };
  scf::ForOp nLoop = packed ? nullptr : loopOf(numLoops - 2);
  scf::ForOp mLoop = rows > 1 ? loopOf(mDim) : nullptr;
  scf::ForOp remainder;
  // Columns first: the row loop's peeled copy then holds peeled columns too.
  if (nLoop)
    (void)scf::peelForLoopAndSimplifyBounds(rewriter, nLoop, remainder);
  if (mLoop)
    (void)scf::peelForLoopAndSimplifyBounds(rewriter, mLoop, remainder);
}

void tileAndVectorizeGeneric(RewriterBase &rewriter, linalg::LinalgOp op);
void tileMatmulRows(RewriterBase &rewriter, Operation *current);

/// Matmul / batch_matmul / packed matmul inside a workgroup tile: K tiled by
/// 256, then the rows split at the last multiple of 8. The first part gets
/// the 8x32x1 register tile (16 zmm accumulators); the rows left over (a
/// small or dynamic batch, M = 1 for a GEMV) go one row at a time with a
/// 1x128x1 tile (8 accumulators, so that the FMA chains across k overlap),
/// columns left over by 32. A packed matmul (loops nb, m, n0, k;
/// MatmulDataTiling.h) gets the same row tiles over one panel (nb by 1, n0
/// whole). Partial tiles (N = 10, a dynamic row count) are vectorized with
/// masks (vectorizeMatmulTiles). A matmul marked for a pack of B in its
/// kernel (MatmulKernelPacking.h) becomes, per K tile, that pack (a copy,
/// vectorized like any generic) and a packed matmul.
void tileMatmul(RewriterBase &rewriter, linalg::LinalgOp op) {
  SmallVector<int64_t> kTiles(op.getNumLoops(), 0);
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  if (ShapedType::isDynamic(ranges.back()) || ranges.back() > kMatmulTileK)
    kTiles.back() = kMatmulTileK;
  Operation *current = tileOp(rewriter, cast<TilingInterface>(*op), kTiles);
  if (!current)
    return;
  if (packsBInKernel(current)) {
    static_assert(kMatmulTileK <= kKernelPackMaxDepth);
    KernelPackedMatmul packed = packMatmulBInKernel(rewriter, current);
    if (packed.contract) {
      tileAndVectorizeGeneric(rewriter, cast<linalg::LinalgOp>(packed.pack));
      current = packed.contract;
    }
  }
  tileMatmulRows(rewriter, current);
}

/// tileMatmul after K tiling: the row split and register tiles.
void tileMatmulRows(RewriterBase &rewriter, Operation *current) {
  auto op = cast<linalg::LinalgOp>(current);
  unsigned numLoops = op.getNumLoops();
  bool packed = isPackedMatmul(op);
  unsigned mDim = packed ? 1 : numLoops - 3;
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  int64_t m = ranges[mDim];
  Operation *fullRows = current, *leftoverRows = nullptr;
  if (!ShapedType::isDynamic(m) && m < kMatmulRegisterM) {
    fullRows = nullptr;
    leftoverRows = current;
  } else if (ShapedType::isDynamic(m) || m % kMatmulRegisterM != 0) {
    // Split at floor(M / 8) * 8.
    rewriter.setInsertionPoint(current);
    Location loc = current->getLoc();
    SmallVector<Range> domain =
        cast<TilingInterface>(current).getIterationDomain(rewriter);
    AffineExpr s0;
    bindSymbols(rewriter.getContext(), s0);
    OpFoldResult split = affine::makeComposedFoldedAffineApply(
        rewriter, loc, s0.floorDiv(kMatmulRegisterM) * kMatmulRegisterM,
        {domain[mDim].size});
    auto [first, second] =
        linalg::splitOp(rewriter, cast<TilingInterface>(current), mDim, split);
    fullRows = first ? first.getOperation() : nullptr;
    leftoverRows = second ? second.getOperation() : nullptr;
  }
  if (fullRows)
    tileMatmulRegisters(rewriter, fullRows, kMatmulRegisterM, kMatmulRegisterN);
  if (!leftoverRows)
    return;
  if (packed) {
    tileMatmulRegisters(rewriter, leftoverRows, 1, 0);
    return;
  }
  // One row at a time, 128 columns wide; the columns past the last 128 by 32.
  SmallVector<int64_t> rowTiles(numLoops, 0);
  for (unsigned batch = 0; batch <= mDim; ++batch)
    rowTiles[batch] = 1;
  rowTiles[numLoops - 2] = kGemvColumns;
  rewriter.setInsertionPoint(leftoverRows);
  scf::SCFTilingOptions options;
  options.setTileSizes(getAsIndexOpFoldResult(op.getContext(), rowTiles));
  FailureOr<scf::SCFTilingResult> tiled =
      scf::tileUsingSCF(rewriter, cast<TilingInterface>(leftoverRows), options);
  if (failed(tiled))
    return;
  rewriter.replaceOp(leftoverRows, tiled->replacements);
  auto columnLoop = dyn_cast<scf::ForOp>(tiled->loops.back().getOperation());
  Operation *wide = tiled->tiledOps.front();
  scf::ForOp columnRemainder;
  if (columnLoop)
    (void)scf::peelForLoopAndSimplifyBounds(rewriter, columnLoop, columnRemainder);
  SmallVector<Operation *> narrow;
  if (columnRemainder)
    columnRemainder->walk([&](linalg::LinalgOp inner) {
      if (isMatmulLike(inner))
        narrow.push_back(inner);
    });
  // The full 128-wide tile: k by 1 (a 1x128x1 step).
  SmallVector<int64_t> kByOne(numLoops, 0);
  kByOne.back() = 1;
  (void)tileOp(rewriter, cast<TilingInterface>(wide), kByOne);
  for (Operation *inner : narrow)
    tileMatmulRegisters(rewriter, inner, 1, kMatmulRegisterN);
}

/// Ops the generic vector strategy handles well: fills and generics whose
/// operands are read through projected permutations (elementwise, broadcast,
/// transpose, reductions) with no gathers except pads. Convolutions, pooling
/// and other gather-style generics stay scalar for now (tiled, lowered to
/// loops).
bool isVectorizableByGenericStrategy(linalg::LinalgOp op) {
  // Vectors of i1 are bit-packed in memory while tensors of i1 hold a byte
  // per element: ops touching i1 buffers stay scalar.
  if (llvm::any_of(op->getOperandTypes(), [](Type t) {
        auto shaped = dyn_cast<ShapedType>(t);
        return shaped && shaped.getElementType().isInteger(1);
      }))
    return false;
  if (isa<linalg::FillOp>(op))
    return true;
  auto generic = dyn_cast<linalg::GenericOp>(op.getOperation());
  if (!generic)
    return false;
  if (!llvm::all_of(generic.getIndexingMapsArray(),
                    [](AffineMap map) { return map.isProjectedPermutation(); }))
    return false;
  bool hasGather = false;
  generic.getBody()->walk([&](Operation *inner) {
    if (isa<tensor::ExtractOp, linalg::IndexOp>(inner))
      hasGather = true;
  });
  // A pad's gather reads the source at clamped indices whose innermost one
  // is the innermost loop's: the vectorizer turns that into contiguous loads
  // (NHWC pads in front of convolutions, vectorized over channels).
  return !hasGather || isPadGather(generic);
}

/// Everything but matmul inside a workgroup tile: the innermost loop tiled by
/// 64 and the others by 1, then vectorized with masks for partial tiles.
void tileAndVectorizeGeneric(RewriterBase &rewriter, linalg::LinalgOp op) {
  unsigned numLoops = op.getNumLoops();
  if (numLoops == 0)
    return;
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  SmallVector<int64_t> tiles(numLoops, 1);
  int64_t inner = ranges.back();
  tiles.back() = (!ShapedType::isDynamic(inner) && inner <= kVectorWidth)
                     ? 0
                     : kVectorWidth;
  for (unsigned i = 0; i + 1 < numLoops; ++i)
    if (ranges[i] == 1)
      tiles[i] = 0;
  Operation *current = tileOp(rewriter, cast<TilingInterface>(*op), tiles);
  if (!current)
    return;
  auto tiled = cast<linalg::LinalgOp>(current);
  if (!isVectorizableByGenericStrategy(tiled))
    return;
  std::optional<SmallVector<int64_t>> bounds = boundedLoopRanges(tiled, tiles);
  if (!bounds)
    return;
  vectorizeOp(rewriter, tiled, *bounds);
}

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

/// Register tile (pixels, channels) of an NHWC convolution or pooling with
/// static loop ranges `ranges` (n, oh, ow, f|c, ...): 8 x 32, or 16 x 16
/// when a tile has 16 channels or fewer (power-of-two channel counts); both
/// divide the extents.
std::pair<int64_t, int64_t> channelsLastRegisterTile(ArrayRef<int64_t> ranges) {
  // A power of two: vectors of other widths (24 channels) lower to shuffles
  // that cost 10-30x.
  int64_t channels = largestPowerOfTwoDivisorAtMost(ranges[3], 32);
  int64_t pixelLimit = channels <= 16 ? 16 : 8;
  return {largestDivisorAtMost(ranges[2], pixelLimit), channels};
}

/// NHWC convolution or pooling inside a workgroup tile, as register tiles of
/// 8 output pixels of one row by up to 32 channels (16 x 16 for narrow
/// layers), one kernel position and
/// (convolution) one input channel at a time: the convolution's tile is then
/// an 8x32x1 matmul step, the same register tile as tileMatmul's, whose
/// accumulators stay in registers across the kh, kw and c loops. Sizes divide
/// the (static) extents; unit rows make them 1-D once decomposed.
void tileChannelsLastWindow(RewriterBase &rewriter, linalg::LinalgOp op) {
  // Loops: n, oh, ow, f|c, kh, kw[, c].
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  if (llvm::any_of(ArrayRef<int64_t>(ranges).drop_front(), ShapedType::isDynamic))
    return;
  // 16 zmm accumulators: 8 pixels x 32 channels, or 16 x 16 when a tile
  // has 16 channels or fewer (the first layers of small CNNs).
  auto [pixels, channels] = channelsLastRegisterTile(ranges);
  SmallVector<int64_t> tiles = {1, 1, pixels, channels, 1, 1};
  if (ranges.size() == 7)
    tiles.push_back(1);
  (void)tileOp(rewriter, cast<TilingInterface>(op.getOperation()), tiles);
}

/// A padded max pooling read at clamped indices (ClampedMaxPooling.h) inside
/// a workgroup tile, the fill of its output fused: tiles of one pixel by up
/// to 32 channels, each lowered to one contiguous channel vector read from
/// the unpadded source per window position (the clamps are scalar index
/// arithmetic) max-ed as a tree with the fill's vector, all in registers.
/// Returns the ops it made that the caller must leave alone; empty if it
/// could not tile (the op is then as it was).
SmallVector<Operation *> tileClampedMaxPooling(RewriterBase &rewriter, linalg::LinalgOp op) {
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  if (llvm::any_of(ArrayRef<int64_t>(ranges).drop_front(), ShapedType::isDynamic))
    return {};
  // Loops: n, oh, ow, kh, kw, c.
  int64_t channels = largestPowerOfTwoDivisorAtMost(ranges[5], kMatmulRegisterN);
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
  if (!epilogue.hasPureTensorSemantics() || epilogue.getNumLoops() != 4 ||
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
    if (isPackedConvolution(conv) && ranges[3] % 32 != 0)
      return nullptr;
    return conv;
  }
  return nullptr;
}

/// Tiles `epilogue` by `options` with `root` (a convolution or matmul whose
/// result it reads) and the fill of root's accumulator fused into each
/// tile, then erases the untiled ops. Loop bounds that were read off the
/// untiled results (tensor.dim) are read off the tensor root's chain of
/// destinations starts from (its tensor.empty, or the output it writes).
/// On failure the IR is as it was.
FailureOr<scf::SCFTileAndFuseResult>
tileEpilogueWithProducers(RewriterBase &rewriter, linalg::GenericOp epilogue,
                          linalg::LinalgOp root, const scf::SCFTileAndFuseOptions &options) {
  rewriter.setInsertionPoint(epilogue);
  FailureOr<scf::SCFTileAndFuseResult> result = scf::tileConsumerAndFuseProducersUsingSCF(
      rewriter, cast<TilingInterface>(epilogue.getOperation()), options);
  if (failed(result))
    return failure();
  for (auto [original, replacement] : result->replacements)
    rewriter.replaceAllUsesWith(original, replacement);
  Value shapeSource = root.getDpsInits()[0];
  while (auto dps = shapeSource.getDefiningOp<DestinationStyleOpInterface>())
    shapeSource = dps.getDpsInits()[cast<OpResult>(shapeSource).getResultNumber()];
  for (Operation *untiled : {epilogue.getOperation(), root.getOperation()})
    for (Operation *user : llvm::make_early_inc_range(untiled->getResult(0).getUsers()))
      if (auto dim = dyn_cast<tensor::DimOp>(user)) {
        rewriter.setInsertionPoint(dim);
        rewriter.replaceOpWithNewOp<tensor::DimOp>(dim, shapeSource, dim.getIndex());
      }
  for (Operation *dead : {epilogue.getOperation(), root.getOperation(),
                          root.getDpsInits()[0].getDefiningOp()})
    if (dead && isa<linalg::LinalgOp>(dead) && dead->use_empty())
      rewriter.eraseOp(dead);
  return result;
}

/// A convolution and its elementwise epilogue, register tile by register
/// tile: the epilogue is tiled (1, 1, pixels, channels) with the
/// convolution and the fill of its accumulator fused into each tile, whose
/// reduction loops (kh, kw[, c]) are then tiled by 1. After vectorization
/// the accumulators start as zeros in registers, stay there across the
/// reduction and go through the epilogue before the one store of the
/// result tile: no pass over the convolution's result in memory. Returns
/// the convolution tiles it made (for the caller to leave alone; the fill
/// and epilogue tiles are already vectors), empty if it could not tile (the
/// ops are then as they were).
SmallVector<Operation *> tileConvolutionWithEpilogue(RewriterBase &rewriter,
                                                     linalg::GenericOp epilogue,
                                                     linalg::LinalgOp conv) {
  auto [pixels, channels] = channelsLastRegisterTile(conv.getStaticLoopRanges());
  if (isPackedConvolution(conv))
    channels = 32;
  scf::SCFTileAndFuseOptions options;
  options.tilingOptions.setTileSizes(
      getAsIndexOpFoldResult(epilogue.getContext(), {1, 1, pixels, channels}));
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
      if (Operation *tiled =
              tileOp(rewriter, cast<TilingInterface>(tile), reductionTiles))
        made.push_back(tiled);
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

/// Marks the fill and epilogue tiles of tileMatmulWithEpilogue, vectorized
/// (with masks where partial) once canonicalization made the peeled full
/// tiles static (vectorizeRegisterEpilogues).
constexpr llvm::StringLiteral kRegisterEpilogueAttr = "turbine.register_epilogue";

/// A matmul inside a workgroup tile whose result is updated in place by
/// `epilogue` (MatmulEpilogueInPlace.h: the epilogue's destination is the
/// matmul's result), when one register-tile pass covers it: a plain or
/// batch matmul (batch 1, static columns, a multiple of 32) or a packed-B
/// contract, K static within one 256-deep K tile (attention's Q.K^T / 8,
/// K = 64; the transformer's projections, K = 256), rows static or dynamic.
/// The matmul, or null. Others (K tiles, B packed in the kernel) keep the
/// in-place epilogue as a pass over the output tile after the matmul.
linalg::LinalgOp matmulBeforeRegisterEpilogue(linalg::GenericOp epilogue) {
  if (!epilogue.hasPureTensorSemantics() || epilogue.getNumResults() != 1 ||
      epilogue.getNumParallelLoops() != epilogue.getNumLoops() ||
      !epilogue.getMatchingIndexingMap(epilogue.getDpsInitOperand(0)).isIdentity())
    return nullptr;
  Value init = epilogue.getDpsInits()[0];
  auto matmul = init.getDefiningOp<linalg::LinalgOp>();
  if (!matmul || !init.hasOneUse() ||
      !(isa<linalg::MatmulOp, linalg::BatchMatmulOp>(matmul.getOperation()) ||
        isPackedMatmul(matmul)) ||
      packsBInKernel(matmul) || !matmul.getDpsInits()[0].getDefiningOp<linalg::FillOp>())
    return nullptr;
  SmallVector<int64_t> ranges = matmul.getStaticLoopRanges();
  unsigned numLoops = ranges.size();
  if (ShapedType::isDynamic(ranges.back()) || ranges.back() > kMatmulTileK)
    return nullptr;
  if (isPackedMatmul(matmul))
    return ranges[0] == 1 || !ShapedType::isDynamic(ranges[0]) ? matmul : nullptr;
  for (unsigned batch = 0; batch + 3 < numLoops; ++batch)
    if (ranges[batch] != 1)
      return nullptr;
  int64_t columns = ranges[numLoops - 2];
  if (ShapedType::isDynamic(columns) || columns % kMatmulRegisterN != 0)
    return nullptr;
  return matmul;
}

/// A matmul and its in-place epilogue, register tile by register tile (as
/// tileConvolutionWithEpilogue does for convolutions): the epilogue is tiled
/// 8 rows x 32 columns (a packed contract: one panel) with the matmul and
/// the fill of its accumulator fused into each tile, the row loop peeled so
/// that full tiles get static shapes (the last partial one is tiled again
/// by one row), and each matmul tile's k loop tiled by 1. Vectorized, the accumulators start
/// as zeros in registers, stay there across k and go through the epilogue
/// before the one store of the tile. Returns the matmul, fill and epilogue
/// tiles it made (for the caller to leave alone), empty if it could not
/// tile (the ops are then as they were).
SmallVector<Operation *> tileMatmulWithEpilogue(RewriterBase &rewriter,
                                                linalg::GenericOp epilogue,
                                                linalg::LinalgOp matmul) {
  bool packed = isPackedMatmul(matmul);
  unsigned numLoops = epilogue.getNumLoops();
  // Epilogue loops: a packed contract's (m, nb, n0), else (batch..., m, n).
  SmallVector<int64_t> tiles(numLoops, 1);
  unsigned rowDim = packed ? 0 : numLoops - 2;
  tiles[rowDim] = kMatmulRegisterM;
  tiles[numLoops - 1] = packed ? 0 : kMatmulRegisterN;
  scf::SCFTileAndFuseOptions options;
  options.tilingOptions.setTileSizes(getAsIndexOpFoldResult(epilogue.getContext(), tiles));
  FailureOr<scf::SCFTileAndFuseResult> result =
      tileEpilogueWithProducers(rewriter, epilogue, matmul, options);
  if (failed(result))
    return {};
  // Tagged before peeling, which copies them into the partial tile's loop.
  constexpr llvm::StringLiteral matmulTag = "turbine.register_matmul_tile";
  for (Operation *op : result->tiledAndFusedOps) {
    if (!isa<linalg::LinalgOp>(op))
      continue;
    op->setAttr(isMatmulLike(op) ? matmulTag : kRegisterEpilogueAttr, rewriter.getUnitAttr());
  }
  // The row loop (one loop per tiled dim, outermost first): full tiles
  // first, the partial one peeled off.
  unsigned rowLoop = 0;
  for (unsigned d = 0; d < rowDim; ++d)
    rowLoop += tiles[d] > 0;
  Operation *outermost = result->loops.empty() ? nullptr : result->loops.front().getOperation();
  scf::ForOp remainder;
  if (rowLoop < result->loops.size())
    if (auto loop = dyn_cast<scf::ForOp>(result->loops[rowLoop].getOperation()))
      (void)scf::peelForLoopAndSimplifyBounds(rewriter, loop, remainder);
  // The partial tile's rows (fewer than 8) one at a time, as tileMatmulRows
  // does: static 1-row tiles, no masks, accumulators in registers.
  linalg::GenericOp partial;
  if (remainder)
    remainder->walk([&](linalg::GenericOp op) {
      if (op->hasAttr(kRegisterEpilogueAttr) && !isMatmulLike(op))
        partial = op;
    });
  if (partial) {
    SmallVector<int64_t> rowTiles = tiles;
    rowTiles[rowDim] = 1;
    scf::SCFTileAndFuseOptions rowOptions;
    rowOptions.tilingOptions.setTileSizes(
        getAsIndexOpFoldResult(epilogue.getContext(), rowTiles));
    rewriter.setInsertionPoint(partial);
    FailureOr<scf::SCFTileAndFuseResult> rows = scf::tileConsumerAndFuseProducersUsingSCF(
        rewriter, cast<TilingInterface>(partial.getOperation()), rowOptions);
    if (succeeded(rows)) {
      for (auto [original, replacement] : rows->replacements)
        rewriter.replaceAllUsesWith(original, replacement);
      for (Operation *op : rows->tiledAndFusedOps)
        if (isa<linalg::LinalgOp>(op))
          op->setAttr(isMatmulLike(op) ? matmulTag : kRegisterEpilogueAttr,
                      rewriter.getUnitAttr());
      // The 8-row partial tiles it replaces: epilogue, matmul, fill.
      SmallVector<Operation *> chain;
      for (Value v = partial->getResult(0); auto op = v.getDefiningOp<linalg::LinalgOp>();
           v = op.getDpsInits()[0])
        chain.push_back(op);
      Value start = cast<linalg::LinalgOp>(chain.back()).getDpsInits()[0];
      for (Operation *op : chain)
        for (Operation *user : llvm::make_early_inc_range(op->getResult(0).getUsers()))
          if (auto dim = dyn_cast<tensor::DimOp>(user)) {
            rewriter.setInsertionPoint(dim);
            rewriter.replaceOpWithNewOp<tensor::DimOp>(dim, start, dim.getIndex());
          }
      for (Operation *dead : chain)
        if (dead->use_empty())
          rewriter.eraseOp(dead);
    }
  }
  SmallVector<Operation *> made;
  if (!outermost)
    return made;
  SmallVector<Operation *> tagged;
  outermost->getParentOp()->walk([&](linalg::LinalgOp op) {
    if (op->hasAttr(matmulTag) || op->hasAttr(kRegisterEpilogueAttr))
      tagged.push_back(op);
  });
  for (Operation *op : tagged) {
    if (!op->hasAttr(matmulTag)) {
      made.push_back(op);
      continue;
    }
    op->removeAttr(matmulTag);
    SmallVector<int64_t> kByOne(cast<linalg::LinalgOp>(op).getNumLoops(), 0);
    kByOne.back() = 1;
    if (Operation *tiled = tileOp(rewriter, cast<TilingInterface>(op), kByOne))
      made.push_back(tiled);
  }
  return made;
}

std::optional<SmallVector<int64_t>> loopUpperBounds(linalg::LinalgOp op);

/// Vectorizes the fill and epilogue tiles of tileMatmulWithEpilogue: full
/// tiles as they are, the partial row tile with masks over 8 rows.
void vectorizeRegisterEpilogues(RewriterBase &rewriter, func::FuncOp kernel) {
  SmallVector<linalg::LinalgOp> tiles;
  kernel.walk([&](linalg::LinalgOp op) {
    if (op->hasAttr(kRegisterEpilogueAttr) && op.hasPureTensorSemantics())
      tiles.push_back(op);
  });
  for (linalg::LinalgOp op : tiles) {
    op->removeAttr(kRegisterEpilogueAttr);
    if (std::optional<SmallVector<int64_t>> bounds = loopUpperBounds(op))
      vectorizeOp(rewriter, op, *bounds);
  }
}

/// A convolution with a packed filter (ConvolutionFilterPacking.cpp): each
/// 32-channel tile becomes an NHWC convolution over its contiguous filter
/// slice, tiled like any other; if that is not possible (output channels
/// not static), the generic strategy keeps it correct.
/// With `blockReduction` (ConvolutionReductionBlocking.h), each channel
/// tile's reduction is first tiled into blocks (kernel position, up to 64
/// input channels) outside its register tiles.
void tilePackedConvolution(RewriterBase &rewriter, linalg::LinalgOp op,
                           bool blockReduction) {
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
    tileChannelsLastWindow(rewriter, cast<linalg::LinalgOp>(convolution));
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

/// Static upper bound of each of `op`'s loops (its extent where static, a
/// power of two at least the largest value of a dynamic extent), or nullopt
/// if some dynamic extent has none.
std::optional<SmallVector<int64_t>> loopUpperBounds(linalg::LinalgOp op) {
  SmallVector<int64_t> bounds = op.getStaticLoopRanges();
  for (auto [dim, bound] : llvm::enumerate(bounds)) {
    if (!ShapedType::isDynamic(bound))
      continue;
    Value operand;
    unsigned operandDim;
    if (failed(op.mapIterationSpaceDimToOperandDim(dim, operand, operandDim)))
      return std::nullopt;
    FailureOr<int64_t> upper = ValueBoundsConstraintSet::computeConstantBound(
        presburger::BoundType::UB,
        ValueBoundsConstraintSet::Variable(operand, operandDim),
        /*stopCondition=*/nullptr, /*closedUB=*/true);
    if (failed(upper))
      return std::nullopt;
    // A power of two (the tile size, not its remainder 31): other vector
    // widths split into several narrower operations.
    bound = static_cast<int64_t>(llvm::PowerOf2Ceil(*upper));
  }
  return bounds;
}

/// Vectorizes the register-tile matmuls: full tiles (static shapes) as they
/// are, partial tiles (a dynamic row or column count, bounded by the tile)
/// with masks over the tile's size.
void vectorizeMatmulTiles(RewriterBase &rewriter, func::FuncOp kernel) {
  SmallVector<linalg::LinalgOp> matmuls;
  kernel.walk([&](linalg::LinalgOp op) {
    if (isMatmulLike(op) && op.hasPureTensorSemantics())
      matmuls.push_back(op);
  });
  for (linalg::LinalgOp op : matmuls) {
    std::optional<SmallVector<int64_t>> bounds = loopUpperBounds(op);
    if (!bounds)
      continue;
    SmallVector<int64_t> &ranges = *bounds;
    // Register-tile dims (m, n).
    bool packed = isPackedMatmul(op);
    unsigned mDim = packed ? 1 : ranges.size() - 3;
    int64_t rows = ranges[mDim], columns = ranges[ranges.size() - 2];
    // Batch dims (batch_matmul) and a packed matmul's nb must be 1.
    bool unitOuterDims = llvm::all_of(ArrayRef<int64_t>(ranges).take_front(mDim),
                                      [](int64_t r) { return r == 1; });
    if (rows * columns > kMatmulRegisterM * kMatmulRegisterN ||
        columns > kGemvColumns || ranges.back() > 1 || !unitOuterDims)
      continue;
    vectorizeOp(rewriter, op, ranges);
  }
}

/// Keeps loop-carried vector tiles in registers: a transfer_read/write pair
/// of an accumulator inside a loop (the matmul's C tile across K) becomes a
/// vector iter_arg. Done on tensors, where the pair is visibly a subset of
/// the loop's own iter_arg and no aliasing question arises.
void hoistAccumulators(RewriterBase &rewriter, func::FuncOp kernel) {
  // Each round peels one level: first the tile's extract/insert_slice pair,
  // then the vector transfers on the tile now carried by the loop.
  for (int round = 0; round < 3; ++round) {
    SmallVector<LoopLikeOpInterface> loops;
    kernel.walk([&](LoopLikeOpInterface loop) { loops.push_back(loop); });
    for (LoopLikeOpInterface loop : loops) // Innermost first (post-order).
      (void)hoistLoopInvariantSubsets(rewriter, loop);
  }
}

/// Gives every use of a tensor.empty its own copy, so that destinations are
/// not shared between ops (which would force bufferization to copy).
void uniquifyEmptyTensors(RewriterBase &rewriter, func::FuncOp kernel) {
  SmallVector<tensor::EmptyOp> empties;
  kernel.walk([&](tensor::EmptyOp op) { empties.push_back(op); });
  for (tensor::EmptyOp empty : empties) {
    SmallVector<OpOperand *> uses;
    for (OpOperand &use : empty->getUses())
      uses.push_back(&use);
    for (size_t i = 1; i < uses.size(); ++i) {
      rewriter.setInsertionPoint(empty);
      Operation *copy = rewriter.clone(*empty);
      rewriter.modifyOpInPlace(uses[i]->getOwner(),
                               [&] { uses[i]->set(copy->getResult(0)); });
    }
  }
}

/// Strides `loop` over workgroups along `axis`:
///   for i = lb + id*step to ub step step*count.
void distributeLoop(RewriterBase &rewriter, scf::ForOp loop, Value state,
                    Value workgroupId, int64_t axis) {
  rewriter.setInsertionPoint(loop);
  Location loc = loop.getLoc();
  Value count = WorkgroupCountOp::create(rewriter, loc, rewriter.getIndexType(), state, axis);
  Value offset =
      arith::MulIOp::create(rewriter, loc, workgroupId, loop.getStep());
  Value lb =
      arith::AddIOp::create(rewriter, loc, loop.getLowerBound(), offset);
  Value step = arith::MulIOp::create(rewriter, loc, loop.getStep(), count);
  rewriter.modifyOpInPlace(loop, [&] {
    loop.setLowerBound(lb);
    loop.setStep(step);
  });
}

/// Fuses producers that tile-and-fuse left outside the loops (the fill or
/// copy initializing a fused op's destination) into the innermost loop.
void fuseRemainingProducers(RewriterBase &rewriter,
                            MutableArrayRef<LoopLikeOpInterface> loops) {
  if (loops.empty())
    return;
  Operation *innermost = loops.back().getOperation();
  SmallVector<tensor::ExtractSliceOp> candidates;
  innermost->walk([&](tensor::ExtractSliceOp slice) {
    Operation *producer = slice.getSource().getDefiningOp();
    if (isa_and_nonnull<linalg::FillOp, linalg::CopyOp>(producer) &&
        !innermost->isAncestor(producer))
      candidates.push_back(slice);
  });
  for (tensor::ExtractSliceOp slice : candidates) {
    rewriter.setInsertionPoint(slice);
    std::optional<scf::SCFFuseProducerOfSliceResult> fused =
        scf::tileAndFuseProducerOfSlice(rewriter, slice, loops);
    if (fused)
      rewriter.replaceAllUsesWith(slice.getResult(),
                                  fused->tiledAndFusedProducer);
  }
}

/// The op that computes the first output of `kernel` (what gets tiled; for a
/// padded result, its interior).
TilingInterface findRootToTile(func::FuncOp kernel) {
  TilingInterface root;
  kernel.walk([&](bufferization::MaterializeInDestinationOp store) {
    Value source = store.getSource();
    // A padded result (PaddedResults.h): the op writing its interior.
    if (auto insert = source.getDefiningOp<tensor::InsertSliceOp>();
        insert && isPaddedResult(insert))
      source = insert.getSource();
    if (!root)
      root = source.getDefiningOp<TilingInterface>();
  });
  return root;
}

LogicalResult codegenKernel(func::FuncOp kernel) {
  IRRewriter rewriter(kernel.getContext());
  // Before workgroup tiling: no padded scratch tile for a padded max
  // pooling; the NCHW image's padded NHWC copy recognized while its index
  // arithmetic is still plain.
  rewritePaddedMaxPoolings(rewriter, kernel);
  markChannelsLastInputGathers(kernel);
  // A matmul's elementwise epilogue updates the matmul's result in place:
  // the matmul accumulates into the output tile, no temporary tile.
  makeMatmulEpiloguesInPlace(rewriter, kernel);
  TilingInterface root = findRootToTile(kernel);
  if (!root)
    return success(); // Nothing computed (e.g. a constant): bufferize as is.
  WorkgroupTiling tiling = getWorkgroupTiling(kernel);
  // Decided on the untiled convolution, as dispatch formation did for its
  // workgroup tiles: reduction blocks, the epilogue after the last block.
  bool blockReduction =
      root->getNumResults() > 0 &&
      blocksConvolutionReduction(packedConvolutionBehind(root->getResult(0)));
  if (blockReduction) {
    auto conv = cast<linalg::LinalgOp>(packedConvolutionBehind(root->getResult(0)));
    int64_t channels = conv.getStaticLoopRanges()[6];
    kernel->setAttr(kFilterPrefetchAttr,
                    rewriter.getI64IntegerAttr(
                        filterPrefetchDistance(reductionBlockChannels(channels))));
  }
  Value state = kernel.getArgument(0);
  uniquifyEmptyTensors(rewriter, kernel);

  // Map result-dim tiles onto loop tiles.
  SmallVector<int64_t> loopTiles(root.getLoopIteratorTypes().size(), 0);
  SmallVector<int64_t> loopAxis(loopTiles.size(), -1);
  auto linalgRoot = dyn_cast<linalg::LinalgOp>(root.getOperation());
  if (linalgRoot && !tiling.tileSizes.empty()) {
    AffineMap map = linalgRoot.getIndexingMapMatchingResult(
        cast<OpResult>(linalgRoot->getResult(0)));
    for (auto [dim, tile] : llvm::enumerate(tiling.tileSizes)) {
      auto expr = dyn_cast<AffineDimExpr>(map.getResult(dim));
      if (!expr || tile <= 0)
        continue;
      loopTiles[expr.getPosition()] = tile;
      for (int axis = 0; axis < 3; ++axis)
        if (tiling.gridDims[axis] == static_cast<int64_t>(dim))
          loopAxis[expr.getPosition()] = axis;
    }
  }

  if (llvm::any_of(loopTiles, [](int64_t t) { return t > 0; })) {
    scf::SCFTileAndFuseOptions options;
    options.tilingOptions.setTileSizes(
        getAsIndexOpFoldResult(kernel.getContext(), loopTiles));
    rewriter.setInsertionPoint(root);
    FailureOr<scf::SCFTileAndFuseResult> result =
        scf::tileConsumerAndFuseProducersUsingSCF(rewriter, root, options);
    if (failed(result))
      return root->emitError("codegen: workgroup tiling failed");
    for (auto [original, replacement] : result->replacements)
      rewriter.replaceAllUsesWith(original, replacement);
    fuseRemainingProducers(rewriter, result->loops);
    // Loops come outermost first, one per tiled loop dimension.
    SmallVector<int64_t> tiledDims;
    for (auto [i, t] : llvm::enumerate(loopTiles))
      if (t > 0)
        tiledDims.push_back(i);
    for (auto [loop, dim] : llvm::zip(result->loops, tiledDims)) {
      int64_t axis = loopAxis[dim];
      auto forOp = dyn_cast<scf::ForOp>(loop.getOperation());
      if (!forOp || axis < 0)
        continue;
      distributeLoop(rewriter, forOp, state, kernel.getArgument(1 + axis),
                     axis);
    }
  }

  // Clean up the untiled originals before the vector level; slices of
  // tensor.empty become tile-sized empties (tile-sized temporaries).
  {
    RewritePatternSet patterns(kernel.getContext());
    tensor::populateFoldTensorEmptyPatterns(patterns);
    // tensor.dim of the untiled ops (loop bounds) would keep them alive.
    memref::populateResolveRankedShapedTypeResultDimsPatterns(patterns);
    tensor::DimOp::getCanonicalizationPatterns(patterns, kernel.getContext());
    if (failed(applyPatternsGreedily(kernel, std::move(patterns))))
      return failure();
  }
  // Convolutions with an elementwise epilogue first: tiled together.
  DenseSet<Operation *> registerTiled;
  {
    SmallVector<std::pair<linalg::GenericOp, linalg::LinalgOp>> withEpilogue;
    kernel.walk([&](linalg::GenericOp op) {
      linalg::LinalgOp conv = convolutionBeforeEpilogue(op);
      if (conv && !(blockReduction && isPackedConvolution(conv)))
        withEpilogue.push_back({op, conv});
    });
    for (auto [epilogue, conv] : withEpilogue)
      for (Operation *tiled : tileConvolutionWithEpilogue(rewriter, epilogue, conv))
        registerTiled.insert(tiled);
    // Matmuls whose in-place epilogue fits one register-tile pass, likewise.
    SmallVector<std::pair<linalg::GenericOp, linalg::LinalgOp>> matmulsWithEpilogue;
    kernel.walk([&](linalg::GenericOp op) {
      if (linalg::LinalgOp matmul = matmulBeforeRegisterEpilogue(op))
        matmulsWithEpilogue.push_back({op, matmul});
    });
    for (auto [epilogue, matmul] : matmulsWithEpilogue)
      for (Operation *tiled : tileMatmulWithEpilogue(rewriter, epilogue, matmul))
        registerTiled.insert(tiled);
    SmallVector<linalg::LinalgOp> clampedPoolings;
    kernel.walk([&](linalg::LinalgOp op) {
      if (isClampedMaxPooling(op))
        clampedPoolings.push_back(op);
    });
    for (linalg::LinalgOp pooling : clampedPoolings)
      for (Operation *tiled : tileClampedMaxPooling(rewriter, pooling))
        registerTiled.insert(tiled);
  }
  SmallVector<linalg::LinalgOp> linalgOps;
  kernel.walk([&](linalg::LinalgOp op) {
    if (!registerTiled.contains(op))
      linalgOps.push_back(op);
  });
  for (linalg::LinalgOp op : linalgOps) {
    if (lowerChannelsLastInputGather(rewriter, op))
      continue;
    if (isMatmulLike(op))
      tileMatmul(rewriter, op);
    else if (auto conv = dyn_cast<linalg::Conv2DNchwFchwOp>(op.getOperation()))
      tileConvolution(rewriter, conv);
    else if (isa<linalg::Conv2DNhwcHwcfOp, linalg::DepthwiseConv2DNhwcHwcOp,
                 linalg::PoolingNhwcMaxOp, linalg::PoolingNhwcSumOp>(op.getOperation()))
      tileChannelsLastWindow(rewriter, op);
    else if (isPackedConvolution(op))
      tilePackedConvolution(rewriter, op, blockReduction);
    else
      tileAndVectorizeGeneric(rewriter, op);
  }
  // Peeled full tiles get static shapes from canonicalization.
  auto pm = PassManager::on<func::FuncOp>(kernel.getContext());
  pm.addPass(createCanonicalizerPass());
  if (failed(pm.run(kernel)))
    return failure();
  vectorizeMatmulTiles(rewriter, kernel);
  vectorizeRegisterEpilogues(rewriter, kernel);
  vectorizeConvolutions(rewriter, kernel);
  // Unify the transfers' constant indices so read/write pairs match.
  auto cleanup = PassManager::on<func::FuncOp>(kernel.getContext());
  cleanup.addPass(createCanonicalizerPass());
  cleanup.addPass(createCSEPass());
  if (failed(cleanup.run(kernel)))
    return failure();
  hoistAccumulators(rewriter, kernel);
  if (std::getenv("TURBINE_DEBUG_CODEGEN"))
    kernel->print(llvm::errs() << "// kernel after vector-level codegen\n");
  return success();
}

LogicalResult bufferizeKernels(ModuleOp kernels) {
  IRRewriter rewriter(kernels.getContext());
  if (failed(bufferization::eliminateEmptyTensors(rewriter, kernels)))
    return kernels.emitError("codegen: empty tensor elimination failed");
  bufferization::OneShotBufferizationOptions options;
  options.bufferizeFunctionBoundaries = false;
  options.allowReturnAllocsFromLoops = true;
  options.memCpyFn = [](OpBuilder &b, Location loc, Value from,
                        Value to) -> LogicalResult {
    linalg::CopyOp::create(b, loc, from, to);
    return success();
  };
  bufferization::BufferizationState state;
  if (failed(bufferization::runOneShotBufferize(kernels, options, state)))
    return kernels.emitError("codegen: bufferization failed");
  return success();
}

/// Folds vector.mask regions around transfers into masked transfers, before
/// any other vector rewrite can touch the mask bodies.
LogicalResult lowerMasks(ModuleOp kernels) {
  RewritePatternSet patterns(kernels.getContext());
  vector::populateVectorMaskLoweringPatternsForSideEffectingOps(patterns);
  if (failed(applyPatternsGreedily(kernels, std::move(patterns))))
    return kernels.emitError("codegen: mask lowering did not converge");
  return success();
}

LogicalResult lowerVectors(ModuleOp kernels) {
  MLIRContext *ctx = kernels.getContext();
  // Loop-invariant subviews first, so that the accumulator's transfers are
  // seen as invariant and hoisted out of the K loop (kept in registers).
  kernels.walk([](LoopLikeOpInterface loop) { moveLoopInvariantCode(loop); });
  kernels.walk([](func::FuncOp f) {
    linalg::hoistRedundantVectorTransfers(f, /*verifyNonZeroTrip=*/true);
  });
  // Staged, each stage to a fixed point: mixing these pattern sets lets some
  // of them undo each other's rewrites without end.
  using Populate = std::function<void(RewritePatternSet &)>;
  const Populate stages[] = {
      [](RewritePatternSet &p) {
        vector::populateCastAwayVectorLeadingOneDimPatterns(p);
      },
      [](RewritePatternSet &p) {
        vector::populateVectorContractLoweringPatterns(
            p, vector::VectorContractLowering::OuterProduct);
        populateInnerReductionPatterns(p);
        vector::populateVectorMultiReductionLoweringPatterns(
            p, vector::VectorMultiReductionLowering::InnerParallel);
        vector::populateVectorMaskOpLoweringPatterns(p);
      },
      [](RewritePatternSet &p) {
        vector::populateVectorTransferPermutationMapLoweringPatterns(p);
        vector::populateVectorBroadcastLoweringPatterns(p);
        vector::populateVectorShapeCastLoweringPatterns(p);
        vector::populateVectorTransposeLoweringPatterns(
            p, vector::VectorTransposeLowering::EltWise);
        vector::populateVectorTransferLoweringPatterns(p, /*maxRank=*/1);
      },
  };
  GreedyRewriteConfig config;
  config.setMaxNumRewrites(1 << 20); // An error, never a hang.
  for (const Populate &populate : stages) {
    RewritePatternSet patterns(ctx);
    populate(patterns);
    if (failed(applyPatternsGreedily(kernels, std::move(patterns), config)))
      return kernels.emitError("codegen: vector lowering did not converge");
  }
  return success();
}

} // namespace

LogicalResult runCodegenPhase(ModuleOp module, const CompileOptions &options) {
  ModuleOp kernels = getKernelsModule(module, /*create=*/true);
  SmallVector<func::FuncOp> functions(kernels.getOps<func::FuncOp>());
  for (func::FuncOp kernel : functions)
    if (failed(codegenKernel(kernel)))
      return failure();

  if (failed(lowerMasks(kernels)))
    return failure();
  auto pm = PassManager::on<ModuleOp>(module.getContext());
  pm.addNestedPass<func::FuncOp>(createCanonicalizerPass());
  pm.addNestedPass<func::FuncOp>(createCSEPass());
  if (failed(pm.run(kernels)))
    return failure();
  if (failed(bufferizeKernels(kernels)))
    return failure();

  auto dealloc = PassManager::on<ModuleOp>(module.getContext());
  bufferization::buildBufferDeallocationPipeline(dealloc);
  dealloc.addNestedPass<func::FuncOp>(createCanonicalizerPass());
  dealloc.addNestedPass<func::FuncOp>(createCSEPass());
  if (failed(dealloc.run(kernels)))
    return failure();
  insertFilterPrefetches(kernels);
  if (failed(lowerVectors(kernels)))
    return failure();
  return lowerKernelsToLLVM(kernels, options);
}

} // namespace turbine::compiler
