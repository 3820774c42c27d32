//===- ImportContext.h - shared state of one TorchScript graph import -----===//
//
// Private to the TorchScript frontend. A TorchScript value is a tensor, a
// scalar (int/float/bool; ints may be symbolic `index` SSA values, e.g. a
// dynamic batch size read with aten::size), None, a string/device, or a list
// of values; TValue holds any of them. The context maps value numbers of the
// TorchGraph to TValues, builds IR with the helpers every op handler shares
// (dims, broadcasting elementwise generics with torch's type promotion,
// reshape, transpose, padding) and formats errors with the op's schema and
// TorchScript source location.
//
// The dim/reshape/broadcast helpers mirror those of the ONNX frontend
// (frontends/onnx/lib/ImportContext.*), which is keyed to onnx::NodeProto; a
// shared builder is a candidate for factoring out.
//===----------------------------------------------------------------------===//
#ifndef TURBINE_FRONTENDS_TORCH_LIB_IMPORTCONTEXT_H
#define TURBINE_FRONTENDS_TORCH_LIB_IMPORTCONTEXT_H

#include "TorchGraph.h"
#include "turbine/frontends/torch/TorchImporter.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"

#include "turbine/frontends/TensorBuilder.h"

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace turbine::torch_frontend {

/// An integer known at import time or an `index` SSA value (frontends/common).
using SymInt = frontends::SymDim;

/// One TorchScript value during import.
struct TValue {
  /// SymBool: a bool known only at run time (a comparison of a run-time int,
  /// e.g. `pos >= max_seq_len`): `predicate`, an i1 SSA value on the host.
  enum class Kind { Unset, Tensor, Int, Float, Bool, None, String, Device, List, SymBool };
  Kind kind = Kind::Unset;
  mlir::Value tensor;                       ///< Tensor (materialized)
  const TorchConstant *constant = nullptr;  ///< Tensor constant not yet materialized
  SymInt intValue;                          ///< Int
  double floatValue = 0.0;                  ///< Float
  bool boolValue = false;                   ///< Bool
  std::string text;                         ///< String, Device
  std::vector<TValue> elements;             ///< List (and lowered tuples)
  mlir::Value predicate;                    ///< SymBool

  static TValue ofTensor(mlir::Value v) { TValue t; t.kind = Kind::Tensor; t.tensor = v; return t; }
  static TValue ofInt(SymInt i) { TValue t; t.kind = Kind::Int; t.intValue = i; return t; }
  static TValue ofInt(int64_t i) { return ofInt(SymInt::of(i)); }
  static TValue ofFloat(double f) { TValue t; t.kind = Kind::Float; t.floatValue = f; return t; }
  static TValue ofBool(bool b) { TValue t; t.kind = Kind::Bool; t.boolValue = b; return t; }
  static TValue none() { TValue t; t.kind = Kind::None; return t; }
  static TValue ofSymBool(mlir::Value p) { TValue t; t.kind = Kind::SymBool; t.predicate = p; return t; }
  static TValue ofList(std::vector<TValue> e) { TValue t; t.kind = Kind::List; t.elements = std::move(e); return t; }

  bool isTensor() const { return kind == Kind::Tensor; }
  bool isScalar() const { return kind == Kind::Int || kind == Kind::Float || kind == Kind::Bool; }
  bool isNone() const { return kind == Kind::None; }
};

class ImportContext;

/// Converts one node. Returns failure after calling ctx.fail/unsupported.
using OpHandler = std::function<mlir::LogicalResult(ImportContext &, const TorchNode &)>;

/// Maps a node kind (`aten::linear`) to its handler.
class OpRegistry {
public:
  void add(const std::string &kind, OpHandler handler) { handlers[kind] = std::move(handler); }
  /// Registers `kind` and its in-place variant `kind_` (same handler; the
  /// importer rebinds the mutated input to the result).
  void addWithInplace(const std::string &kind, const OpHandler &handler) {
    add(kind, handler);
    add(kind + "_", handler);
  }
  const OpHandler *lookup(const std::string &kind) const {
    auto it = handlers.find(kind);
    return it == handlers.end() ? nullptr : &it->second;
  }

private:
  std::map<std::string, OpHandler> handlers;
};

void registerPrimOps(OpRegistry &registry);
void registerElementwiseOps(OpRegistry &registry);
void registerMatmulOps(OpRegistry &registry);
void registerAttentionOps(OpRegistry &registry);
void registerConvolutionOps(OpRegistry &registry);
void registerPoolingOps(OpRegistry &registry);
void registerEmbeddingOps(OpRegistry &registry);
void registerShapeOps(OpRegistry &registry);
void registerNormalizationOps(OpRegistry &registry);
/// aten::lstm / gru / rnn_tanh / rnn_relu (the recurrence of frontends/common).
void registerRecurrentOps(OpRegistry &registry);
/// Turbine's own torch ops (turbine::softmax, ...; TurbineTorchOps.h).
void registerTurbineOps(OpRegistry &registry);

/// A node of a custom op known to `ctx.options` (ImportOptions::customOpName)
/// as a call of its custom-op declaration (TurbineOps.cpp).
mlir::LogicalResult importCustomOpNode(ImportContext &ctx, const TorchNode &node,
                                       const std::string &customOp);

/// A view of module state: TorchScript value = global `global` (a mutable
/// buffer) through the slice/select nodes `chain` from the prim::GetAttr
/// value `root`, materialized after the global's store number `epoch`.
struct StateView {
  std::string global;
  int root = -1;
  std::vector<const TorchNode *> chain;
  int64_t epoch = 0;
};

/// Stateful import bookkeeping (StatefulImport.cpp).
struct ModuleStateImport {
  std::map<std::string, mlir::RankedTensorType> globals; ///< attribute path -> type
  std::map<int, StateView> views;                        ///< value id -> view
  std::map<std::string, int64_t> epochs;                 ///< stores so far per global
};

/// State of one graph import and the builders the op handlers share.
class ImportContext : public frontends::TensorBuilder {
public:
  ImportContext(mlir::MLIRContext &context, const TorchGraph &graph, std::string origin);

  mlir::MLIRContext &context;
  const TorchGraph &graph;
  std::string origin;
  std::string error; ///< first error message
  /// The caller's options (custom ops defined outside the importer).
  const ImportOptions *options = nullptr;
  /// Stateful import only (null otherwise), and the registry's handler
  /// call, to re-run a view's slices on a fresh load of its global.
  ModuleStateImport *state = nullptr;
  std::function<mlir::LogicalResult(ImportContext &, const TorchNode &)> reimportNode;

  //===--- values ---------------------------------------------------------===//

  TValue &value(int id) { return values[id]; }
  void set(int id, TValue v) { values[id] = std::move(v); }
  void setTensor(const TorchNode &node, size_t output, mlir::Value v) {
    values[node.outputs.at(output)] = TValue::ofTensor(v);
  }
  /// Input `i` of `node` (Unset when out of range).
  TValue &input(const TorchNode &node, size_t i);

  /// Input `i` as a tensor (materializes tensor constants; a scalar becomes a
  /// rank-0 tensor of its natural type: i64, f32, i1).
  mlir::FailureOr<mlir::Value> tensorInput(const TorchNode &node, size_t i);
  /// Input `i` as a constant int / float / bool / int list; fails naming the input.
  mlir::FailureOr<int64_t> intInput(const TorchNode &node, size_t i);
  mlir::FailureOr<double> floatInput(const TorchNode &node, size_t i);
  mlir::FailureOr<bool> boolInput(const TorchNode &node, size_t i);
  mlir::FailureOr<std::vector<int64_t>> intListInput(const TorchNode &node, size_t i);
  /// Input `i` as a list of possibly symbolic ints (a size list).
  mlir::FailureOr<std::vector<SymInt>> symIntListInput(const TorchNode &node, size_t i);
  /// True when input `i` is None or absent.
  bool isNoneInput(const TorchNode &node, size_t i) {
    return i >= node.inputs.size() || input(node, i).isNone();
  }

  /// Materializes a tensor constant as arith.constant (null + error on an
  /// unsupported dtype).
  mlir::Value materializeConstant(const TorchConstant &c);
  /// Tags a constant with the parameter name the compiler gives it in the
  /// artifact (`turbine.param_name`; nothing when `name` is empty): the
  /// state_dict key for a parameter as stored, a derived name for one the
  /// importer rearranged (`fc.weight.T`, `attn.in_proj_weight[0:64].T`: the
  /// torch expression that computes the stored tensor from the state_dict).
  void nameParameter(mlir::arith::ConstantOp op, const std::string &name);

  //===--- errors ---------------------------------------------------------===//

  /// "unsupported TorchScript op 'K'[: detail]\n  schema: S\n  at: file:line:col: src"
  mlir::LogicalResult unsupported(const TorchNode &node, const std::string &detail = "");
  /// "TorchScript op 'K': message\n  at: ..."
  mlir::LogicalResult fail(const TorchNode &node, const std::string &message);
  /// The "schema / at" lines for `node`.
  static std::string describe(const TorchNode &node);

  //===--- dims -----------------------------------------------------------===//

  // dim/dims/recordDims/toIndexValue/toFoldResult/toSymDim: TensorBuilder.
  SymInt dimSym(mlir::Value tensor, int64_t i) { return toSymDim(dim(tensor, i)); }

  //===--- IR helpers -----------------------------------------------------===//

  // empty/filled/reshape/transpose: TensorBuilder.
  mlir::Value scalarConstant(mlir::Type type, double value);
  /// Converts scalar `v` (int, float, i1 or index) to `type` (arith casts).
  static mlir::Value castScalar(mlir::OpBuilder &b, mlir::Location l, mlir::Value v,
                                mlir::Type type);
  /// A TValue scalar (possibly symbolic) as a scalar SSA value of `type`.
  mlir::Value scalarValue(const TValue &v, mlir::Type type);

  /// torch's result element type of an elementwise op over `operands`
  /// (tensors with dims > zero-dim tensors > Python scalars, by category
  /// bool < int < float); null when an operand is not tensor or scalar.
  mlir::Type promotedType(llvm::ArrayRef<const TValue *> operands);

  mlir::FailureOr<llvm::SmallVector<mlir::OpFoldResult>>
  broadcastSizes(const TorchNode &node, mlir::ValueRange inputs);

  /// One linalg.generic over the broadcast shape of the tensor operands.
  /// Scalars are captured as constants/values. Every operand reaches `body`
  /// converted to `computeType`; the result has `resultType` (computeType
  /// when null).
  using ScalarBody = std::function<mlir::Value(mlir::OpBuilder &, mlir::Location,
                                               mlir::ValueRange)>;
  mlir::FailureOr<mlir::Value> elementwise(const TorchNode &node,
                                           llvm::ArrayRef<const TValue *> operands,
                                           mlir::Type computeType, mlir::Type resultType,
                                           const ScalarBody &body);
  /// Same over plain tensor values (no conversion).
  mlir::FailureOr<mlir::Value> elementwiseTensors(const TorchNode &node, mlir::ValueRange inputs,
                                                  mlir::Type resultType, const ScalarBody &body);

  /// Broadcasts `input` to `sizes` (NumPy rules) with a generic.
  mlir::Value broadcastTo(mlir::Value input, llvm::ArrayRef<mlir::OpFoldResult> sizes);
  /// Elementwise cast of a tensor to `elementType` (identity when equal).
  mlir::Value castTensor(mlir::Value input, mlir::Type elementType);

private:
  std::map<int, TValue> values;
};

//===--- stateful import (StatefulImport.cpp) ---------------------------------===//
/// One mutable ml_program.global per TorchGraph::state entry.
mlir::LogicalResult declareStateGlobals(ImportContext &ctx, mlir::ModuleOp module,
                                        std::string &error);
/// prim::GetAttr: a state tensor (a global_load, recorded as a view) or a
/// submodule (a placeholder value).
mlir::LogicalResult importStateAttribute(ImportContext &ctx, const TorchNode &node);
/// Before `node`: re-reads every state view among its inputs whose global
/// was stored since it was read.
mlir::LogicalResult refreshStateViews(ImportContext &ctx, const TorchNode &node);
/// True when `node` writes module state (an in-place op on a state view).
bool writesState(ImportContext &ctx, const TorchNode &node);
/// aten::copy_ into a state view: insert_slice into a fresh load, stored
/// back; other in-place ops on state are errors.
mlir::LogicalResult importStateWrite(ImportContext &ctx, const TorchNode &node);
/// After `node` converted: a slice/select of a state view is a view too.
void recordStateView(ImportContext &ctx, const TorchNode &node);
/// x[..., start : start + size*step : step, ...] along `dim` as a gather
/// generic (ShapeOps.cpp).
mlir::Value sliceAlong(ImportContext &ctx, mlir::Value x, int64_t dim, SymInt start,
                       mlir::OpFoldResult size, int64_t step);
/// `aten::add_`-style in-place kinds (TorchImporter.cpp).
bool isInplaceKind(const std::string &kind);

// Reductions over chosen dims (frontends/common).
using frontends::CombineFn;
using frontends::droppedDimsMap;
using frontends::reduceDims;
/// Numerically stable softmax (or log-softmax) of float tensor `x` over `dim`.
mlir::Value softmaxOver(ImportContext &ctx, mlir::Value x, int64_t dim, bool isLog);
/// Normalizes a possibly negative dim against `rank`; nullopt when out of range.
std::optional<int64_t> normalizeDim(int64_t dim, int64_t rank);
/// MLIR element type of a TorchScript dtype code (torch.float32 = 6, ...), or null.
mlir::Type elementTypeOfDtypeCode(mlir::MLIRContext &context, int64_t code);
/// MLIR element type for a TorchDType, or null.
mlir::Type elementTypeOf(mlir::MLIRContext &context, TorchDType dtype);
/// A one-element constant tensor read as a number (torch's wrapped numbers:
/// prim::NumToTensor results and `{4}` constants in traced size arithmetic).
std::optional<TValue> constantTensorScalar(const TorchConstant &c);
/// Shape of a tensor value.
inline mlir::RankedTensorType tensorType(mlir::Value v) {
  return mlir::cast<mlir::RankedTensorType>(v.getType());
}

//===--- shared by the linalg handlers (LinalgHelpers.cpp) -------------------===//

/// a [M, K] times b [K, N] (linalg.matmul into a zero-filled init).
mlir::Value matmul2D(ImportContext &ctx, mlir::Value a, mlir::Value b);
/// x [..., K] times wT [K, N] -> [..., N].
mlir::Value matmulLastDim(ImportContext &ctx, mlir::Value x, mlir::Value wT);
/// torch.matmul of two tensor values (1-D promotion, batch broadcasting);
/// also mm and bmm.
mlir::FailureOr<mlir::Value> matmulValues(ImportContext &ctx, const TorchNode &node,
                                          mlir::Value lhs, mlir::Value rhs);
/// Adds `bias` (broadcast over leading dims) to `x`, scaled by beta/alpha.
mlir::FailureOr<mlir::Value> addBias(ImportContext &ctx, const TorchNode &node, mlir::Value x,
                                     mlir::Value bias, double alpha = 1.0, double beta = 1.0);

using Window = frontends::PoolingWindow;
/// Pads `input` by low/high per dim with `padValue`: clamped extract + select
/// (same technique as the ONNX frontend's padTensor).
mlir::Value padTensor(ImportContext &ctx, mlir::Value input, llvm::ArrayRef<int64_t> low,
                      llvm::ArrayRef<int64_t> high, mlir::Value padValue);
/// frontends::windowOutputSize, its refusal reported against `node`.
mlir::FailureOr<mlir::OpFoldResult> windowOutputSize(ImportContext &ctx, const TorchNode &node,
                                                     mlir::OpFoldResult inSize, Window &w, int d);
/// Reads an int list argument of 1 or n entries, widened to n.
mlir::FailureOr<llvm::SmallVector<int64_t>> spatialList(ImportContext &ctx, const TorchNode &node,
                                                        size_t i, size_t n, int64_t def);

} // namespace turbine::torch_frontend

#endif // TURBINE_FRONTENDS_TORCH_LIB_IMPORTCONTEXT_H
