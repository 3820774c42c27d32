//===- MatmulCodegen.cpp - Vector-level strategies for matmuls ------------===//
//
// Part of kernel codegen (CodegenStrategies.h): matmul, batch_matmul and
// packed matmuls inside a workgroup tile become register tiles sized for the
// target's vector registers (RegisterTiles: 8x32 with AVX-512, 6x16 with
// AVX2; K tiled by 256, leftover rows one at a time, partial tiles masked), optionally
// with B packed per K tile in the kernel (MatmulKernelPacking.h) or with
// their elementwise epilogue applied on the register tile's accumulators.
//===----------------------------------------------------------------------===//
#include "targets/cpu/CodegenStrategies.h"
#include "targets/cpu/MatmulDataTiling.h"
#include "targets/cpu/MatmulKernelPacking.h"
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
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tensor/Transforms/Transforms.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Dialect/Vector/Transforms/LoweringPatterns.h"
#include "mlir/Dialect/Vector/Transforms/VectorRewritePatterns.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include <functional>

using namespace mlir;

namespace turbine::compiler {

namespace {

/// Tiles a matmul's rows with the register tile (`rows` x `columns` x 1 k;
/// a packed matmul's tile spans one whole 32-column panel, or `columns` of
/// it when narrower) and peels the row and
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
    registerTiles[2] = columns < kPackedPanelWidth ? columns : 0; // n0 (0: whole)
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
  scf::ForOp nLoop = packed ? loopOf(2) : loopOf(numLoops - 2);
  scf::ForOp mLoop = rows > 1 ? loopOf(mDim) : nullptr;
  scf::ForOp remainder;
  // Columns first: the row loop's peeled copy then holds peeled columns too.
  if (nLoop)
    (void)scf::peelForLoopAndSimplifyBounds(rewriter, nLoop, remainder);
  if (mLoop)
    (void)scf::peelForLoopAndSimplifyBounds(rewriter, mLoop, remainder);
}

/// tileMatmul after K tiling: the row split and register tiles.
void tileMatmulRows(RewriterBase &rewriter, Operation *current, const RegisterTiles &tiles) {
  auto op = cast<linalg::LinalgOp>(current);
  unsigned numLoops = op.getNumLoops();
  bool packed = isPackedMatmul(op);
  unsigned mDim = packed ? 1 : numLoops - 3;
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  int64_t m = ranges[mDim];
  Operation *fullRows = current, *leftoverRows = nullptr;
  const int64_t rows = tiles.matmulRows;
  if (!ShapedType::isDynamic(m) && m < rows) {
    fullRows = nullptr;
    leftoverRows = current;
  } else if (ShapedType::isDynamic(m) || m % rows != 0) {
    // Split at floor(M / rows) * rows.
    rewriter.setInsertionPoint(current);
    Location loc = current->getLoc();
    SmallVector<Range> domain =
        cast<TilingInterface>(current).getIterationDomain(rewriter);
    AffineExpr s0;
    bindSymbols(rewriter.getContext(), s0);
    OpFoldResult split = affine::makeComposedFoldedAffineApply(
        rewriter, loc, s0.floorDiv(rows) * rows, {domain[mDim].size});
    auto [first, second] =
        linalg::splitOp(rewriter, cast<TilingInterface>(current), mDim, split);
    fullRows = first ? first.getOperation() : nullptr;
    leftoverRows = second ? second.getOperation() : nullptr;
  }
  // Fewer columns than a tile's, not a whole number of vector registers
  // (a classifier's 10): on a 16-register CPU, tiles of one register of
  // columns and the rest (8 + 2), not one tile of a 10-lane vector, which
  // LLVM splits into shuffles (AVX2: 64x10x512 at 4 GFLOP/s, 150 -> 23 us).
  int64_t columns = tiles.matmulColumns;
  int64_t n = ranges[numLoops - 2];
  if (tiles.registers <= 16 && !packed && !ShapedType::isDynamic(n) &&
      n < columns && n > tiles.lanes && n % tiles.lanes != 0)
    columns = tiles.lanes;
  if (fullRows)
    tileMatmulRegisters(rewriter, fullRows, rows, columns);
  if (leftoverRows)
    tileLeftoverMatmulRows(rewriter, leftoverRows, tiles);
}

} // namespace

