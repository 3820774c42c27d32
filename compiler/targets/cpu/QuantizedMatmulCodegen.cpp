//===- QuantizedMatmulCodegen.cpp - Fused dequantize-and-multiply kernels -===//
//
// Part of kernel codegen (CodegenStrategies.h): the group-quantized matmul
// generic of turbine-quantize-weights (global-opt/WeightQuantization.h)
// inside a workgroup tile. Like the matmul strategy, rows split at the last
// multiple of 8: full rows get 8 x 32 register tiles (16 zmm accumulators),
// leftover rows (M = 1: the decode GEMV) one row x 128 columns (8
// accumulators), columns past the last 128 by 32; the reduction loops stay
// whole. Each tile is then written as vector code by hand, not by the
// linalg vectorizer (whose broadcasts would convert every weight once per
// row of the tile):
//
//   acc[r] = C[r, 0:cols]                          (masked if cols is partial)
//   for g in groups:
//     s = scales[g, 0:cols]
//     for i in rows of a group (int4: pairs of K):
//       q = weights[block, g, i, 0:cols] : vector<cols x i8>  (1 byte per weight,
//                                  contiguous along K within a column block)
//       w = sitofp(q) * s         (int4: low and high nibbles, shifted out
//                                  of the sign-extended i32 lanes: w0, w1)
//       acc[r] = fma(broadcast(A[r, g, i(, h)]), w(h), acc[r])
//   C[r, 0:cols] = acc[r]
//
// so the weights are read once per tile as int8 (or packed int4) and
// dequantized in vector registers; there is never an f32 copy of B. A
// one-row tile (GEMV) instead sums a * sitofp(q) over the group in
// accumulators of its own and adds that sum times s once per group (per
// weight a conversion and an FMA; the 8-row tiles share each dequantized
// weight between 8 rows and have no registers for a second set of 16
// accumulators). The sum runs over k in the scalar reference's order
// (g, i, h); the 8-row tiles round each term a(k) * (q(k) * s(g)) once by
// the FMA, the GEMV tile rounds sum_group(a * q) * s: f32 summation error
// either way, the activations are never quantized. A tile with a dynamic
// row count (a dynamic M's last, peeled tile; at most 8 rows) reads and
// writes row min(r, rows - 1) for its lanes r past the end: they recompute
// and rewrite the last row's values exactly, so nothing is out of bounds.
//===----------------------------------------------------------------------===//
#include "targets/cpu/CodegenStrategies.h"

#include "global-opt/WeightQuantization.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/TileUsingInterface.h"
#include "mlir/Dialect/SCF/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;

