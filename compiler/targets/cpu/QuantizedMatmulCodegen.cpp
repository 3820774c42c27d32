//===- QuantizedMatmulCodegen.cpp - Fused dequantize-and-multiply kernels -===//
//
// Part of kernel codegen (CodegenStrategies.h): the group-quantized matmul
// generic of turbine-quantize-weights (global-opt/WeightQuantization.h)
// inside a workgroup tile. Like the matmul strategy (RegisterTiles; numbers
// here for AVX-512, 6 x 16 and 1 x 64 with AVX2), rows split at the last
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
//
// VNNI: with `--quantized-matmul-activations=int8` (default f32) on a
// target CPU with AVX512-VNNI (CpuFeatures.h, `--target-cpu`),
// an int4 GEMV tile of whole 16-column chunks (no mask; columns past the
// last multiple of 16 / a partial column tile take the f32 path above) and
// an even number of packed rows per group (group size a multiple of 4)
// quantizes the activations instead: per group, amax = max |a|, qa =
// roundeven(a * (127 / amax)) as int8, and vpdpbusd sums 4 products of
// biased nibbles (q + 8, 0..15, unsigned) by qa (signed) per i32 lane, 64
// per instruction; the group's sum is corrected by 8 * sum(qa) (exact in
// i32) and scaled by s * amax / 127. Per 64 weights: two vpmovzxbd, two
// shifts, two vpternlogd, one vpdpbusd, against 8 x (convert, FMA) plus the
// unpacking. The one rounding this adds is a -> qa * amax / 127 (at most
// amax / 254 per activation, relative to the group's largest; llama.cpp's
// Q4_0 x Q8_0 dot product rounds its activations the same way, in blocks
// of 32); the f32 tile above never rounds activations. With AVX2 and no
// AVX512-VNNI the same tile sums its bytes by vpmaddubsw + vpmaddwd (ByteDot:
// two 16-bit pair sums per i32 lane, exact as the nibbles are below 16).
//===----------------------------------------------------------------------===//
#include "targets/cpu/CodegenStrategies.h"
#include "targets/cpu/MatmulDataTiling.h"

#include "global-opt/WeightQuantization.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/TileUsingInterface.h"
#include "mlir/Dialect/SCF/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;

