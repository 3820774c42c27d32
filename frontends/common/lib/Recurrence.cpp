//===- Recurrence.cpp - RNN, GRU and LSTM unrolled over time (shared) -----===//
//
// The time loop of Recurrence.h, shared by the ONNX RNN/GRU/LSTM importer and
// the TorchScript aten::rnn_tanh/rnn_relu/gru/lstm importer. Moved here from
// frontends/onnx/lib/RecurrentOps.cpp unchanged, except that gate blocks are
// looked up through Recurrence::gateBlock and initial states through
// stateOffset/stateBatchFirst (both the identity for ONNX).
//===----------------------------------------------------------------------===//
#include "turbine/frontends/Recurrence.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;

namespace turbine::frontends {

bool knownRecurrentActivation(const std::string &n, bool &usesAlpha, bool &usesBeta,
                              double &alpha, double &beta) {
  usesAlpha = usesBeta = false;
  alpha = beta = 0;
  if (n == "sigmoid" || n == "tanh" || n == "relu" || n == "softsign" || n == "softplus")
    return true;
  usesAlpha = true;
  if (n == "leakyrelu") { alpha = 0.01; return true; }
  if (n == "thresholdedrelu" || n == "elu") { alpha = 1.0; return true; }
  usesBeta = true;
  if (n == "affine") { alpha = 1.0; beta = 0.0; return true; }
  if (n == "scaledtanh") { alpha = 1.0; beta = 1.0; return true; }
  if (n == "hardsigmoid") { alpha = 0.2; beta = 0.5; return true; }
  return false;
}

namespace {

/// The block of W/R/bias holding gate k (ONNX order).
int64_t block(const Recurrence &rc, int64_t k) {
  return rc.gateBlock.empty() ? k : rc.gateBlock[k];
}

Value fconst(OpBuilder &b, Location l, Type t, double v) {
  return arith::ConstantOp::create(b, l, b.getFloatAttr(t, v));
}

Value applyActivation(OpBuilder &b, Location l, const RecurrentActivation &a, Value x) {
  Type t = x.getType();
  auto c = [&](double v) { return fconst(b, l, t, v); };
  const std::string &n = a.name;
  if (n == "sigmoid") {
    Value e = math::ExpOp::create(b, l, arith::NegFOp::create(b, l, x));
    return arith::DivFOp::create(b, l, c(1), arith::AddFOp::create(b, l, c(1), e));
  }
  if (n == "tanh")
    return math::TanhOp::create(b, l, x);
  if (n == "relu")
    return arith::MaximumFOp::create(b, l, x, c(0));
  if (n == "affine")
    return arith::AddFOp::create(b, l, arith::MulFOp::create(b, l, x, c(a.alpha)), c(a.beta));
  if (n == "leakyrelu") {
    Value neg = arith::CmpFOp::create(b, l, arith::CmpFPredicate::OLT, x, c(0));
    return arith::SelectOp::create(b, l, neg, arith::MulFOp::create(b, l, x, c(a.alpha)), x);
  }
  if (n == "thresholdedrelu") {
    Value gt = arith::CmpFOp::create(b, l, arith::CmpFPredicate::OGT, x, c(a.alpha));
    return arith::SelectOp::create(b, l, gt, x, c(0));
  }
  if (n == "scaledtanh")
    return arith::MulFOp::create(
        b, l, c(a.alpha), math::TanhOp::create(b, l, arith::MulFOp::create(b, l, x, c(a.beta))));
  if (n == "hardsigmoid") {
    Value v = arith::AddFOp::create(b, l, arith::MulFOp::create(b, l, x, c(a.alpha)), c(a.beta));
    return arith::MaximumFOp::create(b, l, c(0), arith::MinimumFOp::create(b, l, v, c(1)));
  }
  if (n == "elu") {
    Value neg = arith::CmpFOp::create(b, l, arith::CmpFPredicate::OLT, x, c(0));
    Value em1 = arith::MulFOp::create(b, l, math::ExpM1Op::create(b, l, x), c(a.alpha));
    return arith::SelectOp::create(b, l, neg, em1, x);
  }
  if (n == "softsign")
    return arith::DivFOp::create(b, l, x,
                                 arith::AddFOp::create(b, l, c(1), math::AbsFOp::create(b, l, x)));
  // softplus
  return math::Log1pOp::create(b, l, math::ExpOp::create(b, l, x));
}


/// A linalg.generic being assembled: inputs with their indexing maps over an
/// iteration space of `numDims` loops.
struct GenericBuilder {
  TensorBuilder &ctx;
  unsigned numDims;
  SmallVector<Value> inputs;
  SmallVector<AffineMap> maps;

