//===- RecurrentOps.cpp - ONNX RNN, GRU and LSTM, unrolled over time ------===//
//
// Reads and checks an RNN/GRU/LSTM node (inputs, attributes, activations)
// into a frontends::Recurrence and runs the time loop shared with the
// TorchScript frontend (frontends/common: Recurrence.h), then binds Y, Y_h
// and Y_c.
//
// Supported: directions forward/reverse/bidirectional, layout 0/1, optional
// B, sequence_lens (per-batch masking: state held and Y zero past the end),
// initial_h/initial_c, P (peepholes), clip, input_forget, linear_before_reset,
// the activations of the ONNX spec with activation_alpha/beta. Limits (each
// refused with a message): a dynamic or very long sequence length (the IR
// grows linearly with it), non-float inputs.
//===----------------------------------------------------------------------===//
#include "ImportContext.h"

#include "turbine/frontends/Recurrence.h"

#include <limits>
#include <tuple>

#include <cctype>

using namespace mlir;

namespace turbine::onnx_frontend {
namespace {

using frontends::CellKind;
using frontends::RecurrentActivation;

/// Longest sequence unrolled at import time: the IR grows linearly with the
/// steps (a 64-step LSTM, 2 kernels per step, compiles in about 20 s on 2 busy cores).
constexpr int64_t kMaxUnrolledSteps = 256;

/// Input `i` as a tensor, or null when absent.
FailureOr<Value> optionalInput(ImportContext &ctx, const onnx::NodeProto &node, int i) {
  if (!ImportContext::hasInput(node, i))
    return Value();
  return ctx.getTensor(node, node.input(i));
}

LogicalResult convertRecurrent(ImportContext &ctx, const onnx::NodeProto &node, CellKind kind) {
  frontends::Recurrence rc;
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
  if (rc.hidden > std::numeric_limits<int32_t>::max())
    return ctx.fail(node, "hidden_size " + std::to_string(rc.hidden) + " is too large");
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
    RecurrentActivation a;
    a.name = name;
    bool usesAlpha, usesBeta;
    if (!frontends::knownRecurrentActivation(name, usesAlpha, usesBeta, a.alpha, a.beta))
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
  // W's input size is X's feature size (checked at run time when dynamic).
  if (failed(ctx.check(node,
                       ctx.compare(arith::CmpIPredicate::eq, ctx.dim(*w, 2), ctx.dim(*x, 2)),
                       "W's last dim (input size) must equal X's last dim")))
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
  // sequence_lens, initial_h and initial_c hold one entry per batch element
  // of X (checked at run time when dynamic; another static size made IR
  // that did not verify).
  for (auto [v, what, dim] : {std::tuple<Value, const char *, unsigned>{*lens, "sequence_lens", 0},
                              {*h0, "initial_h", rc.batchFirst ? 0u : 1u},
                              {*c0, "initial_c", rc.batchFirst ? 0u : 1u}})
    if (v && failed(ctx.check(node, ctx.compare(arith::CmpIPredicate::eq, ctx.dim(v, dim), rc.batch),
                              std::string(what) + "'s batch size must equal X's")))
      return failure();
  rc.initialH = *h0;
  rc.initialC = *c0;

  rc.stateBatchFirst = rc.batchFirst;

  frontends::RecurrenceResult run = frontends::runRecurrence(ctx, rc);
  auto layout = rc.batchFirst ? frontends::RecurrentLayout::BatchTimeDir
                              : frontends::RecurrentLayout::TimeDirBatch;
  SmallVector<SmallVector<Value>> finalHs, finalCs;
  for (int64_t d = 0; d < D; ++d) {
    finalHs.push_back({run.finalH[d]});
    finalCs.push_back({run.finalC[d]});
  }
  if (node.output_size() > 0 && !node.output(0).empty())
    ctx.setValue(node.output(0), frontends::assembleRecurrentOutput(ctx, rc, run.ys, true, layout));
  if (node.output_size() > 1 && !node.output(1).empty())
    ctx.setValue(node.output(1), frontends::assembleRecurrentOutput(ctx, rc, finalHs, false, layout));
  if (kind == CellKind::Lstm && node.output_size() > 2 && !node.output(2).empty())
    ctx.setValue(node.output(2), frontends::assembleRecurrentOutput(ctx, rc, finalCs, false, layout));
  return success();
}

} // namespace

void registerRecurrentOps(OpRegistry &r) {
  r.add("RNN", [](ImportContext &c, const onnx::NodeProto &n) { return convertRecurrent(c, n, CellKind::Rnn); }, 7);
  r.add("GRU", [](ImportContext &c, const onnx::NodeProto &n) { return convertRecurrent(c, n, CellKind::Gru); }, 7);
  r.add("LSTM", [](ImportContext &c, const onnx::NodeProto &n) { return convertRecurrent(c, n, CellKind::Lstm); }, 7);
}

} // namespace turbine::onnx_frontend
