//===- GgufMatmulCodegen.cpp - Matmuls reading GGUF Q8_0 / Q4_0 blocks ----===//
//
// Part of kernel codegen (CodegenStrategies.h): the block-decoding matmul
// generic of turbine-bind-gguf-weights (global-opt/GgufWeights.h) inside a
// workgroup tile. The weights are rows of blocks (output feature n, block g
// of 32 elements of K), so a register tile is R rows of A x C weight rows
// (output features), and the reduction runs over whole blocks:
//
//   acc[r][c] = 0 : vector<32xf32>                 (R x C accumulators)
//   for g in blocks:
//     a[r] = A'[r, g, 0:32]                        (shared by the C weight rows)
//     for c:
//       d    = extf(bitcast<f16>(W[c, g, 0:2]))    (converted once per block)
//       q    = W[c, g, 2:34] : vector<32xi8>       (Q4_0: 16 bytes, low nibbles
//              then high nibbles, minus 8)
//       w    = sitofp(q) * d                        (shared by the R rows)
//       acc[r][c] = fma(a[r], w, acc[r][c])
//   C[r, c] += reduce_add(acc[r][c])               (one horizontal sum each)
//
// Q4_0 on a CPU with AVX512F decodes a block by table instead: w = (d *
// [-8, ..., 7])[nibble], one vpermps per 16 weights (decodeQ4BlockByTable;
// 6 instructions per block where unpacking and converting take 10).
//
// GEMV (M = 1): R = C = 1, one weight row front to back (the rows one after
// another: one sequential stream through the file), 4 blocks per step with
// their own 16-lane accumulators (independent FMA chains), per block
// acc += d * (q[0:16] . a[0:16] + q[16:32] . a[16:32]), the scale once per
// block (Q4_0 by table: the two halves' scaled weights into two
// accumulators). Q4_0 without AVX512F (emitGgufNibbleGemv): the nibbles
// taken out by masks where they lie in the block's bytes, times powers of
// two, against activations permuted and divided by them once per
// workgroup, the "- 8" a per-block start of the dot product.
//
// Fewer than 16 rows (or weight rows per workgroup not a static multiple
// of 32): R = 4, C = 2 (16 zmm accumulators, each
// dequantized block used by 4 rows; 8 x 1 measured slower); without
// AVX-512 each of the 8 accumulates its block's four 8-lane pieces into one
// ymm (32 lanes each spilled on every block: an 8-token prompt's prefill
// took 1.43x as long). Partial tiles
// (odd N, a dynamic M's last rows) need no masks: lanes past the end read
// and write row / column min(index, count - 1), recomputing the last one's
// value exactly.
//
// Panels (prefill: 16 rows or more; a dynamic M chooses per workgroup at
// run time, tileMatmulOnDecodedPanels): per K tile of up to 256, the
// workgroup's weight rows (up to 128) are decoded once into the kernel's
// panel scratch, k-major with 32 weight rows per panel row (the layout of
// MatmulKernelPacking.h; 16 rows' blocks decoded as above, then transposed
// 16 x 16 in registers; without AVX512F, emitGgufPanelDecode8x8: 8 rows'
// quantized bytes transposed as bytes, then widened and scaled 8 rows at
// a time), and the tile becomes the f32 GEMM's packed
// contract on it: 8 x 32 register tiles, broadcast activations times 32
// decoded weights, each block decoded once for all of the workgroup's rows.
// The file's bytes are read in place; no f32 copy of the weights exists
// beyond one K tile of the workgroup's rows (at most 128 KiB of stack).
//
// Int8 activations (`--quantized-matmul-activations=int8`; default f32): a
// GEMV on a CPU with AVX512-VNNI or AVX2 (CpuFeatures.h, ByteDot) with an
// even number of blocks per
// row takes the workgroup tile's weight rows whole and rounds its
// activations once, per block of 32, as llama.cpp's Q8_0 activations:
// qa = roundeven(a * 127 / amax), a ~ qa * amax / 127
// (roundActivationsToInt8). Two blocks fill the 16 i32 lanes of one
// vpdpbusd (u8 x s8, 4 products per lane): the weight bytes as unsigned
// (Q8_0: q + 128 = q ^ 0x80; Q4_0: the nibble, q + 8), the rounded
// activations as signed, each lane's sum started at -bias * (sum of its 4
// qa), precomputed, so the lane holds sum q * qa exactly; then
// acc += sitofp(lanes) * d * amax / 127. Per 64 weights: two loads, one
// xor (Q8_0; Q4_0: and, shift, shuffle), one vpdpbusd, one convert, one
// FMA, and the two f16 scales. The activations' rounding (at most
// amax / 254 per activation) is the only change from the f32 path. With
// AVX2 and no AVX512-VNNI the lanes are summed by vpmaddubsw + vpmaddwd
// (two ymm each), whose 16-bit pair sums saturate: exact for Q4_0's
// nibbles (15 * 127 * 2 < 2^15), not for Q8_0's q + 128, which instead
// multiplies |q| by qa with q's sign (as llama.cpp's AVX2 code does; 128 *
// 127 * 2 < 2^15) from a start of 0.
//
// Plain types (F16 / BF16 / F32 rows, GgufWeights.h's plain form) take the
// same tiles with a block decoded as its 32 elements extended to f32
// (`vcvtph2ps` with F16C) and no scale: the GEMV's two halves multiply-add
// into the block's accumulator, the panels (prefill) transpose them as
// above. Before, such a matmul was two generics (32-lane partial sums, then
// their sum) that the generic strategy vectorized per row of A: at 32 rows
// each weight was converted 32 times.
//===----------------------------------------------------------------------===//
#include "targets/cpu/CodegenStrategies.h"
#include "targets/cpu/MatmulDataTiling.h"

#include "global-opt/GgufWeights.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/TileUsingInterface.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;

