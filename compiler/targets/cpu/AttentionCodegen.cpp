//===- AttentionCodegen.cpp - turbine.attention as an online-softmax loop nest ===//
//
// turbine-cpu-lower-attention. A kernel holding a turbine.attention (dispatch
// formation gives it one of its own; its operands are the to_tensor of
// bindings, its result materialized into the output binding) is rewritten
// directly on the bindings, before the generic tile-and-vectorize step:
//
//   for b, h, t (workgroups walk h = x, query-row tiles = y, b = z):
//     q  = query[b, h, t, :] * scale                      vector<D>
//     m = -inf, l = 0, acc = 0                            running max, sum,
//     for key blocks [j, j + n) of [0, key_length):       vector<D> output
//       (n = 8 while 8 keys are left, then 1 at a time)
//       (a block whose mask is all -inf is skipped: causal prefill reads
//       only the keys at or below its diagonal)
//       s[i] = q . key[b, h / g, j + i, :] (+ mask[t, j + i])   vector<n>
//       m' = max(m, max_i s);  c = exp(m - m');  p = exp(s - m')
//       l = l * c + sum_i p;  acc = acc * c + sum_i p[i] * value[b, h / g, j + i, :]
//     out[b, h, t, :] = acc / l
//
// with g = H / KH (grouped-query heads read their KV head in place) and K / V
// read straight from their bindings (a KV cache global: only the rows below
// key_length are touched). The score matrix never exists; every key row is
// read once per query row, as one vector<D> load. A block whose keys are all
// masked (-inf) leaves the state unchanged (m' = -inf is shifted by 0, not
// by -inf, so no NaN arises from -inf - -inf).
//===----------------------------------------------------------------------===//
#include "dispatch/WorkgroupTiling.h"

#include "turbine/compiler/Dialect/TurbineDialect.h"
#include "turbine/compiler/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include <cmath>

using namespace mlir;

namespace turbine::compiler {

#define GEN_PASS_DEF_CPULOWERATTENTION
#include "turbine/compiler/Passes.h.inc"

namespace {

/// Keys per block of the main loop.
constexpr int64_t kKeyBlock = 8;

/// The binding behind a kernel operand (bufferization.to_tensor of it).
Value bindingOf(Value tensor) {
  auto toTensor = tensor.getDefiningOp<bufferization::ToTensorOp>();
  return toTensor ? toTensor.getBuffer() : Value();
}

/// Running state of one query row.
struct RowState {
  Value max, sum, acc;
};

class AttentionLowering {
public:
  AttentionLowering(OpBuilder &b, Location loc, Value query, Value key, Value value, Value mask,
                    float scale, int64_t headDim)
      : b(b), loc(loc), query(query), key(key), value(value), mask(mask), scale(scale),
        vecType(VectorType::get({headDim}, b.getF32Type())) {}

  /// Computes out[b, h, t, :] for one query row.
  void row(Value batch, Value head, Value kvHead, Value t, Value keyLength, Value out);

private:
  RowState block(int64_t n, Value j, Value batch, Value kvHead, Value t, Value q, Value maskRow,
                 RowState s);
  Value f32(double v) { return arith::ConstantOp::create(b, loc, b.getF32FloatAttr(v)); }
  Value idx(int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); }