namespace turbine::compiler {

namespace {

/// Tiles `op` by (batch 1, `rows`, `columns`, reductions whole) and peels the
/// column and row loops, so that full tiles get static shapes. A non-zero
/// `narrowRemainder`: the peeled columns are tiled again by that many.
void tileQuantizedRegisters(RewriterBase &rewriter, Operation *op, unsigned batchDims,
                            int64_t rows, int64_t columns, int64_t narrowRemainder) {
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
    byNarrow[batchDims + 1] = narrowRemainder;
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

/// Columns per vpdpbusd (16 i32 lanes of a zmm).
constexpr int64_t kVnniColumns = 16;

} // namespace

std::optional<ByteDot> byteDot(const CpuFeatures &features) {
  if (features.avx512vnni)
    return ByteDot::Vpdpbusd;
  if (features.avx2)
    return ByteDot::Vpmaddubsw;
  return std::nullopt;
}

/// Bitcasts to bytes, extensions, a multiply and a reduction over the 4
/// bytes of each lane, marked with `dot`.
Value buildUnsignedSignedDot(OpBuilder &b, Location loc, Value acc, Value x, Value y, ByteDot dot) {
  auto accType = cast<VectorType>(acc.getType());
  int64_t lanes = accType.getDimSize(0);
  Type i8 = b.getI8Type(), i32 = b.getI32Type();
  auto bytes = [&](Value v) -> Value {
    Value flat = vector::BitCastOp::create(b, loc, VectorType::get({4 * lanes}, i8), v);
    return vector::ShapeCastOp::create(b, loc, VectorType::get({lanes, 4}, i8), flat);
  };
  auto wide = VectorType::get({lanes, 4}, i32);
  Value product = arith::MulIOp::create(b, loc, arith::ExtUIOp::create(b, loc, wide, bytes(x)),
                                        arith::ExtSIOp::create(b, loc, wide, bytes(y)));
  auto sum = vector::MultiDimReductionOp::create(b, loc, product, acc, ArrayRef<bool>{false, true},
                                                 vector::CombiningKind::ADD);
  sum->setAttr(kByteDotAttr,
               b.getStringAttr(dot == ByteDot::Vpdpbusd ? "vpdpbusd" : "vpmaddubsw"));
  return sum;
}

Int8Activations roundActivationsToInt8(OpBuilder &b, Location loc, Value a) {
  auto type = cast<VectorType>(a.getType());
  Type f32 = b.getF32Type(), i32 = b.getI32Type();
  auto bitsType = type.clone(i32);
  Value zeroF = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(0.0f));
  // max |a| as the largest unsigned bit pattern with the sign bit cleared
  // (the order of non-negative floats; a NaN stays a NaN): a log-depth
  // integer reduction, not maxnumf's scalar chain.
  Value magnitudes = arith::AndIOp::create(
      b, loc, arith::BitcastOp::create(b, loc, bitsType, a),
      arith::ConstantOp::create(b, loc,
                                DenseElementsAttr::get(bitsType, b.getI32IntegerAttr(0x7FFFFFFF))));
  Value amax = arith::BitcastOp::create(
      b, loc, f32, vector::ReductionOp::create(b, loc, vector::CombiningKind::MAXUI, magnitudes));
  Value c127 = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(127.0f));
  Value positive = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT, amax, zeroF);
  Value inverse =
      arith::SelectOp::create(b, loc, positive, arith::DivFOp::create(b, loc, c127, amax), zeroF);
  Value scaled = arith::MulFOp::create(b, loc, a, vector::BroadcastOp::create(b, loc, type, inverse));
  Value qa = arith::FPToSIOp::create(b, loc, bitsType, math::RoundEvenOp::create(b, loc, scaled));
  return {qa, arith::DivFOp::create(b, loc, amax, c127)};
}