namespace turbine::compiler {

namespace {

/// x followed by y (two 1-D vectors of one type) as one vector.
Value concat(OpBuilder &b, Location loc, Value x, Value y) {
  int64_t n = cast<VectorType>(x.getType()).getDimSize(0);
  SmallVector<int64_t> order;
  for (int64_t i = 0; i < 2 * n; ++i)
    order.push_back(i);
  return vector::ShuffleOp::create(b, loc, x, y, order);
}

/// `tile` with its element `at` increased by the sum of all lanes of
/// `accumulators` (a GEMV's result for one weight row).
Value addLaneSums(OpBuilder &b, Location loc, ValueRange accumulators, Value tile,
                  ArrayRef<Value> at) {
  Value total = accumulators.front();
  for (Value acc : accumulators.drop_front())
    total = arith::AddFOp::create(b, loc, total, acc);
  Value sum = vector::ReductionOp::create(b, loc, vector::CombiningKind::ADD, total);
  Value updated = arith::AddFOp::create(b, loc, tensor::ExtractOp::create(b, loc, tile, at), sum);
  return tensor::InsertOp::create(b, loc, updated, tile, at);
}

/// x * scale + offset, as index arithmetic.
Value scaledIndex(OpBuilder &b, Location loc, Value x, int64_t scale, Value offset) {
  Value product =
      arith::MulIOp::create(b, loc, x, arith::ConstantIndexOp::create(b, loc, scale));
  return arith::AddIOp::create(b, loc, product, offset);
}

/// Block g's scale d of weight row `row` (its first two bytes, an f16) as
/// an f32 scalar.
Value readBlockScale(OpBuilder &b, Location loc, Value w, Value row, Value g) {
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value bytes = readVector(b, loc, w, {row, g, zero}, VectorType::get({2}, b.getI8Type()));
  Value half = vector::BitCastOp::create(b, loc, VectorType::get({1}, b.getF16Type()), bytes);
  Value scalar = vector::ExtractOp::create(b, loc, half, ArrayRef<int64_t>{0});
  return arith::ExtFOp::create(b, loc, b.getF32Type(), scalar);
}

/// The operand holding the weights' blocks (the quantized bytes; a plain
/// type's elements): W's last use in the generic.
Value blocksOperand(linalg::GenericOp op) { return op.getDpsInputs().back(); }

/// Whether A' is [M, G, 32] (Q8_0, plain types) rather than [M, G, 2, 16]
/// (Q4_0).
bool flatActivations(const GgufMatmul &info) { return info.ggmlType != kGgufQ4_0; }

/// Whether Q4_0 blocks are decoded by table (decodeQ4BlockByTable): on a
/// CPU with AVX512F.
bool decodesByTable(const GgufMatmul &info, const CpuFeatures &features) {
  return info.ggmlType == kGgufQ4_0 && features.avx512f;
}

/// Block g of weight row `row` of a plain type (32 f16 / bf16 / f32
/// elements) as f32.
Value readPlainBlock(OpBuilder &b, Location loc, Value wq, Value row, Value g) {
  Type element = cast<ShapedType>(wq.getType()).getElementType();
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value values = readVector(b, loc, wq, {row, g, zero}, VectorType::get({32}, element));
  if (element.isF32())
    return values;
  return arith::ExtFOp::create(b, loc, VectorType::get({32}, b.getF32Type()), values);
}

/// The 32 weights of block g of weight row `row` as f32 values, unscaled:
/// Q8_0's bytes; Q4_0's nibbles minus 8, elements 0-15 the low nibbles of
/// the 16 bytes, 16-31 the high ones. Q4_0 reads its bytes as two 8-byte
/// pieces widened to i32 (a `vpmovzxbd` from memory each) and takes the
/// nibbles out of the i32 lanes: reading the 16 bytes into one register
/// and widening its halves cost a lane extract and two shuffles per block
/// on AVX2 (2 of the 2 shuffle pipes of a Zen 3 core, the GEMV's bound).
Value readBlockValues(OpBuilder &b, Location loc, Value wq, Value row, Value g, bool q8) {
  Type i8 = b.getI8Type(), i32 = b.getI32Type();
  auto fVec = VectorType::get({32}, b.getF32Type());
  auto index = [&](int64_t v) -> Value { return arith::ConstantIndexOp::create(b, loc, v); };
  if (q8)
    return arith::SIToFPOp::create(
        b, loc, fVec, readVector(b, loc, wq, {row, g, index(2)}, VectorType::get({32}, i8)));
  auto eight = VectorType::get({8}, i32);
  auto splat = [&](int v) -> Value {
    return arith::ConstantOp::create(b, loc, DenseElementsAttr::get(eight, b.getI32IntegerAttr(v)));
  };
  SmallVector<Value> low, high;
  for (int64_t at : {2, 10}) {
    Value bytes = arith::ExtUIOp::create(
        b, loc, eight, readVector(b, loc, wq, {row, g, index(at)}, VectorType::get({8}, i8)));
    low.push_back(arith::SubIOp::create(b, loc, arith::AndIOp::create(b, loc, bytes, splat(15)),
                                        splat(8)));
    high.push_back(arith::SubIOp::create(b, loc, arith::ShRUIOp::create(b, loc, bytes, splat(4)),
                                         splat(8)));
  }
  Value values = concat(b, loc, concat(b, loc, low[0], low[1]), concat(b, loc, high[0], high[1]));
  return arith::SIToFPOp::create(b, loc, fVec, values);
}

/// Q4_0 block g of weight row `row` as its two halves of f32 weights
/// (elements 0-15, 16-31), scaled by d, on a CPU with AVX512F: t = d * [-8,
/// ..., 7], then each half's nibbles, zero-extended to 32 bits, select from
/// t, lane i = t[nibble i], which LLVM's X86 backend makes one vpermps (it
/// reads the low 4 bits of each index: the low nibble after an and, the
/// high one after a shift). Per 32 weights: one multiply, one load with
/// zero extension, and, shift, two permutes.
std::array<Value, 2> decodeQ4BlockByTable(OpBuilder &b, Location loc, Value wq, Value row,
                                          Value g, Value d) {
  auto lanes = [&](Type t) { return VectorType::get({16}, t); };
  Type f32 = b.getF32Type(), i32 = b.getI32Type();
  SmallVector<float> nibbleValues;
  for (int v = -8; v < 8; ++v)
    nibbleValues.push_back(float(v));
  Value table = arith::ConstantOp::create(
      b, loc, DenseElementsAttr::get(lanes(f32), ArrayRef<float>(nibbleValues)));
  Value scaled =
      arith::MulFOp::create(b, loc, table, vector::BroadcastOp::create(b, loc, lanes(f32), d));
  auto splat = [&](int v) -> Value {
    return arith::ConstantOp::create(b, loc,
                                     DenseElementsAttr::get(lanes(i32), b.getI32IntegerAttr(v)));
  };
  Value bytes = arith::ExtUIOp::create(
      b, loc, lanes(i32),
      readVector(b, loc, wq, {row, g, arith::ConstantIndexOp::create(b, loc, 2)},
                 lanes(b.getI8Type())));
  auto select = [&](Value nibbles) -> Value {
    SmallVector<Value> elements;
    for (int64_t i = 0; i < 16; ++i) {
      Value nibble = vector::ExtractOp::create(b, loc, nibbles, ArrayRef<int64_t>{i});
      Value at = arith::IndexCastUIOp::create(b, loc, b.getIndexType(), nibble);
      elements.push_back(vector::ExtractOp::create(b, loc, scaled, ArrayRef<OpFoldResult>{at}));
    }
    return vector::FromElementsOp::create(b, loc, lanes(f32), elements);
  };
  return {select(arith::AndIOp::create(b, loc, bytes, splat(15))),
          select(arith::ShRUIOp::create(b, loc, bytes, splat(4)))};
}

/// Block g of weight row `row` as its two halves of f32 weights (elements
/// 0-15, 16-31), scaled by d: by table (Q4_0 on a CPU with AVX512F) or
/// converted and multiplied; a plain type's elements extended.
std::array<Value, 2> decodeBlockScaled(OpBuilder &b, Location loc, Value w, Value wq, Value row,
                                       Value g, const GgufMatmul &info, bool table) {
  auto fVec = VectorType::get({32}, b.getF32Type());
  Value values;
  if (info.plain()) {
    values = readPlainBlock(b, loc, wq, row, g);
  } else {
    Value d = readBlockScale(b, loc, w, row, g);
    if (table)
      return decodeQ4BlockByTable(b, loc, wq, row, g, d);
    const bool q8 = info.ggmlType == kGgufQ8_0;
    values = arith::MulFOp::create(b, loc, readBlockValues(b, loc, wq, row, g, q8),
                                   vector::BroadcastOp::create(b, loc, fVec, d));
  }
  auto half = [&](int64_t at) -> Value {
    return vector::ExtractStridedSliceOp::create(b, loc, values, ArrayRef<int64_t>{at},
                                                 ArrayRef<int64_t>{16}, ArrayRef<int64_t>{1});
  };
  return {half(0), half(16)};
}

/// Sixteen vector<16xf32> rows transposed: lane j of result i is lane i of
/// rows[j]. The usual AVX-512 sequence, each step a two-source shuffle
/// whose mask X86 selects as one non-destructive instruction: 32-bit
/// unpacks of row pairs, 64-bit unpacks, then two rounds of 128-bit lane
/// shuffles (vunpcklps/hps, vunpcklpd/hpd, vshuff64x2).
SmallVector<Value> transpose16x16(OpBuilder &b, Location loc, ArrayRef<Value> rows) {
  // Masks over the 32 lanes of (x, y): per 128-bit lane L of four floats.
  SmallVector<int64_t> lowPairs, highPairs, lowQuads, highQuads, evenLanes, oddLanes;
  for (int64_t l = 0; l < 4; ++l) {
    lowPairs.append({4 * l, 16 + 4 * l, 4 * l + 1, 17 + 4 * l});
    highPairs.append({4 * l + 2, 18 + 4 * l, 4 * l + 3, 19 + 4 * l});
    lowQuads.append({4 * l, 4 * l + 1, 16 + 4 * l, 17 + 4 * l});
    highQuads.append({4 * l + 2, 4 * l + 3, 18 + 4 * l, 19 + 4 * l});
  }
  for (int64_t from : {0, 16})
    for (int64_t l = 0; l < 2; ++l)
      for (int64_t i = 0; i < 4; ++i) {
        evenLanes.push_back(from + 8 * l + i);
        oddLanes.push_back(from + 8 * l + 4 + i);
      }
  auto shuffle = [&](Value x, Value y, ArrayRef<int64_t> mask) -> Value {
    return vector::ShuffleOp::create(b, loc, x, y, mask);
  };
  SmallVector<Value> t(16), u(16), v(16), w(16);
  for (int64_t i = 0; i < 8; ++i) {
    t[2 * i] = shuffle(rows[2 * i], rows[2 * i + 1], lowPairs);
    t[2 * i + 1] = shuffle(rows[2 * i], rows[2 * i + 1], highPairs);
  }
  for (int64_t j = 0; j < 16; j += 4) {
    u[j] = shuffle(t[j], t[j + 2], lowQuads);
    u[j + 1] = shuffle(t[j], t[j + 2], highQuads);
    u[j + 2] = shuffle(t[j + 1], t[j + 3], lowQuads);
    u[j + 3] = shuffle(t[j + 1], t[j + 3], highQuads);
  }
  for (int64_t j : {0, 1, 2, 3, 8, 9, 10, 11}) {
    v[j] = shuffle(u[j], u[j + 4], evenLanes);
    v[j + 4] = shuffle(u[j], u[j + 4], oddLanes);
  }
  for (int64_t j = 0; j < 8; ++j) {
    w[j] = shuffle(v[j], v[j + 8], evenLanes);
    w[j + 8] = shuffle(v[j], v[j + 8], oddLanes);
  }
  return w;
}

/// Register tile (rows of A x weight rows) for a matmul of `m` rows.
std::pair<int64_t, int64_t> ggufRegisterTile(int64_t m) {
  if (m == 1)
    return {1, 1};
  return {4, 2};
}

/// The vector code of one register tile (file comment); `rows` x `columns`
/// are the tile's static upper bounds.
void emitGgufTile(RewriterBase &rewriter, linalg::GenericOp op, const GgufMatmul &info,
                  const CpuFeatures &features, int64_t rows, int64_t columns) {
  Location loc = op.getLoc();
  rewriter.setInsertionPoint(op);
  Value a = op.getDpsInputs()[0], w = op.getDpsInputs()[1], wq = blocksOperand(op);
  Value c = op.getDpsInits()[0];
  auto cType = cast<RankedTensorType>(c.getType());
  auto wType = cast<RankedTensorType>(w.getType());
  const bool table = decodesByTable(info, features);
  auto fVec = VectorType::get({32}, rewriter.getF32Type());

  auto index = [&](int64_t v) -> Value { return arith::ConstantIndexOp::create(rewriter, loc, v); };
  Value zero = index(0), one = index(1);
  auto clamped = [&](unsigned dim, int64_t count) {
    SmallVector<Value> out;
    Value last;
    if (cType.isDynamicDim(dim))
      last = arith::SubIOp::create(rewriter, loc, tensor::DimOp::create(rewriter, loc, c, dim),
                                   one);
    for (int64_t v = 0; v < count; ++v) {
      Value at = index(v);
      if (last)
        at = arith::MinSIOp::create(rewriter, loc, at, last);
      else if (v >= cType.getDimSize(dim))
        at = index(cType.getDimSize(dim) - 1);
      out.push_back(at);
    }
    return out;
  };
  SmallVector<Value> rowIndex = clamped(0, rows), colIndex = clamped(1, columns);

  // Accumulators of 32 lanes (two zmm) with AVX-512; with 16 ymm registers
  // the tile's eight would take all of them (and spilled on every block),
  // so each accumulates its block's four 8-lane pieces into one ymm.
  const int64_t lanes = features.avx512f ? 32 : 8;
  auto accType = VectorType::get({lanes}, rewriter.getF32Type());
  auto piece = [&](OpBuilder &b, Value v, int64_t at) -> Value {
    if (lanes == 32)
      return v;
    return vector::ExtractStridedSliceOp::create(b, loc, v, ArrayRef<int64_t>{at},
                                                 ArrayRef<int64_t>{lanes}, ArrayRef<int64_t>{1});
  };
  Value zeros = arith::ConstantOp::create(
      rewriter, loc, DenseElementsAttr::get(accType, rewriter.getF32FloatAttr(0)));
  SmallVector<Value> init(rows * columns, zeros);
  Value groups = index(wType.getDimSize(1));
  auto loop = scf::ForOp::create(
      rewriter, loc, zero, groups, one, init,
      [&](OpBuilder &b, Location, Value g, ValueRange accs) {
        SmallVector<Value> activations;
        for (int64_t r = 0; r < rows; ++r) {
          if (flatActivations(info)) {
            activations.push_back(readVector(b, loc, a, {rowIndex[r], g, zero}, fVec));
          } else {
            Value block = readVector(b, loc, a, {rowIndex[r], g, zero, zero},
                                     VectorType::get({2, 16}, b.getF32Type()));
            activations.push_back(vector::ShapeCastOp::create(b, loc, fVec, block));
          }
        }
        SmallVector<Value> next(accs.begin(), accs.end());
        for (int64_t col = 0; col < columns; ++col) {
          auto [low, high] = decodeBlockScaled(b, loc, w, wq, colIndex[col], g, info, table);
          Value weights = concat(b, loc, low, high);
          for (int64_t r = 0; r < rows; ++r) {
            Value &acc = next[r * columns + col];
            for (int64_t at = 0; at < 32; at += lanes)
              acc = vector::FMAOp::create(b, loc, piece(b, activations[r], at),
                                          piece(b, weights, at), acc);
          }
        }
        scf::YieldOp::create(b, loc, next);
      });
  Value result = c;
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t col = 0; col < columns; ++col) {
      Value sum = vector::ReductionOp::create(rewriter, loc, vector::CombiningKind::ADD,
                                              loop.getResult(r * columns + col));
      SmallVector<Value> at{rowIndex[r], colIndex[col]};
      // From the tile as it came in: a clamped (repeated) index must not
      // add its sum twice.
      Value old = tensor::ExtractOp::create(rewriter, loc, c, at);
      Value updated = arith::AddFOp::create(rewriter, loc, old, sum);
      result = tensor::InsertOp::create(rewriter, loc, updated, result, at);
    }
  rewriter.replaceOp(op, result);
}

/// Blocks per step of the GEMV loop, at most `most`: each has its own
/// accumulators, so that the FMA chains are independent (a chain's FMA
/// latency per block would bound the loop otherwise).
int64_t ggufGemvUnroll(int64_t blocks, int64_t most = 4) {
  for (int64_t unroll : {8, 4, 2})
    if (unroll <= most && blocks % unroll == 0)
      return unroll;
  return 1;
}

/// The GEMV tile with f32 activations (one row of A, one weight row; file
/// comment, "GEMV"): the row read front to back, `ggufGemvUnroll` blocks per
/// step. Q8_0: acc += d * (q[0:16] . a[0:16] + q[16:32] . a[16:32]).
/// Q4_0 (with AVX512F; without, emitGgufNibbleGemv): the block's halves
/// decoded scaled (decodeQ4BlockByTable), one FMA each into the block's two
/// accumulators. Plain types: acc += w[0:16] * a[0:16] + w[16:32] *
/// a[16:32], no scale.
void emitGgufGemv(RewriterBase &rewriter, linalg::GenericOp op, const GgufMatmul &info,
                  const CpuFeatures &features) {
  Location loc = op.getLoc();
  rewriter.setInsertionPoint(op);
  Value a = op.getDpsInputs()[0], w = op.getDpsInputs()[1], wq = blocksOperand(op);
  Value c = op.getDpsInits()[0];
  const int64_t blocks = cast<RankedTensorType>(w.getType()).getDimSize(1);
  const bool q8 = info.ggmlType == kGgufQ8_0;
  const bool table = decodesByTable(info, features);
  const int64_t unroll = ggufGemvUnroll(blocks);
  Type f32 = rewriter.getF32Type();
  auto lanes = VectorType::get({16}, f32);
  auto index = [&](OpBuilder &b, int64_t v) -> Value {
    return arith::ConstantIndexOp::create(b, loc, v);
  };
  Value zero = index(rewriter, 0);
  // Activations of block g, elements 16h .. 16h + 15.
  auto activations = [&](OpBuilder &b, Value g, int64_t h) -> Value {
    if (flatActivations(info))
      return readVector(b, loc, a, {zero, g, index(b, 16 * h)}, lanes);
    return readVector(b, loc, a, {zero, g, index(b, h), zero}, lanes);
  };
  // The weights of block g's two halves as f32 (scaled by d for the table).
  auto weights = [&](OpBuilder &b, Value g, Value d) -> std::array<Value, 2> {
    if (table)
      return decodeQ4BlockByTable(b, loc, wq, zero, g, d);
    Value values = readBlockValues(b, loc, wq, zero, g, q8);
    auto half = [&](int64_t at) -> Value {
      return vector::ExtractStridedSliceOp::create(b, loc, values, ArrayRef<int64_t>{at},
                                                   ArrayRef<int64_t>{16}, ArrayRef<int64_t>{1});
    };
    return {half(0), half(16)};
  };

  // Accumulators: per unrolled block one (scale after the dot product) or,
  // for the table, two (one per half, the scale is in the weights).
  const int64_t perBlock = table ? 2 : 1;
  Value zeros = arith::ConstantOp::create(
      rewriter, loc, DenseElementsAttr::get(lanes, rewriter.getF32FloatAttr(0)));
  SmallVector<Value> init(unroll * perBlock, zeros);
  auto loop = scf::ForOp::create(
      rewriter, loc, zero, index(rewriter, blocks), index(rewriter, unroll), init,
      [&](OpBuilder &b, Location, Value first, ValueRange accs) {
        SmallVector<Value> next(accs.begin(), accs.end());
        for (int64_t u = 0; u < unroll; ++u) {
          Value g = u == 0 ? first : arith::AddIOp::create(b, loc, first, index(b, u));
          if (info.plain()) {
            auto [low, high] = decodeBlockScaled(b, loc, w, wq, zero, g, info, false);
            next[u] = vector::FMAOp::create(b, loc, low, activations(b, g, 0), next[u]);
            next[u] = vector::FMAOp::create(b, loc, high, activations(b, g, 1), next[u]);
            continue;
          }
          Value d = readBlockScale(b, loc, w, zero, g);
          auto [low, high] = weights(b, g, d);
          if (table) {
            next[2 * u] = vector::FMAOp::create(b, loc, low, activations(b, g, 0), next[2 * u]);
            next[2 * u + 1] =
                vector::FMAOp::create(b, loc, high, activations(b, g, 1), next[2 * u + 1]);
            continue;
          }
          Value dot = arith::MulFOp::create(b, loc, low, activations(b, g, 0));
          dot = vector::FMAOp::create(b, loc, high, activations(b, g, 1), dot);
          next[u] = vector::FMAOp::create(b, loc, vector::BroadcastOp::create(b, loc, lanes, d),
                                          dot, next[u]);
        }
        scf::YieldOp::create(b, loc, next);
      });
  rewriter.replaceOp(op, addLaneSums(rewriter, loc, loop.getResults(), c, {zero, zero}));
}

/// Whether an M = 1 tile takes emitGgufNibbleGemv: Q4_0 with f32
/// activations where blocks are not decoded by table (no AVX512F), a
/// static number of blocks per row.
bool takesGgufNibbleGemv(const GgufMatmul &info, const CpuFeatures &features, int64_t m,
                         RankedTensorType wType) {
  return info.ggmlType == kGgufQ4_0 && !decodesByTable(info, features) && m == 1 &&
         !wType.isDynamicDim(1);
}

/// The Q4_0 GEMV with f32 activations on a CPU without AVX512F (file
/// comment, "GEMV") over all of the tile's weight rows. A block's 16 bytes
/// are read as 4 dwords into both halves of 8 lanes (one vbroadcasti128),
/// and its 32 nibbles are taken out by masks alone, each where it lies:
///   v[t] = y & [15 << 8t x 4, 240 << 8t x 4]       (t = 0, 1, 2)
///   v[3] = (y >> 24) & [15 x 4, 240 x 4]
/// so lane 4h + j of v[t] holds nibble h of byte 4j + t (element 16h + 4j
/// + t) times a power of two, exactly, after conversion. Once for all
/// weight rows, the activations are permuted into that order and divided
/// by those powers of two (exact), and the "- 8" of each weight becomes a
/// start -8 * (lane sums of the block's activations), so that per weight
/// row and block
///   dot = start + sum_t sitofp(v[t]) * a'[t];  acc += d * dot   (8 lanes)
/// Per block: one broadcast load, one shift, four ands, four conversions,
/// five FMAs. (Two `vpmovzxbd` per block cost 3 cycles each of Zen 3's two
/// shuffle pipes; with them, shifts and a subtraction per nibble it ran
/// 7.4 cycles per block, `llvm-mca -mcpu=znver3`.)
void emitGgufNibbleGemv(RewriterBase &rewriter, linalg::GenericOp op) {
  Location loc = op.getLoc();
  rewriter.setInsertionPoint(op);
  Value a = op.getDpsInputs()[0], w = op.getDpsInputs()[1], wq = blocksOperand(op);
  Value c = op.getDpsInits()[0];
  const int64_t blocks = cast<RankedTensorType>(w.getType()).getDimSize(1);
  // 8 blocks per step: one ymm accumulator each (1.05-1.08x over 4 on
  // Zen 3, `artifact_ab.py`, 768 x 768 and 4096 x 4096 Q4_0 Linears).
  const int64_t unroll = ggufGemvUnroll(blocks, 8);
  Type f32 = rewriter.getF32Type(), i32 = rewriter.getI32Type(), i8 = rewriter.getI8Type();
  auto lanes = [&](Type t, int64_t n) { return VectorType::get({n}, t); };
  auto index = [&](OpBuilder &b, int64_t v) -> Value {
    return arith::ConstantIndexOp::create(b, loc, v);
  };
  auto constant = [&](OpBuilder &b, VectorType type, Attribute value) -> Value {
    return arith::ConstantOp::create(b, loc, DenseElementsAttr::get(type, value));
  };
  // Per v[t]: the bit position of lane 4h + j's nibble and the element
  // (16h + 4j + t) it holds.
  auto shiftOf = [](int64_t t, int64_t lane) { return (t == 3 ? 0 : 8 * t) + 4 * (lane / 4); };
  auto elementOf = [](int64_t t, int64_t lane) { return 16 * (lane / 4) + 4 * (lane % 4) + t; };
  SmallVector<int64_t> order;
  SmallVector<float> scales;
  for (int64_t t = 0; t < 4; ++t)
    for (int64_t lane = 0; lane < 8; ++lane) {
      order.push_back(elementOf(t, lane));
      scales.push_back(std::ldexp(1.0f, -int(shiftOf(t, lane))));
    }
  Value zero = index(rewriter, 0), one = index(rewriter, 1);

  // Once for all weight rows: per block the activations in the nibbles'
  // order, divided by their powers of two, and the start.
  Value scaledInit = tensor::EmptyOp::create(rewriter, loc, ArrayRef<int64_t>{blocks, 32}, f32);
  Value startInit = tensor::EmptyOp::create(rewriter, loc, ArrayRef<int64_t>{blocks, 8}, f32);
  auto prepare = scf::ForOp::create(
      rewriter, loc, zero, index(rewriter, blocks), one, ValueRange{scaledInit, startInit},
      [&](OpBuilder &b, Location, Value g, ValueRange tensors) {
        // A' is [1, G, 2, 16]: element 16h + i multiplies nibble h of byte i.
        Value block = vector::ShapeCastOp::create(
            b, loc, lanes(f32, 32),
            readVector(b, loc, a, {zero, g, zero, zero}, VectorType::get({2, 16}, f32)));
        Value permuted = vector::ShuffleOp::create(b, loc, block, block, order);
        Value scaled = arith::MulFOp::create(
            b, loc, permuted,
            arith::ConstantOp::create(
                b, loc, DenseElementsAttr::get(lanes(f32, 32), ArrayRef<float>(scales))));
        Value sums = vector::MultiDimReductionOp::create(
            b, loc, vector::ShapeCastOp::create(b, loc, VectorType::get({4, 8}, f32), permuted),
            constant(b, lanes(f32, 8), b.getF32FloatAttr(0)), ArrayRef<bool>{true, false},
            vector::CombiningKind::ADD);
        Value start =
            arith::MulFOp::create(b, loc, sums, constant(b, lanes(f32, 8), b.getF32FloatAttr(-8)));
        scf::YieldOp::create(b, loc,
                             ValueRange{writeVector(b, loc, scaled, tensors[0], {g, zero}),
                                        writeVector(b, loc, start, tensors[1], {g, zero})});
      });
  Value scaled = prepare.getResult(0), starts = prepare.getResult(1);

  SmallVector<Value> masks;
  for (int64_t t = 0; t < 4; ++t) {
    SmallVector<int32_t> bits;
    for (int64_t lane = 0; lane < 8; ++lane)
      bits.push_back(int32_t(uint32_t(15) << shiftOf(t, lane)));
    masks.push_back(arith::ConstantOp::create(
        rewriter, loc, DenseElementsAttr::get(lanes(i32, 8), ArrayRef<int32_t>(bits))));
  }
  auto columnLoop = scf::ForOp::create(
      rewriter, loc, zero, tensor::DimOp::create(rewriter, loc, c, 1), one, ValueRange{c},
      [&](OpBuilder &b, Location, Value col, ValueRange result) {
        SmallVector<Value> init(unroll, constant(b, lanes(f32, 8), b.getF32FloatAttr(0)));
        auto blockLoop = scf::ForOp::create(
            b, loc, zero, index(b, blocks), index(b, unroll), init,
            [&](OpBuilder &ib, Location, Value first, ValueRange accs) {
              SmallVector<Value> next(accs.begin(), accs.end());
              for (int64_t u = 0; u < unroll; ++u) {
                Value g = u == 0 ? first : arith::AddIOp::create(ib, loc, first, index(ib, u));
                Value dwords = vector::BitCastOp::create(
                    ib, loc, lanes(i32, 4),
                    readVector(ib, loc, wq, {col, g, index(ib, 2)}, lanes(i8, 16)));
                Value y = vector::ShuffleOp::create(ib, loc, dwords, dwords,
                                                    ArrayRef<int64_t>{0, 1, 2, 3, 0, 1, 2, 3});
                Value top = arith::ShRUIOp::create(
                    ib, loc, y, constant(ib, lanes(i32, 8), ib.getI32IntegerAttr(24)));
                Value dot = readVector(ib, loc, starts, {g, zero}, lanes(f32, 8));
                for (int64_t t = 0; t < 4; ++t) {
                  Value nibbles = arith::SIToFPOp::create(
                      ib, loc, lanes(f32, 8),
                      arith::AndIOp::create(ib, loc, t == 3 ? top : y, masks[t]));
                  dot = vector::FMAOp::create(
                      ib, loc, nibbles,
                      readVector(ib, loc, scaled, {g, index(ib, 8 * t)}, lanes(f32, 8)), dot);
                }
                Value d = vector::BroadcastOp::create(ib, loc, lanes(f32, 8),
                                                      readBlockScale(ib, loc, w, col, g));
                next[u] = vector::FMAOp::create(ib, loc, d, dot, next[u]);
              }
              scf::YieldOp::create(ib, loc, next);
            });
        scf::YieldOp::create(b, loc,
                             addLaneSums(b, loc, blockLoop.getResults(), result[0], {zero, col}));
      });
  rewriter.replaceOp(op, columnLoop.getResult(0));
}

/// Whether an M = 1 tile takes emitGgufInt8Gemv: a block type (not a
/// plain one), a byte dot product (int8 activations allowed) and an even
/// number of blocks per row (two blocks per 16 i32 lanes).
bool takesGgufInt8Gemv(const CpuFeatures &features, int64_t m, RankedTensorType wType) {
  return byteDot(features) && m == 1 && wType.getElementType().isInteger(8) &&
         !wType.isDynamicDim(1) && wType.getDimSize(1) % 2 == 0;
}

/// The GEMV tile on int8 activations (file comment, "VNNI") over all of the
/// tile's weight rows: the activations rounded once, then per weight row
/// and pair of blocks one byte dot product of 16 lanes.
void emitGgufInt8Gemv(RewriterBase &rewriter, linalg::GenericOp op, const GgufMatmul &info,
                      ByteDot instruction) {
  MLIRContext *ctx = op.getContext();
  Location loc = op.getLoc();
  rewriter.setInsertionPoint(op);
  Value a = op.getDpsInputs()[0], w = op.getDpsInputs()[1], wq = blocksOperand(op);
  Value c = op.getDpsInits()[0];
  auto wType = cast<RankedTensorType>(w.getType());
  const bool q8 = info.ggmlType == kGgufQ8_0;
  // Q8_0 by vpmaddubsw: (q + 128) * qa pair sums overflow i16; |q| (at most
  // 128) times qa with q's sign (|qa| <= 127) do not, and need no bias.
  const bool signedQ8 = q8 && instruction == ByteDot::Vpmaddubsw;
  const int64_t pairs = wType.getDimSize(1) / 2;
  Type f32 = rewriter.getF32Type(), i8 = rewriter.getI8Type(), i32 = rewriter.getI32Type();
  auto lanes = [&](Type t) { return VectorType::get({16}, t); };
  auto index = [&](OpBuilder &b, int64_t v) -> Value {
    return arith::ConstantIndexOp::create(b, loc, v);
  };
  Value zero = index(rewriter, 0), one = index(rewriter, 1);
  auto splat = [&](OpBuilder &b, VectorType type, Attribute value) -> Value {
    return arith::ConstantOp::create(b, loc, DenseElementsAttr::get(type, value));
  };
  // Lane j of a pair's 16: block 2p + j / 8, bytes 4 (j % 8) .. + 3.
  auto perBlockLanes = [&](OpBuilder &b, Value first, Value second) -> Value {
    auto eight = VectorType::get({8}, first.getType());
    return concat(b, loc, vector::BroadcastOp::create(b, loc, eight, first),
                  vector::BroadcastOp::create(b, loc, eight, second));
  };

  // The activations, once: qa (int8, [blocks, 32]); per pair and lane the
  // correction -bias * (sum of the lane's 4 qa), the start of its dot
  // product; per pair and lane the activation scale.
  const int64_t bias = signedQ8 ? 0 : q8 ? 128 : 8;
  Value qaInit = tensor::EmptyOp::create(rewriter, loc, ArrayRef<int64_t>{2 * pairs, 32}, i8);
  Value startInit = tensor::EmptyOp::create(rewriter, loc, ArrayRef<int64_t>{pairs, 16}, i32);
  Value scaleInit = tensor::EmptyOp::create(rewriter, loc, ArrayRef<int64_t>{pairs, 16}, f32);
  auto rounding = scf::ForOp::create(
      rewriter, loc, zero, index(rewriter, pairs), one, ValueRange{qaInit, startInit, scaleInit},
      [&](OpBuilder &b, Location, Value p, ValueRange tensors) {
        Value qa = tensors[0];
        Value starts[2], scales[2];
        for (int64_t h = 0; h < 2; ++h) {
          Value g = arith::AddIOp::create(b, loc, arith::MulIOp::create(b, loc, p, index(b, 2)),
                                          index(b, h));
          Value block =
              q8 ? readVector(b, loc, a, {zero, g, zero}, VectorType::get({32}, f32))
                 : vector::ShapeCastOp::create(
                       b, loc, VectorType::get({32}, f32),
                       readVector(b, loc, a, {zero, g, zero, zero}, VectorType::get({2, 16}, f32)));
          Int8Activations rounded = roundActivationsToInt8(b, loc, block);
          qa = writeVector(b, loc, arith::TruncIOp::create(b, loc, VectorType::get({32}, i8), rounded.q), qa,
                     {g, zero});
          Value laneSums = vector::MultiDimReductionOp::create(
              b, loc,
              vector::ShapeCastOp::create(b, loc, VectorType::get({8, 4}, i32), rounded.q),
              splat(b, VectorType::get({8}, i32), b.getI32IntegerAttr(0)),
              ArrayRef<bool>{false, true}, vector::CombiningKind::ADD);
          starts[h] = arith::MulIOp::create(
              b, loc, laneSums, splat(b, VectorType::get({8}, i32), b.getI32IntegerAttr(-bias)));
          scales[h] = rounded.scale;
        }
        Value start = writeVector(b, loc, concat(b, loc, starts[0], starts[1]), tensors[1], {p, zero});
        Value scale = writeVector(b, loc, perBlockLanes(b, scales[0], scales[1]), tensors[2], {p, zero});
        scf::YieldOp::create(b, loc, ValueRange{qa, start, scale});
      });
  Value qa = rounding.getResult(0), starts = rounding.getResult(1),
        activationScales = rounding.getResult(2);

  Value columns = tensor::DimOp::create(rewriter, loc, c, 1);
  auto columnLoop = scf::ForOp::create(
      rewriter, loc, zero, columns, one, ValueRange{c},
      [&](OpBuilder &b, Location, Value col, ValueRange result) {
        Value zeros = splat(b, lanes(f32), b.getF32FloatAttr(0));
        auto pairLoop = scf::ForOp::create(
            b, loc, zero, index(b, pairs), one, ValueRange{zeros},
            [&](OpBuilder &ib, Location, Value p, ValueRange acc) {
              Value bytes[2], d[2];
              for (int64_t h = 0; h < 2; ++h) {
                Value g = arith::AddIOp::create(
                    ib, loc, arith::MulIOp::create(ib, loc, p, index(ib, 2)), index(ib, h));
                d[h] = readBlockScale(ib, loc, w, col, g);
                if (q8) {
                  bytes[h] = readVector(ib, loc, wq, {col, g, index(ib, 2)}, VectorType::get({32}, i8));
                  // q + 128 as an unsigned byte (signedQ8: q as it is, below).
                  if (!signedQ8)
                    bytes[h] = arith::XOrIOp::create(
                        ib, loc, bytes[h], splat(ib, VectorType::get({32}, i8), ib.getI8IntegerAttr(-128)));
                } else {
                  // The nibbles (q + 8, 0..15): elements 0-15 low, 16-31 high.
                  Value packed = readVector(ib, loc, wq, {col, g, index(ib, 2)}, lanes(i8));
                  bytes[h] = concat(
                      ib, loc, arith::AndIOp::create(ib, loc, packed, splat(ib, lanes(i8), ib.getI8IntegerAttr(15))),
                      arith::ShRUIOp::create(ib, loc, packed, splat(ib, lanes(i8), ib.getI8IntegerAttr(4))));
                }
              }
              auto dwords = [&](Value v) -> Value {
                return vector::BitCastOp::create(ib, loc, lanes(i32), v);
              };
              Value activations = vector::ShapeCastOp::create(
                  ib, loc, VectorType::get({64}, i8),
                  readVector(ib, loc, qa, {arith::MulIOp::create(ib, loc, p, index(ib, 2)), zero},
                       VectorType::get({2, 32}, i8)));
              Value weights = concat(ib, loc, bytes[0], bytes[1]);
              Value start = signedQ8 ? splat(ib, lanes(i32), ib.getI32IntegerAttr(0))
                                     : readVector(ib, loc, starts, {p, zero}, lanes(i32));
              if (signedQ8) {
                // |q| and qa with q's sign (q * qa = |q| * (sign(q) qa)).
                auto bytes64 = VectorType::get({64}, i8);
                Value negative = arith::CmpIOp::create(ib, loc, arith::CmpIPredicate::slt, weights,
                                                       splat(ib, bytes64, ib.getI8IntegerAttr(0)));
                activations = arith::SelectOp::create(
                    ib, loc, negative,
                    arith::SubIOp::create(ib, loc, splat(ib, bytes64, ib.getI8IntegerAttr(0)),
                                          activations),
                    activations);
                weights = math::AbsIOp::create(ib, loc, weights);
              }
              Value dot = buildUnsignedSignedDot(ib, loc, start, dwords(weights), dwords(activations),
                                                 instruction);
              Value scale = arith::MulFOp::create(ib, loc, perBlockLanes(ib, d[0], d[1]),
                                                  readVector(ib, loc, activationScales, {p, zero}, lanes(f32)));
              scf::YieldOp::create(
                  ib, loc,
                  ValueRange{vector::FMAOp::create(
                      ib, loc, arith::SIToFPOp::create(ib, loc, lanes(f32), dot), scale, acc[0])});
            });
        scf::YieldOp::create(b, loc,
                             addLaneSums(b, loc, pairLoop.getResults(), result[0], {zero, col}));
      });
  rewriter.replaceOp(op, columnLoop.getResult(0));
}

/// Rows (static M) from which a tile takes the panel strategy; a dynamic M
/// (a prompt of any length) always does. Below, the 4 x 2 register tiles
/// decode each block once per 4 rows, cheaper than a pack for few rows.
constexpr int64_t kGgufPanelMinRows = 16;

/// Blocks per K tile of the panel strategy: kMatmulTileK / 32, or the
/// largest power of two below that divides the blocks of a row.
int64_t ggufPanelBlocks(int64_t blocks) {
  for (int64_t perTile = kMatmulTileK / 32; perTile > 1; perTile /= 2)
    if (blocks % perTile == 0)
      return perTile;
  return 1;
}

/// The tile's weight rows decoded into `panels` (Bp[P][32 * blocks][32]
/// f32, a slice of the kernel's panel scratch, MatmulKernelPacking.h):
/// Bp[p][32 g + i][j] = weight row 32 p + j, element 32 g + i (scaled).
/// Per panel, block and 16 weight rows: their halves decoded as the
/// register tiles decode them, each 16 x 16 half transposed in registers
/// and written as one 16 x 16 block.
Value emitGgufPanelDecode(OpBuilder &b, Location loc, Value w, Value wq, Value panels,
                          const GgufMatmul &info, bool table) {
  auto type = cast<RankedTensorType>(panels.getType());
  auto index = [&](OpBuilder &ib, int64_t v) -> Value {
    return arith::ConstantIndexOp::create(ib, loc, v);
  };
  auto square = VectorType::get({16, 16}, b.getF32Type());
  Value zero = index(b, 0), one = index(b, 1), sixteen = index(b, 16);
  // Loops: panel p, block g, 16 weight rows at `first` (0 or 16).
  auto loops = scf::buildLoopNest(
      b, loc, ValueRange{zero, zero, zero},
      ValueRange{index(b, type.getDimSize(0)), index(b, type.getDimSize(1) / 32), index(b, 32)},
      ValueRange{one, one, sixteen}, ValueRange{panels},
      [&](OpBuilder &bb, Location, ValueRange ivs, ValueRange args) -> scf::ValueVector {
        Value p = ivs[0], g = ivs[1], first = ivs[2];
        Value firstRow = scaledIndex(bb, loc, p, kPackedPanelWidth, first);
        std::array<SmallVector<Value>, 2> halves;
        for (int64_t r = 0; r < 16; ++r) {
          Value row = arith::AddIOp::create(bb, loc, firstRow, index(bb, r));
          auto [low, high] = decodeBlockScaled(bb, loc, w, wq, row, g, info, table);
          halves[0].push_back(low);
          halves[1].push_back(high);
        }
        Value dest = args[0];
        for (int64_t h = 0; h < 2; ++h) {
          Value block = arith::ConstantOp::create(
              bb, loc, DenseElementsAttr::get(square, bb.getF32FloatAttr(0)));
          for (auto [i, column] : llvm::enumerate(transpose16x16(bb, loc, halves[h])))
            block = vector::InsertOp::create(bb, loc, column, block, ArrayRef<int64_t>{int64_t(i)});
          dest = writeVector(bb, loc, block, dest,
                             {p, scaledIndex(bb, loc, g, 32, index(bb, 16 * h)), first});
        }
        return {dest};
      });
  return loops.results[0];
}

/// Eight vector<8xf32> rows transposed: lane j of result i is lane i of
/// rows[j]. The usual AVX sequence: 32-bit unpacks of row pairs, 64-bit
/// shuffles of their results, then 128-bit lane shuffles (vunpcklps/hps,
/// vshufps, vperm2f128).
SmallVector<Value> transpose8x8(OpBuilder &b, Location loc, ArrayRef<Value> rows) {
  auto shuffle = [&](Value x, Value y, ArrayRef<int64_t> mask) -> Value {
    return vector::ShuffleOp::create(b, loc, x, y, mask);
  };
  SmallVector<Value> t(8), u(8), v(8);
  for (int64_t i = 0; i < 8; i += 2) {
    t[i] = shuffle(rows[i], rows[i + 1], {0, 8, 1, 9, 4, 12, 5, 13});
    t[i + 1] = shuffle(rows[i], rows[i + 1], {2, 10, 3, 11, 6, 14, 7, 15});
  }
  for (int64_t i : {0, 4})
    for (int64_t j = 0; j < 2; ++j) {
      u[i + 2 * j] = shuffle(t[i + j], t[i + j + 2], {0, 1, 8, 9, 4, 5, 12, 13});
      u[i + 2 * j + 1] = shuffle(t[i + j], t[i + j + 2], {2, 3, 10, 11, 6, 7, 14, 15});
    }
  for (int64_t i = 0; i < 4; ++i) {
    v[i] = shuffle(u[i], u[i + 4], {0, 1, 2, 3, 8, 9, 10, 11});
    v[i + 4] = shuffle(u[i], u[i + 4], {4, 5, 6, 7, 12, 13, 14, 15});
  }
  return v;
}

/// Sixteen bytes of each of 8 rows transposed: result m holds byte 2m of
/// the 8 rows, then byte 2m + 1 (8 rows each). Three rounds of interleaves
/// (bytes, words, dwords of row pairs: vpunpck{l,h}{bw,wd,dq}).
SmallVector<Value> transposeBytes8x16(OpBuilder &b, Location loc, ArrayRef<Value> rows) {
  // Interleave units of `width` bytes from the low (`high` = false) or
  // high halves of x and y.
  auto interleave = [&](Value x, Value y, int64_t width, bool high) -> Value {
    SmallVector<int64_t> mask;
    for (int64_t unit = 0; unit < 8 / width; ++unit)
      for (int64_t from : {0, 16})
        for (int64_t i = 0; i < width; ++i)
          mask.push_back(from + (high ? 8 : 0) + unit * width + i);
    return vector::ShuffleOp::create(b, loc, x, y, mask);
  };
  // Round 1: rows 2m, 2m + 1 byte by byte (bytes 0-7, then 8-15).
  SmallVector<Value> pairs[2];
  for (int64_t m = 0; m < 4; ++m)
    for (int64_t high = 0; high < 2; ++high)
      pairs[high].push_back(interleave(rows[2 * m], rows[2 * m + 1], 1, high));
  SmallVector<Value> result(8);
  for (int64_t high = 0; high < 2; ++high) {
    // Round 2: four rows per byte (bytes 0-3 of rows 0-3, then 4-7; ...).
    SmallVector<Value> quads;
    for (int64_t q = 0; q < 2; ++q)
      for (int64_t h = 0; h < 2; ++h)
        quads.push_back(interleave(pairs[high][2 * q], pairs[high][2 * q + 1], 2, h));
    // Round 3: all 8 rows per byte, two bytes per result.
    for (int64_t h = 0; h < 2; ++h)
      for (int64_t hh = 0; hh < 2; ++hh)
        result[4 * high + 2 * h + hh] = interleave(quads[h], quads[2 + h], 4, hh);
  }
  return result;
}

/// emitGgufPanelDecode for CPUs without AVX512F (16 ymm registers, where
/// 16 rows of 16 f32 lanes spilled on every block): per panel, block and 8
/// weight rows. Q8_0 / Q4_0: the rows' quantized bytes transposed as bytes
/// (transposeBytes8x16: 24 shuffles per 16 bytes of 8 rows, where f32
/// transposes take 96), then per element its 8 rows' values widened,
/// converted and scaled by the 8 rows' scales at once (Q4_0: fma(q, d,
/// -8 d), the nibble taken out of the byte before widening). Plain types:
/// groups of 8 elements of the 8 rows extended to f32 and transposed 8 x 8.
/// Each element's 8 values are written as 8 columns of its panel row.
Value emitGgufPanelDecode8x8(OpBuilder &b, Location loc, Value w, Value wq, Value panels,
                             const GgufMatmul &info) {
  auto type = cast<RankedTensorType>(panels.getType());
  auto index = [&](OpBuilder &ib, int64_t v) -> Value {
    return arith::ConstantIndexOp::create(ib, loc, v);
  };
  Type f32 = b.getF32Type(), i8 = b.getI8Type(), i32 = b.getI32Type();
  auto lanes = [&](Type t, int64_t n) { return VectorType::get({n}, t); };
  const bool q4 = info.ggmlType == kGgufQ4_0;
  Value zero = index(b, 0), one = index(b, 1);
  // Loops: panel p, block g, 8 weight rows at `first`.
  auto loops = scf::buildLoopNest(
      b, loc, ValueRange{zero, zero, zero},
      ValueRange{index(b, type.getDimSize(0)), index(b, type.getDimSize(1) / 32),
                 index(b, kPackedPanelWidth)},
      ValueRange{one, one, index(b, 8)}, ValueRange{panels},
      [&](OpBuilder &bb, Location, ValueRange ivs, ValueRange args) -> scf::ValueVector {
        Value p = ivs[0], g = ivs[1], first = ivs[2];
        Value firstRow = scaledIndex(bb, loc, p, kPackedPanelWidth, first);
        SmallVector<Value> rows;
        for (int64_t r = 0; r < 8; ++r)
          rows.push_back(arith::AddIOp::create(bb, loc, firstRow, index(bb, r)));
        Value dest = args[0];
        auto write = [&](Value column, int64_t element) {
          dest = writeVector(bb, loc, column, dest,
                             {p, scaledIndex(bb, loc, g, 32, index(bb, element)), first});
        };
        if (info.plain()) {
          Type element = cast<ShapedType>(wq.getType()).getElementType();
          for (int64_t e = 0; e < 4; ++e) {
            SmallVector<Value> values;
            for (Value row : rows) {
              Value v = readVector(bb, loc, wq, {row, g, index(bb, 8 * e)}, lanes(element, 8));
              values.push_back(element.isF32()
                                   ? v
                                   : arith::ExtFOp::create(bb, loc, lanes(f32, 8), v).getResult());
            }
            for (auto [i, column] : llvm::enumerate(transpose8x8(bb, loc, values)))
              write(column, 8 * e + int64_t(i));
          }
          return {dest};
        }
        // The 8 rows' scales, lane r row r's d.
        SmallVector<Value> ds;
        for (Value row : rows)
          ds.push_back(readBlockScale(bb, loc, w, row, g));
        Value scales = vector::FromElementsOp::create(bb, loc, lanes(f32, 8), ds);
        Value minusEight = arith::ConstantOp::create(
            bb, loc, DenseElementsAttr::get(lanes(f32, 8), bb.getF32FloatAttr(-8)));
        Value offsets = arith::MulFOp::create(bb, loc, scales, minusEight);
        auto byteSplat = [&](int v) -> Value {
          return arith::ConstantOp::create(
              bb, loc, DenseElementsAttr::get(lanes(i8, 16), bb.getI8IntegerAttr(v)));
        };
        // 8 rows' bytes (8 x i8) of one element, scaled.
        auto emit = [&](Value bytes, int64_t element) {
          Value integers = q4 ? arith::ExtUIOp::create(bb, loc, lanes(i32, 8), bytes).getResult()
                              : bytes;
          Value q = arith::SIToFPOp::create(bb, loc, lanes(f32, 8), integers);
          write(q4 ? vector::FMAOp::create(bb, loc, q, scales, offsets).getResult()
                   : arith::MulFOp::create(bb, loc, q, scales).getResult(),
                element);
        };
        auto half = [&](Value v, int64_t at) -> Value {
          return vector::ExtractStridedSliceOp::create(bb, loc, v, ArrayRef<int64_t>{at},
                                                       ArrayRef<int64_t>{8}, ArrayRef<int64_t>{1});
        };
        // Q4_0: bytes 0-15 hold elements i (low nibble) and 16 + i (high);
        // Q8_0: bytes 0-31 are elements 0-31, in two rounds of 16.
        for (int64_t at = 0; at < (q4 ? 16 : 32); at += 16) {
          SmallVector<Value> bytes;
          for (Value row : rows)
            bytes.push_back(readVector(bb, loc, wq, {row, g, index(bb, 2 + at)}, lanes(i8, 16)));
          for (auto [m, pair] : llvm::enumerate(transposeBytes8x16(bb, loc, bytes))) {
            int64_t element = at + 2 * int64_t(m);
            if (!q4) {
              emit(half(pair, 0), element);
              emit(half(pair, 8), element + 1);
              continue;
            }
            Value low = arith::AndIOp::create(bb, loc, pair, byteSplat(15));
            Value high = arith::ShRUIOp::create(bb, loc, pair, byteSplat(4));
            emit(half(low, 0), element);
            emit(half(low, 8), element + 1);
            emit(half(high, 0), 16 + element);
            emit(half(high, 8), 16 + element + 1);
          }
        }
        return {dest};
      });
  return loops.results[0];
}

/// The register tiles (1 x 1, 4 x 2; the int8 and nibble GEMVs' whole
/// weight rows).
void tileGgufRegisters(RewriterBase &rewriter, linalg::LinalgOp op, const GgufMatmul &info,
                       const CpuFeatures &features) {
  int64_t m = op.getStaticLoopRanges()[0];
  auto [rows, columns] = ggufRegisterTile(m);
  SmallVector<int64_t> tiles(op.getNumLoops(), 0);
  tiles[0] = rows;
  // The int8 and nibble GEMVs take the workgroup tile's weight rows whole.
  auto wType = cast<RankedTensorType>(op.getDpsInputs()[1].getType());
  if (!takesGgufInt8Gemv(features, m, wType) && !takesGgufNibbleGemv(info, features, m, wType))
    tiles[1] = columns;
  (void)tileOp(rewriter, cast<TilingInterface>(op.getOperation()), tiles);
}

} // namespace