namespace turbine::compiler {

namespace {

/// Tiles `op` by (batch 1, `rows`, `columns`, reductions whole) and peels the
/// column and row loops, so that full tiles get static shapes. With
/// `narrowRemainder`, the peeled columns are tiled again by 32.
void tileQuantizedRegisters(RewriterBase &rewriter, Operation *op, unsigned batchDims,
                            int64_t rows, int64_t columns, bool narrowRemainder) {
  auto linalgOp = cast<linalg::LinalgOp>(op);
  SmallVector<int64_t> tiles(linalgOp.getNumLoops(), 0);
  for (unsigned b = 0; b < batchDims; ++b)
    tiles[b] = 1;
  tiles[batchDims] = rows;
  tiles[batchDims + 1] = columns;
  scf::SCFTilingOptions options;
  options.setTileSizes(getAsIndexOpFoldResult(op->getContext(), tiles));
  rewriter.setInsertionPoint(op);
  FailureOr<scf::SCFTilingResult> tiled =
      scf::tileUsingSCF(rewriter, cast<TilingInterface>(op), options);
  if (failed(tiled))
    return;
  rewriter.replaceOp(op, tiled->replacements);
  // One loop per tiled dim, outermost first: batch..., m, n.
  if (tiled->loops.size() != batchDims + 2)
    return;
  auto nLoop = dyn_cast<scf::ForOp>(tiled->loops[batchDims + 1].getOperation());
  auto mLoop = dyn_cast<scf::ForOp>(tiled->loops[batchDims].getOperation());
  scf::ForOp remainder;
  if (nLoop)
    (void)scf::peelForLoopAndSimplifyBounds(rewriter, nLoop, remainder);
  if (narrowRemainder && remainder) {
    SmallVector<Operation *> narrow;
    remainder->walk([&](linalg::GenericOp inner) {
      if (matchQuantizedMatmul(inner))
        narrow.push_back(inner);
    });
    SmallVector<int64_t> byNarrow(tiles.size(), 0);
    byNarrow[batchDims + 1] = kMatmulRegisterN;
    for (Operation *inner : narrow)
      (void)tileOp(rewriter, cast<TilingInterface>(inner), byNarrow);
  }
  scf::ForOp rowRemainder;
  if (mLoop && rows > 1)
    (void)scf::peelForLoopAndSimplifyBounds(rewriter, mLoop, rowRemainder);
}

/// The vector code of one register tile (file comment): `rows` x `columns`
/// are the tile's static upper bounds.
void emitQuantizedTile(RewriterBase &rewriter, linalg::GenericOp op, const QuantizedMatmul &info,
                       int64_t rows, int64_t columns) {
  MLIRContext *ctx = op.getContext();
  Location loc = op.getLoc();
  rewriter.setInsertionPoint(op);
  Value a = op.getDpsInputs()[0], q = op.getDpsInputs()[1], s = op.getDpsInputs()[2];
  Value c = op.getDpsInits()[0];
  auto cType = cast<RankedTensorType>(c.getType());
  auto qType = cast<RankedTensorType>(q.getType());
  const unsigned nb = info.batchDims;
  Type f32 = rewriter.getF32Type(), i8 = rewriter.getI8Type();
  auto fVec = VectorType::get({columns}, f32);
  auto qVec = VectorType::get({columns}, i8);

  auto index = [&](OpBuilder &b, int64_t v) -> Value {
    return arith::ConstantIndexOp::create(b, loc, v);
  };
  Value zeroIndex = index(rewriter, 0), one = index(rewriter, 1);
  Value zeroF = arith::ConstantOp::create(rewriter, loc, rewriter.getF32FloatAttr(0.0f));
  Value zeroI8 = arith::ConstantOp::create(rewriter, loc, rewriter.getI8IntegerAttr(0));
  Value mask;
  if (cType.isDynamicDim(nb + 1)) {
    Value count = tensor::DimOp::create(rewriter, loc, c, nb + 1);
    mask = vector::CreateMaskOp::create(rewriter, loc,
                                        VectorType::get({columns}, rewriter.getI1Type()),
                                        ValueRange{count});
  }
  // Rows past a dynamic row count repeat the last row (file comment).
  SmallVector<Value> rowIndex;
  Value lastRow;
  if (cType.isDynamicDim(nb))
    lastRow = arith::SubIOp::create(rewriter, loc, tensor::DimOp::create(rewriter, loc, c, nb),
                                    one);
  for (int64_t r = 0; r < rows; ++r) {
    Value row = index(rewriter, r);
    if (lastRow)
      row = arith::MinSIOp::create(rewriter, loc, row, lastRow);
    rowIndex.push_back(row);
  }
  ArrayAttr inBounds = rewriter.getBoolArrayAttr({!mask});
  auto read = [&](OpBuilder &b, Value source, ValueRange indices, VectorType type,
                  Value padding) -> Value {
    unsigned rank = cast<ShapedType>(source.getType()).getRank();
    AffineMap map = AffineMap::getMinorIdentityMap(rank, 1, ctx);
    return vector::TransferReadOp::create(b, loc, type, source, indices, AffineMapAttr::get(map),
                                          padding, mask, inBounds);
  };
  auto prefix = [&](std::initializer_list<Value> tail) {
    SmallVector<Value> indices(nb, zeroIndex);
    indices.append(tail.begin(), tail.end());
    return indices;
  };

  SmallVector<Value> accumulators;
  for (int64_t r = 0; r < rows; ++r)
    accumulators.push_back(read(rewriter, c, prefix({rowIndex[r], zeroIndex}), fVec, zeroF));
  // q tile [batch..., 1 block, groups, rows, columns].
  const bool factored = rows == 1;
  Value groups = index(rewriter, qType.getDimSize(nb + 1));
  Value rowsPerGroup = index(rewriter, qType.getDimSize(nb + 2));
  auto groupLoop = scf::ForOp::create(
      rewriter, loc, zeroIndex, groups, one, accumulators,
      [&](OpBuilder &b, Location, Value g, ValueRange groupAccs) {
        Value scale = read(b, s, prefix({g, zeroIndex}), fVec, zeroF);
        // One row (GEMV): the group's sum of a * q in its own accumulators,
        // scaled once per group (one multiply per group, not per weight).
        SmallVector<Value> inner(groupAccs.begin(), groupAccs.end());
        Value zeros;
        if (factored) {
          zeros = arith::ConstantOp::create(b, loc, DenseElementsAttr::get(fVec, b.getF32FloatAttr(0)));
          inner.assign(rows, zeros);
        }
        auto rowLoop = scf::ForOp::create(
            b, loc, zeroIndex, rowsPerGroup, one, inner,
            [&](OpBuilder &ib, Location, Value i, ValueRange accs) {
              Value packed = read(ib, q, prefix({zeroIndex, g, i, zeroIndex}), qVec, zeroI8);
              SmallVector<Value> nibbles;
              if (info.bits == 8) {
                nibbles.push_back(packed);
              } else {
                // In i32 lanes (x86 has no byte shifts): sign-extend the
                // byte; its low nibble is (x << 28) >> 28, its high one x >> 4.
                auto iVec = VectorType::get({columns}, ib.getI32Type());
                Value x = arith::ExtSIOp::create(ib, loc, iVec, packed);
                auto splat = [&](int32_t v) -> Value {
                  return arith::ConstantOp::create(
                      ib, loc, DenseElementsAttr::get(iVec, ib.getI32IntegerAttr(v)));
                };
                Value c28 = splat(28);
                nibbles.push_back(arith::ShRSIOp::create(
                    ib, loc, arith::ShLIOp::create(ib, loc, x, c28), c28));
                nibbles.push_back(arith::ShRSIOp::create(ib, loc, x, splat(4)));
              }
              SmallVector<Value> weights;
              for (Value nibble : nibbles) {
                Value w = arith::SIToFPOp::create(ib, loc, fVec, nibble);
                weights.push_back(factored ? w : arith::MulFOp::create(ib, loc, w, scale));
              }
              SmallVector<Value> next(accs.begin(), accs.end());
              for (int64_t r = 0; r < rows; ++r)
                for (auto [h, w] : llvm::enumerate(weights)) {
                  SmallVector<Value> aIndices(nb, zeroIndex);
                  aIndices.append({rowIndex[r], g, i});
                  if (info.bits == 4)
                    aIndices.push_back(index(ib, h));
                  Value x = tensor::ExtractOp::create(ib, loc, a, aIndices);
                  Value broadcast = vector::BroadcastOp::create(ib, loc, fVec, x);
                  next[r] = vector::FMAOp::create(ib, loc, broadcast, w, next[r]);
                }
              scf::YieldOp::create(ib, loc, next);
            });
        SmallVector<Value> results(rowLoop.getResults());
        if (factored)
          for (int64_t r = 0; r < rows; ++r)
            results[r] = vector::FMAOp::create(b, loc, results[r], scale, groupAccs[r]);
        scf::YieldOp::create(b, loc, results);
      });
  Value result = c;
  AffineMap map = AffineMap::getMinorIdentityMap(cType.getRank(), 1, ctx);
  for (int64_t r = 0; r < rows; ++r)
    result = vector::TransferWriteOp::create(rewriter, loc, groupLoop.getResult(r), result,
                                             prefix({rowIndex[r], zeroIndex}),
                                             AffineMapAttr::get(map), mask, inBounds)
                 .getResult();
  rewriter.replaceOp(op, result);
}

} // namespace

void tileQuantizedMatmul(RewriterBase &rewriter, linalg::LinalgOp op) {
  std::optional<QuantizedMatmul> info = matchQuantizedMatmul(op);
  if (!info)
    return;
  const unsigned mDim = info->batchDims;
  int64_t m = op.getStaticLoopRanges()[mDim];
  Operation *fullRows = op, *leftoverRows = nullptr;
  if (!ShapedType::isDynamic(m) && m < kMatmulRegisterM) {
    fullRows = nullptr;
    leftoverRows = op;
  } else if (ShapedType::isDynamic(m) || m % kMatmulRegisterM != 0) {
    rewriter.setInsertionPoint(op);
    SmallVector<Range> domain = cast<TilingInterface>(op.getOperation()).getIterationDomain(rewriter);
    AffineExpr s0;
    bindSymbols(rewriter.getContext(), s0);
    OpFoldResult split = affine::makeComposedFoldedAffineApply(
        rewriter, op.getLoc(), s0.floorDiv(kMatmulRegisterM) * kMatmulRegisterM,
        {domain[mDim].size});
    auto [first, second] =
        linalg::splitOp(rewriter, cast<TilingInterface>(op.getOperation()), mDim, split);
    fullRows = first ? first.getOperation() : nullptr;
    leftoverRows = second ? second.getOperation() : nullptr;
  }
  if (fullRows)
    tileQuantizedRegisters(rewriter, fullRows, info->batchDims, kMatmulRegisterM,
                           kMatmulRegisterN, /*narrowRemainder=*/false);
  if (leftoverRows)
    tileQuantizedRegisters(rewriter, leftoverRows, info->batchDims, 1, kGemvColumns,
                           /*narrowRemainder=*/true);
}

void vectorizeQuantizedMatmuls(RewriterBase &rewriter, func::FuncOp kernel) {
  SmallVector<std::pair<linalg::GenericOp, QuantizedMatmul>> tiles;
  kernel.walk([&](linalg::GenericOp op) {
    if (std::optional<QuantizedMatmul> info = matchQuantizedMatmul(op);
        info && op.hasPureTensorSemantics())
      tiles.push_back({op, *info});
  });
  for (auto [op, info] : tiles) {
    std::optional<SmallVector<int64_t>> bounds = loopUpperBounds(op);
    if (!bounds)
      continue;
    ArrayRef<int64_t> ranges = *bounds;
    const unsigned nb = info.batchDims;
    bool unitBatch = llvm::all_of(ranges.take_front(nb), [](int64_t r) { return r == 1; });
    auto qType = cast<RankedTensorType>(op.getDpsInputs()[1].getType());
    int64_t rows = ranges[nb], columns = ranges[nb + 1];
    // Anything else (a tile this strategy did not make) stays scalar loops.
    if (!unitBatch || rows < 1 || rows > kMatmulRegisterM || columns < 1 ||
        columns > kGemvColumns || (rows > 1 && columns > kMatmulRegisterN) ||
        qType.isDynamicDim(nb + 1) || qType.isDynamicDim(nb + 2))
      continue;
    emitQuantizedTile(rewriter, op, info, rows, columns);
  }
}

} // namespace turbine::compiler
