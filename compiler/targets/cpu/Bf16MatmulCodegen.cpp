//===- Bf16MatmulCodegen.cpp - bf16 matmul register tiles with vdpbf16ps --===//
//
// Part of kernel codegen (CodegenStrategies.h): a matmul whose operands are
// bf16 and whose accumulator is f32 (turbine-accumulate-in-f32 made it so),
// on a target CPU with AVX512-BF16 (CpuFeatures.h, `--target-cpu`). Without
// this strategy such a matmul takes the f32 one: each bf16 element of A and
// B is extended to f32 in registers (ExtendContractOperands,
// KernelCodegen.cpp) and multiplied by FMAs, 16 products per instruction.
// vdpbf16ps multiplies 32 pairs of bf16 and adds them pairwise into 16 f32
// lanes: acc[j] += a[2j] * b[2j] + a[2j+1] * b[2j+1], twice the products per
// instruction.
//
// Tiles: K tiled by 256 as for f32, rows split at the last multiple of 8;
// a register tile is 8 rows (a static remainder: that many rows) x 32
// columns (one packed-B panel, MatmulDataTiling.h, or 32 columns of a plain
// B) x the whole K tile, written by hand as vector code:
//
//   acc[r][h] = permute(C[r, 0:32])            16 zmm for 8 rows, h = 0, 1
//   for p in 0 .. Kt/2:                        (k = 2p)
//     b0, b1 = B[k, 0:32], B[k+1, 0:32]        two rows of 32 bf16
//     lo, hi = unpacklo/hi_16bit(b0, b1)       (vpunpck[lh]wd: per 128-bit
//                                              lane, the pairs (b0[j],b1[j]))
//     for r: a = broadcast_32bit(A[r, k:k+2])  (vpbroadcastd of the pair)
//            acc[r][0] = vdpbf16ps(acc[r][0], a, lo)
//            acc[r][1] = vdpbf16ps(acc[r][1], a, hi)
//   if Kt is odd: one more step with (A[r, Kt-1], 0) and (B[Kt-1], 0)
//   C[r, 0:32] = unpermute(acc[r][0], acc[r][1])
//
// The unpack instructions work within 128-bit lanes, so lo holds columns
// 0-3, 8-11, 16-19, 24-27 and hi 4-7, 12-15, ...: the accumulators keep
// that order over the whole K tile and are permuted from / back to C's
// order once per tile (4 shuffles per row per 128 k-pairs), instead of a
// cross-lane vpermt2w per B row pair. B stays in the f32 strategy's layout
// (bf16 panels or rows); A's pairs are read in place. A static single row
// (GEMV, memory-bound) keeps the f32 strategy, as does a dynamic leftover
// of fewer than 8 rows.
//
// Numerics: each product of two bf16 is exact in f32; vdpbf16ps adds the
// two products of a pair and the accumulator with round-to-nearest-even
// and flushes denormal inputs and outputs to zero (Intel's definition), so
// results differ from the f32 strategy's FMA order by f32 summation error.
//===----------------------------------------------------------------------===//
#include "targets/cpu/CodegenStrategies.h"
#include "targets/cpu/MatmulDataTiling.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/TileUsingInterface.h"
#include "mlir/Dialect/SCF/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Dialect/X86Vector/X86VectorDialect.h"

using namespace mlir;