void tileGgufMatmul(RewriterBase &rewriter, linalg::LinalgOp op, const CpuFeatures &features) {
  std::optional<GgufMatmul> info = matchGgufMatmul(op);
  if (!info)
    return;
  auto registerTiles = [&](linalg::LinalgOp tile) {
    tileGgufRegisters(rewriter, tile, *info, features);
  };
  auto wType = cast<RankedTensorType>(op.getDpsInputs()[1].getType());
  if (wType.isDynamicDim(1)) {
    registerTiles(op);
    return;
  }
  // Prefill: per K tile the blocks decoded into panels, then the f32 GEMM.
  const bool table = decodesByTable(*info, features);
  DecodedPanels panels;
  panels.blockDim = 2;
  panels.blocksPerTile = ggufPanelBlocks(wType.getDimSize(1));
  panels.minRows = kGgufPanelMinRows;
  panels.decode = [&](OpBuilder &b, linalg::GenericOp tile, Value scratch) {
    if (!features.avx512f)
      return emitGgufPanelDecode8x8(b, tile.getLoc(), tile.getDpsInputs()[1], blocksOperand(tile),
                                    scratch, *info);
    return emitGgufPanelDecode(b, tile.getLoc(), tile.getDpsInputs()[1], blocksOperand(tile),
                               scratch, *info, table);
  };
  tileMatmulOnDecodedPanels(rewriter, op, panels, features, registerTiles);
}

