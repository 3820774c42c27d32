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
// GEMV (M = 1): R = 1, C = 4 (8 zmm accumulators, the activation block read
// once for 4 weight rows); M > 1 (prefill): R = 4, C = 2 (16 accumulators,
// each dequantized block used by 4 rows). Partial tiles (odd N, a dynamic
// M's last rows) need no masks: lanes past the end read and write row /
// column min(index, count - 1), recomputing the last one's value exactly.
// The file's bytes are read in place; no f32 copy of the weights exists.
//===----------------------------------------------------------------------===//
#include "targets/cpu/CodegenStrategies.h"

#include "global-opt/GgufWeights.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/TileUsingInterface.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;

namespace turbine::compiler {

namespace {

/// Register tile (rows of A x weight rows) for a matmul of `m` rows.
std::pair<int64_t, int64_t> ggufRegisterTile(int64_t m) {
  if (m == 1)
    return {1, 1};
  return {4, 2};
}

/// The vector code of one register tile (file comment); `rows` x `columns`
/// are the tile's static upper bounds.
void emitGgufTile(RewriterBase &rewriter, linalg::GenericOp op, const GgufMatmul &info,
                  int64_t rows, int64_t columns) {
  MLIRContext *ctx = op.getContext();
  Location loc = op.getLoc();
  rewriter.setInsertionPoint(op);
  Value a = op.getDpsInputs()[0], w = op.getDpsInputs()[1], wq = op.getDpsInputs()[3];
  Value c = op.getDpsInits()[0];
  auto cType = cast<RankedTensorType>(c.getType());
  auto wType = cast<RankedTensorType>(w.getType());
  const bool q8 = info.ggmlType == kGgufQ8_0;
  Type f32 = rewriter.getF32Type(), i8 = rewriter.getI8Type();
  auto fVec = VectorType::get({32}, f32);

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

  auto read = [&](OpBuilder &b, Value source, ArrayRef<Value> indices, VectorType type) -> Value {
    unsigned rank = cast<ShapedType>(source.getType()).getRank();
    AffineMap map = AffineMap::getMinorIdentityMap(rank, type.getRank(), ctx);
    Type element = type.getElementType();
    Value padding = isa<FloatType>(element)
                        ? arith::ConstantOp::create(b, loc, b.getFloatAttr(element, 0.0))
                        : arith::ConstantOp::create(b, loc, b.getIntegerAttr(element, 0));
    SmallVector<bool> inBounds(type.getRank(), true);
    return vector::TransferReadOp::create(b, loc, type, source, indices, AffineMapAttr::get(map),
                                          padding, Value(), b.getBoolArrayAttr(inBounds));
  };
  auto splatI8 = [&](OpBuilder &b, int v, int64_t n) -> Value {
    return arith::ConstantOp::create(
        b, loc, DenseElementsAttr::get(VectorType::get({n}, i8), b.getI8IntegerAttr(v)));
  };

  // GEMV (one row of A): one weight row per tile, read front to back, the
  // rows after one another (one sequential stream through the file's
  // blocks), 16-lane accumulators scaled once per block.
  const bool gemv = rows == 1;
  auto hVec = VectorType::get({16}, f32);
  Value zeros = arith::ConstantOp::create(
      rewriter, loc, DenseElementsAttr::get(gemv ? hVec : fVec, rewriter.getF32FloatAttr(0)));
  SmallVector<Value> init(rows * columns, zeros);
  Value groups = index(wType.getDimSize(1));
  auto loop = scf::ForOp::create(
      rewriter, loc, zero, groups, one, init,
      [&](OpBuilder &b, Location, Value g, ValueRange accs) {
        SmallVector<Value> activations;
        for (int64_t r = 0; r < rows; ++r) {
          if (q8) {
            activations.push_back(read(b, a, {rowIndex[r], g, zero}, fVec));
          } else {
            Value block = read(b, a, {rowIndex[r], g, zero, zero}, VectorType::get({2, 16}, f32));
            activations.push_back(vector::ShapeCastOp::create(b, loc, fVec, block));
          }
        }
        SmallVector<Value> next(accs.begin(), accs.end());
        for (int64_t col = 0; col < columns; ++col) {
          Value scaleBytes = read(b, w, {colIndex[col], g, zero}, VectorType::get({2}, i8));
          Value half = vector::BitCastOp::create(b, loc, VectorType::get({1}, b.getF16Type()),
                                                 scaleBytes);
          Value halfScalar = vector::ExtractOp::create(b, loc, half, ArrayRef<int64_t>{0});
          Value d = arith::ExtFOp::create(b, loc, f32, halfScalar);
          Value scale = gemv ? Value() : vector::BroadcastOp::create(b, loc, fVec, d);
          Value two = arith::ConstantIndexOp::create(b, loc, 2);
          Value q;
          if (q8) {
            q = read(b, wq, {colIndex[col], g, two}, VectorType::get({32}, i8));
          } else {
            Value packed = read(b, wq, {colIndex[col], g, two}, VectorType::get({16}, i8));
            Value low = arith::AndIOp::create(b, loc, packed, splatI8(b, 15, 16));
            Value high = arith::ShRUIOp::create(b, loc, packed, splatI8(b, 4, 16));
            SmallVector<int64_t> order;
            for (int64_t i = 0; i < 32; ++i)
              order.push_back(i);
            q = vector::ShuffleOp::create(b, loc, low, high, order);
            q = arith::SubIOp::create(b, loc, q, splatI8(b, 8, 32));
          }
          Value values = arith::SIToFPOp::create(b, loc, fVec, q);
          if (gemv) {
            // acc += d * (q[0:16] . a[0:16] + q[16:32] . a[16:32]): the
            // scale once per block, one accumulator chain per block.
            auto half = [&](Value v, int64_t at) -> Value {
              return vector::ExtractStridedSliceOp::create(b, loc, v, ArrayRef<int64_t>{at},
                                                           ArrayRef<int64_t>{16},
                                                           ArrayRef<int64_t>{1});
            };
            Value dot = arith::MulFOp::create(b, loc, half(values, 0), half(activations[0], 0));
            dot = vector::FMAOp::create(b, loc, half(values, 16), half(activations[0], 16), dot);
            Value &acc = next[col];
            acc = vector::FMAOp::create(b, loc, vector::BroadcastOp::create(b, loc, hVec, d), dot,
                                        acc);
            continue;
          }
          Value weights = arith::MulFOp::create(b, loc, values, scale);
          for (int64_t r = 0; r < rows; ++r) {
            Value &acc = next[r * columns + col];
            acc = vector::FMAOp::create(b, loc, activations[r], weights, acc);
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

} // namespace

void tileGgufMatmul(RewriterBase &rewriter, linalg::LinalgOp op) {
  if (!matchGgufMatmul(op))
    return;
  int64_t m = op.getStaticLoopRanges()[0];
  auto [rows, columns] = ggufRegisterTile(m);
  SmallVector<int64_t> tiles(op.getNumLoops(), 0);
  tiles[0] = rows;
  tiles[1] = columns;
  (void)tileOp(rewriter, cast<TilingInterface>(op.getOperation()), tiles);
}

void vectorizeGgufMatmuls(RewriterBase &rewriter, func::FuncOp kernel) {
  SmallVector<std::pair<linalg::GenericOp, GgufMatmul>> tiles;
  kernel.walk([&](linalg::GenericOp op) {
    if (std::optional<GgufMatmul> info = matchGgufMatmul(op); info && op.hasPureTensorSemantics())
      tiles.push_back({op, *info});
  });
  for (auto [op, info] : tiles) {
    std::optional<SmallVector<int64_t>> bounds = loopUpperBounds(op);
    if (!bounds)
      continue;
    auto [rows, columns] = ggufRegisterTile((*bounds)[0] == 1 ? 1 : 2);
    auto wType = cast<RankedTensorType>(op.getDpsInputs()[1].getType());
    // Anything else (a tile this strategy did not make) stays scalar loops.
    if ((*bounds)[0] < 1 || (*bounds)[0] > rows || (*bounds)[1] < 1 ||
        (*bounds)[1] > columns || wType.isDynamicDim(1))
      continue;
    emitGgufTile(rewriter, op, info, (*bounds)[0], (*bounds)[1]);
  }
}

} // namespace turbine::compiler
