//===- OnnxImporter.cpp - ONNX ModelProto -> func.func on tensors ---------===//
//
// Entry points of the ONNX frontend: parses the ModelProto, runs ONNX's
// checker and shape inference, creates the entry function from the graph
// inputs/outputs, and walks the nodes in order, dispatching each to the
// handler registered for its op type and opset. Every failure becomes an
// error message; nothing here asserts on user input.
//===----------------------------------------------------------------------===//
#include "turbine/frontends/onnx/OnnxImporter.h"

#include "ImportContext.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

#include "turbine/compiler/Dialect/TurbineDialect.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"

#include "onnx/checker.h"
#include "onnx/defs/schema.h"
#include "onnx/shape_inference/implementation.h"

#include <exception>
#include <fstream>
#include <functional>
#include <map>
#include <set>
#include <sstream>

using namespace mlir;

namespace turbine::onnx_frontend {

namespace {

/// The registry of every supported op, built once.
const OpRegistry &opRegistry() {
  static const OpRegistry registry = [] {
    OpRegistry r;
    registerElementwiseOps(r);
    registerLogicalOps(r);
    registerCastOps(r);
    registerPassThroughOps(r);
    registerMatmulOps(r);
    registerConvolutionOps(r);
    registerPoolingOps(r);
    registerPadOps(r);
    registerShapeOps(r);
    registerLayoutOps(r);
    registerSliceConcatOps(r);
    registerGatherScatterOps(r);
    registerSelectionOps(r);
    registerGeneratorOps(r);
    registerSamplingOps(r);
    registerReductionOps(r);
    registerNormalizationOps(r);
    registerLossOps(r);
    registerRecurrentOps(r);
    registerQuantizationOps(r);

    registerResizeOps(r);
    registerSortOps(r);
    registerSignalOps(r);
    registerSequenceOps(r);
    registerControlFlowOps(r);
    registerDetectionOps(r);
    registerTextOps(r);
    registerStringOps(r);
    registerRandomOps(r);
    return r;
  }();
  return registry;
}

} // namespace

const OpHandler *lookupOpHandler(const std::string &opType, int opset) {
  return opRegistry().lookup(opType, opset);
}

namespace {

/// Ranked tensor type and per-dim names of a graph input or output.
struct ValueSignature {
  RankedTensorType type;
  SmallVector<std::string> dimNames;
  bool anyNamedDim = false;
  /// "u8".."u64" for ONNX unsigned types, which MLIR holds as signless
  /// integers: the boundary dtype users see stays unsigned.
  std::string unsignedDType;
};

/// "4294967296x4294967296xf32" when the static dims of `type` multiply to
/// more elements than an int64 holds (no buffer could ever hold it, and
/// element counts computed from it would overflow), else "".
std::string overflowingShape(Type type) {
  auto shaped = dyn_cast<ShapedType>(type);
  if (!shaped || !shaped.hasRank())
    return "";
  int64_t count = 1;
  bool overflows = false;
  for (int64_t d : shaped.getShape())
    if (!ShapedType::isDynamic(d))
      overflows |= __builtin_mul_overflow(count, d, &count);
  if (!overflows)
    return "";
  std::string text;
  for (int64_t d : shaped.getShape())
    text += (ShapedType::isDynamic(d) ? std::string("?") : std::to_string(d)) + "x";
  std::string element;
  llvm::raw_string_ostream os(element);
  shaped.getElementType().print(os);
  return text + os.str();
}

FailureOr<ValueSignature> convertValueInfo(MLIRContext &context,
                                           const onnx::ValueInfoProto &info,
                                           std::string &error) {
  if (!info.type().has_tensor_type()) {
    error = "graph value '" + info.name() + "' is not a tensor";
    return failure();
  }
  const onnx::TypeProto_Tensor &tensorType = info.type().tensor_type();
  Type elementType = convertValueElementType(context, tensorType.elem_type());
  if (!elementType) {
    error = "graph value '" + info.name() + "' has unsupported element type " +
            std::to_string(tensorType.elem_type());
    return failure();
  }
  if (!tensorType.has_shape()) {
    error = "graph value '" + info.name() + "' has no shape (unranked tensors are not supported)";
    return failure();
  }
  ValueSignature sig;
  if (ImportContext::isUnsignedOnnxType(tensorType.elem_type()))
    sig.unsignedDType = "u" + std::to_string(elementType.getIntOrFloatBitWidth());
  SmallVector<int64_t> shape;
  for (const onnx::TensorShapeProto_Dimension &d : tensorType.shape().dim()) {
    if (d.has_dim_value() && d.dim_value() >= 0) {
      shape.push_back(d.dim_value());
      sig.dimNames.push_back("");
    } else {
      shape.push_back(ShapedType::kDynamic);
      sig.dimNames.push_back(d.has_dim_param() ? d.dim_param() : "");
      sig.anyNamedDim |= d.has_dim_param();
    }
  }
  sig.type = RankedTensorType::get(shape, elementType);
  if (std::string big = overflowingShape(sig.type); !big.empty()) {
    error = "graph value '" + info.name() + "' has shape " + big +
            ", more elements than fit in 64 bits";
    return failure();
  }
  return sig;
}

/// How one graph input or output maps onto function arguments/results.
struct FlatBoundaryValue {
  std::string name;
  enum class Kind { Tensor, Sequence, OptionalNone, OptionalTensor, OptionalSequence } kind;
  size_t first = 0; ///< first argument index
  size_t count = 0; ///< number of arguments
  int onnxElementType = 0;
};

/// Appends the arguments of graph input `info` to `inputs`: a tensor is one
/// argument; a sequence one per element, as many and as shaped as
/// options.sequenceInputShapes (or sequenceInputLengths with the declared
/// element shape) say; an optional none when named in
/// options.absentOptionalInputs, else its element.
FailureOr<FlatBoundaryValue>
flattenGraphInput(MLIRContext &context, const onnx::ValueInfoProto &info,
                  const ImportOptions &options,
                  SmallVector<std::pair<std::string, ValueSignature>> &inputs,
                  std::string &error) {
  FlatBoundaryValue flat;
  flat.name = info.name();
  flat.first = inputs.size();
  const onnx::TypeProto *type = &info.type();
  bool optional = type->has_optional_type();
  if (optional) {
    if (options.absentOptionalInputs.count(info.name())) {
      flat.kind = FlatBoundaryValue::Kind::OptionalNone;
      return flat;
    }
    type = &type->optional_type().elem_type();
  }
  if (type->has_tensor_type()) {
    onnx::ValueInfoProto tensorInfo;
    tensorInfo.set_name(info.name());
    *tensorInfo.mutable_type() = *type;
    auto sig = convertValueInfo(context, tensorInfo, error);
    if (failed(sig))
      return failure();
    inputs.push_back({info.name(), *sig});
    flat.kind = optional ? FlatBoundaryValue::Kind::OptionalTensor : FlatBoundaryValue::Kind::Tensor;
    flat.count = 1;
    flat.onnxElementType = type->tensor_type().elem_type();
    return flat;
  }
  if (!type->has_sequence_type() || !type->sequence_type().elem_type().has_tensor_type()) {
    error = "graph value '" + info.name() +
            "' is neither a tensor, a sequence of tensors nor an optional of those";
    return failure();
  }
  flat.kind = optional ? FlatBoundaryValue::Kind::OptionalSequence : FlatBoundaryValue::Kind::Sequence;
  const onnx::TypeProto_Tensor &elementType = type->sequence_type().elem_type().tensor_type();
  flat.onnxElementType = elementType.elem_type();
  std::vector<std::optional<std::vector<int64_t>>> shapes;
  if (auto it = options.sequenceInputShapes.find(info.name()); it != options.sequenceInputShapes.end()) {
    for (const std::vector<int64_t> &shape : it->second)
      shapes.push_back(shape);
  } else if (auto it = options.sequenceInputLengths.find(info.name());
             it != options.sequenceInputLengths.end()) {
    shapes.assign(static_cast<size_t>(std::max<int64_t>(it->second, 0)), std::nullopt);
  } else {
    error = std::string(optional ? "optional sequence input '" : "sequence input '") +
            info.name() + "' needs its length fixed at compile time (a sequence length " +
            info.name() + "=N, or element shapes " + info.name() + "=2x3,4x3" +
            (optional ? ", or the optional compiled as absent" : std::string()) +
            "): a compiled artifact takes one tensor per element";
    return failure();
  }
  for (auto [k, shape] : llvm::enumerate(shapes)) {
    onnx::ValueInfoProto elementInfo;
    elementInfo.set_name(info.name() + "[" + std::to_string(k) + "]");
    onnx::TypeProto_Tensor *tensorType = elementInfo.mutable_type()->mutable_tensor_type();
    *tensorType = elementType;
    if (shape) {
      onnx::TensorShapeProto *dims = tensorType->mutable_shape();
      dims->clear_dim();
      for (int64_t d : *shape) {
        auto *dim = dims->add_dim();
        if (d >= 0)
          dim->set_dim_value(d);
      }
    } else if (!elementType.has_shape()) {
      error = "sequence input '" + info.name() +
              "' declares no element shape; give its element shapes at compile time (" +
              info.name() + "=2x3,4x3)";
      return failure();
    }
    auto sig = convertValueInfo(context, elementInfo, error);
    if (failed(sig))
      return failure();
    inputs.push_back({elementInfo.name(), *sig});
  }
  flat.count = shapes.size();
  return flat;
}

/// Records graph input `flat` in `ctx` from the entry block's `arguments`.
void bindGraphInput(ImportContext &ctx, const FlatBoundaryValue &flat,
                    Block::BlockArgListType arguments) {
  SequenceValue sequence;
  sequence.onnxElementType = flat.onnxElementType;
  for (size_t k = 0; k < flat.count; ++k)
    sequence.elements.push_back(arguments[flat.first + k]);
  OptionalValue optional;
  optional.onnxElementType = flat.onnxElementType;
  switch (flat.kind) {
  case FlatBoundaryValue::Kind::Tensor:
    ctx.setValue(flat.name, arguments[flat.first]);
    return;
  case FlatBoundaryValue::Kind::Sequence:
    ctx.setSequence(flat.name, sequence);
    return;
  case FlatBoundaryValue::Kind::OptionalNone:
    break;
  case FlatBoundaryValue::Kind::OptionalTensor:
    optional.hasElement = true;
    optional.tensor = arguments[flat.first];
    break;
  case FlatBoundaryValue::Kind::OptionalSequence:
    optional.hasElement = true;
    optional.isSequence = true;
    optional.sequence = sequence;
    break;
  }
  ctx.setOptional(flat.name, optional);
}

/// Appends the function results of graph output `info`: a tensor is one
/// result; a sequence one per element ("y[0]", ...); an optional none
/// nothing, else its element.
LogicalResult flattenGraphOutput(ImportContext &ctx, const onnx::NodeProto &outputNode,
                                 const onnx::ValueInfoProto &info, SmallVector<Value> &results,
                                 SmallVector<std::pair<std::string, ValueSignature>> &sigs) {
  const std::string &name = info.name();
  const SequenceValue *sequence = ctx.lookupSequence(name);
  if (const OptionalValue *optional = ctx.lookupOptional(name)) {
    if (!optional->hasElement)
      return success();
    if (!optional->isSequence) {
      results.push_back(optional->tensor);
      sigs.push_back({name, ValueSignature{}});
      return success();
    }
    sequence = &optional->sequence;
  }
  if (sequence) {
    if (!sequence->elementsUnavailable.empty())
      return ctx.fail(outputNode, "graph output '" + name + "' is a sequence whose elements "
                                  "are not known at import time (" +
                                  sequence->elementsUnavailable + ")");
    for (auto [k, element] : llvm::enumerate(sequence->elements)) {
      results.push_back(element);
      sigs.push_back({name + "[" + std::to_string(k) + "]", ValueSignature{}});
    }
    return success();
  }
  auto value = ctx.getTensor(outputNode, name);
  if (failed(value))
    return failure();
  results.push_back(*value);
  std::string sigError;
  auto sig = convertValueInfo(ctx.context, info, sigError);
  // Outputs without declared shape are fine: the IR gives their type.
  sigs.push_back({name, succeeded(sig) ? *sig : ValueSignature{}});
  return success();
}

/// `turbine.name` and `turbine.dims` attributes for one argument/result.
NamedAttrList signatureAttrs(Builder &b, const std::string &name, const ValueSignature &sig,
                             RankedTensorType actualType) {
  NamedAttrList attrs;
  attrs.append("turbine.name", b.getStringAttr(name));
  if (!sig.unsignedDType.empty())
    attrs.append("turbine.dtype", b.getStringAttr(sig.unsignedDType));
  bool dynamic = actualType && !actualType.hasStaticShape();
  if (sig.anyNamedDim || dynamic) {
    SmallVector<Attribute> names;
    for (const std::string &n : sig.dimNames)
      names.push_back(b.getStringAttr(n));
    if (actualType && names.size() != static_cast<size_t>(actualType.getRank()))
      names.assign(actualType.getRank(), b.getStringAttr(""));
    attrs.append("turbine.dims", b.getArrayAttr(names));
  }
  return attrs;
}

/// Compares an imported type with ONNX's inferred type; returns a
/// description of the first disagreement, or "" when they agree.
std::string checkAgainstInferred(MLIRContext &context, RankedTensorType actual,
                                 const onnx::TypeProto_Tensor &inferred,
                                 const std::string &source = "ONNX infers") {
  std::string actualText;
  llvm::raw_string_ostream os(actualText);
  os << actual;
  Type inferredElement = convertValueElementType(context, inferred.elem_type());
  if (inferredElement && inferredElement != actual.getElementType())
    return "has type " + actualText + " but " + source + " element type " +
           std::to_string(inferred.elem_type());
  if (!inferred.has_shape())
    return "";
  if (inferred.shape().dim_size() != actual.getRank())
    return "has type " + actualText + " but " + source + " rank " +
           std::to_string(inferred.shape().dim_size());
  for (int d = 0; d < inferred.shape().dim_size(); ++d) {
    const auto &dim = inferred.shape().dim(d);
    if (dim.has_dim_value() && !actual.isDynamicDim(d) && dim.dim_value() != actual.getDimSize(d))
      return "has type " + actualText + " but " + source + " size " +
             std::to_string(dim.dim_value()) + " for dim " + std::to_string(d);
  }
  return "";
}

/// Records the ONNX element type of node output `out` (see
/// ImportContext::isUnsigned): ONNX's inferred type, else the declared graph
/// output type, else what the handler recorded, else input 0's type.
void recordOutputType(ImportContext &ctx, const onnx::NodeProto &node, const std::string &out,
                      const std::map<std::string, const onnx::TypeProto_Tensor *> &inferredTypes,
                      const std::map<std::string, int> &declaredOutputTypes) {
  auto inferred = inferredTypes.find(out);
  if (inferred != inferredTypes.end() && inferred->second->elem_type() != 0) {
    ctx.setOnnxType(out, inferred->second->elem_type());
    return;
  }
  auto declared = declaredOutputTypes.find(out);
  if (declared != declaredOutputTypes.end()) {
    ctx.setOnnxType(out, declared->second);
    return;
  }
  if (ctx.onnxType(out) || node.input_size() == 0)
    return;
  std::optional<int> t = ctx.onnxType(node.input(0));
  Value value = ctx.lookupValue(out);
  if (t && value &&
      cast<RankedTensorType>(value.getType()).getElementType() ==
          convertValueElementType(ctx.context, *t))
    ctx.setOnnxType(out, *t);
}

/// The newest default-domain opset the linked ONNX library has schemas for.
int newestKnownOpset() {
  static const int newest = [] {
    const auto &map = onnx::OpSchemaRegistry::DomainToVersionRange::Instance().Map();
    auto it = map.find(onnx::ONNX_DOMAIN);
    return it == map.end() ? 0 : it->second.second;
  }();
  return newest;
}

} // namespace

LogicalResult importGraphNodes(ImportContext &ctx, const onnx::GraphProto &graph) {
  OpBuilder &b = ctx.builder;
  const OpRegistry &registry = opRegistry();
  std::map<std::string, const onnx::TypeProto_Tensor *> inferredTypes;
  for (const onnx::ValueInfoProto &info : graph.value_info())
    if (info.type().has_tensor_type())
      inferredTypes[info.name()] = &info.type().tensor_type();
  std::map<std::string, int> declaredOutputTypes;
  for (const onnx::ValueInfoProto &info : graph.output())
    if (info.type().has_tensor_type() && info.type().tensor_type().elem_type() != 0)
      declaredOutputTypes[info.name()] = info.type().tensor_type().elem_type();
  // Declared tensor type of a graph value (for outputs of custom-op nodes).
  auto declaredType = [&](const std::string &name) -> Type {
    for (const auto *infos : {&graph.value_info(), &graph.output()})
      for (const onnx::ValueInfoProto &info : *infos)
        if (info.name() == name) {
          std::string ignored;
          auto sig = convertValueInfo(ctx.context, info, ignored);
          if (succeeded(sig))
            return sig->type;
        }
    return Type();
  };
  for (const onnx::NodeProto &node : graph.node()) {
    ctx.loc = NameLoc::get(b.getStringAttr(node.name().empty() ? node.op_type() : node.name()),
                           FileLineColLoc::get(&ctx.context, ctx.origin, 0, 0));
    if (isCustomDomain(node.domain())) { // a custom op (CustomDomainOps.cpp)
      if (failed(importCustomDomainNode(ctx, node, declaredType)))
        return failure();
      continue;
    }
    if (!node.domain().empty() && node.domain() != "ai.onnx") {
      (void)ctx.unsupported(node);
      return failure();
    }
    const OpHandler *handler = registry.lookup(node.op_type(), ctx.opset);
    if (!handler) {
      (void)ctx.unsupported(node);
      return failure();
    }
    for (const std::string &in : node.input()) {
      if (!in.empty() && !ctx.hasValue(in)) {
        (void)ctx.fail(node, "input '" + in + "' is not produced by any earlier node, "
                             "graph input or initializer");
        return failure();
      }
    }
    if (failed(checkStringOperands(ctx, node)))
      return failure();
    if (!foldImportTimeCondition(ctx, node) && failed((*handler)(ctx, node))) {
      if (ctx.error.empty())
        (void)ctx.fail(node, "conversion failed");
      return failure();
    }
    for (const std::string &out : node.output()) {
      if (!out.empty())
        recordOutputType(ctx, node, out, inferredTypes, declaredOutputTypes);
      if (!out.empty() && !ctx.hasValue(out)) {
        (void)ctx.fail(node, "importer produced no value for output '" + out + "'");
        return failure();
      }
      if (Value v = out.empty() ? Value() : ctx.lookupValue(out)) {
        if (std::string big = overflowingShape(v.getType()); !big.empty()) {
          (void)ctx.fail(node, "output '" + out + "' would be " + big +
                                   ", more elements than fit in 64 bits");
          return failure();
        }
      }
      // Cross-check against ONNX shape inference: a disagreement is an
      // importer bug and is better reported here than miscompiled later.
      auto inferred = inferredTypes.find(out);
      Value value = out.empty() ? Value() : ctx.lookupValue(out);
      bool declared = ctx.declaredValueInfo.count(out) != 0;
      // ONNX's inference is a reference only for the opsets the linked ONNX
      // library knows: for a newer one it applies an older schema (found by
      // the onnx fuzzer: fuzz/corpus/onnx/regress-opset-newer-than-libonnx).
      bool inferenceApplies = declared || ctx.opset <= newestKnownOpset();
      if (value && inferred != inferredTypes.end() && inferenceApplies) {
        std::string mismatch = checkAgainstInferred(
            ctx.context, cast<RankedTensorType>(value.getType()), *inferred->second,
            declared ? "the model's value_info declares" : "ONNX infers");
        if (!mismatch.empty()) {
          (void)ctx.fail(node, (declared ? "" : "internal error: ") + std::string("output '") +
                                   out + "' " + mismatch);
          return failure();
        }
      }
    }
  }

  return success();
}

namespace {

/// Calls `visit` on `graph`, then on every subgraph of its nodes' attributes
/// (If / Loop / Scan bodies), recursively, outer graphs first.
void forEachGraph(const onnx::GraphProto &graph,
                  const std::function<void(const onnx::GraphProto &)> &visit) {
  visit(graph);
  for (const onnx::NodeProto &node : graph.node())
    for (const onnx::AttributeProto &a : node.attribute()) {
      if (a.has_g())
        forEachGraph(a.g(), visit);
      for (const onnx::GraphProto &sub : a.graphs())
        forEachGraph(sub, visit);
    }
}

/// Imports a parsed and checked model.
OwningOpRef<ModuleOp> importModel(MLIRContext &context, onnx::ModelProto &model,
                                  const std::string &origin, const ImportOptions &options,
                                  std::string &error) {
  registerImportedDialects(context);
  const std::string where = " (model '" + origin + "')";

  int opset = -1;
  for (const onnx::OperatorSetIdProto &id : model.opset_import())
    if (id.domain().empty() || id.domain() == "ai.onnx")
      opset = static_cast<int>(id.version());
  if (opset < 0) {
    error = "ONNX model '" + origin + "' imports no default-domain opset";
    return nullptr;
  }

  // The value_info the file declares (inference below adds more).
  std::set<std::string> declaredValueInfo;
  forEachGraph(model.graph(), [&](const onnx::GraphProto &g) {
    for (const onnx::ValueInfoProto &info : g.value_info())
      declaredValueInfo.insert(info.name());
  });

  // libonnx 1.12's shape inference of the convolutions reads out of bounds
  // (a crash) when W's rank differs from X's (found by the onnx fuzzer:
  // fuzz/corpus/onnx/regress-conv*-weight-rank): refused here where both
  // ranks are declared (a W computed by another node is not seen here);
  // likewise MaxUnpool's I, and window attributes that are not positive.
  std::map<std::string, int> declaredRanks;
  forEachGraph(model.graph(), [&](const onnx::GraphProto &g) {
    for (const auto *infos : {&g.input(), &g.value_info()})
      for (const onnx::ValueInfoProto &info : *infos)
        if (info.type().has_tensor_type() && info.type().tensor_type().has_shape())
          declaredRanks[info.name()] = info.type().tensor_type().shape().dim_size();
    for (const onnx::TensorProto &init : g.initializer())
      declaredRanks[init.name()] = init.dims_size();
  });
  std::string rankError;
  forEachGraph(model.graph(), [&](const onnx::GraphProto &g) {
    for (const onnx::NodeProto &node : g.node()) {
      const std::string &op = node.op_type();
      if (!rankError.empty() || !(node.domain().empty() || node.domain() == "ai.onnx"))
        continue;
      // Likewise its LayerNormalization inference dereferences null for a
      // rank-0 X (fuzz/corpus/onnx/regress-layernorm-scalar-x).
      if (op == "LayerNormalization" && node.input_size() > 0)
        if (auto x = declaredRanks.find(node.input(0)); x != declaredRanks.end() && x->second == 0)
          rankError = "invalid ONNX model '" + origin + "': node '" + node.name() +
                      "' (LayerNormalization): X has rank 0 (it needs at least one axis)";
      // Its convolution and pooling inference divides by the strides (a
      // SIGFPE for a stride of 0: fuzz/corpus/onnx/regress-pool-stride-0).
      static const std::set<std::string> windowOps = {
          "AveragePool", "Conv",    "ConvInteger", "ConvTranspose", "LpPool",
          "MaxPool",     "MaxUnpool", "QLinearConv"};
      if (windowOps.count(op))
        for (const onnx::AttributeProto &attr : node.attribute())
          if (rankError.empty() &&
              (attr.name() == "strides" || attr.name() == "dilations" ||
               attr.name() == "kernel_shape") &&
              llvm::any_of(attr.ints(), [](int64_t v) { return v <= 0; }))
            rankError = "invalid ONNX model '" + origin + "': node '" + node.name() + "' (" +
                        op + "): every entry of '" + attr.name() + "' must be positive";
      // MaxUnpool's inference reads dim 1 of I for the channels (out of
      // bounds for an I of rank 1: fuzz/corpus/onnx/regress-maxunpool-indices-rank).
      int w = op == "QLinearConv" ? 3
              : op == "Conv" || op == "ConvInteger" || op == "ConvTranspose" || op == "MaxUnpool"
                  ? 1
                  : -1;
      if (!rankError.empty() || w < 0 || node.input_size() <= w)
        continue;
      auto x = declaredRanks.find(node.input(0)), wr = declaredRanks.find(node.input(w));
      if (x != declaredRanks.end() && wr != declaredRanks.end() && x->second != wr->second)
        rankError = "invalid ONNX model '" + origin + "': node '" + node.name() + "' (" + op +
                    "): " + (op == "MaxUnpool" ? "I" : "W") + " has rank " +
                    std::to_string(wr->second) + ", X has rank " + std::to_string(x->second) +
                    " (they must be equal)";
    }
  });
  // A graph output that is also a graph input must be declared with the same
  // tensor type: ONNX's inference takes either declaration for the value,
  // the import the input's, so the two disagreed (found by the onnx fuzzer:
  // input x float [14], output x uint8 [6]).
  forEachGraph(model.graph(), [&](const onnx::GraphProto &g) {
    std::map<std::string, const onnx::ValueInfoProto *> inputs;
    for (const onnx::ValueInfoProto &info : g.input())
      inputs[info.name()] = &info;
    for (const onnx::ValueInfoProto &out : g.output()) {
      auto in = inputs.find(out.name());
      if (!rankError.empty() || in == inputs.end() || !out.type().has_tensor_type() ||
          !in->second->type().has_tensor_type())
        continue;
      const onnx::TypeProto::Tensor &a = in->second->type().tensor_type(), &o = out.type().tensor_type();
      bool sameShape = !a.has_shape() || !o.has_shape() || a.shape().dim_size() == o.shape().dim_size();
      for (int d = 0; sameShape && a.has_shape() && d < a.shape().dim_size(); ++d)
        if (a.shape().dim(d).has_dim_value() && o.shape().dim(d).has_dim_value() &&
            a.shape().dim(d).dim_value() != o.shape().dim(d).dim_value())
          sameShape = false;
      if ((o.elem_type() != 0 && o.elem_type() != a.elem_type()) || !sameShape)
        rankError = "invalid ONNX model '" + origin + "': value '" + out.name() +
                    "' is a graph input and a graph output declared with different types";
    }
  });
  if (!rankError.empty()) {
    error = rankError;
    return nullptr;
  }

  // ONNX's own shape inference; failures here are not fatal: the importer
  // derives every type from the IR it builds and only needs ranked inputs.
  try {
    onnx::shape_inference::InferShapes(model);
  } catch (const std::exception &) {
  }

  const onnx::GraphProto &graph = model.graph();
  ImportContext ctx(context, origin, opset);
  ctx.declaredValueInfo = std::move(declaredValueInfo);
  OpBuilder &b = ctx.builder;

  // Initializers are constants, not function arguments.
  std::set<std::string> initializerNames;
  for (const onnx::TensorProto &init : graph.initializer()) {
    std::string convertError;
    auto attr = convertTensorProto(context, init, convertError);
    if (failed(attr)) {
      error = "initializer: " + convertError + where;
      return nullptr;
    }
    ctx.setConstant(init.name(), *attr);
    ctx.setOnnxType(init.name(), init.data_type());
    initializerNames.insert(init.name());
  }

  // Graph inputs become function arguments; a sequence input becomes one
  // argument per element ("x[0]", "x[1]", ...), an optional input none
  // (options.absentOptionalInputs) or its element (see flattenGraphInput).
  SmallVector<std::pair<std::string, ValueSignature>> inputs;
  SmallVector<FlatBoundaryValue> inputLayout;
  for (const onnx::ValueInfoProto &info : graph.input()) {
    if (initializerNames.count(info.name()))
      continue;
    std::string sigError;
    auto flat = flattenGraphInput(context, info, options, inputs, sigError);
    if (failed(flat)) {
      error = "graph input: " + sigError + where;
      return nullptr;
    }
    inputLayout.push_back(*flat);
    if (info.type().has_tensor_type())
      ctx.setOnnxType(info.name(), info.type().tensor_type().elem_type());
  }

  OwningOpRef<ModuleOp> module = ModuleOp::create(ctx.loc);
  b.setInsertionPointToEnd(module->getBody());
  SmallVector<Type> argTypes;
  for (auto &[name, sig] : inputs)
    argTypes.push_back(sig.type);
  auto func = func::FuncOp::create(b, ctx.loc, options.entryName,
                                   b.getFunctionType(argTypes, {}));
  Block *entry = func.addEntryBlock();
  b.setInsertionPointToStart(entry);
  for (auto [i, input] : llvm::enumerate(inputs))
    func.setArgAttrs(i, signatureAttrs(b, input.first, input.second, input.second.type));
  for (const FlatBoundaryValue &flat : inputLayout)
    bindGraphInput(ctx, flat, entry->getArguments());

  if (failed(importGraphNodes(ctx, graph))) {
    error = ctx.error + where;
    return nullptr;
  }

  ctx.loc = FileLineColLoc::get(&context, origin, 0, 0);
  SmallVector<Value> results;
  SmallVector<std::pair<std::string, ValueSignature>> resultSigs;
  onnx::NodeProto outputNode;
  outputNode.set_name("<graph outputs>");
  outputNode.set_op_type("Return");
  for (const onnx::ValueInfoProto &info : graph.output()) {
    if (!ctx.hasValue(info.name())) {
      error = "graph output '" + info.name() + "' is never produced" + where;
      return nullptr;
    }
    if (failed(flattenGraphOutput(ctx, outputNode, info, results, resultSigs))) {
      error = ctx.error + where;
      return nullptr;
    }
  }
  func::ReturnOp::create(b, ctx.loc, results);
  SmallVector<Type> resultTypes;
  for (Value v : results)
    resultTypes.push_back(v.getType());
  func.setType(b.getFunctionType(argTypes, resultTypes));
  for (auto [i, nameAndSig] : llvm::enumerate(resultSigs))
    func.setResultAttrs(i, signatureAttrs(b, nameAndSig.first, nameAndSig.second,
                                          cast<RankedTensorType>(resultTypes[i])));

  // A module that does not verify is an importer bug; report it as an error.
  std::string diagnostics;
  {
    ScopedDiagnosticHandler handler(&context, [&](Diagnostic &diag) {
      llvm::raw_string_ostream os(diagnostics);
      os << diag.getLocation() << ": " << diag.str() << "\n";
      return success();
    });
    if (failed(verify(*module))) {
      error = "internal error: imported IR does not verify" + where + ": " + diagnostics;
      return nullptr;
    }
  }
  return module;
}

} // namespace

void registerImportedDialects(MLIRContext &context) {
  context.loadDialect<func::FuncDialect, arith::ArithDialect, math::MathDialect,
                      tensor::TensorDialect, linalg::LinalgDialect, scf::SCFDialect,
                      compiler::TurbineDialect>();
}

namespace {

OwningOpRef<ModuleOp> parseAndImport(MLIRContext &context, const std::string &bytes,
                                     const std::string &origin, const ImportOptions &options,
                                     std::string &error) {
  onnx::ModelProto model;
  if (bytes.empty()) {
    error = "failed to parse ONNX model '" + origin + "': the input is empty";
    return nullptr;
  }
  if (!model.ParseFromString(bytes)) {
    error = "failed to parse ONNX model '" + origin +
            "': not a valid ModelProto (or subgraphs nested deeper than protobuf's limit of "
            "100 nested messages, about 33 levels of If / Loop)";
    return nullptr;
  }
  if (!model.has_graph()) {
    error = "failed to parse ONNX model '" + origin + "': the model has no graph";
    return nullptr;
  }
  // Report unsupported ops before the checker, whose message for an unknown
  // op would be less precise.
  int opset = -1;
  for (const onnx::OperatorSetIdProto &id : model.opset_import())
    if (id.domain().empty() || id.domain() == "ai.onnx")
      opset = static_cast<int>(id.version());
  for (const onnx::NodeProto &node : model.graph().node()) {
    if (isCustomDomain(node.domain()))
      continue; // a custom op, resolved later (CustomDomainOps.cpp)
    bool defaultDomain = node.domain().empty() || node.domain() == "ai.onnx";
    if (!defaultDomain || !opRegistry().lookup(node.op_type(), opset)) {
      int64_t domainOpset = opset;
      if (!defaultDomain) {
        domainOpset = -1;
        for (const onnx::OperatorSetIdProto &id : model.opset_import())
          if (id.domain() == node.domain())
            domainOpset = id.version();
      }
      error = "unsupported ONNX op '" + node.op_type() + "' (node '" + node.name() +
              "', opset " + std::to_string(domainOpset) + ", domain '" + node.domain() +
              "') (model '" + origin + "')";
      return nullptr;
    }
  }
  try {
    onnx::checker::check_model(model);
  } catch (const std::exception &e) {
    error = "invalid ONNX model '" + origin + "': " + e.what();
    return nullptr;
  }
  try {
    return importModel(context, model, origin, options, error);
  } catch (const std::exception &e) {
    error = "failed to import ONNX model '" + origin + "': " + e.what();
    return nullptr;
  }
}

} // namespace

Result<OwningOpRef<ModuleOp>> importOnnxBytes(MLIRContext &context, const std::string &bytes,
                                              const std::string &origin,
                                              const ImportOptions &options) {
  std::string error;
  OwningOpRef<ModuleOp> module = parseAndImport(context, bytes, origin, options, error);
  if (!module)
    return Status::error(error);
  return module;
}

Result<OwningOpRef<ModuleOp>> importOnnxFile(MLIRContext &context, const std::string &path,
                                             const ImportOptions &options) {
  std::ifstream file(path, std::ios::binary);
  if (!file)
    return Status::error("failed to parse ONNX model '" + path + "': cannot open the file");
  std::ostringstream contents;
  contents << file.rdbuf();
  return importOnnxBytes(context, contents.str(), path, options);
}

namespace {

class OnnxSessionImporter final : public compiler::Importer {
public:
  explicit OnnxSessionImporter(ImportOptions options) : options_(std::move(options)) {}
  std::string_view format() const override { return "onnx"; }
  std::string_view fileKinds() const override { return ".onnx"; }
  bool recognizes(const std::string &path, std::string_view) const override {
    return llvm::StringRef(path).ends_with(".onnx");
  }
  Result<OwningOpRef<ModuleOp>> import(MLIRContext &context,
                                       const compiler::Source &source) const override {
    if (source.path.empty())
      return importOnnxBytes(context, source.bytes, source.origin, options_);
    return importOnnxFile(context, source.path, options_);
  }

private:
  ImportOptions options_;
};

} // namespace

std::unique_ptr<compiler::Importer> createOnnxImporter(ImportOptions options) {
  return std::make_unique<OnnxSessionImporter>(std::move(options));
}

} // namespace turbine::onnx_frontend
