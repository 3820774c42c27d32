//===- Recurrence.h - RNN, GRU and LSTM unrolled over time (shared) -------===//
//
// The recurrence both frontends build for recurrent layers: ONNX RNN/GRU/LSTM
// (frontends/onnx/lib/RecurrentOps.cpp reads the node's inputs and
// attributes) and torch's aten::rnn_tanh/rnn_relu/gru/lstm
// (frontends/torch/lib/RecurrentOps.cpp reads the flat weight list), so
// one implementation of the time loop serves both.
//
// It is unrolled at import time over the static sequence length: the input
// projection X*W^T of all time steps is one linalg.matmul per direction
// (a contraction generic when X is batch-first), each step adds one matmul
// H*R^T (against W^T / R^T built once per direction, a transpose folded at
// compile time for constant weights of one direction) and one elementwise
// generic for the gates (LSTM: one generic with two results, cell and
// hidden state; GRU without linear_before_reset needs a second contraction
// on r (.) H). Gate blocks are addressed by reshaping W/R/B/P to
// [dirs, gates, hidden, ...] so every indexing map is a projection with
// constants (no slicing ops). Outputs are assembled by one selecting generic
// each. Gates are named in ONNX's order (LSTM i, o, f, c; GRU z, r, h);
// `gateBlock` says which block of the weights holds each (torch stores LSTM
// gates as i, f, g, o and GRU gates as r, z, n).
// Private to frontends/ (includes MLIR headers).
//===----------------------------------------------------------------------===//
#ifndef TURBINE_FRONTENDS_RECURRENCE_H
#define TURBINE_FRONTENDS_RECURRENCE_H

#include "turbine/frontends/TensorBuilder.h"

#include "llvm/ADT/SmallVector.h"

#include <optional>
#include <string>

namespace turbine::frontends {

enum class CellKind { Rnn, Gru, Lstm };

/// One activation function of the ONNX spec (lower-case name) with its
/// alpha/beta: sigmoid, tanh, relu, affine, leakyrelu, thresholdedrelu,
/// scaledtanh, hardsigmoid, elu, softsign, softplus.
struct RecurrentActivation {
  std::string name;
  double alpha = 0, beta = 0;
};

/// Whether `name` (lower-case) is an activation above; its default
/// alpha/beta and whether it reads them.
bool knownRecurrentActivation(const std::string &name, bool &usesAlpha, bool &usesBeta,
                              double &alpha, double &beta);

/// Everything the time loop needs, checked by the caller.
struct Recurrence {
  CellKind kind = CellKind::Rnn;
  int64_t gates = 1;      ///< gate blocks in W/R: 1, 3 or 4
  int64_t hidden = 0;
  int64_t steps = 0;      ///< sequence length (static)
  int64_t directions = 1;
  bool reverseOnly = false;
  bool batchFirst = false;      ///< X is [B, T, I] (else [T, B, I])
  bool stateBatchFirst = false; ///< initial_h/c are [B, D, H] (else [D, B, H])
  std::optional<double> clip;
  bool linearBeforeReset = false, inputForget = false;
  mlir::Type et;
  /// X; W [D, G, H, I]; R [D, G, H, H]; bias [D, 2, G, H] (input then
  /// recurrent bias) or null; sequence lengths [B] or null; initial states
  /// (see stateBatchFirst) or null for zeros; peepholes [D, 3, H] or null.
  mlir::Value x, w, r, bias, seqLens, initialH, initialC, peep;
  mlir::OpFoldResult batch;
  /// Per direction `numActs` entries (RNN 1, GRU 2, LSTM 3).
  llvm::SmallVector<RecurrentActivation> acts;
  int numActs = 1;
  /// gateBlock[k]: the block of W/R/bias that holds gate k (ONNX order);
  /// empty means the identity.
  llvm::SmallVector<int64_t, 4> gateBlock;
  /// The initial states of direction d are entry stateOffset + d of their
  /// direction dim (torch's h0 holds every layer's states).
  int64_t stateOffset = 0;
};

/// The [B, H] values the loop produced, per direction.
struct RecurrenceResult {
  llvm::SmallVector<llvm::SmallVector<mlir::Value>> ys; ///< ys[d][t], in time order
  llvm::SmallVector<mlir::Value> finalH, finalC;        ///< per direction (finalC: LSTM)
};

/// Runs every direction over all steps (direction 1 of a bidirectional
/// layer, and a reverse-only layer, in reverse time order).
RecurrenceResult runRecurrence(TensorBuilder &b, const Recurrence &rc);

/// Dim orders of assembled outputs (with time, T; without, only D, B, H).
enum class RecurrentLayout {
  TimeDirBatch, ///< [T, D, B, H] / [D, B, H]  (ONNX layout 0; torch's h_n)
  BatchTimeDir, ///< [B, T, D, H] / [B, D, H]  (ONNX layout 1; torch batch_first)
  TimeBatchDir, ///< [T, B, D, H] / [B, D, H]  (torch sequence-first)
};

/// Assembles [B, H] pieces, pieces[d][t] (or pieces[d][0] without time), into
/// one tensor of `layout` by selecting on the output indices.
mlir::Value assembleRecurrentOutput(TensorBuilder &b, const Recurrence &rc,
                                    llvm::ArrayRef<llvm::SmallVector<mlir::Value>> pieces,
                                    bool withTime, RecurrentLayout layout);

} // namespace turbine::frontends

#endif // TURBINE_FRONTENDS_RECURRENCE_H
