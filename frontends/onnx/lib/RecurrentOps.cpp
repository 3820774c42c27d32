//===- RecurrentOps.cpp - ONNX RNN, GRU and LSTM, unrolled over time ------===//
//
// The recurrent ops are unrolled at import time over their (static) sequence
// length: the input projection X*W^T of all time steps is one contraction
// generic per direction, each step adds one contraction H*R^T and one
// elementwise generic for the gates (LSTM: one generic with two results, cell
// and hidden state; GRU with linear_before_reset = 0 needs a
// second contraction on r (.) H). Gate blocks are addressed by reshaping
// W/R/B/P to [dirs, gates, hidden, ...] so every indexing map is a projection
// with constants (no slicing ops). Y, Y_h and Y_c are assembled by one
// selecting generic each.
//
// Supported: directions forward/reverse/bidirectional, layout 0/1, optional
// B, sequence_lens (per-batch masking: state held and Y zero past the end),
// initial_h/initial_c, P (peepholes), clip, input_forget, linear_before_reset,
// the activations of the ONNX spec with activation_alpha/beta. Limits (each
// refused with a message): a dynamic or very long sequence length (the IR
// grows linearly with it), non-float inputs.
//===----------------------------------------------------------------------===//
#include "ImportContext.h"

#include <cctype>

using namespace mlir;