RegisterTiles registerTiles(const CpuFeatures &features) {
  RegisterTiles tiles;
  tiles.lanes = features.vectorBits / 32;
  tiles.matmulRows = features.vectorRegisters >= 32 ? 8 : 6;
  tiles.matmulColumns = 2 * tiles.lanes;
  tiles.gemvColumns = 8 * tiles.lanes;
  tiles.accumulators = features.vectorRegisters >= 32 ? 16 : 12;
  tiles.registers = features.vectorRegisters;
  return tiles;
}

/// Rows left over by the row split (fewer than a register tile's, or a
/// dynamic count): one row at a time, gemvColumns wide, the columns past the
/// last of those by matmulColumns. A packed matmul: whole panels, as many
/// rows per tile as divide a static count and keep within the register
/// tile's accumulators (AVX2: 2 or 3 rows x 4 ymm; AVX-512: all of them x 2
/// zmm), else one row: with one row, AVX2 has 4 accumulators, whose FMA
/// latency holds the tile to half the FMA rate (a Linear(768, 2048) on 2
/// rows took 1.47x as long as with one 2-row tile).
void tileLeftoverMatmulRows(RewriterBase &rewriter, Operation *leftoverRows,
                            const RegisterTiles &tiles) {
  auto op = cast<linalg::LinalgOp>(leftoverRows);
  unsigned numLoops = op.getNumLoops();
  bool packed = isPackedMatmul(leftoverRows);
  unsigned mDim = packed ? 1 : numLoops - 3;
  if (packed) {
    int64_t count = op.getStaticLoopRanges()[mDim];
    int64_t perRow = kPackedPanelWidth / tiles.lanes, rows = 1;
    for (int64_t r = 2; !ShapedType::isDynamic(count) && r <= count; ++r)
      if (count % r == 0 && r * perRow <= tiles.accumulators)
        rows = r;
    tileMatmulRegisters(rewriter, leftoverRows, rows, kPackedPanelWidth);
    return;
  }
  // One row at a time, gemvColumns wide; the columns past those by
  // matmulColumns.
  SmallVector<int64_t> rowTiles(numLoops, 0);
  for (unsigned batch = 0; batch <= mDim; ++batch)
    rowTiles[batch] = 1;
  rowTiles[numLoops - 2] = tiles.gemvColumns;
  rewriter.setInsertionPoint(leftoverRows);
  scf::SCFTilingOptions options;
  options.setTileSizes(getAsIndexOpFoldResult(rewriter.getContext(), rowTiles));
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
  // The full gemvColumns-wide tile: k by 1 (a 1x128x1 step on AVX-512).
  SmallVector<int64_t> kByOne(numLoops, 0);
  kByOne.back() = 1;
  (void)tileOp(rewriter, cast<TilingInterface>(wide), kByOne);
  for (Operation *inner : narrow)
    tileMatmulRegisters(rewriter, inner, 1, tiles.matmulColumns);
}

/// Matmul / batch_matmul / packed matmul inside a workgroup tile: K tiled by
/// 256, then the rows split at the last multiple of the register tile's
/// rows. The first part gets the register tile (8x32x1 with AVX-512: 16 zmm
/// accumulators; 6x16x1 with AVX2: 12 ymm); the rows left over (a small or
/// dynamic batch, M = 1 for a GEMV) go one row at a time with a 1x128x1 tile
/// (1x64x1 with AVX2: 8 accumulators, so that the FMA chains across k
/// overlap), columns left over by the register tile's. A packed matmul
/// (loops nb, m, n0, k; MatmulDataTiling.h) gets the same row tiles over one
/// panel (nb by 1, n0 whole or by the register tile's columns; leftover
/// rows the whole panel). Partial
/// tiles (N = 10, a dynamic row count) are vectorized with
/// masks (vectorizeMatmulTiles). A matmul marked for a pack of B in its
/// kernel (MatmulKernelPacking.h) becomes, per K tile, that pack (a copy,
/// vectorized like any generic) and a packed matmul.
void tileMatmul(RewriterBase &rewriter, linalg::LinalgOp op, const CpuFeatures &features) {
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
  // bf16 operands on a CPU with AVX512-BF16: vdpbf16ps register tiles
  // (Bf16MatmulCodegen.cpp).
  if (takesBf16DotProducts(cast<linalg::LinalgOp>(current), features)) {
    tileBf16MatmulRows(rewriter, current, registerTiles(features));
    return;
  }
  tileMatmulRows(rewriter, current, registerTiles(features));
}