  OpBuilder &b;
  Location loc;
  Value query, key, value, mask;
  float scale;
  VectorType vecType;
};

RowState AttentionLowering::block(int64_t n, Value j, Value batch, Value kvHead, Value t,
                                  Value q, Value maskRow, RowState s) {
  auto blockType = VectorType::get({n}, b.getF32Type());
  auto reassoc = arith::FastMathFlags::reassoc;
  Value c0 = idx(0);
  Value scores = arith::ConstantOp::create(b, loc, DenseElementsAttr::get(blockType, 0.0f));
  SmallVector<Value> keys;
  for (int64_t i = 0; i < n; ++i) {
    Value row = i == 0 ? j : arith::AddIOp::create(b, loc, j, idx(i)).getResult();
    keys.push_back(row);
    Value k = vector::LoadOp::create(b, loc, vecType, key, ValueRange{batch, kvHead, row, c0});
    Value prod = arith::MulFOp::create(b, loc, q, k);
    Value score =
        vector::ReductionOp::create(b, loc, vector::CombiningKind::ADD, prod, reassoc);
    scores = vector::InsertOp::create(b, loc, score, scores, ArrayRef<int64_t>{i});
  }
  if (maskRow)
    scores = arith::AddFOp::create(b, loc, scores, maskRow);
  Value blockMax =
      vector::ReductionOp::create(b, loc, vector::CombiningKind::MAXIMUMF, scores, reassoc);
  Value newMax = arith::MaximumFOp::create(b, loc, s.max, blockMax);
  // All keys so far masked: shift by 0 so that exp(-inf - shift) = 0.
  Value allMasked =
      arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, newMax, f32(-INFINITY));
  Value shift = arith::SelectOp::create(b, loc, allMasked, f32(0.0), newMax);
  Value correction =
      math::ExpOp::create(b, loc, arith::SubFOp::create(b, loc, s.max, shift).getResult());
  Value shiftVec = vector::BroadcastOp::create(b, loc, blockType, shift);
  Value p = math::ExpOp::create(b, loc, arith::SubFOp::create(b, loc, scores, shiftVec).getResult());
  Value pSum = vector::ReductionOp::create(b, loc, vector::CombiningKind::ADD, p, reassoc);
  Value sum = arith::AddFOp::create(b, loc, arith::MulFOp::create(b, loc, s.sum, correction),
                                    pSum);
  Value acc = arith::MulFOp::create(
      b, loc, s.acc, vector::BroadcastOp::create(b, loc, vecType, correction).getResult());
  for (int64_t i = 0; i < n; ++i) {
    Value v = vector::LoadOp::create(b, loc, vecType, value, ValueRange{batch, kvHead, keys[i], c0});
    Value pi = vector::ExtractOp::create(b, loc, p, ArrayRef<int64_t>{i});
    acc = vector::FMAOp::create(b, loc, vector::BroadcastOp::create(b, loc, vecType, pi), v, acc);
  }
  return {newMax, sum, acc};
}

void AttentionLowering::row(Value batch, Value head, Value kvHead, Value t, Value keyLength,
                            Value out) {
  Value c0 = idx(0);
  Value q = vector::LoadOp::create(b, loc, vecType, query, ValueRange{batch, head, t, c0});
  q = arith::MulFOp::create(b, loc, q,
                            vector::BroadcastOp::create(b, loc, vecType, f32(scale)).getResult());
  Value zeros = arith::ConstantOp::create(b, loc, DenseElementsAttr::get(vecType, 0.0f));
  SmallVector<Value> init{f32(-INFINITY), f32(0.0), zeros};
  // Full blocks of kKeyBlock keys, then the rest one at a time.
  Value fullEnd = arith::MulIOp::create(
      b, loc, arith::DivUIOp::create(b, loc, keyLength, idx(kKeyBlock)).getResult(),
      idx(kKeyBlock));
  auto loopOver = [&](Value lb, Value ub, int64_t n, ValueRange iterArgs) {
    auto loop = scf::ForOp::create(
        b, loc, lb, ub, idx(n), iterArgs,
        [&](OpBuilder &nested, Location, Value j, ValueRange args) {
          OpBuilder::InsertionGuard guard(b);
          b.setInsertionPoint(nested.getInsertionBlock(), nested.getInsertionPoint());
          RowState state{args[0], args[1], args[2]};
          if (!mask) {
            RowState next = block(n, j, batch, kvHead, t, q, Value(), state);
            scf::YieldOp::create(b, loc, ValueRange{next.max, next.sum, next.acc});
            return;
          }
          // The block's mask first: a block it drops entirely (above a
          // causal diagonal) is skipped, its keys never read.
          Value maskRow = vector::LoadOp::create(b, loc, VectorType::get({n}, b.getF32Type()),
                                                 mask, ValueRange{t, j});
          Value maskMax = vector::ReductionOp::create(b, loc, vector::CombiningKind::MAXIMUMF,
                                                      maskRow);
          Value dropped = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, maskMax,
                                                f32(-INFINITY));
          auto skip = scf::IfOp::create(b, loc, TypeRange(args), dropped, /*withElse=*/true);
          b.setInsertionPointToStart(&skip.getThenRegion().front());
          scf::YieldOp::create(b, loc, args);
          b.setInsertionPointToStart(&skip.getElseRegion().front());
          RowState next = block(n, j, batch, kvHead, t, q, maskRow, state);
          scf::YieldOp::create(b, loc, ValueRange{next.max, next.sum, next.acc});
          b.setInsertionPointAfter(skip);
          scf::YieldOp::create(b, loc, skip.getResults());
        });
    return loop.getResults();
  };
  ValueRange full = loopOver(c0, fullEnd, kKeyBlock, init);
  ValueRange rest = loopOver(fullEnd, keyLength, 1, full);
  Value inv = arith::DivFOp::create(b, loc, f32(1.0), rest[1]);
  Value result =
      arith::MulFOp::create(b, loc, rest[2], vector::BroadcastOp::create(b, loc, vecType, inv).getResult());
  vector::StoreOp::create(b, loc, result, out, ValueRange{batch, head, t, c0});
}