namespace turbine::compiler {

namespace {

/// Marks the register tiles tileBf16MatmulRows made (peeling copies it).
constexpr llvm::StringLiteral kBf16TileAttr = "turbine.bf16_dot_tile";

/// f32 lanes per vdpbf16ps (one zmm); the tile's 32 columns are two, its
/// 8 rows 16 zmm accumulators.
constexpr int64_t kLanes = 16;
constexpr int64_t kTileRows = 8;
constexpr int64_t kTileColumns = 2 * kLanes;

bool isBf16(Value v) { return getElementTypeOrSelf(v.getType()).isBF16(); }

/// (m, n, k) loop positions: packed (nb, m, n0, k), plain (m, n, k).
struct MatmulDims {
  bool packed;
  unsigned m, n, k;
};

MatmulDims dimsOf(linalg::LinalgOp op) {
  bool packed = isPackedMatmul(op);
  return packed ? MatmulDims{true, 1, 2, 3} : MatmulDims{false, 0, 1, 2};
}

/// Tiles `op` by `rows` x 32 columns (a packed matmul: one panel) x the
/// whole K, peels the column and row loops so full tiles get static shapes,
/// and marks the tiles.
void tileBf16Registers(RewriterBase &rewriter, Operation *op, int64_t rows) {
  auto linalgOp = cast<linalg::LinalgOp>(op);
  MatmulDims dims = dimsOf(linalgOp);
  SmallVector<int64_t> tiles(linalgOp.getNumLoops(), 0);
  tiles[dims.m] = rows;
  if (dims.packed)
    tiles[0] = 1; // nb: one panel; n0 whole (32).
  else
    tiles[dims.n] = kTileColumns;
  scf::SCFTilingOptions options;
  options.setTileSizes(getAsIndexOpFoldResult(op->getContext(), tiles));
  rewriter.setInsertionPoint(op);
  FailureOr<scf::SCFTilingResult> tiled =
      scf::tileUsingSCF(rewriter, cast<TilingInterface>(op), options);
  if (failed(tiled) || tiled->tiledOps.empty())
    return;
  rewriter.replaceOp(op, tiled->replacements);
  for (Operation *tile : tiled->tiledOps)
    tile->setAttr(kBf16TileAttr, rewriter.getUnitAttr());
  // Loops outermost first, one per tiled dim: packed (nb, m), plain (m, n).
  scf::ForOp mLoop, nLoop;
  if (tiled->loops.size() == 2) {
    auto first = dyn_cast<scf::ForOp>(tiled->loops[0].getOperation());
    auto second = dyn_cast<scf::ForOp>(tiled->loops[1].getOperation());
    mLoop = dims.packed ? second : first;
    nLoop = dims.packed ? scf::ForOp() : second;
  }
  scf::ForOp remainder;
  if (nLoop)
    (void)scf::peelForLoopAndSimplifyBounds(rewriter, nLoop, remainder);
  if (mLoop)
    (void)scf::peelForLoopAndSimplifyBounds(rewriter, mLoop, remainder);
}

/// Column of C that lane `lane` of accumulator `half` (0: the unpacklo
/// products, 1: unpackhi) holds: 128-bit lane l = lane / 4 of the B rows
/// covers columns 8l .. 8l+7, unpacklo takes its first 4, unpackhi the rest.
int64_t columnOf(int64_t half, int64_t lane) { return 8 * (lane / 4) + 4 * half + lane % 4; }

/// The vector code of one register tile (file comment): `rows` is the
/// tile's static row count, or its upper bound when `c`'s row count is
/// dynamic (rows past it then recompute and rewrite the last row).
void emitBf16Tile(RewriterBase &rewriter, linalg::LinalgOp op, int64_t rows) {
  MLIRContext *ctx = op.getContext();
  Location loc = op.getLoc();
  rewriter.setInsertionPoint(op);
  MatmulDims dims = dimsOf(op);
  Value a = op.getDpsInputs()[0], b = op.getDpsInputs()[1];
  Value c = op.getDpsInits()[0];
  auto cType = cast<RankedTensorType>(c.getType());
  Type f32 = rewriter.getF32Type(), bf16 = rewriter.getBF16Type(), i16 = rewriter.getI16Type(),
       i32 = rewriter.getI32Type();
  auto accType = VectorType::get({kLanes}, f32);
  auto rowType = VectorType::get({2 * kLanes}, f32);
  auto pairsType = VectorType::get({2 * kLanes}, bf16);
  auto wordsType = VectorType::get({2 * kLanes}, i16);

  auto index = [&](OpBuilder &bb, int64_t v) -> Value {
    return arith::ConstantIndexOp::create(bb, loc, v);
  };
  Value zero = index(rewriter, 0), one = index(rewriter, 1), two = index(rewriter, 2);
  Value zeroF = arith::ConstantOp::create(rewriter, loc, rewriter.getF32FloatAttr(0.0f));
  Value zeroB = arith::ConstantOp::create(rewriter, loc, rewriter.getFloatAttr(bf16, 0.0));
  // C: packed (m, nb, n0), plain (m, n); rows first either way.
  SmallVector<Value> rowIndex;
  Value lastRow;
  if (cType.isDynamicDim(0))
    lastRow = arith::SubIOp::create(rewriter, loc, tensor::DimOp::create(rewriter, loc, c, 0), one);
  for (int64_t r = 0; r < rows; ++r) {
    Value row = index(rewriter, r);
    if (lastRow)
      row = arith::MinSIOp::create(rewriter, loc, row, lastRow);
    rowIndex.push_back(row);
  }
  auto read = [&](OpBuilder &bb, Value source, ValueRange indices, VectorType type,
                  Value padding) -> Value {
    unsigned rank = cast<ShapedType>(source.getType()).getRank();
    AffineMap map = AffineMap::getMinorIdentityMap(rank, 1, ctx);
    return vector::TransferReadOp::create(bb, loc, type, source, indices,
                                          AffineMapAttr::get(map), padding, Value(),
                                          bb.getBoolArrayAttr({true}));
  };
  auto cIndices = [&](Value row) -> SmallVector<Value> {
    if (dims.packed)
      return {row, zero, zero};
    return {row, zero};
  };
  auto bIndices = [&](Value k) -> SmallVector<Value> {
    if (dims.packed)
      return {zero, k, zero};
    return {k, zero};
  };
  SmallVector<int64_t> permute[2], unpermute, unpackLo, unpackHi;
  for (int64_t half = 0; half < 2; ++half)
    for (int64_t lane = 0; lane < kLanes; ++lane)
      permute[half].push_back(columnOf(half, lane));
  unpermute.resize(2 * kLanes);
  for (int64_t half = 0; half < 2; ++half)
    for (int64_t lane = 0; lane < kLanes; ++lane)
      unpermute[columnOf(half, lane)] = half * kLanes + lane;
  // vpunpck[lh]wd of (b0, b1) as shuffle masks over their 64 words.
  for (int64_t lane = 0; lane < 4; ++lane)
    for (int64_t i = 0; i < 4; ++i) {
      unpackLo.append({8 * lane + i, 2 * kLanes + 8 * lane + i});
      unpackHi.append({8 * lane + 4 + i, 2 * kLanes + 8 * lane + 4 + i});
    }

  SmallVector<Value> accumulators;
  for (int64_t r = 0; r < rows; ++r) {
    Value row = read(rewriter, c, cIndices(rowIndex[r]), rowType, zeroF);
    for (int64_t half = 0; half < 2; ++half)
      accumulators.push_back(
          vector::ShuffleOp::create(rewriter, loc, row, row, permute[half]).getResult());
  }
  // One step: B rows (b0, b1) and each row's A pair (a vector<2xbf16>).
  auto step = [&](OpBuilder &bb, ArrayRef<Value> aPairs, Value b0, Value b1,
                  ValueRange accs) -> SmallVector<Value> {
    Value w0 = vector::BitCastOp::create(bb, loc, wordsType, b0);
    Value w1 = vector::BitCastOp::create(bb, loc, wordsType, b1);
    Value halves[2];
    halves[0] = vector::BitCastOp::create(
        bb, loc, pairsType, vector::ShuffleOp::create(bb, loc, w0, w1, unpackLo));
    halves[1] = vector::BitCastOp::create(
        bb, loc, pairsType, vector::ShuffleOp::create(bb, loc, w0, w1, unpackHi));
    SmallVector<Value> next(accs.begin(), accs.end());
    for (int64_t r = 0; r < rows; ++r) {
      Value pair = vector::BitCastOp::create(bb, loc, VectorType::get({1}, i32), aPairs[r]);
      Value splat = vector::BroadcastOp::create(bb, loc, VectorType::get({kLanes}, i32), pair);
      Value aSplat = vector::BitCastOp::create(bb, loc, pairsType, splat);
      for (int64_t half = 0; half < 2; ++half)
        next[2 * r + half] = x86vector::DotBF16Op::create(bb, loc, accType, next[2 * r + half],
                                                          aSplat, halves[half]);
    }
    return next;
  };
  auto pairType = VectorType::get({2}, bf16);
  auto bRowType = VectorType::get({2 * kLanes}, bf16);
  Value kt = tensor::DimOp::create(rewriter, loc, a, 1);
  Value pairs = arith::DivUIOp::create(rewriter, loc, kt, two);
  auto pairLoop = scf::ForOp::create(
      rewriter, loc, zero, pairs, one, accumulators,
      [&](OpBuilder &bb, Location, Value p, ValueRange accs) {
        Value k = arith::MulIOp::create(bb, loc, p, two);
        Value k1 = arith::AddIOp::create(bb, loc, k, one);
        SmallVector<Value> aPairs;
        for (int64_t r = 0; r < rows; ++r)
          aPairs.push_back(read(bb, a, {rowIndex[r], k}, pairType, zeroB));
        Value b0 = read(bb, b, bIndices(k), bRowType, zeroB);
        Value b1 = read(bb, b, bIndices(k1), bRowType, zeroB);
        scf::YieldOp::create(bb, loc, step(bb, aPairs, b0, b1, accs));
      });
  SmallVector<Value> results(pairLoop.getResults());
  // An odd K tile: the last k paired with zeros.
  auto aType = cast<RankedTensorType>(a.getType());
  if (aType.isDynamicDim(1) || aType.getDimSize(1) % 2 != 0) {
    Value odd = arith::CmpIOp::create(
        rewriter, loc, arith::CmpIPredicate::ne,
        arith::RemUIOp::create(rewriter, loc, kt, two), zero);
    auto tail = scf::IfOp::create(
        rewriter, loc, odd,
        [&](OpBuilder &bb, Location) {
          Value k = arith::SubIOp::create(bb, loc, kt, one);
          SmallVector<Value> aPairs;
          for (int64_t r = 0; r < rows; ++r) {
            Value x = tensor::ExtractOp::create(bb, loc, a, ValueRange{rowIndex[r], k});
            aPairs.push_back(vector::FromElementsOp::create(bb, loc, pairType, ValueRange{x, zeroB}));
          }
          Value b0 = read(bb, b, bIndices(k), bRowType, zeroB);
          Value zeros = arith::ConstantOp::create(
              bb, loc, DenseElementsAttr::get(bRowType, bb.getFloatAttr(bf16, 0.0)));
          scf::YieldOp::create(bb, loc, step(bb, aPairs, b0, zeros, results));
        },
        [&](OpBuilder &bb, Location) { scf::YieldOp::create(bb, loc, results); });
    results.assign(tail.getResults().begin(), tail.getResults().end());
  }
  Value result = c;
  AffineMap map = AffineMap::getMinorIdentityMap(cType.getRank(), 1, ctx);
  for (int64_t r = 0; r < rows; ++r) {
    Value row = vector::ShuffleOp::create(rewriter, loc, results[2 * r], results[2 * r + 1],
                                          unpermute);
    result = vector::TransferWriteOp::create(rewriter, loc, row, result, cIndices(rowIndex[r]),
                                             AffineMapAttr::get(map), Value(),
                                             rewriter.getBoolArrayAttr({true}))
                 .getResult();
  }
  rewriter.replaceOp(op, result);
}

} // namespace

bool takesBf16DotProducts(linalg::LinalgOp op, const CpuFeatures &features) {
  if (!features.avx512bf16 || !op.hasPureTensorSemantics() ||
      !(isa<linalg::MatmulOp>(op.getOperation()) || isPackedMatmul(op)) ||
      op.getNumDpsInputs() != 2 || op.getNumDpsInits() != 1)
    return false;
  if (auto matmul = dyn_cast<linalg::MatmulOp>(op.getOperation());
      matmul && matmul.hasUserDefinedMaps())
    return false;
  if (!isBf16(op.getDpsInputs()[0]) || !isBf16(op.getDpsInputs()[1]) ||
      !getElementTypeOrSelf(op.getDpsInits()[0].getType()).isF32())
    return false;
  MatmulDims dims = dimsOf(op);
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  if (ranges[dims.m] == 1)
    return false; // GEMV: the f32 strategy's 1 x 128 tiles.
  if (dims.packed)
    return ranges[dims.n] == kTileColumns;
  return !ShapedType::isDynamic(ranges[dims.n]) && ranges[dims.n] % kTileColumns == 0;
}

void tileBf16MatmulRows(RewriterBase &rewriter, Operation *current,
                        const RegisterTiles &leftover) {
  auto op = cast<linalg::LinalgOp>(current);
  MatmulDims dims = dimsOf(op);
  int64_t m = op.getStaticLoopRanges()[dims.m];
  Operation *fullRows = current, *leftoverRows = nullptr;
  if (!ShapedType::isDynamic(m) && m < kTileRows) {
    fullRows = nullptr;
    leftoverRows = current;
  } else if (ShapedType::isDynamic(m) || m % kTileRows != 0) {
    rewriter.setInsertionPoint(current);
    SmallVector<Range> domain = cast<TilingInterface>(current).getIterationDomain(rewriter);
    AffineExpr s0;
    bindSymbols(rewriter.getContext(), s0);
    OpFoldResult split = affine::makeComposedFoldedAffineApply(
        rewriter, current->getLoc(), s0.floorDiv(kTileRows) * kTileRows,
        {domain[dims.m].size});
    auto [first, second] =
        linalg::splitOp(rewriter, cast<TilingInterface>(current), dims.m, split);
    fullRows = first ? first.getOperation() : nullptr;
    leftoverRows = second ? second.getOperation() : nullptr;
  }
  if (fullRows)
    tileBf16Registers(rewriter, fullRows, kTileRows);
  if (!leftoverRows)
    return;
  int64_t rows = cast<linalg::LinalgOp>(leftoverRows).getStaticLoopRanges()[dims.m];
  if (ShapedType::isDynamic(rows))
    tileLeftoverMatmulRows(rewriter, leftoverRows, leftover);
  else if (rows > 0)
    tileBf16Registers(rewriter, leftoverRows, rows);
}

void vectorizeBf16Matmuls(RewriterBase &rewriter, func::FuncOp kernel) {
  SmallVector<linalg::LinalgOp> tiles;
  kernel.walk([&](linalg::LinalgOp op) {
    if (op->hasAttr(kBf16TileAttr) && op.hasPureTensorSemantics())
      tiles.push_back(op);
  });
  for (linalg::LinalgOp op : tiles) {
    op->removeAttr(kBf16TileAttr);
    MatmulDims dims = dimsOf(op);
    SmallVector<int64_t> ranges = op.getStaticLoopRanges();
    auto aType = cast<RankedTensorType>(op.getDpsInputs()[0].getType());
    auto cType = cast<RankedTensorType>(op.getDpsInits()[0].getType());
    std::optional<SmallVector<int64_t>> bounds = loopUpperBounds(op);
    // A tile this strategy did not shape (columns not one static 32-wide
    // tile, a batch / panel count other than 1) keeps the f32 strategy.
    if (!bounds || ranges[dims.n] != kTileColumns || (dims.packed && ranges[0] != 1) ||
        aType.getRank() != 2 || cType.isDynamicDim(cType.getRank() - 1))
      continue;
    int64_t rows = (*bounds)[dims.m];
    if (rows < 1 || rows > kTileRows)
      continue;
    emitBf16Tile(rewriter, op, rows);
  }
}

} // namespace turbine::compiler