namespace {

/// Whether emitInt4VnniGemvTile can write this tile: a one-row int4 tile of
/// whole 16-column chunks (no mask) with an even number of packed rows per
/// group (whole dwords of 4 K values), on a CPU with a byte dot product.
bool takesInt4VnniGemv(const QuantizedMatmul &info, RankedTensorType cType,
                       RankedTensorType qType, int64_t rows, int64_t columns,
                       const CpuFeatures &features) {
  const unsigned nb = info.batchDims;
  return byteDot(features) && info.bits == 4 && rows == 1 && columns % kVnniColumns == 0 &&
         !cType.isDynamicDim(nb + 1) && qType.getDimSize(nb + 2) % 2 == 0;
}

/// The int4 GEMV tile with AVX512-VNNI (file comment, "VNNI"): per group g
///   amax = max |a[g, :]|, sa = amax / 127, qa = roundeven(a * (127 / amax))
///        (int8, 0 when amax = 0), sumq = sum qa
///   per pair of packed rows (4 consecutive K values k..k+3) and 16 columns:
///     d = the 4 nibbles of each column, one per byte, biased by +8 (0..15)
///     acc = vpdpbusd(acc, d, broadcast(qa[k..k+3]))     (u8 x s8 -> i32)
///   out += sitofp(acc - 8 * sumq) * (s[g, :] * sa)
/// so sum_k q * a = sum_k (q + 8) * qa - 8 * sumq exactly in i32, and the
/// activations' rounding to qa * sa is the only change from the f32 path.
void emitInt4VnniGemvTile(RewriterBase &rewriter, linalg::GenericOp op, const QuantizedMatmul &info,
                          int64_t columns, ByteDot dot) {
  MLIRContext *ctx = op.getContext();
  Location loc = op.getLoc();
  rewriter.setInsertionPoint(op);
  Value a = op.getDpsInputs()[0], q = op.getDpsInputs()[1], s = op.getDpsInputs()[2];
  Value c = op.getDpsInits()[0];
  auto cType = cast<RankedTensorType>(c.getType());
  auto qType = cast<RankedTensorType>(q.getType());
  const unsigned nb = info.batchDims;
  const int64_t packedRows = qType.getDimSize(nb + 2), group = 2 * packedRows;
  const int64_t chunks = columns / kVnniColumns;
  Type f32 = rewriter.getF32Type(), i8 = rewriter.getI8Type(), i32 = rewriter.getI32Type();
  auto fVec = VectorType::get({kVnniColumns}, f32);
  auto iVec = VectorType::get({kVnniColumns}, i32);
  auto bVec = VectorType::get({kVnniColumns}, i8);

  auto index = [&](OpBuilder &b, int64_t v) -> Value {
    return arith::ConstantIndexOp::create(b, loc, v);
  };
  Value zeroIndex = index(rewriter, 0), one = index(rewriter, 1);
  Value zeroF = arith::ConstantOp::create(rewriter, loc, rewriter.getF32FloatAttr(0.0f));
  Value zeroI8 = arith::ConstantOp::create(rewriter, loc, rewriter.getI8IntegerAttr(0));
  auto read = [&](OpBuilder &b, Value source, ValueRange indices, VectorType type,
                  Value padding) -> Value {
    unsigned rank = cast<ShapedType>(source.getType()).getRank();
    AffineMap map = AffineMap::getMinorIdentityMap(rank, type.getRank(), ctx);
    return vector::TransferReadOp::create(
        b, loc, type, source, indices, AffineMapAttr::get(map), padding, Value(),
        b.getBoolArrayAttr(SmallVector<bool>(type.getRank(), true)));
  };
  auto prefix = [&](std::initializer_list<Value> tail) {
    SmallVector<Value> indices(nb, zeroIndex);
    indices.append(tail.begin(), tail.end());
    return indices;
  };
  auto splat = [&](OpBuilder &b, VectorType type, Attribute value) -> Value {
    return arith::ConstantOp::create(b, loc, DenseElementsAttr::get(type, value));
  };

  SmallVector<Value> accumulators;
  for (int64_t ch = 0; ch < chunks; ++ch)
    accumulators.push_back(
        read(rewriter, c, prefix({zeroIndex, index(rewriter, ch * kVnniColumns)}), fVec, zeroF));
  Value groups = index(rewriter, qType.getDimSize(nb + 1));
  auto groupLoop = scf::ForOp::create(
      rewriter, loc, zeroIndex, groups, one, accumulators,
      [&](OpBuilder &b, Location, Value g, ValueRange groupAccs) {
        // The group's activations quantized to int8 (one scale per group).
        auto aGroupType = VectorType::get({group}, f32);
        Value aTile = read(b, a, prefix({zeroIndex, g, zeroIndex, zeroIndex}),
                           VectorType::get({packedRows, 2}, f32), zeroF);
        Value aGroup = vector::ShapeCastOp::create(b, loc, aGroupType, aTile);
        auto [qa, aScale] = roundActivationsToInt8(b, loc, aGroup);
        Value sumq = vector::ReductionOp::create(b, loc, vector::CombiningKind::ADD, qa);
        Value qaBytes = arith::TruncIOp::create(b, loc, VectorType::get({group}, i8), qa);
        // qa[k..k+3] as one dword, k = 4 p.
        Value qaWords =
            vector::BitCastOp::create(b, loc, VectorType::get({group / 4}, i32), qaBytes);

        Value zeros = splat(b, iVec, b.getI32IntegerAttr(0));
        SmallVector<Value> inner(chunks, zeros);
        Value pairs = index(b, packedRows / 2);
        auto pairLoop = scf::ForOp::create(
            b, loc, zeroIndex, pairs, one, inner,
            [&](OpBuilder &ib, Location, Value p, ValueRange accs) {
              Value i0 = arith::MulIOp::create(ib, loc, p, index(ib, 2));
              Value i1 = arith::AddIOp::create(ib, loc, i0, index(ib, 1));
              Value word = vector::ExtractOp::create(ib, loc, qaWords, OpFoldResult(p));
              Value activations = vector::BroadcastOp::create(ib, loc, iVec, word);
              SmallVector<Value> next;
              for (int64_t ch = 0; ch < chunks; ++ch) {
                Value column = index(ib, ch * kVnniColumns);
                // Column j's bytes x0 (K = k, k+1) and x1 (K = k+2, k+3) as
                // u = x0 | x1 << 16, nibbles biased: q + 8 = nibble ^ 8.
                Value e0 = arith::ExtUIOp::create(
                    ib, loc, iVec, read(ib, q, prefix({zeroIndex, g, i0, column}), bVec, zeroI8));
                Value e1 = arith::ExtUIOp::create(
                    ib, loc, iVec, read(ib, q, prefix({zeroIndex, g, i1, column}), bVec, zeroI8));
                Value u = arith::XOrIOp::create(
                    ib, loc,
                    arith::OrIOp::create(
                        ib, loc, e0,
                        arith::ShLIOp::create(ib, loc, e1, splat(ib, iVec, ib.getI32IntegerAttr(16)))),
                    splat(ib, iVec, ib.getI32IntegerAttr(0x00880088)));
                // Bytes [u 0-3, u 4-7, u 16-19, u 20-23] = q(k), q(k+1),
                // q(k+2), q(k+3) (+ 8 each), matching qa's byte order.
                Value d = arith::AndIOp::create(
                    ib, loc,
                    arith::OrIOp::create(
                        ib, loc, u,
                        arith::ShLIOp::create(ib, loc, u, splat(ib, iVec, ib.getI32IntegerAttr(4)))),
                    splat(ib, iVec, ib.getI32IntegerAttr(0x0F0F0F0F)));
                next.push_back(buildUnsignedSignedDot(ib, loc, accs[ch], d, activations, dot));
              }
              scf::YieldOp::create(ib, loc, next);
            });
        Value correction = vector::BroadcastOp::create(
            b, loc, iVec,
            arith::MulIOp::create(
                b, loc, sumq,
                arith::ConstantOp::create(b, loc, b.getI32IntegerAttr(8))));
        Value aScales = vector::BroadcastOp::create(b, loc, fVec, aScale);
        SmallVector<Value> results;
        for (int64_t ch = 0; ch < chunks; ++ch) {
          Value scale = arith::MulFOp::create(
              b, loc, read(b, s, prefix({g, index(b, ch * kVnniColumns)}), fVec, zeroF), aScales);
          Value dot = arith::SIToFPOp::create(
              b, loc, fVec, arith::SubIOp::create(b, loc, pairLoop.getResult(ch), correction));
          results.push_back(vector::FMAOp::create(b, loc, dot, scale, groupAccs[ch]));
        }
        scf::YieldOp::create(b, loc, results);
      });
  Value result = c;
  AffineMap map = AffineMap::getMinorIdentityMap(cType.getRank(), 1, ctx);
  for (int64_t ch = 0; ch < chunks; ++ch)
    result = vector::TransferWriteOp::create(
                 rewriter, loc, groupLoop.getResult(ch), result,
                 prefix({zeroIndex, index(rewriter, ch * kVnniColumns)}), AffineMapAttr::get(map),
                 Value(), rewriter.getBoolArrayAttr({true}))
                 .getResult();
  rewriter.replaceOp(op, result);
}

/// Rows (static M) from which a tile takes the panel strategy; a dynamic M
/// always does (as GGUF prefill tiles).
constexpr int64_t kQuantizedPanelMinRows = 16;

/// Groups per K tile of the panel strategy: as many as fill 256 elements of
/// K (at least one), halved until they divide the groups.
int64_t quantizedPanelGroups(int64_t groups, int64_t groupSize) {
  int64_t perTile = std::max<int64_t>(1, kMatmulTileK / groupSize);
  while (perTile > 1 && groups % perTile)
    perTile /= 2;
  return perTile;
}

/// The tile's weights (q [1 block, groups, rows per group, N] i8, s
/// [groups, N] f32) dequantized into `panels` (Bp[N/32][k][32] f32). q is
/// k-major like the panels, so each 32 weights of a row of K convert, scale
/// and store as they are: no shuffles (int4: a byte's low and high nibbles
/// are rows k = 2i and 2i + 1, unpacked in i32 lanes as the tiles do).
Value emitQuantizedPanelDecode(OpBuilder &b, Location loc, const QuantizedMatmul &info, Value q,
                               Value s, Value panels) {
  auto qType = cast<RankedTensorType>(q.getType());
  auto panelsType = cast<RankedTensorType>(panels.getType());
  const int64_t rowsPerGroup = qType.getDimSize(2);
  const int64_t groupSize = info.bits == 8 ? rowsPerGroup : 2 * rowsPerGroup;
  auto fVec = VectorType::get({kPackedPanelWidth}, b.getF32Type());
  auto iVec = VectorType::get({kPackedPanelWidth}, b.getI32Type());
  auto index = [&](OpBuilder &ib, int64_t v) -> Value {
    return arith::ConstantIndexOp::create(ib, loc, v);
  };
  auto splat = [&](OpBuilder &ib, int32_t v) -> Value {
    return arith::ConstantOp::create(ib, loc, DenseElementsAttr::get(iVec, ib.getI32IntegerAttr(v)));
  };
  Value zero = index(b, 0), one = index(b, 1);
  auto loops = scf::buildLoopNest(
      b, loc, ValueRange{zero, zero},
      ValueRange{index(b, panelsType.getDimSize(0)), index(b, qType.getDimSize(1))},
      ValueRange{one, one}, ValueRange{panels},
      [&](OpBuilder &gb, Location, ValueRange ivs, ValueRange args) -> scf::ValueVector {
        Value p = ivs[0], g = ivs[1];
        Value column = arith::MulIOp::create(gb, loc, p, index(gb, kPackedPanelWidth));
        Value scale = readVector(gb, loc, s, {g, column}, fVec);
        Value firstK = arith::MulIOp::create(gb, loc, g, index(gb, groupSize));
        auto rows = scf::ForOp::create(
            gb, loc, zero, index(gb, rowsPerGroup), one, args,
            [&](OpBuilder &ib, Location, Value i, ValueRange rowArgs) {
              Value packed = readVector(ib, loc, q, {zero, g, i, column},
                                        VectorType::get({kPackedPanelWidth}, ib.getI8Type()));
              SmallVector<Value> values;
              if (info.bits == 8) {
                values.push_back(arith::SIToFPOp::create(ib, loc, fVec, packed));
              } else {
                Value x = arith::ExtSIOp::create(ib, loc, iVec, packed);
                Value low = arith::ShRSIOp::create(
                    ib, loc, arith::ShLIOp::create(ib, loc, x, splat(ib, 28)), splat(ib, 28));
                values.push_back(arith::SIToFPOp::create(ib, loc, fVec, low));
                values.push_back(arith::SIToFPOp::create(
                    ib, loc, fVec, arith::ShRSIOp::create(ib, loc, x, splat(ib, 4))));
              }
              Value k = arith::AddIOp::create(
                  ib, loc, firstK,
                  arith::MulIOp::create(ib, loc, i, index(ib, int64_t(values.size()))));
              Value dest = rowArgs[0];
              for (auto [h, value] : llvm::enumerate(values)) {
                Value row = h ? arith::AddIOp::create(ib, loc, k, one).getResult() : k;
                dest = writeVector(ib, loc, arith::MulFOp::create(ib, loc, value, scale), dest,
                                   {p, row, zero});
              }
              scf::YieldOp::create(ib, loc, dest);
            });
        return {rows.getResult(0)};
      });
  return loops.results[0];
}


/// Rows split at the last multiple of the register tile's (RegisterTiles:
/// 8 x 32 with AVX-512), the rest one row at a time (file comment).
void tileQuantizedRows(RewriterBase &rewriter, linalg::LinalgOp op, const QuantizedMatmul &info,
                       const RegisterTiles &tiles) {
  const unsigned mDim = info.batchDims;
  int64_t m = op.getStaticLoopRanges()[mDim];
  Operation *fullRows = op, *leftoverRows = nullptr;
  const int64_t rows = tiles.matmulRows;
  if (!ShapedType::isDynamic(m) && m < rows) {
    fullRows = nullptr;
    leftoverRows = op;
  } else if (ShapedType::isDynamic(m) || m % rows != 0) {
    rewriter.setInsertionPoint(op);
    SmallVector<Range> domain = cast<TilingInterface>(op.getOperation()).getIterationDomain(rewriter);
    AffineExpr s0;
    bindSymbols(rewriter.getContext(), s0);
    OpFoldResult split = affine::makeComposedFoldedAffineApply(
        rewriter, op.getLoc(), s0.floorDiv(rows) * rows, {domain[mDim].size});
    auto [first, second] =
        linalg::splitOp(rewriter, cast<TilingInterface>(op.getOperation()), mDim, split);
    fullRows = first ? first.getOperation() : nullptr;
    leftoverRows = second ? second.getOperation() : nullptr;
  }
  if (fullRows)
    tileQuantizedRegisters(rewriter, fullRows, info.batchDims, rows, tiles.matmulColumns,
                           /*narrowRemainder=*/0);
  if (leftoverRows)
    tileQuantizedRegisters(rewriter, leftoverRows, info.batchDims, 1, tiles.gemvColumns,
                           /*narrowRemainder=*/tiles.matmulColumns);
}
} // namespace

