//===- ComposedOps.h - helpers for ops built from other ops' handlers -----===//
//
// Private to the ONNX frontend. The sequence and control-flow handlers
// (SequenceOps.cpp, ControlFlowOps.cpp) express their work through the
// handlers of ordinary ops (Slice, Gather, Concat) on temporary value
// names, stack per-iteration results, and select between two values by a
// condition known only at run time.
//===----------------------------------------------------------------------===//
#ifndef TURBINE_FRONTENDS_ONNX_LIB_COMPOSEDOPS_H
#define TURBINE_FRONTENDS_ONNX_LIB_COMPOSEDOPS_H

#include "ImportContext.h"

namespace turbine::onnx_frontend {

/// Most subgraph copies one Loop, Scan or SequenceMap node may unroll into.
constexpr int64_t kMaxUnrolledIterations = 1024;
/// Body copies all unrolling of one model may make together (nested loops
/// multiply: Loop(1000) { Loop(1000) } is a million). Past it, a Loop with a
/// trip count becomes a host loop (scf.while) and Scan / SequenceMap fail.
constexpr int64_t kMaxTotalUnrolledCopies = 16384;

/// A fresh value name that no ONNX model uses.
std::string temporaryName(ImportContext &ctx);
/// Binds `value` (or a constant) to a fresh name and returns the name.
std::string bindTemporary(ImportContext &ctx, mlir::Value value);
std::string bindTemporary(ImportContext &ctx, mlir::DenseElementsAttr constant);
/// A rank-0 or rank-1 i64 constant attribute.
mlir::DenseElementsAttr i64Constant(ImportContext &ctx, llvm::ArrayRef<int64_t> values,
                                    bool scalar = false);
/// A rank-0 i1 constant attribute.
mlir::DenseElementsAttr boolConstant(ImportContext &ctx, bool value);

/// Runs the handler of `opType` (at the model's opset) on the named inputs
/// with `attributes`, on behalf of `origin` (errors name it), and returns
/// the name of its first output.
mlir::FailureOr<std::string>
callOpHandler(ImportContext &ctx, const onnx::NodeProto &origin, const std::string &opType,
              llvm::ArrayRef<std::string> inputs,
              llvm::ArrayRef<onnx::AttributeProto> attributes = {});
onnx::AttributeProto intAttribute(const std::string &name, int64_t value);

/// `value` with a unit dim inserted at `axis`.
mlir::Value insertUnitDim(ImportContext &ctx, mlir::Value value, int64_t axis);
/// Concatenates `values` along `axis` (ONNX Concat); one value is returned as is.
mlir::FailureOr<mlir::Value> concatenate(ImportContext &ctx, const onnx::NodeProto &origin,
                                         llvm::ArrayRef<mlir::Value> values, int64_t axis);
/// Stacks equally shaped `values` along a new dim `axis`.
mlir::FailureOr<mlir::Value> stack(ImportContext &ctx, const onnx::NodeProto &origin,
                                   llvm::ArrayRef<mlir::Value> values, int64_t axis);
/// Slice `index` of `value` along `axis`, the axis dropped (ONNX Gather).
mlir::FailureOr<mlir::Value> sliceAt(ImportContext &ctx, const onnx::NodeProto &origin,
                                     mlir::Value value, int64_t index, int64_t axis);

/// The value of a rank-0 or one-element integer/bool input when known at
/// import time (a constant or a constant shape computation).
std::optional<int64_t> importTimeScalar(ImportContext &ctx, const std::string &name);
/// Input `name` as a rank-0 tensor (a one-element tensor is reshaped).
mlir::FailureOr<mlir::Value> scalarTensor(ImportContext &ctx, const onnx::NodeProto &node,
                                          const std::string &name);
/// Rank-0 i1 tensor: run-time integer `position` (rank 0), normalized
/// against `length` when negative, equals `k` (or, with `greater`, is
/// greater than `k`).
mlir::FailureOr<mlir::Value> positionTest(ImportContext &ctx, const onnx::NodeProto &node,
                                          mlir::Value position, int64_t length, int64_t k,
                                          bool greater = false);
/// Elementwise `condition ? a : b` with a rank-0 i1 run-time `condition`;
/// `a` and `b` must have the same type (else an error naming `what`).
mlir::FailureOr<mlir::Value> selectByCondition(ImportContext &ctx, const onnx::NodeProto &node,
                                               mlir::Value condition, mlir::Value a,
                                               mlir::Value b, const std::string &what);
/// Same for whole bindings: tensors, sequences of equal length, optionals
/// of equal presence.
mlir::FailureOr<ValueBinding> selectBindings(ImportContext &ctx, const onnx::NodeProto &node,
                                             mlir::Value condition, const ValueBinding &a,
                                             const ValueBinding &b, const std::string &what);
/// Fails (naming `node` and the reason) when `sequence` holds only a length.
mlir::LogicalResult requireElements(ImportContext &ctx, const onnx::NodeProto &node,
                                    const std::string &name, const SequenceValue &sequence);
/// The tensor held by a tensor-like binding (value, constant, shape tensor).
mlir::FailureOr<mlir::Value> bindingTensor(ImportContext &ctx, const onnx::NodeProto &node,
                                           const ValueBinding &binding);

} // namespace turbine::onnx_frontend

#endif // TURBINE_FRONTENDS_ONNX_LIB_COMPOSEDOPS_H