namespace {

/// One K-tiled pass of tileMatmulOnDecodedPanels over `op`; false (op
/// unchanged) if it could not tile.
bool tileOnPanels(RewriterBase &rewriter, linalg::LinalgOp op, const DecodedPanels &panels,
                  const CpuFeatures &features) {
  SmallVector<int64_t> tiles(op.getNumLoops(), 0);
  tiles[panels.blockDim] = panels.blocksPerTile;
  Operation *tiled = tileOp(rewriter, cast<TilingInterface>(op.getOperation()), tiles);
  if (!tiled)
    return false;
  auto tile = cast<linalg::GenericOp>(tiled);
  Location loc = tile.getLoc();
  Value a = tile.getDpsInputs()[0], c = tile.getDpsInits()[0];
  auto aType = cast<RankedTensorType>(a.getType());
  int64_t depth = 1;
  for (int64_t size : aType.getShape().drop_front())
    depth *= size;
  rewriter.setInsertionPoint(tile);
  Value scratch = panelScratchAt(rewriter, tile, rewriter.getF32Type(),
                                 cast<RankedTensorType>(c.getType()).getDimSize(1) /
                                     kPackedPanelWidth,
                                 rewriter.getIndexAttr(depth));
  Value decoded = panels.decode(rewriter, tile, scratch);
  // A's blocked view as rows of K.
  SmallVector<ReassociationIndices> rowsOfK{{0}, {}};
  for (int64_t d = 1; d < aType.getRank(); ++d)
    rowsOfK.back().push_back(d);
  Value rows = tensor::CollapseShapeOp::create(rewriter, loc, a, rowsOfK);
  Operation *contract = nullptr;
  Value result = createPackedMatmul(rewriter, loc, rows, decoded, c, &contract);
  rewriter.replaceOp(tile, result);
  tileMatmul(rewriter, cast<linalg::LinalgOp>(contract), features);
  return true;
}

} // namespace

void tileMatmulOnDecodedPanels(RewriterBase &rewriter, linalg::LinalgOp op,
                               const DecodedPanels &panels, const CpuFeatures &features,
                               llvm::function_ref<void(linalg::LinalgOp)> fewRows) {
  auto cType = cast<RankedTensorType>(op.getDpsInits()[0].getType());
  int64_t m = op.getStaticLoopRanges()[0];
  bool fits = cType.getRank() == 2 && !cType.isDynamicDim(1) &&
              cType.getDimSize(1) % kPackedPanelWidth == 0 &&
              cType.getDimSize(1) <= kKernelPackMaxColumns;
  if (!fits || (!ShapedType::isDynamic(m) && m < panels.minRows)) {
    fewRows(op);
    return;
  }
  if (!ShapedType::isDynamic(m)) {
    if (!tileOnPanels(rewriter, op, panels, features))
      fewRows(op);
    return;
  }
  // A dynamic row count: both, chosen per workgroup by its rows.
  Location loc = op.getLoc();
  rewriter.setInsertionPoint(op);
  Value rows = tensor::DimOp::create(rewriter, loc, op.getDpsInits()[0], 0);
  Value many = arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::sge, rows,
                                     arith::ConstantIndexOp::create(rewriter, loc, panels.minRows));
  auto branch = scf::IfOp::create(rewriter, loc, op->getResultTypes(), many,
                                  /*withElseRegion=*/true);
  auto cloneInto = [&](Block *block) {
    rewriter.setInsertionPointToStart(block);
    Operation *copy = rewriter.clone(*op);
    scf::YieldOp::create(rewriter, loc, copy->getResults());
    return cast<linalg::LinalgOp>(copy);
  };
  linalg::LinalgOp manyRows = cloneInto(branch.thenBlock());
  linalg::LinalgOp someRows = cloneInto(branch.elseBlock());
  rewriter.replaceOp(op, branch.getResults());
  if (!tileOnPanels(rewriter, manyRows, panels, features))
    fewRows(manyRows);
  fewRows(someRows);
}

