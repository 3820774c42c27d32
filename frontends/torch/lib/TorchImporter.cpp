//===- TorchImporter.cpp - TorchScript graph walk, signature, errors ------===//
//
// Drives one import: loads the frozen graph (TorchScriptLoader.cpp), builds
// `func.func @main` from the user's input specs (dynamic dims become `?`),
// walks the graph node by node through the op registry, folds prim::If whose
// condition is known and unrolls prim::Loop whose trip count and condition
// are known (anything else is an error naming the node), and returns the
// verified module. Also parses the `--input-shape` / `--dynamic-dim` specs.
//===----------------------------------------------------------------------===//
#include "turbine/frontends/torch/TorchImporter.h"

#include "ImportContext.h"

#include "mlir/IR/Verifier.h"
#include "llvm/Support/Path.h"

#include <fstream>

using namespace mlir;

namespace turbine::torch_frontend {
namespace {

const OpRegistry &opRegistry() {
  static const OpRegistry registry = [] {
    OpRegistry r;
    registerPrimOps(r);
    registerElementwiseOps(r);
    registerMatmulOps(r);
    registerAttentionOps(r);
    registerConvolutionOps(r);
    registerPoolingOps(r);
    registerEmbeddingOps(r);
    registerShapeOps(r);
    registerNormalizationOps(r);
    registerRecurrentOps(r);
    registerTurbineOps(r);
    return r;
  }();
  return registry;
}

/// `x.1` -> `x` (TorchScript's uniquing suffix).
std::string argumentName(const std::string &debugName) {
  size_t dot = debugName.rfind('.');
  if (dot != std::string::npos && dot + 1 < debugName.size() &&
      debugName.find_first_not_of("0123456789", dot + 1) == std::string::npos)
    return debugName.substr(0, dot);
  return debugName;
}

Location nodeLocation(MLIRContext &context, const TorchNode &node, const std::string &origin) {
  Location file = FileLineColLoc::get(&context, origin, 0, 0);
  // location is "file:line:col"
  size_t c2 = node.location.rfind(':');
  size_t c1 = c2 == std::string::npos || c2 == 0 ? std::string::npos : node.location.rfind(':', c2 - 1);
  if (c1 != std::string::npos) {
    unsigned line = std::strtoul(node.location.c_str() + c1 + 1, nullptr, 10);
    unsigned col = std::strtoul(node.location.c_str() + c2 + 1, nullptr, 10);
    file = FileLineColLoc::get(&context, node.location.substr(0, c1), line, col);
  }
  return NameLoc::get(StringAttr::get(&context, node.kind), file);
}

bool isInplaceKind(const std::string &kind) {
  return kind.size() > 1 && kind.back() == '_' && kind[kind.size() - 2] != '_';
}

class GraphImporter {
public:
  GraphImporter(ImportContext &ctx) : ctx(ctx) {}

  LogicalResult importBlock(const TorchBlock &block, ArrayRef<TValue> inputs,
                            std::vector<TValue> &outputs) {
    for (auto [id, v] : llvm::zip(block.inputs, inputs))
      ctx.set(id, v);
    for (const TorchNode &node : block.nodes)
      if (failed(importNode(node)))
        return failure();
    outputs.clear();
    for (int id : block.outputs)
      outputs.push_back(ctx.value(id));
    return success();
  }

private:
  LogicalResult importNode(const TorchNode &node) {
    ctx.loc = nodeLocation(ctx.context, node, ctx.origin);
    if (node.kind == "prim::If")
      return importIf(node);
    if (node.kind == "prim::Loop")
      return importLoop(node);
    const OpHandler *handler = opRegistry().lookup(node.kind);
    if (!handler && ctx.options && ctx.options->customOpName) {
      std::string customOp = ctx.options->customOpName(node.kind);
      if (!customOp.empty())
        return importCustomOpNode(ctx, node, customOp);
    }
    if (!handler)
      return ctx.unsupported(node);
    if (failed((*handler)(ctx, node))) {
      if (ctx.error.empty())
        (void)ctx.fail(node, "conversion failed");
      return failure();
    }
    for (int out : node.outputs)
      if (ctx.value(out).kind == TValue::Kind::Unset && node.kind != "prim::Uninitialized")
        return ctx.fail(node, "internal error: importer produced no value for %" +
                                  ctx.graph.values[out].debugName);
    // An in-place op that mutation removal left in place: later readers of
    // the mutated input see the result.
    if (isInplaceKind(node.kind) && !node.inputs.empty() && !node.outputs.empty() &&
        ctx.value(node.outputs[0]).isTensor())
      ctx.set(node.inputs[0], ctx.value(node.outputs[0]));
    return success();
  }

