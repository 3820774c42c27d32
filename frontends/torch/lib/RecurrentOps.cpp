//===- RecurrentOps.cpp - aten::lstm / gru / rnn_tanh / rnn_relu ----------===//
//
// nn.LSTM, nn.GRU and nn.RNN reach the graph as one aten::lstm / aten::gru /
// aten::rnn_tanh / aten::rnn_relu node with a flat list of weights (after
// freezing, one list constant): per layer and direction w_ih [G*H, I],
// w_hh [G*H, H], then b_ih and b_hh [G*H] when the module has biases. Each
// layer becomes the recurrence the ONNX frontend builds for its RNN/GRU/LSTM
// ops (frontends/common: Recurrence.h), unrolled over the static sequence
// length: the weights of both directions are stacked into one constant
// [D, G, H, I] (named `torch.stack([rnn.weight_ih_l0, ...])` in the
// artifact), torch's gate order (LSTM i, f, g, o; GRU r, z, n) mapped onto
// ONNX's, GRU with linear_before_reset semantics (torch's). A layer's
// output, directions concatenated on the feature dim, is the next layer's
// input; h_n / c_n are [layers * D, B, H].
//
// Refused with an error naming the op and source line: packed sequences
// (the aten::lstm.data overloads), proj_size, dropout between layers in
// training mode, a dynamic or over-long sequence length, weights that are
// not constants.
//===----------------------------------------------------------------------===//
#include "ImportContext.h"

#include "turbine/frontends/Recurrence.h"

using namespace mlir;