void vectorizeGgufMatmuls(RewriterBase &rewriter, func::FuncOp kernel,
                          const CpuFeatures &features) {
  SmallVector<std::pair<linalg::GenericOp, GgufMatmul>> tiles;
  kernel.walk([&](linalg::GenericOp op) {
    if (std::optional<GgufMatmul> info = matchGgufMatmul(op); info && op.hasPureTensorSemantics())
      tiles.push_back({op, *info});
  });
  for (auto [op, info] : tiles) {
    std::optional<SmallVector<int64_t>> bounds = loopUpperBounds(op);
    if (!bounds)
      continue;
    auto wType = cast<RankedTensorType>(op.getDpsInputs()[1].getType());
    if (takesGgufInt8Gemv(features, (*bounds)[0], wType)) {
      emitGgufInt8Gemv(rewriter, op, info, *byteDot(features));
      continue;
    }
    if (takesGgufNibbleGemv(info, features, (*bounds)[0], wType)) {
      emitGgufNibbleGemv(rewriter, op);
      continue;
    }
    if ((*bounds)[0] == 1 && (*bounds)[1] == 1 && !wType.isDynamicDim(1)) {
      emitGgufGemv(rewriter, op, info, features);
      continue;
    }
    auto [rows, columns] = ggufRegisterTile((*bounds)[0] == 1 ? 1 : 2);
    // Anything else (a tile this strategy did not make) stays scalar loops.
    if ((*bounds)[0] < 1 || (*bounds)[0] > rows || (*bounds)[1] < 1 ||
        (*bounds)[1] > columns || wType.isDynamicDim(1))
      continue;
    emitGgufTile(rewriter, op, info, features, (*bounds)[0], (*bounds)[1]);
  }
}

} // namespace turbine::compiler