  LogicalResult importIf(const TorchNode &node) {
    TValue &cond = ctx.input(node, 0);
    bool known = cond.kind == TValue::Kind::Bool ||
                 (cond.kind == TValue::Kind::Int && cond.intValue.isConstant());
    if (!known || node.blocks.size() != 2)
      return ctx.fail(node, "the condition is not known at import time (it depends on input "
                            "data or a dynamic dim); only prim::If with a condition that is "
                            "constant after freezing is supported");
    bool taken = cond.kind == TValue::Kind::Bool ? cond.boolValue : cond.intValue.constant != 0;
    std::vector<TValue> outs;
    if (failed(importBlock(node.blocks[taken ? 0 : 1], {}, outs)))
      return failure();
    for (auto [id, v] : llvm::zip(node.outputs, outs))
      ctx.set(id, v);
    return success();
  }

  LogicalResult importLoop(const TorchNode &node) {
    constexpr int64_t kMaxUnroll = 4096;
    TValue &trip = ctx.input(node, 0);
    TValue &cond = ctx.input(node, 1);
    if (trip.kind != TValue::Kind::Int || !trip.intValue.isConstant() ||
        cond.kind != TValue::Kind::Bool || node.blocks.size() != 1)
      return ctx.fail(node, "the trip count or condition is not known at import time; only "
                            "prim::Loop with a constant trip count is supported (it is unrolled)");
    int64_t maxTrips = trip.intValue.constant;
    bool running = cond.boolValue;
    std::vector<TValue> carried;
    for (size_t i = 2; i < node.inputs.size(); ++i)
      carried.push_back(ctx.input(node, i));
    const TorchBlock &body = node.blocks[0];
    for (int64_t i = 0; running && i < maxTrips; ++i) {
      if (i >= kMaxUnroll)
        return ctx.fail(node, "loop runs more than " + std::to_string(kMaxUnroll) +
                                  " iterations; too many to unroll");
      std::vector<TValue> inputs{TValue::ofInt(i)};
      inputs.insert(inputs.end(), carried.begin(), carried.end());
      std::vector<TValue> outs;
      if (failed(importBlock(body, inputs, outs)))
        return failure();
      ctx.loc = nodeLocation(ctx.context, node, ctx.origin);
      if (outs.empty() || outs[0].kind != TValue::Kind::Bool)
        return ctx.fail(node, "the loop condition is not known at import time");
      running = outs[0].boolValue;
      carried.assign(outs.begin() + 1, outs.end());
    }
    for (auto [id, v] : llvm::zip(node.outputs, carried))
      ctx.set(id, v);
    return success();
  }