LogicalResult lowerAttention(func::FuncOp kernel, AttentionOp op) {
  auto fail = [&](const Twine &why) {
    return op.emitError("attention codegen: ") << why;
  };
  Value query = bindingOf(op.getQuery()), key = bindingOf(op.getKey()),
        value = bindingOf(op.getValue());
  Value mask = op.getMask() ? bindingOf(op.getMask()) : Value();
  if (!query || !key || !value || (op.getMask() && !mask))
    return fail("expects its operands to be kernel bindings");
  if (!op.getResult().hasOneUse())
    return fail("expects its result to be written to one output binding");
  auto write = dyn_cast<bufferization::MaterializeInDestinationOp>(*op->user_begin());
  if (!write || !isa<MemRefType>(write.getDest().getType()))
    return fail("expects its result to be written to one output binding");
  Value out = write.getDest();
  auto qType = cast<MemRefType>(query.getType());
  if (qType.isDynamicDim(3))
    return fail("expects a static head_dim");
  int64_t headDim = qType.getDimSize(3);
  WorkgroupTiling tiling = getWorkgroupTiling(kernel);
  if (tiling.tileSizes.size() != 4 || tiling.gridDims[0] != 1 || tiling.gridDims[1] != 2 ||
      tiling.gridDims[2] != 0 || tiling.tileSizes[2] < 1)
    return fail("expects workgroups over (heads, query rows, batch)");
  int64_t rowTile = tiling.tileSizes[2];

  OpBuilder b(write);
  Location loc = op.getLoc();
  Value state = kernel.getArgument(0);
  auto c = [&](int64_t v) { return arith::ConstantIndexOp::create(b, loc, v).getResult(); };
  auto dim = [&](Value m, int64_t d) { return memref::DimOp::create(b, loc, m, d).getResult(); };
  Value batches = dim(query, 0), heads = dim(query, 1), rows = dim(query, 2);
  Value group = arith::DivUIOp::create(b, loc, heads, dim(key, 1));
  Value count[3];
  for (int axis = 0; axis < 3; ++axis)
    count[axis] = WorkgroupCountOp::create(b, loc, b.getIndexType(), state, axis);
  Value wgX = kernel.getArgument(1), wgY = kernel.getArgument(2), wgZ = kernel.getArgument(3);
  Value keyLength = op.getKeyLength();
  AttentionLowering lowering(b, loc, query, key, value, mask, op.getScale().convertToFloat(),
                             headDim);

  auto batchLoop = scf::ForOp::create(b, loc, wgZ, batches, count[2]);
  b.setInsertionPointToStart(batchLoop.getBody());
  Value batch = batchLoop.getInductionVar();
  auto headLoop = scf::ForOp::create(b, loc, wgX, heads, count[0]);
  b.setInsertionPointToStart(headLoop.getBody());
  Value head = headLoop.getInductionVar();
  Value kvHead = arith::DivUIOp::create(b, loc, head, group);
  Value tileStart = arith::MulIOp::create(b, loc, wgY, c(rowTile));
  Value tileStep = arith::MulIOp::create(b, loc, count[1], c(rowTile));
  auto tileLoop = scf::ForOp::create(b, loc, tileStart, rows, tileStep);
  b.setInsertionPointToStart(tileLoop.getBody());
  Value tileEnd = arith::MinUIOp::create(
      b, loc, arith::AddIOp::create(b, loc, tileLoop.getInductionVar(), c(rowTile)).getResult(),
      rows);
  auto rowLoop = scf::ForOp::create(b, loc, tileLoop.getInductionVar(), tileEnd, c(1));
  b.setInsertionPointToStart(rowLoop.getBody());
  lowering.row(batch, head, kvHead, rowLoop.getInductionVar(), keyLength, out);

  // The tensor-level ops are gone: the kernel writes its binding directly.
  Value init = op.getInit();
  write.erase();
  op.erase();
  for (Value operand : {init})
    if (Operation *def = operand.getDefiningOp(); def && def->use_empty())
      def->erase();
  return success();
}

struct CpuLowerAttentionPass : impl::CpuLowerAttentionBase<CpuLowerAttentionPass> {
  void runOnOperation() override {
    SmallVector<std::pair<func::FuncOp, AttentionOp>> work;
    for (func::FuncOp kernel : getOperation().getOps<func::FuncOp>())
      kernel.walk([&](AttentionOp op) { work.push_back({kernel, op}); });
    for (auto [kernel, op] : work) {
      if (failed(lowerAttention(kernel, op)))
        return signalPassFailure();
      // The bindings' to_tensor views are dead now.
      kernel.walk([](bufferization::ToTensorOp view) {
        if (view->use_empty())
          view->erase();
      });
    }
  }
};

} // namespace

} // namespace turbine::compiler
