//===- ImportContext.h - shared state of one ONNX graph import ------------===//
//
// Private to the ONNX frontend. Holds what every op handler needs: the MLIR
// builder positioned in the entry function, the map from ONNX value names to
// MLIR values, constant initializers (kept as attributes so handlers can fold
// them at import time), and "shape tensors": small int64 tensors computed
// from shapes (Shape -> Gather -> Concat -> Reshape) kept symbolically as a
// list of (constant | index SSA value). Shape inputs that are data are read
// on the host at run time into such lists (getShapeOperand) and checked with
// run-time asserts. Also declares the op-handler registry and the
// IR-building helpers that the per-concept handler files share.
//===----------------------------------------------------------------------===//
#ifndef TURBINE_FRONTENDS_ONNX_LIB_IMPORTCONTEXT_H
#define TURBINE_FRONTENDS_ONNX_LIB_IMPORTCONTEXT_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"

#include "turbine/frontends/TensorBuilder.h"

#include "onnx/onnx_pb.h"

#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace turbine::onnx_frontend {

/// One element of a shape tensor: a known constant or an `index` SSA value
/// (frontends/common).
using frontends::SymDim;

/// A small integer tensor (rank 0 or 1) evaluated symbolically.
struct ShapeTensor {
  std::vector<SymDim> elements;
  bool isScalar = false;           ///< rank 0 (one element) rather than rank 1
  mlir::Type elementType;          ///< i64 or i32 as declared by ONNX

  /// True when every element is a constant (the tensor is known at import time).
  bool isConstant() const {
    for (const SymDim &d : elements)
      if (!d.isConstant())
        return false;
    return true;
  }
  /// True when some element was read at run time (SymDim::isRuntimeData).
  bool hasRuntimeData() const {
    for (const SymDim &d : elements)
      if (d.isRuntimeData)
        return true;
    return false;
  }
};

class ImportContext;

/// True for node domains that are not ONNX's own (`ai.onnx*`): custom ops.
bool isCustomDomain(const std::string &domain);
/// Imports a node of a custom domain as a call of a custom-op declaration
/// (CustomDomainOps.cpp); `declaredType` gives the model's type of an output.
mlir::LogicalResult importCustomDomainNode(
    ImportContext &ctx, const onnx::NodeProto &node,
    const std::function<mlir::Type(const std::string &)> &declaredType);

/// Converts one ONNX node. Returns failure after calling ctx.fail(...).
using OpHandler =
    std::function<mlir::LogicalResult(ImportContext &, const onnx::NodeProto &)>;

/// One registered ONNX op version range: handles opsets [sinceVersion, untilVersion].
struct OpHandlerEntry {
  int sinceVersion = 1;
  int untilVersion = 1 << 30;
  OpHandler handler;
};

/// Maps an op type of the default domain to its handlers per opset range.
class OpRegistry {
public:
  void add(const std::string &opType, OpHandler handler, int sinceVersion = 1,
           int untilVersion = 1 << 30) {
    entries[opType].push_back({sinceVersion, untilVersion, std::move(handler)});
  }
  /// Returns the handler for `opType` at `opset`, or null.
  const OpHandler *lookup(const std::string &opType, int opset) const;

private:
  std::map<std::string, std::vector<OpHandlerEntry>> entries;
};