  ImportContext &ctx;
};

Type dtypeFromName(MLIRContext &context, const std::string &name) {
  static const std::map<std::string, TorchDType> names = {
      {"f32", TorchDType::f32}, {"f64", TorchDType::f64}, {"f16", TorchDType::f16},
      {"bf16", TorchDType::bf16}, {"i64", TorchDType::i64}, {"i32", TorchDType::i32},
      {"i16", TorchDType::i16}, {"i8", TorchDType::i8}, {"u8", TorchDType::u8},
      {"i1", TorchDType::i1}};
  auto it = names.find(name);
  return it == names.end() ? nullptr : elementTypeOf(context, it->second);
}

/// Flattens lists of tensors (a returned tuple/list) into tensor values;
/// None outputs are dropped.
LogicalResult collectOutputs(ImportContext &ctx, const TValue &v, SmallVector<Value> &out,
                             const std::string &name) {
  if (v.kind == TValue::Kind::List) {
    for (const TValue &e : v.elements)
      if (failed(collectOutputs(ctx, e, out, name)))
        return failure();
    return success();
  }
  if (v.kind == TValue::Kind::Tensor) {
    Value t = v.tensor ? v.tensor : ctx.materializeConstant(*v.constant);
    if (!t) {
      ctx.error = "graph output %" + name + " is a constant of an unsupported dtype";
      return failure();
    }
    out.push_back(t);
    return success();
  }
  if (v.isNone()) // e.g. GoogLeNet's aux outputs in eval mode: dropped
    return success();
  if (v.isScalar()) {
    Type type = v.kind == TValue::Kind::Float ? (Type)ctx.builder.getF32Type()
                                              : (Type)ctx.builder.getI64Type();
    Value s = ctx.scalarValue(v, type);
    out.push_back(tensor::FromElementsOp::create(ctx.builder, ctx.loc,
                                                 RankedTensorType::get({}, type), ValueRange{s}));
    return success();
  }
  ctx.error = "graph output %" + name + " is not a tensor, number, or list/tuple of them";
  return failure();
}

OwningOpRef<ModuleOp> importGraph(MLIRContext &context, const TorchGraph &graph,
                                  const std::string &origin, const ImportOptions &options,
                                  std::string &error) {
  registerImportedDialects(context);
  ImportContext ctx(context, graph, origin);
  ctx.options = &options;
  OpBuilder &b = ctx.builder;
  const std::vector<int> &args = graph.body.inputs;

  // Signature: one spec per forward argument.
  std::vector<std::string> names;
  std::string nameList;
  for (int id : args) {
    names.push_back(argumentName(graph.values[id].debugName));
    nameList += (nameList.empty() ? "" : ", ") + names.back() + ": " + graph.values[id].typeName;
  }
  // Trailing inputs that default to None may be left out (bound to None).
  size_t required = args.size();
  while (required > options.inputs.size() && required > 0 &&
         required <= graph.inputDefaultsToNone.size() && graph.inputDefaultsToNone[required - 1])
    --required;
  if (options.inputs.size() != required) {
    error = origin + ": forward takes " + std::to_string(args.size()) + " input(s) (" + nameList +
            ") but " + std::to_string(options.inputs.size()) +
            " input shape(s) were given; give one input shape per input, e.g. "
            "1x3x224x224xf32";
    return nullptr;
  }
  std::vector<std::vector<bool>> dynamic(required);
  for (size_t i = 0; i < required; ++i)
    dynamic[i].assign(options.inputs[i].shape.size(), false);
  for (const DynamicDim &d : options.dynamicDims) {
    int64_t index = -1;
    if (!d.input.empty() && d.input.find_first_not_of("0123456789") == std::string::npos)
      index = std::stoll(d.input);
    else
      for (size_t i = 0; i < names.size(); ++i)
        if (names[i] == d.input)
          index = i;
    if (index < 0 || index >= (int64_t)required) {
      error = "dynamic dim " + d.input + ":" + std::to_string(d.dim) + " names input '" +
              d.input + "', but forward's inputs are (" +
              nameList + ")";
      return nullptr;
    }
    int64_t rank = options.inputs[index].shape.size();
    auto dimIndex = normalizeDim(d.dim, rank);
    if (!dimIndex || rank == 0) {
      error = "dynamic dim " + d.input + ":" + std::to_string(d.dim) + " is out of range for "
              "an input of rank " + std::to_string(rank);
      return nullptr;
    }
    dynamic[index][*dimIndex] = true;
  }

  SmallVector<Type> argTypes;
  for (size_t i = 0; i < required; ++i) {
    const TorchValueInfo &info = graph.values[args[i]];
    if (info.kind != TorchTypeKind::Tensor) {
      error = origin + ": forward input '" + names[i] + "' has type " + info.typeName +
              "; only tensor inputs are supported";
      return nullptr;
    }
    Type et = dtypeFromName(context, options.inputs[i].dtype);
    if (!et) {
      error = "unsupported dtype '" + options.inputs[i].dtype + "' for input '" + names[i] + "'";
      return nullptr;
    }
    SmallVector<int64_t> shape;
    for (size_t d = 0; d < options.inputs[i].shape.size(); ++d)
      shape.push_back(dynamic[i][d] ? ShapedType::kDynamic : options.inputs[i].shape[d]);
    argTypes.push_back(RankedTensorType::get(shape, et));
  }

  OwningOpRef<ModuleOp> module = ModuleOp::create(ctx.loc);
  b.setInsertionPointToEnd(module->getBody());
  auto func = func::FuncOp::create(b, ctx.loc, options.entryName, b.getFunctionType(argTypes, {}));
  Block *entry = func.addEntryBlock();
  b.setInsertionPointToStart(entry);
  std::vector<TValue> inputValues;
  for (size_t i = 0; i < required; ++i) {
    inputValues.push_back(TValue::ofTensor(entry->getArgument(i)));
    NamedAttrList attrs;
    attrs.append("turbine.name", b.getStringAttr(names[i]));
    if (options.inputs[i].dtype == "u8")
      attrs.append("turbine.dtype", b.getStringAttr("u8"));
    if (llvm::is_contained(dynamic[i], true)) {
      SmallVector<Attribute> dimNames;
      for (size_t d = 0; d < dynamic[i].size(); ++d)
        dimNames.push_back(b.getStringAttr(dynamic[i][d] ? names[i] + "_" + std::to_string(d) : ""));
      attrs.append("turbine.dims", b.getArrayAttr(dimNames));
    }
    func.setArgAttrs(i, attrs);
  }
  for (size_t i = required; i < args.size(); ++i)
    inputValues.push_back(TValue::none());

  std::string where = "\n  in TorchScript file '" + origin + "'";
  GraphImporter importer(ctx);
  std::vector<TValue> outs;
  if (failed(importer.importBlock(graph.body, inputValues, outs))) {
    error = (ctx.error.empty() ? "import failed" : ctx.error) + where;
    return nullptr;
  }
  ctx.loc = FileLineColLoc::get(&context, origin, 0, 0);
  SmallVector<Value> results;
  for (auto [id, v] : llvm::zip(graph.body.outputs, outs))
    if (failed(collectOutputs(ctx, v, results, graph.values[id].debugName))) {
      error = ctx.error + where;
      return nullptr;
    }
  func::ReturnOp::create(b, ctx.loc, results);
  SmallVector<Type> resultTypes;
  for (Value v : results)
    resultTypes.push_back(v.getType());
  func.setType(b.getFunctionType(argTypes, resultTypes));
  for (size_t i = 0; i < results.size(); ++i) {
    NamedAttrList attrs;
    attrs.append("turbine.name", b.getStringAttr(results.size() == 1 ? std::string("output")
                                                                     : "output_" + std::to_string(i)));
    auto type = cast<RankedTensorType>(resultTypes[i]);
    if (!type.hasStaticShape()) {
      // A dynamic result dim that is an input's dynamic dim gets its name.
      SmallVector<Attribute> dimNames;
      b.setInsertionPoint(entry->getTerminator());
      for (int64_t d = 0; d < type.getRank(); ++d) {
        std::string dimName;
        if (type.isDynamicDim(d))
          if (auto v = dyn_cast<Value>(ctx.dim(results[i], d)))
            if (auto dimOp = v.getDefiningOp<tensor::DimOp>())
              if (auto arg = dyn_cast<BlockArgument>(dimOp.getSource()))
                if (auto index = dimOp.getConstantIndex())
                  dimName = names[arg.getArgNumber()] + "_" + std::to_string(*index);
        dimNames.push_back(b.getStringAttr(dimName));
      }
      attrs.append("turbine.dims", b.getArrayAttr(dimNames));
    }
    func.setResultAttrs(i, attrs);
  }

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

Result<InputSpec> parseInputSpec(const std::string &text) {
  InputSpec out;
  llvm::SmallVector<llvm::StringRef> parts;
  llvm::StringRef(text).split(parts, 'x');
  if (text.empty() || parts.empty())
    return Status::error("malformed input shape '" + text + "': expected e.g. 1x3x224x224xf32");
  for (size_t i = 0; i + 1 < parts.size(); ++i) {
    int64_t d;
    if (parts[i].getAsInteger(10, d) || d < 0)
      return Status::error("malformed input shape '" + text + "': '" + parts[i].str() +
                           "' is not a dim size (expected e.g. 1x3x224x224xf32)");
    out.shape.push_back(d);
  }
  out.dtype = parts.back().str();
  static const char *known[] = {"f32", "f64", "f16", "bf16", "i64", "i32", "i16", "i8", "u8", "i1"};
  if (!llvm::is_contained(known, out.dtype))
    return Status::error("malformed input shape '" + text + "': unknown element type '" +
                         out.dtype + "' (f32 f64 f16 bf16 i64 i32 i16 i8 u8 i1)");
  return out;
}

Result<DynamicDim> parseDynamicDim(const std::string &text) {
  DynamicDim out;
  size_t colon = text.rfind(':');
  llvm::StringRef dimText = colon == std::string::npos ? "" : llvm::StringRef(text).substr(colon + 1);
  if (colon == std::string::npos || colon == 0 || dimText.getAsInteger(10, out.dim))
    return Status::error("malformed dynamic dim '" + text +
                         "': expected <input index or name>:<dim>, e.g. 0:0");
  out.input = text.substr(0, colon);
  return out;
}

namespace {

bool hasTorchScriptExtension(const std::string &path) {
  llvm::StringRef ext = llvm::sys::path::extension(path);
  return ext == ".pt" || ext == ".pth" || ext == ".torchscript";
}

/// A zip archive (TorchScript saves one) starts with "PK\3\4".
bool isZip(std::string_view head) { return head.substr(0, 4) == std::string_view("PK\3\4", 4); }

} // namespace

bool looksLikeTorchScriptFile(const std::string &path) {
  if (hasTorchScriptExtension(path))
    return true;
  std::ifstream in(path, std::ios::binary);
  char magic[4] = {};
  in.read(magic, 4);
  return in.gcount() == 4 && isZip(std::string_view(magic, 4));
}

void registerImportedDialects(MLIRContext &context) {
  context.loadDialect<arith::ArithDialect, func::FuncDialect, linalg::LinalgDialect,
                      math::MathDialect, tensor::TensorDialect>();
}

Result<OwningOpRef<ModuleOp>> importTorchScriptFile(MLIRContext &context, const std::string &path,
                                                    const ImportOptions &options) {
  TorchGraph graph;
  std::string error;
  if (!loadTorchScriptGraph(path, graph, error))
    return Status::error(error);
  OwningOpRef<ModuleOp> module = importGraph(context, graph, path, options, error);
  if (!module)
    return Status::error(error);
  return module;
}

Result<OwningOpRef<ModuleOp>> importTorchScriptBytes(MLIRContext &context,
                                                     const std::string &bytes,
                                                     const std::string &origin,
                                                     const ImportOptions &options) {
  TorchGraph graph;
  std::string error;
  if (!loadTorchScriptGraphFromBytes(bytes, origin, graph, error))
    return Status::error(error);
  OwningOpRef<ModuleOp> module = importGraph(context, graph, origin, options, error);
  if (!module)
    return Status::error(error);
  return module;
}

namespace {

class TorchScriptSessionImporter final : public compiler::Importer {
public:
  explicit TorchScriptSessionImporter(ImportOptions options) : options_(std::move(options)) {}
  std::string_view format() const override { return "torchscript"; }
  std::string_view fileKinds() const override { return ".pt (TorchScript)"; }
  bool recognizes(const std::string &path, std::string_view head) const override {
    llvm::StringRef ext = llvm::sys::path::extension(path);
    return hasTorchScriptExtension(path) ||
           (ext != ".onnx" && ext != ".mlir" && ext != ".mlirbc" && isZip(head));
  }
  Result<OwningOpRef<ModuleOp>> import(MLIRContext &context,
                                       const compiler::Source &source) const override {
    if (source.path.empty())
      return importTorchScriptBytes(context, source.bytes, source.origin, options_);
    return importTorchScriptFile(context, source.path, options_);
  }

private:
  ImportOptions options_;
};

} // namespace

std::unique_ptr<compiler::Importer> createTorchScriptImporter(ImportOptions options) {
  return std::make_unique<TorchScriptSessionImporter>(std::move(options));
}

} // namespace turbine::torch_frontend