  GenericBuilder(TensorBuilder &ctx, unsigned numDims) : ctx(ctx), numDims(numDims) {}

  /// Adds `value` read at `exprs` (dims d0.. and constants); returns its
  /// position among the body's block arguments.
  unsigned add(Value value, ArrayRef<AffineExpr> exprs) {
    inputs.push_back(value);
    maps.push_back(AffineMap::get(numDims, 0, exprs, ctx.builder.getContext()));
    return inputs.size() - 1;
  }
  AffineExpr d(unsigned i) { return ctx.builder.getAffineDimExpr(i); }
  AffineExpr k(int64_t v) { return ctx.builder.getAffineConstantExpr(v); }

  /// Emits the generic with one output of `sizes` (identity map over the
  /// first sizes.size() loops, the rest reductions when `init` is given).
  Value build(ArrayRef<OpFoldResult> sizes, Type elementType,
              function_ref<Value(OpBuilder &, Location, ValueRange)> body,
              Value init = nullptr) {
    if (!init)
      init = ctx.empty(sizes, elementType);
    return buildMulti(sizes, {init}, [&](OpBuilder &b, Location l, ValueRange args) {
      return SmallVector<Value>{body(b, l, args)};
    })[0];
  }

  /// The same with several outputs of `sizes`, initialized by `inits`; the
  /// body returns one value per output.
  SmallVector<Value>
  buildMulti(ArrayRef<OpFoldResult> sizes, ArrayRef<Value> inits,
             function_ref<SmallVector<Value>(OpBuilder &, Location, ValueRange)> body) {
    unsigned parallel = sizes.size();
    SmallVector<AffineMap> allMaps = maps;
    SmallVector<AffineExpr> outExprs; // identity over the first `parallel` loops
    for (unsigned i = 0; i < parallel; ++i)
      outExprs.push_back(d(i));
    for (size_t i = 0; i < inits.size(); ++i)
      allMaps.push_back(AffineMap::get(numDims, 0, outExprs, ctx.builder.getContext()));
    SmallVector<utils::IteratorType> iterators(numDims, utils::IteratorType::parallel);
    for (unsigned i = parallel; i < numDims; ++i)
      iterators[i] = utils::IteratorType::reduction;
    SmallVector<Type> types;
    for (Value v : inits)
      types.push_back(v.getType());
    auto generic = linalg::GenericOp::create(
        ctx.builder, ctx.loc, types, inputs, inits, allMaps, iterators,
        [&](OpBuilder &b, Location l, ValueRange args) {
          linalg::YieldOp::create(b, l, body(b, l, args));
        });
    SmallVector<Value> results(generic.getResults());
    for (Value r : results)
      ctx.recordDims(r, sizes);
    return results;
  }
};

/// X*W^T for all steps of direction `dir`: [T, B, gates, H].
Value inputProjection(TensorBuilder &ctx, const Recurrence &rc, int64_t dir) {
  GenericBuilder g(ctx, 5); // (t, b, gate, h, i)
  if (rc.batchFirst)
    g.add(rc.x, {g.d(1), g.d(0), g.d(4)});
  else
    g.add(rc.x, {g.d(0), g.d(1), g.d(4)});
  g.add(rc.w, {g.k(dir), g.d(2), g.d(3), g.d(4)});
  SmallVector<OpFoldResult> sizes{ctx.builder.getIndexAttr(rc.steps), rc.batch,
                                  ctx.builder.getIndexAttr(rc.gates),
                                  ctx.builder.getIndexAttr(rc.hidden)};
  Value zero = ctx.filled(sizes, fconst(ctx.builder, ctx.loc, rc.et, 0));
  return g.build(sizes, rc.et, [](OpBuilder &b, Location l, ValueRange a) -> Value {
    return arith::AddFOp::create(b, l, a[2], arith::MulFOp::create(b, l, a[0], a[1]));
  }, zero);
}

/// Weights `w4` [dirs, gates, H, K] (W or R) of direction `dir` as one
/// [K, gates * H] matrix (W^T, gate blocks in storage order), built once per
/// direction, so that X * W^T over all steps and each step's H * R^T are
/// linalg.matmuls, which the CPU target runs with its matmul strategy
/// (contraction generics over (.., gate, h, k) got the generic reduction
/// strategy: ~100x slower than ONNX Runtime on an LSTM tagger). With one
/// direction the transpose is a pure permutation, folded at compile time
/// when the weights are constants.
Value transposedWeights(TensorBuilder &ctx, const Recurrence &rc, Value w4, int64_t k,
                        int64_t dir) {
  OpBuilder &b = ctx.builder;
  GenericBuilder g(ctx, 3); // (k, gate, h)
  if (rc.directions == 1) {
    Value w3 = ctx.reshape(
        w4, {b.getIndexAttr(rc.gates), b.getIndexAttr(rc.hidden), b.getIndexAttr(k)});
    g.add(w3, {g.d(1), g.d(2), g.d(0)});
  } else {
    g.add(w4, {g.k(dir), g.d(1), g.d(2), g.d(0)});
  }
  SmallVector<OpFoldResult> sizes{b.getIndexAttr(k), b.getIndexAttr(rc.gates),
                                  b.getIndexAttr(rc.hidden)};
  Value transposed =
      g.build(sizes, rc.et, [](OpBuilder &, Location, ValueRange a) { return a[0]; });
  return ctx.reshape(transposed, {b.getIndexAttr(k), b.getIndexAttr(rc.gates * rc.hidden)});
}

/// X * W^T for all steps as one matmul: [T, B, gates, H]; null when X is
/// batch-first or its feature size is not static (the generic above then).
Value inputProjectionAsMatmul(TensorBuilder &ctx, const Recurrence &rc, int64_t dir) {
  auto xType = cast<RankedTensorType>(rc.x.getType());
  int64_t features = xType.getDimSize(2);
  if (rc.batchFirst || ShapedType::isDynamic(features))
    return nullptr;
  OpBuilder &b = ctx.builder;
  Value wT = transposedWeights(ctx, rc, rc.w, features, dir);
  int64_t rows = ShapedType::isDynamic(xType.getDimSize(1))
                     ? ShapedType::kDynamic
                     : rc.steps * xType.getDimSize(1);
  Value x2 = tensor::CollapseShapeOp::create(
      b, ctx.loc, RankedTensorType::get({rows, features}, rc.et), rc.x,
      ArrayRef<ReassociationIndices>{{0, 1}, {2}});
  SmallVector<OpFoldResult> flat{ctx.dim(x2, 0), b.getIndexAttr(rc.gates * rc.hidden)};
  Value zero = ctx.filled(flat, fconst(b, ctx.loc, rc.et, 0));
  Value product =
      linalg::MatmulOp::create(b, ctx.loc, ValueRange{x2, wT}, ValueRange{zero}).getResult(0);
  SmallVector<OpFoldResult> sizes{b.getIndexAttr(rc.steps), rc.batch, b.getIndexAttr(rc.gates),
                                  b.getIndexAttr(rc.hidden)};
  SmallVector<int64_t> shape{rc.steps, xType.getDimSize(1), rc.gates, rc.hidden};
  Value result = tensor::ExpandShapeOp::create(
      b, ctx.loc, RankedTensorType::get(shape, rc.et), product,
      ArrayRef<ReassociationIndices>{{0, 1}, {2, 3}}, sizes);
  ctx.recordDims(result, sizes);
  return result;
}

/// state[B, H] * R[dir, gate, :, :]^T for gates [0, numGates): [B, numGates, H].
/// With `singleGate` >= 0 only that gate: [B, H]. `rT` (recurrentMatrix),
/// when given, serves all gates as one matmul.
Value recurrentProjection(TensorBuilder &ctx, const Recurrence &rc, int64_t dir, Value state,
                          int64_t singleGate = -1, Value rT = nullptr) {
  SmallVector<OpFoldResult> sizes{rc.batch};
  if (singleGate < 0 && rT) {
    OpBuilder &b = ctx.builder;
    SmallVector<OpFoldResult> flat{rc.batch, b.getIndexAttr(rc.gates * rc.hidden)};
    Value zero = ctx.filled(flat, fconst(b, ctx.loc, rc.et, 0));
    Value product =
        linalg::MatmulOp::create(b, ctx.loc, ValueRange{state, rT}, ValueRange{zero}).getResult(0);
    ctx.recordDims(product, flat);
    return ctx.reshape(product,
                       {rc.batch, b.getIndexAttr(rc.gates), b.getIndexAttr(rc.hidden)});
  }
  if (singleGate < 0) {
    GenericBuilder g(ctx, 4); // (b, gate, h, j)
    g.add(state, {g.d(0), g.d(3)});
    g.add(rc.r, {g.k(dir), g.d(1), g.d(2), g.d(3)});
    sizes.push_back(ctx.builder.getIndexAttr(rc.gates));
    sizes.push_back(ctx.builder.getIndexAttr(rc.hidden));
    Value zero = ctx.filled(sizes, fconst(ctx.builder, ctx.loc, rc.et, 0));
    return g.build(sizes, rc.et, [](OpBuilder &b, Location l, ValueRange a) -> Value {
      return arith::AddFOp::create(b, l, a[2], arith::MulFOp::create(b, l, a[0], a[1]));
    }, zero);
  }
  GenericBuilder g(ctx, 3); // (b, h, j)
  g.add(state, {g.d(0), g.d(2)});
  g.add(rc.r, {g.k(dir), g.k(block(rc, singleGate)), g.d(1), g.d(2)});
  sizes.push_back(ctx.builder.getIndexAttr(rc.hidden));
  Value zero = ctx.filled(sizes, fconst(ctx.builder, ctx.loc, rc.et, 0));
  return g.build(sizes, rc.et, [](OpBuilder &b, Location l, ValueRange a) -> Value {
    return arith::AddFOp::create(b, l, a[2], arith::MulFOp::create(b, l, a[0], a[1]));
  }, zero);
}

/// Initial state [B, H] of direction `dir` from initial_h/initial_c, or zeros.
Value initialState(TensorBuilder &ctx, const Recurrence &rc, Value given, int64_t dir) {
  SmallVector<OpFoldResult> sizes{rc.batch, ctx.builder.getIndexAttr(rc.hidden)};
  if (!given)
    return ctx.filled(sizes, fconst(ctx.builder, ctx.loc, rc.et, 0));
  GenericBuilder g(ctx, 2);
  if (rc.stateBatchFirst)
    g.add(given, {g.d(0), g.k(rc.stateOffset + dir), g.d(1)});
  else
    g.add(given, {g.k(rc.stateOffset + dir), g.d(0), g.d(1)});
  return g.build(sizes, rc.et, [](OpBuilder &, Location, ValueRange a) { return a[0]; });
}

/// Scalar helpers inside a step body: pre-activation sums with clip.
struct StepScalars {
  const Recurrence &rc;
  OpBuilder &b;
  Location l;
  Value clipped(Value v) {
    if (!rc.clip)
      return v;
    Value lo = fconst(b, l, v.getType(), -*rc.clip), hi = fconst(b, l, v.getType(), *rc.clip);
    return arith::MinimumFOp::create(b, l, arith::MaximumFOp::create(b, l, v, lo), hi);
  }
  Value add(Value x, Value y) { return arith::AddFOp::create(b, l, x, y); }
  Value mul(Value x, Value y) { return arith::MulFOp::create(b, l, x, y); }
  Value act(int64_t dir, int which, Value v) {
    return applyActivation(b, l, rc.acts[dir * rc.numActs + which], clipped(v));
  }
};

/// Operand positions of the per-step elementwise generic over (b, h).
struct StepOperands {
  int xw = -1, hr = -1, wb = -1, rb = -1, hPrev = -1, cPrev = -1, peep = -1, len = -1, hrH = -1;
};

/// Adds the operands every step generic reads for direction `dir`, step `t`.
StepOperands addStepOperands(GenericBuilder &g, const Recurrence &rc, int64_t dir, int64_t t,
                             Value xw, Value hr, Value hPrev, Value cPrev) {
  StepOperands o;
  // Per gate k the maps read [.., k, h]; operand index + k via separate adds.
  o.xw = g.inputs.size();
  for (int64_t k = 0; k < rc.gates; ++k)
    g.add(xw, {g.k(t), g.d(0), g.k(block(rc, k)), g.d(1)});
  o.hr = g.inputs.size();
  for (int64_t k = 0; k < rc.gates; ++k)
    g.add(hr, {g.d(0), g.k(block(rc, k)), g.d(1)});
  if (rc.bias) {
    o.wb = g.inputs.size();
    for (int64_t k = 0; k < rc.gates; ++k)
      g.add(rc.bias, {g.k(dir), g.k(0), g.k(block(rc, k)), g.d(1)});
    o.rb = g.inputs.size();
    for (int64_t k = 0; k < rc.gates; ++k)
      g.add(rc.bias, {g.k(dir), g.k(1), g.k(block(rc, k)), g.d(1)});
  }
  o.hPrev = g.add(hPrev, {g.d(0), g.d(1)});
  if (cPrev)
    o.cPrev = g.add(cPrev, {g.d(0), g.d(1)});
  if (rc.peep) {
    o.peep = g.inputs.size();
    for (int64_t k = 0; k < 3; ++k)
      g.add(rc.peep, {g.k(dir), g.k(k), g.d(1)});
  }
  if (rc.seqLens)
    o.len = g.add(rc.seqLens, {g.d(0)});
  return o;
}

/// Pre-activation of gate k: XW + HR (+ Wb + Rb).
Value gateSum(StepScalars &s, const StepOperands &o, ValueRange a, int64_t k, bool withHr = true) {
  Value v = a[o.xw + k];
  if (withHr)
    v = s.add(v, a[o.hr + k]);
  if (o.wb >= 0)
    v = s.add(v, s.add(a[o.wb + k], a[o.rb + k]));
  return v;
}

/// `fresh` where step t is within sequence_lens[b], else `held`.
Value masked(OpBuilder &b, Location l, const StepOperands &o, ValueRange a, int64_t t, Value fresh,
             Value held) {
  if (o.len < 0)
    return fresh;
  Value len = a[o.len];
  Value tv = arith::ConstantOp::create(b, l, b.getIntegerAttr(len.getType(), t));
  Value live = arith::CmpIOp::create(b, l, arith::CmpIPredicate::slt, tv, len);
  return arith::SelectOp::create(b, l, live, fresh, held);
}

/// Y value of step t: the state, or zero past sequence_lens[b].
Value stepOutput(TensorBuilder &ctx, const Recurrence &rc, Value h, int64_t t) {
  if (!rc.seqLens)
    return h;
  GenericBuilder g(ctx, 2);
  g.add(h, {g.d(0), g.d(1)});
  g.add(rc.seqLens, {g.d(0)});
  SmallVector<OpFoldResult> sizes{rc.batch, ctx.builder.getIndexAttr(rc.hidden)};
  return g.build(sizes, rc.et, [&](OpBuilder &b, Location l, ValueRange a) -> Value {
    StepOperands o;
    o.len = 1;
    return masked(b, l, o, a, t, a[0], fconst(b, l, rc.et, 0));
  });
}

/// Runs direction `dir` over all steps; fills per-time outputs and final states.
void runDirection(TensorBuilder &ctx, const Recurrence &rc, int64_t dir, bool reverse,
                  SmallVector<Value> &yPerTime, Value &finalH, Value &finalC) {
  Value xw = inputProjectionAsMatmul(ctx, rc, dir);
  if (!xw)
    xw = inputProjection(ctx, rc, dir);
  Value rT = transposedWeights(ctx, rc, rc.r, rc.hidden, dir);
  Value h = initialState(ctx, rc, rc.initialH, dir);
  Value c = rc.kind == CellKind::Lstm ? initialState(ctx, rc, rc.initialC, dir) : Value();
  SmallVector<OpFoldResult> sizes{rc.batch, ctx.builder.getIndexAttr(rc.hidden)};
  yPerTime.assign(rc.steps, Value());
  for (int64_t s = 0; s < rc.steps; ++s) {
    int64_t t = reverse ? rc.steps - 1 - s : s;
    Value hr = recurrentProjection(ctx, rc, dir, h, -1, rT);
    if (rc.kind == CellKind::Rnn) {
      GenericBuilder g(ctx, 2);
      StepOperands o = addStepOperands(g, rc, dir, t, xw, hr, h, nullptr);
      h = g.build(sizes, rc.et, [&](OpBuilder &b, Location l, ValueRange a) -> Value {
        StepScalars sc{rc, b, l};
        Value fresh = sc.act(dir, 0, gateSum(sc, o, a, 0));
        return masked(b, l, o, a, t, fresh, a[o.hPrev]);
      });
    } else if (rc.kind == CellKind::Gru) {
      // Gates z, r, h. Without linear_before_reset, h's recurrent term is
      // (r (.) H) * Rh^T: one more contraction on r (.) H.
      Value hrH;
      if (!rc.linearBeforeReset) {
        GenericBuilder gr(ctx, 2);
        StepOperands o = addStepOperands(gr, rc, dir, t, xw, hr, h, nullptr);
        Value rTimesH = gr.build(sizes, rc.et, [&](OpBuilder &b, Location l, ValueRange a) -> Value {
          StepScalars sc{rc, b, l};
          return sc.mul(sc.act(dir, 0, gateSum(sc, o, a, 1)), a[o.hPrev]);
        });
        hrH = recurrentProjection(ctx, rc, dir, rTimesH, 2);
      }
      GenericBuilder g(ctx, 2);
      StepOperands o = addStepOperands(g, rc, dir, t, xw, hr, h, nullptr);
      if (hrH)
        o.hrH = g.add(hrH, {g.d(0), g.d(1)});
      h = g.build(sizes, rc.et, [&](OpBuilder &b, Location l, ValueRange a) -> Value {
        StepScalars sc{rc, b, l};
        Value z = sc.act(dir, 0, gateSum(sc, o, a, 0));
        Value rg = sc.act(dir, 0, gateSum(sc, o, a, 1));
        Value pre = a[o.xw + 2];
        Value wbh = o.wb >= 0 ? a[o.wb + 2] : Value();
        Value rbh = o.rb >= 0 ? a[o.rb + 2] : Value();
        if (rc.linearBeforeReset) {
          Value rec = a[o.hr + 2];
          if (rbh)
            rec = sc.add(rec, rbh);
          pre = sc.add(pre, sc.mul(rg, rec));
          if (wbh)
            pre = sc.add(pre, wbh);
        } else {
          pre = sc.add(pre, a[o.hrH]);
          if (wbh)
            pre = sc.add(pre, sc.add(wbh, rbh));
        }
        Value cand = sc.act(dir, 1, pre);
        Value one = fconst(b, l, rc.et, 1);
        Value fresh = sc.add(sc.mul(arith::SubFOp::create(b, l, one, z), cand), sc.mul(z, a[o.hPrev]));
        return masked(b, l, o, a, t, fresh, a[o.hPrev]);
      });
    } else {
      // LSTM gates i, o, f, c; peepholes P = [Pi, Po, Pf]. One generic
      // yields the new cell state and hidden state.
      GenericBuilder g(ctx, 2);
      StepOperands o = addStepOperands(g, rc, dir, t, xw, hr, h, c);
      SmallVector<Value> inits{ctx.empty(sizes, rc.et), ctx.empty(sizes, rc.et)};
      SmallVector<Value> next = g.buildMulti(sizes, inits, [&](OpBuilder &b, Location l, ValueRange a) {
        StepScalars sc{rc, b, l};
        Value cPrev = a[o.cPrev];
        Value iPre = gateSum(sc, o, a, 0), fPre = gateSum(sc, o, a, 2);
        if (o.peep >= 0) {
          iPre = sc.add(iPre, sc.mul(a[o.peep + 0], cPrev));
          fPre = sc.add(fPre, sc.mul(a[o.peep + 2], cPrev));
        }
        Value ig = sc.act(dir, 0, iPre);
        Value fg = rc.inputForget ? (Value)arith::SubFOp::create(b, l, fconst(b, l, rc.et, 1), ig)
                                  : sc.act(dir, 0, fPre);
        Value cand = sc.act(dir, 1, gateSum(sc, o, a, 3));
        Value cNew = sc.add(sc.mul(fg, cPrev), sc.mul(ig, cand));
        Value oPre = gateSum(sc, o, a, 1);
        if (o.peep >= 0)
          oPre = sc.add(oPre, sc.mul(a[o.peep + 1], cNew));
        Value og = sc.act(dir, 0, oPre);
        Value hNew = sc.mul(og, applyActivation(b, l, rc.acts[dir * rc.numActs + 2], cNew));
        return SmallVector<Value>{masked(b, l, o, a, t, cNew, cPrev),
                                  masked(b, l, o, a, t, hNew, a[o.hPrev])};
      });
      Value cNext = next[0];
      h = next[1];
      c = cNext;
    }
    yPerTime[t] = stepOutput(ctx, rc, h, t);
  }
  finalH = h;
  finalC = c;
}


} // namespace

RecurrenceResult runRecurrence(TensorBuilder &ctx, const Recurrence &rc) {
  RecurrenceResult result;
  result.ys.resize(rc.directions);
  for (int64_t d = 0; d < rc.directions; ++d) {
    bool reverse = rc.reverseOnly || d == 1;
    Value fh, fc;
    runDirection(ctx, rc, d, reverse, result.ys[d], fh, fc);
    result.finalH.push_back(fh);
    result.finalC.push_back(fc);
  }
  return result;
}

Value assembleRecurrentOutput(TensorBuilder &ctx, const Recurrence &rc,
                              ArrayRef<SmallVector<Value>> pieces, bool withTime,
                              RecurrentLayout layout) {
  int64_t numT = withTime ? rc.steps : 1;
  int64_t numD = pieces.size();
  SmallVector<OpFoldResult> sizes;
  auto idx = [&](int64_t v) { return (OpFoldResult)ctx.builder.getIndexAttr(v); };
  int tDim = -1, dDim = -1, bDim = -1;
  auto addT = [&] {
    if (withTime) {
      tDim = sizes.size();
      sizes.push_back(idx(numT));
    }
  };
  auto addD = [&] { dDim = sizes.size(); sizes.push_back(idx(numD)); };
  auto addB = [&] { bDim = sizes.size(); sizes.push_back(rc.batch); };
  switch (layout) {
  case RecurrentLayout::TimeDirBatch: addT(); addD(); addB(); break;
  case RecurrentLayout::BatchTimeDir: addB(); addT(); addD(); break;
  case RecurrentLayout::TimeBatchDir: addT(); addB(); addD(); break;
  }
  int hDim = sizes.size();
  sizes.push_back(idx(rc.hidden));
  GenericBuilder g(ctx, sizes.size());
  for (int64_t d = 0; d < numD; ++d)
    for (int64_t t = 0; t < numT; ++t)
      g.add(pieces[d][t], {g.d(bDim), g.d(hDim)});
  return g.build(sizes, rc.et, [&](OpBuilder &b, Location l, ValueRange a) -> Value {
    Value tIdx = tDim >= 0 ? (Value)linalg::IndexOp::create(b, l, tDim) : Value();
    Value dIdx = linalg::IndexOp::create(b, l, dDim);
    Value result = a[0];
    for (int64_t d = 0; d < numD; ++d)
      for (int64_t t = 0; t < numT; ++t) {
        if (d == 0 && t == 0)
          continue;
        Value hit = arith::CmpIOp::create(b, l, arith::CmpIPredicate::eq, dIdx,
                                          arith::ConstantIndexOp::create(b, l, d));
        if (tIdx)
          hit = arith::AndIOp::create(
              b, l, hit,
              arith::CmpIOp::create(b, l, arith::CmpIPredicate::eq, tIdx,
                                    arith::ConstantIndexOp::create(b, l, t)));
        result = arith::SelectOp::create(b, l, hit, a[d * numT + t], result);
      }
    return result;
  });
}

} // namespace turbine::frontends