void registerElementwiseOps(OpRegistry &registry);
void registerLogicalOps(OpRegistry &registry);
void registerCastOps(OpRegistry &registry);
void registerPassThroughOps(OpRegistry &registry);
void registerMatmulOps(OpRegistry &registry);
void registerConvolutionOps(OpRegistry &registry);
void registerPoolingOps(OpRegistry &registry);
void registerPadOps(OpRegistry &registry);
void registerShapeOps(OpRegistry &registry);
void registerLayoutOps(OpRegistry &registry);
void registerSliceConcatOps(OpRegistry &registry);
void registerGatherScatterOps(OpRegistry &registry);
void registerSelectionOps(OpRegistry &registry);
void registerGeneratorOps(OpRegistry &registry);
void registerSamplingOps(OpRegistry &registry);
void registerReductionOps(OpRegistry &registry);
void registerNormalizationOps(OpRegistry &registry);
void registerLossOps(OpRegistry &registry);
void registerRecurrentOps(OpRegistry &registry);
void registerQuantizationOps(OpRegistry &registry);
/// The handler registered for default-domain `opType` at `opset`, or null
/// (for ops expressed through others, e.g. ConvInteger through Conv).
const OpHandler *lookupOpHandler(const std::string &opType, int opset);

void registerResizeOps(OpRegistry &registry);
void registerSortOps(OpRegistry &registry);
void registerSignalOps(OpRegistry &registry);
void registerSequenceOps(OpRegistry &registry);
void registerControlFlowOps(OpRegistry &registry);
void registerDetectionOps(OpRegistry &registry);
void registerTextOps(OpRegistry &registry);
void registerStringOps(OpRegistry &registry);
void registerRandomOps(OpRegistry &registry);

/// Uniform [0, 1) f32 per element of a generic over `sizes` from a
/// counter-based hash of the element's linear index and `seed` (murmur3's
/// 32-bit finalizer): deterministic for a given seed, independent of how the
/// generic is tiled or parallelized (RandomOps.cpp).
mlir::Value uniformAtIndex(mlir::OpBuilder &b, mlir::Location l,
                           llvm::ArrayRef<mlir::OpFoldResult> sizes, int64_t seed);

//===--- string tensors (StringOps.cpp) --------------------------------------===//
/// True for !turbine.string, the element type of ONNX string tensors.
bool isStringElementType(mlir::Type type);
/// convertElementType, plus STRING -> !turbine.string: for graph inputs and
/// outputs and inferred types (handlers converting a dtype attribute keep
/// using convertElementType, which has no string type).
mlir::Type convertValueElementType(mlir::MLIRContext &context, int onnxType);
/// Refuses a node whose inputs hold strings unless its op takes them
/// (StringNormalizer, Cast, CastLike, Identity), naming op, node and input.
mlir::LogicalResult checkStringOperands(ImportContext &ctx, const onnx::NodeProto &node);
/// Cast / CastLike of `input` to ONNX type `targetOnnxType` when either side
/// is a string: the host ops turbine.to_string / turbine.from_string.
mlir::LogicalResult convertStringCast(ImportContext &ctx, const onnx::NodeProto &node,
                                      mlir::Value input, int targetOnnxType);

//===--- sequences, optionals and subgraphs (SequenceOps.cpp, ControlFlowOps.cpp)
/// An ONNX sequence, held at import time as the list of its elements.
struct SequenceValue {
  std::vector<mlir::Value> elements;
  int onnxElementType = 0; ///< ONNX data type of the elements (0: unknown)
  /// Set when only the length is known (SplitToSequence by run-time split
  /// sizes): why the elements are not; `elements` is then empty.
  std::string elementsUnavailable;
  int64_t knownLength = 0;
  int64_t length() const {
    return elementsUnavailable.empty() ? static_cast<int64_t>(elements.size()) : knownLength;
  }
};
/// An ONNX optional: none, or a tensor, or a sequence.
struct OptionalValue {
  bool hasElement = false;
  bool isSequence = false;
  mlir::Value tensor;
  SequenceValue sequence;
  int onnxElementType = 0;
};
/// Everything recorded for one value name, copied as a whole (subgraph
/// inputs and outputs, loop-carried values, Identity on sequences).
struct ValueBinding {
  enum class Kind { Missing, Tensor, Constant, Shape, Sequence, Optional } kind = Kind::Missing;
  mlir::Value tensor;
  mlir::DenseElementsAttr constant;
  ShapeTensor shape;
  SequenceValue sequence;
  OptionalValue optional;
  std::optional<int> onnxType;
};
/// Imports the nodes of `graph` (a subgraph of an If, Loop, Scan or
/// SequenceMap node) into `ctx`, in order; the caller binds its inputs
/// first and reads its outputs afterwards. Outer-scope names stay visible
/// (ONNX lexical scoping). Defined in OnnxImporter.cpp.
mlir::LogicalResult importGraphNodes(ImportContext &ctx, const onnx::GraphProto &graph);
/// Folds a logical or comparison node (Not, And, Or, Xor, Equal, Less, ...)
/// whose inputs are all import-time integer/bool scalars into a constant, so
/// If and Loop conditions computed from import-time values stay known.
/// Returns true when it did. Defined in ControlFlowOps.cpp.
bool foldImportTimeCondition(ImportContext &ctx, const onnx::NodeProto &node);