namespace turbine::torch_frontend {
namespace {

using frontends::CellKind;

/// Same limit as the ONNX frontend's (the IR grows linearly with the steps).
constexpr int64_t kMaxUnrolledSteps = 256;

/// Tensor constants `parts` (same dtype) concatenated along dim 0, as one
/// constant of shape `shape`, named `torch.stack([names])`-style.
Value stackConstants(ImportContext &ctx, ArrayRef<const TorchConstant *> parts,
                     ArrayRef<int64_t> shape, const std::string &name) {
  TorchConstant stacked;
  stacked.kind = TorchConstant::Kind::Tensor;
  stacked.dtype = parts.front()->dtype;
  stacked.dtypeName = parts.front()->dtypeName;
  stacked.shape.assign(shape.begin(), shape.end());
  for (const TorchConstant *p : parts)
    stacked.data.insert(stacked.data.end(), p->data.begin(), p->data.end());
  stacked.name = name;
  return ctx.materializeConstant(stacked);
}

LogicalResult convertRecurrent(ImportContext &ctx, const TorchNode &node, CellKind kind,
                               const char *activation) {
  // aten::lstm.input(input, hx[], params[], has_biases, num_layers, dropout,
  //                  train, bidirectional, batch_first)
  // aten::gru.input / rnn_tanh.input / rnn_relu.input: the same with hx a tensor.
  if (node.inputs.size() != 9 || ctx.input(node, 2).kind != TValue::Kind::List)
    return ctx.unsupported(node, "this overload (packed sequences, nn.utils.rnn."
                                 "pack_padded_sequence, are not supported: pass a padded "
                                 "tensor)");
  auto x = ctx.tensorInput(node, 0);
  auto hasBiases = ctx.boolInput(node, 3);
  auto numLayers = ctx.intInput(node, 4);
  auto dropout = ctx.floatInput(node, 5);
  auto train = ctx.boolInput(node, 6);
  auto bidirectional = ctx.boolInput(node, 7);
  auto batchFirst = ctx.boolInput(node, 8);
  if (failed(x) || failed(hasBiases) || failed(numLayers) || failed(dropout) || failed(train) ||
      failed(bidirectional) || failed(batchFirst))
    return failure();
  if (*train && *dropout != 0.0 && *numLayers > 1)
    return ctx.unsupported(node, "dropout between layers in training mode (call model.eval() "
                                 "before saving)");
  auto xType = tensorType(*x);
  Type et = xType.getElementType();
  if (!isa<FloatType>(et))
    return ctx.fail(node, "input must be a float tensor");
  if (xType.getRank() != 3)
    return ctx.unsupported(node, "input of rank " + std::to_string(xType.getRank()) +
                                     " (only batched [B, T, I] / [T, B, I] inputs)");
  int64_t timeDim = *batchFirst ? 1 : 0;
  if (xType.isDynamicDim(timeDim))
    return ctx.unsupported(node, "a dynamic sequence length (input dim " +
                                     std::to_string(timeDim) +
                                     "): the importer unrolls the time steps");
  int64_t steps = xType.getDimSize(timeDim);
  if (steps > kMaxUnrolledSteps)
    return ctx.unsupported(node, "sequence length " + std::to_string(steps) +
                                     " exceeds the unrolling limit of " +
                                     std::to_string(kMaxUnrolledSteps) + " steps");

  int64_t D = *bidirectional ? 2 : 1;
  int64_t G = kind == CellKind::Rnn ? 1 : kind == CellKind::Gru ? 3 : 4;
  int64_t perDirection = *hasBiases ? 4 : 2;
  const std::vector<TValue> &params = ctx.input(node, 2).elements;
  if (static_cast<int64_t>(params.size()) != *numLayers * D * perDirection)
    return ctx.unsupported(node, "a weight list of " + std::to_string(params.size()) +
                                     " tensors for " + std::to_string(*numLayers) +
                                     " layer(s) x " + std::to_string(D) +
                                     " direction(s) (proj_size is not supported)");
  for (const TValue &p : params)
    if (!p.isTensor() || !p.constant || p.tensor || p.constant->dtype == TorchDType::unsupported)
      return ctx.unsupported(node, "weights that are not constant tensors (the module's "
                                   "parameters, after freezing)");
  auto weight = [&](int64_t layer, int64_t dir, int64_t which) -> const TorchConstant & {
    return *params[(layer * D + dir) * perDirection + which].constant;
  };
  int64_t H = weight(0, 0, 1).shape.size() == 2 ? weight(0, 0, 1).shape[1] : -1;
  if (H <= 0)
    return ctx.fail(node, "w_hh of layer 0 is not a matrix");

  // Initial states: [layers * D, B, H] (LSTM: a list [h0, c0]).
  Value h0, c0;
  const TValue &hx = ctx.input(node, 1);
  if (kind == CellKind::Lstm && (hx.kind != TValue::Kind::List || hx.elements.size() != 2))
    return ctx.fail(node, "hx must be a list [h0, c0]");
  auto stateTensor = [&](const TValue &v, const char *what) -> FailureOr<Value> {
    TValue copy = v;
    if (copy.isTensor() && !copy.tensor && copy.constant)
      copy.tensor = ctx.materializeConstant(*copy.constant);
    if (!copy.isTensor() || !copy.tensor) {
      (void)ctx.fail(node, std::string(what) + " must be a tensor");
      return failure();
    }
    auto t = tensorType(copy.tensor);
    if (t.getRank() != 3 || t.getElementType() != et ||
        (!t.isDynamicDim(0) && t.getDimSize(0) != *numLayers * D) ||
        (!t.isDynamicDim(2) && t.getDimSize(2) != H)) {
      (void)ctx.fail(node, std::string(what) + " must be [" + std::to_string(*numLayers * D) +
                               ", batch, " + std::to_string(H) + "] of the input's dtype");
      return failure();
    }
    return copy.tensor;
  };
  if (kind == CellKind::Lstm) {
    auto h = stateTensor(hx.elements[0], "h0");
    auto c = stateTensor(hx.elements[1], "c0");
    if (failed(h) || failed(c))
      return failure();
    h0 = *h;
    c0 = *c;
  } else if (!hx.isNone()) {
    auto h = stateTensor(hx, "hx");
    if (failed(h))
      return failure();
    h0 = *h;
  }

  frontends::Recurrence rc;
  rc.kind = kind;
  rc.gates = G;
  rc.hidden = H;
  rc.steps = steps;
  rc.directions = D;
  rc.batchFirst = *batchFirst;
  rc.stateBatchFirst = false;
  rc.linearBeforeReset = kind == CellKind::Gru;
  rc.et = et;
  rc.numActs = kind == CellKind::Rnn ? 1 : kind == CellKind::Gru ? 2 : 3;
  std::vector<std::string> acts = kind == CellKind::Rnn   ? std::vector<std::string>{activation}
                                  : kind == CellKind::Gru ? std::vector<std::string>{"sigmoid", "tanh"}
                                                          : std::vector<std::string>{"sigmoid", "tanh", "tanh"};
  for (int64_t d = 0; d < D; ++d)
    for (const std::string &a : acts)
      rc.acts.push_back({a, 0, 0});
  if (kind == CellKind::Lstm)
    rc.gateBlock = {0, 3, 1, 2}; // i, o, f, c in torch's i, f, g, o
  else if (kind == CellKind::Gru)
    rc.gateBlock = {1, 0, 2};    // z, r, h in torch's r, z, n
  rc.initialH = h0;
  rc.initialC = c0;
  rc.batch = ctx.dim(*x, *batchFirst ? 0 : 1);

  auto idx = [&](int64_t v) { return (OpFoldResult)ctx.builder.getIndexAttr(v); };
  auto layout = *batchFirst ? frontends::RecurrentLayout::BatchTimeDir
                            : frontends::RecurrentLayout::TimeBatchDir;
  Value layerInput = *x;
  SmallVector<SmallVector<Value>> finalHs, finalCs;
  for (int64_t layer = 0; layer < *numLayers; ++layer) {
    int64_t inputSize = tensorType(layerInput).getDimSize(2);
    if (ShapedType::isDynamic(inputSize))
      return ctx.fail(node, "the input's feature dim must be static");
    SmallVector<const TorchConstant *> wIh, wHh, biases;
    std::string wIhNames, wHhNames, biasNames;
    for (int64_t d = 0; d < D; ++d) {
      const TorchConstant &wi = weight(layer, d, 0), &wh = weight(layer, d, 1);
      if (wi.shape != std::vector<int64_t>{G * H, inputSize} ||
          wh.shape != std::vector<int64_t>{G * H, H} || wi.dtype != weight(0, 0, 0).dtype ||
          wh.dtype != wi.dtype)
        return ctx.fail(node, "layer " + std::to_string(layer) + " direction " +
                                  std::to_string(d) + ": w_ih must be [" +
                                  std::to_string(G * H) + ", " + std::to_string(inputSize) +
                                  "] and w_hh [" + std::to_string(G * H) + ", " +
                                  std::to_string(H) + "], both of one dtype");
      wIh.push_back(&wi);
      wHh.push_back(&wh);
      auto sep = [](std::string &s) { if (!s.empty()) s += ", "; };
      sep(wIhNames); wIhNames += wi.name.empty() ? "?" : wi.name;
      sep(wHhNames); wHhNames += wh.name.empty() ? "?" : wh.name;
      if (*hasBiases) {
        const TorchConstant &bi = weight(layer, d, 2), &bh = weight(layer, d, 3);
        if (bi.shape != std::vector<int64_t>{G * H} || bh.shape != bi.shape ||
            bi.dtype != wi.dtype || bh.dtype != wi.dtype)
          return ctx.fail(node, "layer " + std::to_string(layer) + " direction " +
                                    std::to_string(d) + ": b_ih and b_hh must be [" +
                                    std::to_string(G * H) + "] of the weights' dtype");
        biases.push_back(&bi);
        biases.push_back(&bh);
        sep(biasNames);
        biasNames += (bi.name.empty() ? "?" : bi.name) + ", " + (bh.name.empty() ? "?" : bh.name);
      }
    }
    if (elementTypeOf(ctx.context, wIh.front()->dtype) != et)
      return ctx.fail(node, "the weights' dtype must be the input's");
    auto named = [](const std::string &names, size_t count) {
      return count == 1 ? names : "torch.stack([" + names + "])";
    };
    Value w = stackConstants(ctx, wIh, {D * G * H, inputSize}, named(wIhNames, wIh.size()));
    Value r = stackConstants(ctx, wHh, {D * G * H, H}, named(wHhNames, wHh.size()));
    if (!w || !r)
      return ctx.unsupported(node, "weights of dtype " + wIh.front()->dtypeName);
    rc.w = ctx.reshape(w, {idx(D), idx(G), idx(H), idx(inputSize)});
    rc.r = ctx.reshape(r, {idx(D), idx(G), idx(H), idx(H)});
    rc.bias = nullptr;
    if (*hasBiases) {
      Value b = stackConstants(ctx, biases, {D * 2 * G * H}, "torch.stack([" + biasNames + "])");
      rc.bias = ctx.reshape(b, {idx(D), idx(2), idx(G), idx(H)});
    }
    rc.x = layerInput;
    rc.stateOffset = layer * D;
    frontends::RecurrenceResult run = frontends::runRecurrence(ctx, rc);
    for (int64_t d = 0; d < D; ++d) {
      finalHs.push_back({run.finalH[d]});
      finalCs.push_back({run.finalC[d]});
    }
    // [B, T, D, H] or [T, B, D, H] -> [.., .., D * H]: directions side by side.
    Value y = frontends::assembleRecurrentOutput(ctx, rc, run.ys, true, layout);
    SmallVector<OpFoldResult> ySizes = ctx.dims(y);
    layerInput = ctx.reshape(y, {ySizes[0], ySizes[1], idx(D * H)});
  }
  ctx.setTensor(node, 0, layerInput);
  ctx.setTensor(node, 1, frontends::assembleRecurrentOutput(
                             ctx, rc, finalHs, false, frontends::RecurrentLayout::TimeDirBatch));
  if (kind == CellKind::Lstm)
    ctx.setTensor(node, 2, frontends::assembleRecurrentOutput(
                               ctx, rc, finalCs, false, frontends::RecurrentLayout::TimeDirBatch));
  return success();
}

} // namespace

void registerRecurrentOps(OpRegistry &r) {
  r.add("aten::lstm", [](ImportContext &c, const TorchNode &n) {
    return convertRecurrent(c, n, CellKind::Lstm, "");
  });
  r.add("aten::gru", [](ImportContext &c, const TorchNode &n) {
    return convertRecurrent(c, n, CellKind::Gru, "");
  });
  r.add("aten::rnn_tanh", [](ImportContext &c, const TorchNode &n) {
    return convertRecurrent(c, n, CellKind::Rnn, "tanh");
  });
  r.add("aten::rnn_relu", [](ImportContext &c, const TorchNode &n) {
    return convertRecurrent(c, n, CellKind::Rnn, "relu");
  });
}

} // namespace turbine::torch_frontend