namespace {

/// Marks the fill and epilogue tiles of tileMatmulWithEpilogue, vectorized
/// (with masks where partial) once canonicalization made the peeled full
/// tiles static (vectorizeRegisterEpilogues).
constexpr llvm::StringLiteral kRegisterEpilogueAttr = "turbine.register_epilogue";

} // namespace

/// A matmul inside a workgroup tile whose result is updated in place by
/// `epilogue` (MatmulEpilogueInPlace.h: the epilogue's destination is the
/// matmul's result), when one register-tile pass covers it: a plain or
/// batch matmul (batch 1, static columns, a multiple of the register
/// tile's) or a packed-B contract, K static within one 256-deep K tile
/// (attention's Q.K^T / 8, K = 64; the transformer's projections, K = 256),
/// rows static or dynamic, no i1 operand in the epilogue (hasI1Operand).
/// The matmul, or null. Others (K tiles, B packed in the kernel, a mask)
/// keep the in-place epilogue as a pass over the output tile after the
/// matmul.
linalg::LinalgOp matmulBeforeRegisterEpilogue(linalg::GenericOp epilogue,
                                              const RegisterTiles &tiles) {
  if (!epilogue.hasPureTensorSemantics() || epilogue.getNumResults() != 1 ||
      hasI1Operand(epilogue) || epilogue.getNumParallelLoops() != epilogue.getNumLoops() ||
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
  if (ShapedType::isDynamic(columns) || columns % tiles.matmulColumns != 0)
    return nullptr;
  return matmul;
}

/// A matmul and its in-place epilogue, register tile by register tile (as
/// tileConvolutionWithEpilogue does for convolutions): the epilogue is tiled
/// by the register tile (8 rows x 32 columns with AVX-512; a packed
/// contract: one panel, or the tile's columns of it) with the matmul and
/// the fill of its accumulator fused into each tile, the row loop peeled so
/// that full tiles get static shapes (the last partial one is tiled again
/// by one row), and each matmul tile's k loop tiled by 1. Vectorized, the accumulators start
/// as zeros in registers, stay there across k and go through the epilogue
/// before the one store of the tile. Returns the matmul, fill and epilogue
/// tiles it made (for the caller to leave alone), empty if it could not
/// tile (the ops are then as they were).
SmallVector<Operation *> tileMatmulWithEpilogue(RewriterBase &rewriter,
                                                linalg::GenericOp epilogue,
                                                linalg::LinalgOp matmul,
                                                const RegisterTiles &registers) {
  bool packed = isPackedMatmul(matmul);
  unsigned numLoops = epilogue.getNumLoops();
  // Epilogue loops: a packed contract's (m, nb, n0), else (batch..., m, n).
  SmallVector<int64_t> tiles(numLoops, 1);
  unsigned rowDim = packed ? 0 : numLoops - 2;
  tiles[rowDim] = registers.matmulRows;
  tiles[numLoops - 1] = !packed || registers.matmulColumns < kPackedPanelWidth
                            ? registers.matmulColumns
                            : 0;
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
        getAsIndexOpFoldResult(rewriter.getContext(), rowTiles));
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

/// Vectorizes the fill and epilogue tiles of tileMatmulWithEpilogue: full
/// tiles as they are, the partial row tile with masks over its rows.
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

/// Vectorizes the register-tile matmuls: full tiles (static shapes) as they
/// are, partial tiles (a dynamic row or column count, bounded by the tile)
/// with masks over the tile's size.
void vectorizeMatmulTiles(RewriterBase &rewriter, func::FuncOp kernel,
                          const RegisterTiles &tiles) {
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
    if (rows * columns > tiles.matmulRows * tiles.matmulColumns ||
        columns > tiles.gemvColumns || ranges.back() > 1 || !unitOuterDims)
      continue;
    vectorizeOp(rewriter, op, ranges);
  }
}

} // namespace turbine::compiler