/// State of one graph import and the builders the op handlers share.
class ImportContext : public frontends::TensorBuilder {
public:
  ImportContext(mlir::MLIRContext &context, std::string origin, int opset);

  mlir::MLIRContext &context;
  std::string origin; ///< file name or origin used in messages
  int opset;          ///< default-domain opset of the model
  std::string error;  ///< first error message
  /// Names with a value_info in the model file itself (any graph), as
  /// opposed to one ONNX shape inference added: a node output whose type
  /// contradicts a declared one is the model's error, not the importer's.
  std::set<std::string> declaredValueInfo;
  /// Body copies unrolling has made so far (kMaxTotalUnrolledCopies).
  int64_t unrolledCopies = 0;

  //===--- values ---------------------------------------------------------===//

  /// Records the result `name` of a node as a tensor value.
  void setValue(const std::string &name, mlir::Value value);
  /// Records the result `name` as a symbolic shape tensor.
  void setShapeTensor(const std::string &name, ShapeTensor shape);
  /// Records an initializer or Constant output.
  void setConstant(const std::string &name, mlir::DenseElementsAttr attr);

  /// The tensor value recorded for `name`, or null (also for constants and
  /// shape tensors that were never materialized).
  mlir::Value lookupValue(const std::string &name) const {
    auto it = values.find(name);
    return it == values.end() ? mlir::Value() : it->second;
  }
  /// True when `name` is known (value, constant or shape tensor).
  bool hasValue(const std::string &name) const;
  /// Returns `name` as a tensor, materializing constants and shape tensors.
  /// Fails (with a message naming `node`) when unknown.
  mlir::FailureOr<mlir::Value> getTensor(const onnx::NodeProto &node,
                                         const std::string &name);
  /// Returns the constant attribute for `name`, if it is a constant.
  std::optional<mlir::DenseElementsAttr> getConstant(const std::string &name) const;
  /// Returns `name` as a shape tensor when it is one, or a small constant
  /// integer tensor; std::nullopt otherwise.
  std::optional<ShapeTensor> getShapeTensor(const std::string &name) const;
  /// True when `name` is a shape tensor (not a constant).
  bool isShapeTensor(const std::string &name) const {
    return shapeTensors.count(name) != 0;
  }
  /// Input `i` of `node` as a shape tensor, for an op input that determines
  /// a shape (a Reshape target, Slice starts, Range bounds, reduction axes).
  /// Known at import time: getShapeTensor. Otherwise a rank-0 or rank-1
  /// tensor of static length (at most kMaxRuntimeShapeElements) whose
  /// elements are read on the host at run time (tensor.extract, converted to
  /// index; SymDim::data): integers as they are, floats (when
  /// `allowFloat`) truncated toward zero by a small kernel first. `what`
  /// names the input in the error that anything else gets.
  mlir::FailureOr<ShapeTensor> getShapeOperand(const onnx::NodeProto &node, int i,
                                               const std::string &what,
                                               bool allowFloat = false);
  static constexpr int64_t kMaxRuntimeShapeElements = 64;
  /// The elements of `tensor` (integer, rank 0 or 1, static length) read on
  /// the host at run time as index values (SymDim::data).
  ShapeTensor readAtRunTime(mlir::Value tensor);
  /// True when `name` is a shape tensor or a small constant integer tensor,
  /// i.e. shape-computation ops on it can be evaluated at import time.
  bool isShapeLike(const std::string &name) const { return getShapeTensor(name).has_value(); }

