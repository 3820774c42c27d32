//===- TensorBuilder.h - IR building shared by the frontends --------------===//
//
// What the ONNX and TorchScript importers both need to build upstream MLIR on
// tensors: an OpBuilder and location, a memo of dynamic dims (so equal dims
// share one SSA value and later ops see through reshapes), empties and fills,
// reshape by expand/collapse with a clear reassociation, transpose,
// broadcast sizes, a reduction over chosen dims, and the output size of a
// pooling window. Each frontend's ImportContext derives from it.
// Private to frontends/ (includes MLIR headers).
//===----------------------------------------------------------------------===//
#ifndef TURBINE_FRONTENDS_TENSORBUILDER_H
#define TURBINE_FRONTENDS_TENSORBUILDER_H

#include "turbine/base/Status.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"

#include "llvm/ADT/DenseMap.h"

#include <functional>
#include <optional>
#include <string>

namespace turbine::frontends {

/// One integer of a symbolic shape computation: a constant or an `index`
/// SSA value.
struct SymDim {
  int64_t constant = 0;
  mlir::Value value; ///< null when the element is the constant above.
  /// The value was read from a tensor at run time (the ONNX importer's
  /// getShapeOperand): any integer, not known to be a size, so consumers
  /// apply ONNX's special values (Reshape's 0 and -1, negative indices,
  /// clamping) with index arithmetic at run time. Values derived from shapes
  /// (Shape, Size, dims) are sizes and have this false.
  bool isRuntimeData = false;

  static SymDim of(int64_t c) { return SymDim{c, nullptr}; }
  static SymDim of(mlir::Value v) { return SymDim{0, v}; }
  static SymDim data(mlir::Value v) { return SymDim{0, v, true}; }
  bool isConstant() const { return !value; }
  bool operator==(const SymDim &other) const {
    return value == other.value && (value || constant == other.constant);
  }
  bool operator!=(const SymDim &other) const { return !(*this == other); }
};

/// The builder state and helpers of one import.
class TensorBuilder {
public:
  TensorBuilder(mlir::MLIRContext &context, mlir::Location loc) : builder(&context), loc(loc) {}

  mlir::OpBuilder builder;
  mlir::Location loc;

  mlir::Value indexConstant(int64_t value);
  /// The size of dim `i` of `tensor`: a constant for static dims, else the
  /// index value that produced the dim (memoized, so equal dims share one
  /// SSA value), else a tensor.dim.
  mlir::OpFoldResult dim(mlir::Value tensor, int64_t i);
  llvm::SmallVector<mlir::OpFoldResult> dims(mlir::Value tensor);
  /// Remembers that dims of `tensor` are `sizes` (for the memo above).
  void recordDims(mlir::Value tensor, llvm::ArrayRef<mlir::OpFoldResult> sizes);
  mlir::Value toIndexValue(mlir::OpFoldResult ofr);
  mlir::OpFoldResult toFoldResult(const SymDim &d);
  SymDim toSymDim(mlir::OpFoldResult ofr);

  /// tensor.empty of `sizes`, dims recorded.
  mlir::Value empty(llvm::ArrayRef<mlir::OpFoldResult> sizes, mlir::Type elementType);
  /// tensor.empty + linalg.fill with `fillValue` (a scalar).
  mlir::Value filled(llvm::ArrayRef<mlir::OpFoldResult> sizes, mlir::Value fillValue);
  /// Reshapes `input` to `sizes` with expand/collapse (clear reassociation)
  /// or collapse-to-1-D then expand.
  mlir::Value reshape(mlir::Value input, llvm::ArrayRef<mlir::OpFoldResult> sizes);
  /// linalg.transpose with permutation `perm`.
  mlir::Value transpose(mlir::Value input, llvm::ArrayRef<int64_t> perm);
  /// The numpy-style broadcast sizes of ranked tensors `inputs` (a static
  /// size wins over a dynamic one, which is assumed to match); two
  /// different static sizes other than 1 are an error.
  Result<llvm::SmallVector<mlir::OpFoldResult>> broadcastSizes(mlir::ValueRange inputs);

protected:
  /// The dim memo, saved and restored around a nested region by importers
  /// (a memoized tensor.dim inside a loop body does not dominate later uses).
  llvm::DenseMap<std::pair<mlir::Value, int64_t>, mlir::Value> dimMemo;
};

/// A convolution/pooling window over the spatial dims (one entry per dim).
struct PoolingWindow {
  llvm::SmallVector<int64_t> kernel, strides, dilations, padLow, padHigh;
  bool ceilMode = false;
};

/// Why windowOutputSize refused a dim.
enum class WindowError { None, Invalid, Unsupported };

/// Output size of spatial dim `d` of a window over an input dim of
/// `inSize` (constant or dynamic); extends w.padHigh[d] for ceil_mode so
/// every window starts inside the input or its low padding. On failure an
/// error, and `kind` says which (a window larger than the padded input is
/// Invalid, ceil_mode on a dynamic dim Unsupported).
Result<mlir::OpFoldResult> windowOutputSize(TensorBuilder &ctx, mlir::OpFoldResult inSize,
                                            PoolingWindow &w, int d, WindowError &kind);

/// Combines an accumulator and an element inside a reduction body.
using CombineFn = std::function<mlir::Value(mlir::OpBuilder &, mlir::Location, mlir::Value acc,
                                            mlir::Value element)>;
/// Reduces `input` over the dims where `reduceMask` is true into a tensor
/// without those dims, starting from `initValue` (a scalar).
mlir::Value reduceDims(TensorBuilder &ctx, mlir::Value input, llvm::ArrayRef<bool> reduceMask,
                       mlir::Value initValue, const CombineFn &combine);
/// Map from the full iteration space of rank `mask.size()` to the dims not
/// in `mask` (reads a reduced tensor while iterating the unreduced one).
mlir::AffineMap droppedDimsMap(mlir::MLIRContext *context, llvm::ArrayRef<bool> mask);

} // namespace turbine::frontends

#endif // TURBINE_FRONTENDS_TENSORBUILDER_H