namespace turbine::onnx_frontend {
namespace {

enum class CellKind { Rnn, Gru, Lstm };

/// Longest sequence unrolled at import time: the IR grows linearly with the
/// steps (a 64-step LSTM, 2 kernels per step, compiles in about 20 s on 2 busy cores).
constexpr int64_t kMaxUnrolledSteps = 256;

/// One activation function of the spec with its alpha/beta.
struct Activation {
  std::string name; ///< lower-case
  double alpha = 0, beta = 0;
};

Value fconst(OpBuilder &b, Location l, Type t, double v) {
  return arith::ConstantOp::create(b, l, b.getFloatAttr(t, v));
}

Value applyActivation(OpBuilder &b, Location l, const Activation &a, Value x) {
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

/// Default alpha/beta of an activation, and whether it consumes them.
bool knownActivation(const std::string &n, bool &usesAlpha, bool &usesBeta, double &alpha,
                     double &beta) {
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

/// A linalg.generic being assembled: inputs with their indexing maps over an
/// iteration space of `numDims` loops.
struct GenericBuilder {
  ImportContext &ctx;
  unsigned numDims;
  SmallVector<Value> inputs;
  SmallVector<AffineMap> maps;

  GenericBuilder(ImportContext &ctx, unsigned numDims) : ctx(ctx), numDims(numDims) {}

  /// Adds `value` read at `exprs` (dims d0.. and constants); returns its
  /// position among the body's block arguments.
  unsigned add(Value value, ArrayRef<AffineExpr> exprs) {
    inputs.push_back(value);
    maps.push_back(AffineMap::get(numDims, 0, exprs, &ctx.context));
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
      allMaps.push_back(AffineMap::get(numDims, 0, outExprs, &ctx.context));
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

/// Everything a recurrent node needs, read and checked once.
struct Recurrent {
  CellKind kind;
  int64_t gates = 1;      ///< gate blocks in W/R: 1, 3 or 4
  int64_t hidden = 0;
  int64_t steps = 0;      ///< sequence length (static)
  int64_t directions = 1;
  bool reverseOnly = false;
  bool batchFirst = false; ///< layout = 1
  std::optional<double> clip;
  bool linearBeforeReset = false, inputForget = false;
  Type et;
  Value x, w, r, bias, seqLens, initialH, initialC, peep; ///< w/r/bias/peep reshaped per gate
  OpFoldResult batch;
  SmallVector<Activation> acts; ///< per direction: numActs entries each
  int numActs = 1;
};

/// X*W^T for all steps of direction `dir`: [T, B, gates, H].
Value inputProjection(ImportContext &ctx, const Recurrent &rc, int64_t dir) {
  GenericBuilder g(ctx, 5); // (t, b, gate, h, i)
  if (rc.batchFirst)
    g.add(rc.x, {g.d(1), g.d(0), g.d(4)});
  else
    g.add(rc.x, {g.d(0), g.d(1), g.d(4)});
  g.add(rc.w, {g.k(dir), g.d(2), g.d(3), g.d(4)});
  SmallVector<OpFoldResult> sizes{ctx.builder.getIndexAttr(rc.steps), rc.batch,
                                  ctx.builder.getIndexAttr(rc.gates),
                                  ctx.builder.getIndexAttr(rc.hidden)};
  Value zero = ctx.filled(sizes, ctx.scalarConstant(rc.et, 0));
  return g.build(sizes, rc.et, [](OpBuilder &b, Location l, ValueRange a) -> Value {
    return arith::AddFOp::create(b, l, a[2], arith::MulFOp::create(b, l, a[0], a[1]));
  }, zero);
}

/// state[B, H] * R[dir, gate, :, :]^T for gates [0, numGates): [B, numGates, H].
/// With `singleGate` >= 0 only that gate: [B, H].
Value recurrentProjection(ImportContext &ctx, const Recurrent &rc, int64_t dir, Value state,
                          int64_t singleGate = -1) {
  SmallVector<OpFoldResult> sizes{rc.batch};
  if (singleGate < 0) {
    GenericBuilder g(ctx, 4); // (b, gate, h, j)
    g.add(state, {g.d(0), g.d(3)});
    g.add(rc.r, {g.k(dir), g.d(1), g.d(2), g.d(3)});
    sizes.push_back(ctx.builder.getIndexAttr(rc.gates));
    sizes.push_back(ctx.builder.getIndexAttr(rc.hidden));
    Value zero = ctx.filled(sizes, ctx.scalarConstant(rc.et, 0));
    return g.build(sizes, rc.et, [](OpBuilder &b, Location l, ValueRange a) -> Value {
      return arith::AddFOp::create(b, l, a[2], arith::MulFOp::create(b, l, a[0], a[1]));
    }, zero);
  }
  GenericBuilder g(ctx, 3); // (b, h, j)
  g.add(state, {g.d(0), g.d(2)});
  g.add(rc.r, {g.k(dir), g.k(singleGate), g.d(1), g.d(2)});
  sizes.push_back(ctx.builder.getIndexAttr(rc.hidden));
  Value zero = ctx.filled(sizes, ctx.scalarConstant(rc.et, 0));
  return g.build(sizes, rc.et, [](OpBuilder &b, Location l, ValueRange a) -> Value {
    return arith::AddFOp::create(b, l, a[2], arith::MulFOp::create(b, l, a[0], a[1]));
  }, zero);
}

/// Initial state [B, H] of direction `dir` from initial_h/initial_c, or zeros.
Value initialState(ImportContext &ctx, const Recurrent &rc, Value given, int64_t dir) {
  SmallVector<OpFoldResult> sizes{rc.batch, ctx.builder.getIndexAttr(rc.hidden)};
  if (!given)
    return ctx.filled(sizes, ctx.scalarConstant(rc.et, 0));
  GenericBuilder g(ctx, 2);
  if (rc.batchFirst)
    g.add(given, {g.d(0), g.k(dir), g.d(1)});
  else
    g.add(given, {g.k(dir), g.d(0), g.d(1)});
  return g.build(sizes, rc.et, [](OpBuilder &, Location, ValueRange a) { return a[0]; });
}

/// Scalar helpers inside a step body: pre-activation sums with clip.
struct StepScalars {
  const Recurrent &rc;
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
StepOperands addStepOperands(GenericBuilder &g, const Recurrent &rc, int64_t dir, int64_t t,
                             Value xw, Value hr, Value hPrev, Value cPrev) {
  StepOperands o;
  // Per gate k the maps read [.., k, h]; operand index + k via separate adds.
  o.xw = g.inputs.size();
  for (int64_t k = 0; k < rc.gates; ++k)
    g.add(xw, {g.k(t), g.d(0), g.k(k), g.d(1)});
  o.hr = g.inputs.size();
  for (int64_t k = 0; k < rc.gates; ++k)
    g.add(hr, {g.d(0), g.k(k), g.d(1)});
  if (rc.bias) {
    o.wb = g.inputs.size();
    for (int64_t k = 0; k < rc.gates; ++k)
      g.add(rc.bias, {g.k(dir), g.k(0), g.k(k), g.d(1)});
    o.rb = g.inputs.size();
    for (int64_t k = 0; k < rc.gates; ++k)
      g.add(rc.bias, {g.k(dir), g.k(1), g.k(k), g.d(1)});
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
Value stepOutput(ImportContext &ctx, const Recurrent &rc, Value h, int64_t t) {
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
void runDirection(ImportContext &ctx, const Recurrent &rc, int64_t dir, bool reverse,
                  SmallVector<Value> &yPerTime, Value &finalH, Value &finalC) {
  Value xw = inputProjection(ctx, rc, dir);
  Value h = initialState(ctx, rc, rc.initialH, dir);
  Value c = rc.kind == CellKind::Lstm ? initialState(ctx, rc, rc.initialC, dir) : Value();
  SmallVector<OpFoldResult> sizes{rc.batch, ctx.builder.getIndexAttr(rc.hidden)};
  yPerTime.assign(rc.steps, Value());
  for (int64_t s = 0; s < rc.steps; ++s) {
    int64_t t = reverse ? rc.steps - 1 - s : s;
    Value hr = recurrentProjection(ctx, rc, dir, h);
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

/// Assembles [B, H] pieces, pieces[d][t], into Y ([T, D, B, H], or
/// [B, T, D, H] for layout 1) when `withTime`, else into Y_h/Y_c ([D, B, H]
/// or [B, D, H]) from pieces[d][0], by selecting on the output indices.
Value assemble(ImportContext &ctx, const Recurrent &rc, ArrayRef<SmallVector<Value>> pieces,
               bool withTime) {
  int64_t numT = withTime ? rc.steps : 1;
  int64_t numD = pieces.size();
  // Output dims in order; layout 0: [T?, D, B, H]; layout 1: [B, T?, D, H].
  SmallVector<OpFoldResult> sizes;
  auto idx = [&](int64_t v) { return (OpFoldResult)ctx.builder.getIndexAttr(v); };
  int tDim = -1, dDim, bDim;
  if (!rc.batchFirst) {
    if (withTime) { tDim = sizes.size(); sizes.push_back(idx(numT)); }
    dDim = sizes.size(); sizes.push_back(idx(numD));
    bDim = sizes.size(); sizes.push_back(rc.batch);
  } else {
    bDim = sizes.size(); sizes.push_back(rc.batch);
    if (withTime) { tDim = sizes.size(); sizes.push_back(idx(numT)); }
    dDim = sizes.size(); sizes.push_back(idx(numD));
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

/// Input `i` as a tensor, or null when absent.
FailureOr<Value> optionalInput(ImportContext &ctx, const onnx::NodeProto &node, int i) {
  if (!ImportContext::hasInput(node, i))
    return Value();
  return ctx.getTensor(node, node.input(i));
}

LogicalResult convertRecurrent(ImportContext &ctx, const onnx::NodeProto &node, CellKind kind) {
  Recurrent rc;
  rc.kind = kind;
  rc.gates = kind == CellKind::Rnn ? 1 : kind == CellKind::Gru ? 3 : 4;
  rc.numActs = kind == CellKind::Rnn ? 1 : kind == CellKind::Gru ? 2 : 3;
  if (node.input_size() < 3)
    return ctx.fail(node, "expects inputs X, W and R");
  auto x = ctx.getTensor(node, node.input(0));
  auto w = ctx.getTensor(node, node.input(1));
  auto r = ctx.getTensor(node, node.input(2));
  if (failed(x) || failed(w) || failed(r))
    return failure();
  auto b = optionalInput(ctx, node, 3), lens = optionalInput(ctx, node, 4),
       h0 = optionalInput(ctx, node, 5);
  FailureOr<Value> c0 = Value(), p = Value();
  if (kind == CellKind::Lstm) {
    c0 = optionalInput(ctx, node, 6);
    p = optionalInput(ctx, node, 7);
  }
  if (failed(b) || failed(lens) || failed(h0) || failed(c0) || failed(p))
    return failure();

  auto xType = cast<RankedTensorType>(x->getType());
  rc.et = xType.getElementType();
  if (!isa<FloatType>(rc.et))
    return ctx.unsupported(node, "only floating-point X is supported");
  if (xType.getRank() != 3 || cast<RankedTensorType>(w->getType()).getRank() != 3 ||
      cast<RankedTensorType>(r->getType()).getRank() != 3)
    return ctx.fail(node, "X, W and R must have rank 3");
  rc.batchFirst = ctx.opset >= 14 && ctx.intAttr(node, "layout", 0) != 0;
  int64_t timeDim = rc.batchFirst ? 1 : 0;
  if (xType.isDynamicDim(timeDim))
    return ctx.unsupported(node, "the sequence length (X dim " + std::to_string(timeDim) +
                                     ") must be static: the importer unrolls the time steps");
  rc.steps = xType.getDimSize(timeDim);
  if (rc.steps > kMaxUnrolledSteps)
    return ctx.unsupported(node, "sequence length " + std::to_string(rc.steps) +
                                     " exceeds the unrolling limit of " +
                                     std::to_string(kMaxUnrolledSteps) + " steps");
  auto rType = cast<RankedTensorType>(r->getType());
  rc.hidden = ctx.intAttr(node, "hidden_size", rType.isDynamicDim(2) ? -1 : rType.getDimSize(2));
  if (rc.hidden <= 0)
    return ctx.fail(node, "hidden_size is missing and R's last dim is not static");
  std::string direction = ctx.stringAttr(node, "direction", "forward");
  if (direction == "bidirectional")
    rc.directions = 2;
  else if (direction == "reverse")
    rc.reverseOnly = true;
  else if (direction != "forward")
    return ctx.fail(node, "direction must be forward, reverse or bidirectional, got '" +
                              direction + "'");
  if (ctx.attr(node, "clip"))
    rc.clip = ctx.floatAttr(node, "clip", 0);
  rc.linearBeforeReset = kind == CellKind::Gru && ctx.intAttr(node, "linear_before_reset", 0) != 0;
  rc.inputForget = kind == CellKind::Lstm && ctx.intAttr(node, "input_forget", 0) != 0;
  for (Value v : {*w, *r, *b, *h0, *c0, *p})
    if (v && cast<RankedTensorType>(v.getType()).getElementType() != rc.et)
      return ctx.fail(node, "W, R, B, initial_h, initial_c and P must have X's element type");
  if (*lens && !isa<IntegerType>(cast<RankedTensorType>(lens->getType()).getElementType()))
    return ctx.fail(node, "sequence_lens must be an integer tensor");

  // Activations: defaults per cell, `numActs` per direction.
  const onnx::AttributeProto *actsAttr = ctx.attr(node, "activations");
  std::vector<std::string> names;
  if (actsAttr)
    for (const std::string &s : actsAttr->strings())
      names.push_back(s);
  if (names.empty()) {
    std::vector<std::string> defaults = kind == CellKind::Rnn   ? std::vector<std::string>{"Tanh"}
                                        : kind == CellKind::Gru ? std::vector<std::string>{"Sigmoid", "Tanh"}
                                                                : std::vector<std::string>{"Sigmoid", "Tanh", "Tanh"};
    for (int64_t d = 0; d < rc.directions; ++d)
      names.insert(names.end(), defaults.begin(), defaults.end());
  }
  if (static_cast<int64_t>(names.size()) == rc.numActs && rc.directions == 2)
    names.insert(names.end(), names.begin(), names.end());
  if (static_cast<int64_t>(names.size()) != rc.numActs * rc.directions)
    return ctx.fail(node, "activations lists " + std::to_string(names.size()) + " functions, expected " +
                              std::to_string(rc.numActs * rc.directions));
  const onnx::AttributeProto *alphas = ctx.attr(node, "activation_alpha");
  const onnx::AttributeProto *betas = ctx.attr(node, "activation_beta");
  int nextAlpha = 0, nextBeta = 0;
  for (std::string name : names) {
    for (char &ch : name)
      ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    Activation a;
    a.name = name;
    bool usesAlpha, usesBeta;
    if (!knownActivation(name, usesAlpha, usesBeta, a.alpha, a.beta))
      return ctx.unsupported(node, "activation '" + name + "' is not supported");
    if (usesAlpha && alphas && nextAlpha < alphas->floats_size())
      a.alpha = alphas->floats(nextAlpha++);
    if (usesBeta && betas && nextBeta < betas->floats_size())
      a.beta = betas->floats(nextBeta++);
    rc.acts.push_back(a);
  }

  // Gate-blocked views: W [D, G, H, I], R [D, G, H, H], B [D, 2, G, H], P [D, 3, H].
  auto idx = [&](int64_t v) { return (OpFoldResult)ctx.builder.getIndexAttr(v); };
  auto expectDims = [&](Value v, const char *what, ArrayRef<int64_t> dims) -> LogicalResult {
    auto t = cast<RankedTensorType>(v.getType());
    if (t.getRank() != static_cast<int64_t>(dims.size()))
      return ctx.fail(node, std::string(what) + " has rank " + std::to_string(t.getRank()) +
                                ", expected " + std::to_string(dims.size()));
    for (auto [i, d] : llvm::enumerate(dims))
      if (d >= 0 && !t.isDynamicDim(i) && t.getDimSize(i) != d)
        return ctx.fail(node, std::string(what) + " dim " + std::to_string(i) + " is " +
                                  std::to_string(t.getDimSize(i)) + ", expected " + std::to_string(d));
    return success();
  };
  int64_t D = rc.directions, G = rc.gates, H = rc.hidden;
  if (failed(expectDims(*w, "W", {D, G * H, -1})) || failed(expectDims(*r, "R", {D, G * H, H})))
    return failure();
  rc.x = *x;
  rc.batch = ctx.dim(*x, rc.batchFirst ? 0 : 1);
  rc.w = ctx.reshape(*w, {idx(D), idx(G), idx(H), ctx.dim(*w, 2)});
  rc.r = ctx.reshape(*r, {idx(D), idx(G), idx(H), idx(H)});
  if (*b) {
    if (failed(expectDims(*b, "B", {D, 2 * G * H})))
      return failure();
    rc.bias = ctx.reshape(*b, {idx(D), idx(2), idx(G), idx(H)});
  }
  if (*p) {
    if (failed(expectDims(*p, "P", {D, 3 * H})))
      return failure();
    rc.peep = ctx.reshape(*p, {idx(D), idx(3), idx(H)});
  }
  if (*lens) {
    if (failed(expectDims(*lens, "sequence_lens", {-1})))
      return failure();
    rc.seqLens = *lens;
  }
  for (auto [v, what] : {std::pair<Value, const char *>{*h0, "initial_h"}, {*c0, "initial_c"}})
    if (v && failed(expectDims(v, what, rc.batchFirst ? SmallVector<int64_t>{-1, D, H}
                                                       : SmallVector<int64_t>{D, -1, H})))
      return failure();
  rc.initialH = *h0;
  rc.initialC = *c0;

  SmallVector<SmallVector<Value>> ys(D);
  SmallVector<SmallVector<Value>> finalHs(D), finalCs(D);
  for (int64_t d = 0; d < D; ++d) {
    bool reverse = rc.reverseOnly || d == 1;
    Value fh, fc;
    runDirection(ctx, rc, d, reverse, ys[d], fh, fc);
    finalHs[d] = {fh};
    finalCs[d] = {fc};
  }
  if (node.output_size() > 0 && !node.output(0).empty())
    ctx.setValue(node.output(0), assemble(ctx, rc, ys, true));
  if (node.output_size() > 1 && !node.output(1).empty())
    ctx.setValue(node.output(1), assemble(ctx, rc, finalHs, false));
  if (kind == CellKind::Lstm && node.output_size() > 2 && !node.output(2).empty())
    ctx.setValue(node.output(2), assemble(ctx, rc, finalCs, false));
  return success();
}

} // namespace

void registerRecurrentOps(OpRegistry &r) {
  r.add("RNN", [](ImportContext &c, const onnx::NodeProto &n) { return convertRecurrent(c, n, CellKind::Rnn); }, 7);
  r.add("GRU", [](ImportContext &c, const onnx::NodeProto &n) { return convertRecurrent(c, n, CellKind::Gru); }, 7);
  r.add("LSTM", [](ImportContext &c, const onnx::NodeProto &n) { return convertRecurrent(c, n, CellKind::Lstm); }, 7);
}

} // namespace turbine::onnx_frontend