  //===--- ONNX element types (signedness) ---------------------------------===//
  // MLIR integers are signless, so whether an integer value is unsigned
  // (ONNX uint8..uint64) is tracked here per value name. The graph walk
  // records graph inputs, initializers and every node output (from ONNX type
  // inference, else the declared graph output type, else the handler's own
  // setOnnxType, else input 0's type); handlers choose unsigned arithmetic
  // (divui, ult, uitofp, extui, ...) through isUnsigned().

  /// Records the ONNX TensorProto data type of value `name`.
  void setOnnxType(const std::string &name, int onnxType) { onnxTypes[name] = onnxType; }
  /// The recorded ONNX data type of `name`, if any.
  std::optional<int> onnxType(const std::string &name) const {
    auto it = onnxTypes.find(name);
    return it == onnxTypes.end() ? std::nullopt : std::optional<int>(it->second);
  }
  /// True when `name` holds ONNX uint8/16/32/64 elements.
  bool isUnsigned(const std::string &name) const {
    std::optional<int> t = onnxType(name);
    return t && isUnsignedOnnxType(*t);
  }
  static bool isUnsignedOnnxType(int onnxType) {
    return onnxType == onnx::TensorProto::UINT8 || onnxType == onnx::TensorProto::UINT16 ||
           onnxType == onnx::TensorProto::UINT32 || onnxType == onnx::TensorProto::UINT64;
  }

  //===--- sequences and optionals (ValueBindings.cpp) --------------------===//

  void setSequence(const std::string &name, SequenceValue sequence);
  void setOptional(const std::string &name, OptionalValue optional);
  const SequenceValue *lookupSequence(const std::string &name) const {
    auto it = sequences.find(name);
    return it == sequences.end() ? nullptr : &it->second;
  }
  const OptionalValue *lookupOptional(const std::string &name) const {
    auto it = optionals.find(name);
    return it == optionals.end() ? nullptr : &it->second;
  }
  /// Captures what is recorded for `name` (Kind::Missing when nothing).
  ValueBinding capture(const std::string &name) const;
  /// Records `binding` under `name`, replacing whatever was there.
  void bind(const std::string &name, const ValueBinding &binding);

  //===--- errors ---------------------------------------------------------===//

  /// Records "unsupported ONNX op 'T' (node 'n', opset N, domain 'd')"
  /// followed by `detail` (when not empty) and returns failure.
  mlir::LogicalResult unsupported(const onnx::NodeProto &node,
                                  const std::string &detail = "");
  /// Records "ONNX node 'n' (T): message" and returns failure.
  mlir::LogicalResult fail(const onnx::NodeProto &node, const std::string &message);

  //===--- IR helpers (more in frontends::TensorBuilder) ------------------===//

  //===--- run-time index arithmetic (folds constants) -------------------===//