void tileQuantizedMatmul(RewriterBase &rewriter, linalg::LinalgOp op,
                         const CpuFeatures &features) {
  std::optional<QuantizedMatmul> info = matchQuantizedMatmul(op);
  if (!info)
    return;
  auto rowTiles = [&](linalg::LinalgOp tile) {
    tileQuantizedRows(rewriter, tile, *info, registerTiles(features));
  };
  auto qType = cast<RankedTensorType>(op.getDpsInputs()[1].getType());
  if (info->batchDims != 0 || qType.isDynamicDim(1) || qType.isDynamicDim(2)) {
    rowTiles(op);
    return;
  }
  // Many rows: per K tile the weights dequantized into panels, then the
  // f32 GEMM.
  const int64_t groupSize = qType.getDimSize(2) * (info->bits == 8 ? 1 : 2);
  DecodedPanels panels;
  panels.blockDim = 2;
  panels.blocksPerTile = quantizedPanelGroups(qType.getDimSize(1), groupSize);
  panels.minRows = kQuantizedPanelMinRows;
  panels.decode = [&](OpBuilder &b, linalg::GenericOp tile, Value scratch) {
    return emitQuantizedPanelDecode(b, tile.getLoc(), *info, tile.getDpsInputs()[1],
                                    tile.getDpsInputs()[2], scratch);
  };
  tileMatmulOnDecodedPanels(rewriter, op, panels, features, rowTiles);
}

void vectorizeQuantizedMatmuls(RewriterBase &rewriter, func::FuncOp kernel,
                               const CpuFeatures &features) {
  SmallVector<std::pair<linalg::GenericOp, QuantizedMatmul>> tiles;
  kernel.walk([&](linalg::GenericOp op) {
    if (std::optional<QuantizedMatmul> info = matchQuantizedMatmul(op);
        info && op.hasPureTensorSemantics())
      tiles.push_back({op, *info});
  });
  const RegisterTiles registers = registerTiles(features);
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
    if (!unitBatch || rows < 1 || rows > registers.matmulRows || columns < 1 ||
        columns > registers.gemvColumns || (rows > 1 && columns > registers.matmulColumns) ||
        qType.isDynamicDim(nb + 1) || qType.isDynamicDim(nb + 2))
      continue;
    if (takesInt4VnniGemv(info, cast<RankedTensorType>(op.getDpsInits()[0].getType()), qType,
                          rows, columns, features))
      emitInt4VnniGemvTile(rewriter, op, info, columns, *byteDot(features));
    else
      emitQuantizedTile(rewriter, op, info, rows, columns);
  }
}

} // namespace turbine::compiler
