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

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"

#include "onnx/checker.h"
#include "onnx/shape_inference/implementation.h"

#include <exception>
#include <fstream>
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
    registerLinalgOps(r);
    registerShapeOps(r);
    registerReductionOps(r);
    registerNormalizationOps(r);
    registerLossOps(r);
    registerRecurrentOps(r);
    registerQuantizationOps(r);

    registerResizeOps(r);
    registerSortOps(r);
    registerSignalOps(r);
    registerDetectionOps(r);
    registerTextOps(r);
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

FailureOr<ValueSignature> convertValueInfo(MLIRContext &context,
                                           const onnx::ValueInfoProto &info,
                                           std::string &error) {
  if (!info.type().has_tensor_type()) {
    error = "graph value '" + info.name() + "' is not a tensor";
    return failure();
  }
  const onnx::TypeProto_Tensor &tensorType = info.type().tensor_type();
  Type elementType = convertElementType(context, tensorType.elem_type());
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
  return sig;
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
                                 const onnx::TypeProto_Tensor &inferred) {
  std::string actualText;
  llvm::raw_string_ostream os(actualText);
  os << actual;
  Type inferredElement = convertElementType(context, inferred.elem_type());
  if (inferredElement && inferredElement != actual.getElementType())
    return "has type " + actualText + " but ONNX infers element type " +
           std::to_string(inferred.elem_type());
  if (!inferred.has_shape())
    return "";
  if (inferred.shape().dim_size() != actual.getRank())
    return "has type " + actualText + " but ONNX infers rank " +
           std::to_string(inferred.shape().dim_size());
  for (int d = 0; d < inferred.shape().dim_size(); ++d) {
    const auto &dim = inferred.shape().dim(d);
    if (dim.has_dim_value() && !actual.isDynamicDim(d) && dim.dim_value() != actual.getDimSize(d))
      return "has type " + actualText + " but ONNX infers size " +
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
          convertElementType(ctx.context, *t))
    ctx.setOnnxType(out, *t);
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

  // ONNX's own shape inference; failures here are not fatal: the importer
  // derives every type from the IR it builds and only needs ranked inputs.
  try {
    onnx::shape_inference::InferShapes(model);
  } catch (const std::exception &) {
  }

  const onnx::GraphProto &graph = model.graph();
  std::map<std::string, const onnx::TypeProto_Tensor *> inferredTypes;
  for (const onnx::ValueInfoProto &info : graph.value_info())
    if (info.type().has_tensor_type())
      inferredTypes[info.name()] = &info.type().tensor_type();
  ImportContext ctx(context, origin, opset);
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

  SmallVector<std::pair<std::string, ValueSignature>> inputs;
  for (const onnx::ValueInfoProto &info : graph.input()) {
    if (initializerNames.count(info.name()))
      continue;
    std::string sigError;
    auto sig = convertValueInfo(context, info, sigError);
    if (failed(sig)) {
      error = "graph input: " + sigError + where;
      return nullptr;
    }
    inputs.push_back({info.name(), *sig});
    ctx.setOnnxType(info.name(), info.type().tensor_type().elem_type());
  }
  std::map<std::string, int> declaredOutputTypes;
  for (const onnx::ValueInfoProto &info : graph.output())
    if (info.type().has_tensor_type() && info.type().tensor_type().elem_type() != 0)
      declaredOutputTypes[info.name()] = info.type().tensor_type().elem_type();
  SmallVector<ValueSignature> outputSigs;
  for (const onnx::ValueInfoProto &info : graph.output()) {
    std::string sigError;
    auto sig = convertValueInfo(context, info, sigError);
    // Outputs without declared shape are fine: the IR gives their type.
    outputSigs.push_back(succeeded(sig) ? *sig : ValueSignature{});
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
  for (auto [i, input] : llvm::enumerate(inputs)) {
    ctx.setValue(input.first, entry->getArgument(i));
    func.setArgAttrs(i, signatureAttrs(b, input.first, input.second, input.second.type));
  }

  // Declared tensor type of a graph value (for outputs of custom-op nodes).
  auto declaredType = [&](const std::string &name) -> Type {
    for (const auto *infos : {&graph.value_info(), &graph.output()})
      for (const onnx::ValueInfoProto &info : *infos)
        if (info.name() == name) {
          std::string ignored;
          auto sig = convertValueInfo(context, info, ignored);
          if (succeeded(sig))
            return sig->type;
        }
    return Type();
  };
  const OpRegistry &registry = opRegistry();
  for (const onnx::NodeProto &node : graph.node()) {
    ctx.loc = NameLoc::get(b.getStringAttr(node.name().empty() ? node.op_type() : node.name()),
                           FileLineColLoc::get(&context, origin, 0, 0));
    if (isCustomDomain(node.domain())) { // a custom op (CustomDomainOps.cpp)
      if (failed(importCustomDomainNode(ctx, node, declaredType))) {
        error = ctx.error + where;
        return nullptr;
      }
      continue;
    }
    if (!node.domain().empty() && node.domain() != "ai.onnx") {
      (void)ctx.unsupported(node);
      error = ctx.error + where;
      return nullptr;
    }
    const OpHandler *handler = registry.lookup(node.op_type(), opset);
    if (!handler) {
      (void)ctx.unsupported(node);
      error = ctx.error + where;
      return nullptr;
    }
    for (const std::string &in : node.input()) {
      if (!in.empty() && !ctx.hasValue(in)) {
        (void)ctx.fail(node, "input '" + in + "' is not produced by any earlier node, "
                             "graph input or initializer");
        error = ctx.error + where;
        return nullptr;
      }
    }
    if (failed((*handler)(ctx, node))) {
      if (ctx.error.empty())
        (void)ctx.fail(node, "conversion failed");
      error = ctx.error + where;
      return nullptr;
    }
    for (const std::string &out : node.output()) {
      if (!out.empty())
        recordOutputType(ctx, node, out, inferredTypes, declaredOutputTypes);
      if (!out.empty() && !ctx.hasValue(out)) {
        (void)ctx.fail(node, "importer produced no value for output '" + out + "'");
        error = ctx.error + where;
        return nullptr;
      }
      // Cross-check against ONNX shape inference: a disagreement is an
      // importer bug and is better reported here than miscompiled later.
      auto inferred = inferredTypes.find(out);
      Value value = out.empty() ? Value() : ctx.lookupValue(out);
      if (value && inferred != inferredTypes.end()) {
        std::string mismatch = checkAgainstInferred(context, cast<RankedTensorType>(value.getType()),
                                                    *inferred->second);
        if (!mismatch.empty()) {
          (void)ctx.fail(node, "internal error: output '" + out + "' " + mismatch);
          error = ctx.error + where;
          return nullptr;
        }
      }
    }
  }

  ctx.loc = FileLineColLoc::get(&context, origin, 0, 0);
  SmallVector<Value> results;
  onnx::NodeProto outputNode;
  outputNode.set_name("<graph outputs>");
  outputNode.set_op_type("Return");
  for (const onnx::ValueInfoProto &info : graph.output()) {
    auto value = ctx.getTensor(outputNode, info.name());
    if (failed(value)) {
      error = "graph output '" + info.name() + "' is never produced" + where;
      return nullptr;
    }
    results.push_back(*value);
  }
  func::ReturnOp::create(b, ctx.loc, results);
  SmallVector<Type> resultTypes;
  for (Value v : results)
    resultTypes.push_back(v.getType());
  func.setType(b.getFunctionType(argTypes, resultTypes));
  for (auto [i, info] : llvm::enumerate(graph.output()))
    func.setResultAttrs(i, signatureAttrs(b, info.name(), outputSigs[i],
                                          cast<RankedTensorType>(resultTypes[i])));

  // A module that does not verify is an importer bug; report it as an error.
  std::string diagnostics;
  {
    ScopedDiagnosticHandler handler(&context, [&](Diagnostic &diag) {
      llvm::raw_string_ostream os(diagnostics);
      os << diag.str() << "\n";
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
                      tensor::TensorDialect, linalg::LinalgDialect>();
}

OwningOpRef<ModuleOp> importOnnxBytes(MLIRContext &context, const std::string &bytes,
                                      const std::string &origin, const ImportOptions &options,
                                      std::string &error) {
  onnx::ModelProto model;
  if (bytes.empty()) {
    error = "failed to parse ONNX model '" + origin + "': the input is empty";
    return nullptr;
  }
  if (!model.ParseFromString(bytes)) {
    error = "failed to parse ONNX model '" + origin + "': not a valid ModelProto";
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

OwningOpRef<ModuleOp> importOnnxFile(MLIRContext &context, const std::string &path,
                                     const ImportOptions &options, std::string &error) {
  std::ifstream file(path, std::ios::binary);
  if (!file) {
    error = "failed to parse ONNX model '" + path + "': cannot open the file";
    return nullptr;
  }
  std::ostringstream contents;
  contents << file.rdbuf();
  return importOnnxBytes(context, contents.str(), path, options, error);
}

} // namespace turbine::onnx_frontend