  /// `OpTy` (an arith op on index values) of `a` and `b`, folded to an
  /// attribute when both are constants.
  template <typename OpTy>
  mlir::OpFoldResult indexOp(mlir::OpFoldResult a, mlir::OpFoldResult b) {
    return asFoldResult(builder.createOrFold<OpTy>(loc, toIndexValue(a), toIndexValue(b)));
  }
  /// arith.cmpi on index values (an i1 value, constant-folded when possible).
  mlir::Value compare(mlir::arith::CmpIPredicate predicate, mlir::OpFoldResult a,
                      mlir::OpFoldResult b);
  /// arith.select of index values.
  mlir::OpFoldResult select(mlir::Value condition, mlir::OpFoldResult a, mlir::OpFoldResult b);
  /// Logical and / or of i1 values.
  mlir::Value both(mlir::Value a, mlir::Value b);
  mlir::Value either(mlir::Value a, mlir::Value b);
  mlir::Value logicalNot(mlir::Value a);
  /// An index value as an OpFoldResult (an attribute when it is a constant).
  mlir::OpFoldResult asFoldResult(mlir::Value v);
  /// Run-time check of ONNX semantics: the call fails with "ONNX node 'n'
  /// (T, opset N): message" unless `condition` (i1) holds (cf.assert, a host
  /// program Assert). A condition that folds to false fails the import now.
  mlir::LogicalResult check(const onnx::NodeProto &node, mlir::Value condition,
                            const std::string &message);
  /// A run-time axis normalized against `rank` (negative counts from the
  /// end), with a run-time check that it lies in [-rank, rank).
  mlir::FailureOr<mlir::OpFoldResult> runtimeAxis(const onnx::NodeProto &node, const SymDim &axis,
                                                  int64_t rank, const std::string &what);
  /// Every element of `axes` normalized against `rank` (runtimeAxis), with
  /// run-time checks that they are distinct.
  mlir::FailureOr<llvm::SmallVector<mlir::OpFoldResult>>
  distinctAxes(const onnx::NodeProto &node, const ShapeTensor &axes, int64_t rank);
  /// For each of `rank` dims an i1 value: is the dim one of `axes`?
  llvm::SmallVector<mlir::Value> axisFlags(llvm::ArrayRef<mlir::OpFoldResult> axes, int64_t rank);
  /// The element of `sizes` at run-time position `position` (a select chain).
  mlir::OpFoldResult pick(llvm::ArrayRef<mlir::OpFoldResult> sizes, mlir::OpFoldResult position);
  /// Sizes of the dims whose run-time flag `drop[d]` (i1) is false, in order:
  /// `count` results (the caller knows how many dims are kept).
  llvm::SmallVector<mlir::OpFoldResult> keptSizes(llvm::ArrayRef<mlir::OpFoldResult> sizes,
                                                  llvm::ArrayRef<mlir::Value> drop, int64_t count);
  /// Scalar arith.constant of `type` (float or integer) holding `value`.
  mlir::Value scalarConstant(mlir::Type type, double value);

  /// Broadcast output sizes of `inputs` (NumPy rules, right-aligned).
  mlir::FailureOr<llvm::SmallVector<mlir::OpFoldResult>>
  broadcastSizes(const onnx::NodeProto &node, mlir::ValueRange inputs);

  /// Emits one linalg.generic over the broadcast shape of `inputs`; `body`
  /// gets the scalar block arguments (inputs only) and returns the result.
  using ScalarBody = std::function<mlir::Value(mlir::OpBuilder &, mlir::Location,
                                               mlir::ValueRange)>;
  mlir::FailureOr<mlir::Value> elementwise(const onnx::NodeProto &node,
                                           mlir::ValueRange inputs,
                                           mlir::Type resultElementType,
                                           const ScalarBody &body);

  /// Materializes a shape tensor as an i64/i32 tensor value.
  mlir::Value materialize(const ShapeTensor &shape);

  /// Reads attribute helpers.
  const onnx::AttributeProto *attr(const onnx::NodeProto &node, const std::string &name) const;
  int64_t intAttr(const onnx::NodeProto &node, const std::string &name, int64_t def) const;
  float floatAttr(const onnx::NodeProto &node, const std::string &name, float def) const;
  std::string stringAttr(const onnx::NodeProto &node, const std::string &name,
                         const std::string &def) const;
  std::optional<std::vector<int64_t>> intsAttr(const onnx::NodeProto &node,
                                               const std::string &name) const;
  /// Input `i` of `node` present (non-empty name)?
  static bool hasInput(const onnx::NodeProto &node, int i) {
    return i < node.input_size() && !node.input(i).empty();
  }

  //===--- scopes of nested regions ----------------------------------------===//

  /// Everything bound by name or memoized. A Loop imported as an scf.while
  /// saves it before importing the body into the loop's region and restores
  /// it afterwards, so no later node sees a value defined inside the region
  /// (materialized constants, run-time reads, dims are memoized per import).
  struct Scope {
    std::map<std::string, SequenceValue> sequences;
    std::map<std::string, OptionalValue> optionals;
    std::map<std::string, mlir::Value> values;
    std::map<std::string, mlir::DenseElementsAttr> constants;
    std::map<std::string, ShapeTensor> shapeTensors;
    std::map<std::string, int> onnxTypes;
    std::map<std::string, ShapeTensor> runtimeReads;
    llvm::DenseMap<std::pair<mlir::Value, int64_t>, mlir::Value> dimMemo;
  };
  Scope saveScope() const {
    return {sequences, optionals, values, constants, shapeTensors, onnxTypes, runtimeReads, dimMemo};
  }
  void restoreScope(Scope scope) {
    sequences = std::move(scope.sequences);
    optionals = std::move(scope.optionals);
    values = std::move(scope.values);
    constants = std::move(scope.constants);
    shapeTensors = std::move(scope.shapeTensors);
    onnxTypes = std::move(scope.onnxTypes);
    runtimeReads = std::move(scope.runtimeReads);
    dimMemo = std::move(scope.dimMemo);
  }

private:
  std::map<std::string, SequenceValue> sequences; ///< ValueBindings.cpp
  std::map<std::string, OptionalValue> optionals; ///< ValueBindings.cpp
  std::map<std::string, mlir::Value> values;
  std::map<std::string, mlir::DenseElementsAttr> constants;
  std::map<std::string, ShapeTensor> shapeTensors;
  std::map<std::string, int> onnxTypes;

  std::map<std::string, ShapeTensor> runtimeReads; ///< getShapeOperand memo
};

/// Converts an ONNX TensorProto data type to an MLIR element type, or null.
mlir::Type convertElementType(mlir::MLIRContext &context, int onnxType);
/// Converts an ONNX TensorProto to a dense attribute; sets `error` on failure.
mlir::FailureOr<mlir::DenseElementsAttr>
convertTensorProto(mlir::MLIRContext &context, const onnx::TensorProto &tensor,
                   std::string &error);
// Reductions over chosen dims (frontends/common).
using frontends::CombineFn;
using frontends::droppedDimsMap;
using frontends::reduceDims;
/// Product of the sizes of `input` over `mask` as a scalar of float type `type`.
mlir::Value reducedCount(ImportContext &ctx, mlir::Value input, llvm::ArrayRef<bool> mask,
                         mlir::Type type);

/// Numerically stable softmax (or log-softmax) of float tensor `x` over the
/// dims where `mask` is true; same shape as `x`.
mlir::Value softmaxOver(ImportContext &ctx, mlir::Value x, llvm::ArrayRef<bool> mask, bool isLog);

/// The tensor operands of `node` (all non-empty inputs); fails naming the
/// node when there are none (ElementwiseOps.cpp).
mlir::FailureOr<llvm::SmallVector<mlir::Value>> tensorInputs(ImportContext &ctx,
                                                             const onnx::NodeProto &node);

/// Scalar conversion between any two supported element types; the flags say
/// whether an integer side is ONNX unsigned (uitofp/fptoui/extui) (CastOps.cpp).
mlir::Value convertScalar(mlir::OpBuilder &b, mlir::Location l, mlir::Value v, mlir::Type to,
                          bool fromUnsigned = false, bool toUnsigned = false);

/// Pad (opset >= 11) whose pads or constant value are known only at run
/// time: output sizes by index arithmetic (checked non-negative), the data by
/// one gather-style generic for every mode (PadOps.cpp).
mlir::LogicalResult convertPadAtRunTime(ImportContext &ctx, const onnx::NodeProto &node,
                                        mlir::Value input, const ShapeTensor &pads,
                                        const std::string &mode);

/// Positions (int64) of the set flags of a 1-D i1 tensor and their count,
/// which a kernel computes and the host reads (SelectionOps.cpp): for ops whose
/// result size is a count of data (Compress, NonZero, NonMaxSuppression).
std::pair<mlir::Value, mlir::OpFoldResult> setFlagPositions(ImportContext &ctx, mlir::Value flags);

/// Normalizes a possibly negative axis against `rank`; nullopt if out of range.
std::optional<int64_t> normalizeAxis(int64_t axis, int64_t rank);

//===--- shape and indexing helpers (ShapeHelpers.cpp) ----------------------===//

/// Product of `sizes` with constants folded.
mlir::OpFoldResult product(ImportContext &ctx, llvm::ArrayRef<mlir::OpFoldResult> sizes);
/// Input `i` (when `fromInput`) or the ints attribute `attrName` as a shape
/// tensor; nullopt when absent. An input not known at import time is read at
/// run time (ImportContext::getShapeOperand).
mlir::FailureOr<std::optional<ShapeTensor>>
shapeListFromInputOrAttr(ImportContext &ctx, const onnx::NodeProto &node, int i,
                         const std::string &attrName, bool fromInput);
/// The values of `t` when all are constants; nullopt for an absent list.
std::optional<std::vector<int64_t>> constantValues(const std::optional<ShapeTensor> &t);
/// True when `t` is absent or all its elements are constants.
bool isKnown(const std::optional<ShapeTensor> &t);
/// Clamps an index value into [0, size-1] (inside a generic body).
mlir::Value clampIndex(mlir::OpBuilder &b, mlir::Location l, mlir::Value idx, mlir::Value size);
/// Gather-style generic over `outSizes` whose body computes the source
/// indices from the output indices.
mlir::Value gatherGeneric(
    ImportContext &ctx, mlir::Value source, llvm::ArrayRef<mlir::OpFoldResult> outSizes,
    mlir::ValueRange extraInputs, llvm::ArrayRef<mlir::AffineMap> extraMaps,
    const std::function<llvm::SmallVector<mlir::Value>(mlir::OpBuilder &, mlir::Location,
                                                       llvm::ArrayRef<mlir::Value>,
                                                       mlir::ValueRange)> &indexFn);

//===--- convolution and pooling windows (WindowHelpers.cpp) ----------------===//

using WindowAttrs = frontends::PoolingWindow;
/// Pads `input` by `low`/`high` per dim with `padValue` (tensor.pad; the
/// compiler's global-opt lowers it, after layout rewrites have seen it).
mlir::Value padTensor(ImportContext &ctx, mlir::Value input, llvm::ArrayRef<int64_t> low,
                      llvm::ArrayRef<int64_t> high, mlir::Value padValue);
/// Reads kernel/strides/dilations/pads/auto_pad for a window of
/// `kernel.size()` spatial dims (2 or 3) over `input`. For a 1-D op (`oneD`,
/// input already reshaped to [N, C, 1, L], kernel widened to [1, k]) the
/// attributes are widened with a unit leading spatial dim.
mlir::FailureOr<WindowAttrs> readWindowAttrs(ImportContext &ctx, const onnx::NodeProto &node,
                                             mlir::Value input, llvm::ArrayRef<int64_t> kernel,
                                             bool oneD = false);
/// frontends::windowOutputSize, its refusal reported against `node`.
mlir::FailureOr<mlir::OpFoldResult> windowOutputSize(ImportContext &ctx,
                                                     const onnx::NodeProto &node,
                                                     mlir::OpFoldResult inSize, WindowAttrs &w,
                                                     int d);

} // namespace turbine::onnx_frontend

#endif // TURBINE_FRONTENDS_ONNX_LIB_IMPORTCONTEXT_H
