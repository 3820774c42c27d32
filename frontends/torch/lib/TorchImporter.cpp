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

#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/MLProgram/IR/MLProgram.h"

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

} // namespace

bool isInplaceKind(const std::string &kind) {
  return kind.size() > 1 && kind.back() == '_' && kind[kind.size() - 2] != '_';
}

namespace {

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
    if (ctx.state) { // module state (StatefulImport.cpp)
      if (node.kind == "prim::GetAttr")
        return importStateAttribute(ctx, node);
      if (failed(refreshStateViews(ctx, node)))
        return failure();
      if (writesState(ctx, node))
        return importStateWrite(ctx, node);
    }
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
    if (ctx.state)
      recordStateView(ctx, node);
    return success();
  }

  /// True when `block` raises (a prim::RaiseException among its nodes).
  static const TorchNode *raiseIn(const TorchBlock &block) {
    for (const TorchNode &n : block.nodes)
      if (n.kind == "prim::RaiseException")
        return &n;
    return nullptr;
  }

  /// prim::If on a run-time bool: a branch that raises becomes a cf.assert
  /// that it is not taken (the message names both source lines) and the
  /// other branch is imported; otherwise both branches are imported and
  /// their number/bool outputs selected (`a or b` as TorchScript spells
  /// it). Branches must then be free of tensor work.
  LogicalResult importRuntimeIf(const TorchNode &node, Value cond) {
    OpBuilder &b = ctx.builder;
    const TorchNode *raise0 = raiseIn(node.blocks[0]), *raise1 = raiseIn(node.blocks[1]);
    if (raise0 || raise1) {
      if (raise0 && raise1)
        return ctx.fail(node, "both branches raise");
      const TorchNode *raise = raise0 ? raise0 : raise1;
      Value ok = cond;
      if (raise0) // the then-branch raises: cond must be false
        ok = arith::XOrIOp::create(b, ctx.loc, cond,
                                   arith::ConstantOp::create(b, ctx.loc, b.getBoolAttr(true)));
      std::string message = "the model raised: " +
                            (raise->sourceLine.empty() ? std::string("an exception") : raise->sourceLine) +
                            (node.sourceLine.empty() ? std::string() : " (" + node.sourceLine + ")") +
                            (node.location.empty() ? std::string() : " at " + node.location);
      cf::AssertOp::create(b, ctx.loc, ok, message);
      std::vector<TValue> outs;
      if (failed(importBlock(node.blocks[raise0 ? 1 : 0], {}, outs)))
        return failure();
      for (auto [id, v] : llvm::zip(node.outputs, outs))
        ctx.set(id, v);
      return success();
    }
    std::vector<TValue> outs0, outs1;
    if (failed(importBlock(node.blocks[0], {}, outs0)) ||
        failed(importBlock(node.blocks[1], {}, outs1)))
      return failure();
    ctx.loc = nodeLocation(ctx.context, node, ctx.origin);
    for (auto [id, v0, v1] : llvm::zip(node.outputs, outs0, outs1)) {
      auto asPredicate = [&](const TValue &v) -> Value {
        if (v.kind == TValue::Kind::SymBool)
          return v.predicate;
        if (v.kind == TValue::Kind::Bool)
          return arith::ConstantOp::create(b, ctx.loc, b.getBoolAttr(v.boolValue));
        return nullptr;
      };
      if (Value p0 = asPredicate(v0), p1 = asPredicate(v1); p0 && p1) {
        ctx.set(id, TValue::ofSymBool(arith::SelectOp::create(b, ctx.loc, cond, p0, p1)));
        continue;
      }
      if (v0.kind == TValue::Kind::Int && v1.kind == TValue::Kind::Int) {
        Value i0 = ctx.toIndexValue(ctx.toFoldResult(v0.intValue));
        Value i1 = ctx.toIndexValue(ctx.toFoldResult(v1.intValue));
        ctx.set(id, TValue::ofInt(SymInt::of(arith::SelectOp::create(b, ctx.loc, cond, i0, i1))));
        continue;
      }
      return ctx.fail(node, "the condition depends on a dynamic dim or a run-time int, so it "
                            "is only known at run time, and the branches give values other "
                            "than numbers or bools (a run-time condition may only guard a "
                            "raise or choose between numbers)");
    }
    return success();
  }

  LogicalResult importIf(const TorchNode &node) {
    TValue &cond = ctx.input(node, 0);
    if (cond.kind == TValue::Kind::SymBool && node.blocks.size() == 2)
      return importRuntimeIf(node, cond.predicate);
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

/// One entry function `entryName` of `module` from `block` (a method's or
/// forward's body) with `inputs` / `dynamicDims` (`method` names it in
/// messages). Int arguments (`pos: int`) are rank-0 i64 tensors.
LogicalResult importFunction(ImportContext &ctx, ModuleOp module, const std::string &entryName,
                             const std::string &method, const TorchBlock &block,
                             const std::vector<bool> &inputDefaultsToNone,
                             const std::vector<InputSpec> &inputs,
                             const std::vector<DynamicDim> &dynamicDims, std::string &error) {
  MLIRContext &context = ctx.context;
  const TorchGraph &graph = ctx.graph;
  const std::string &origin = ctx.origin;
  OpBuilder &b = ctx.builder;
  const std::vector<int> &args = block.inputs;

  // Signature: one spec per forward argument.
  std::vector<std::string> names;
  std::string nameList;
  for (int id : args) {
    names.push_back(argumentName(graph.values[id].debugName));
    nameList += (nameList.empty() ? "" : ", ") + names.back() + ": " + graph.values[id].typeName;
  }
  // Trailing inputs that default to None may be left out (bound to None).
  size_t required = args.size();
  while (required > inputs.size() && required > 0 &&
         required <= inputDefaultsToNone.size() && inputDefaultsToNone[required - 1])
    --required;
  if (inputs.size() != required) {
    error = origin + ": " + method + " takes " + std::to_string(args.size()) + " input(s) (" + nameList +
            ") but " + std::to_string(inputs.size()) +
            " input shape(s) were given; give one input shape per input, e.g. "
            "1x3x224x224xf32";
    return failure();
  }
  std::vector<std::vector<bool>> dynamic(required);
  for (size_t i = 0; i < required; ++i)
    dynamic[i].assign(inputs[i].shape.size(), false);
  for (const DynamicDim &d : dynamicDims) {
    int64_t index = -1;
    if (!d.input.empty() && d.input.find_first_not_of("0123456789") == std::string::npos)
      index = std::stoll(d.input);
    else
      for (size_t i = 0; i < names.size(); ++i)
        if (names[i] == d.input)
          index = i;
    if (index < 0 || index >= (int64_t)required) {
      error = "dynamic dim " + d.input + ":" + std::to_string(d.dim) + " names input '" +
              d.input + "', but " + method + "'s inputs are (" +
              nameList + ")";
      return failure();
    }
    int64_t rank = inputs[index].shape.size();
    auto dimIndex = normalizeDim(d.dim, rank);
    if (!dimIndex || rank == 0) {
      error = "dynamic dim " + d.input + ":" + std::to_string(d.dim) + " is out of range for "
              "an input of rank " + std::to_string(rank);
      return failure();
    }
    dynamic[index][*dimIndex] = true;
  }

  SmallVector<Type> argTypes;
  for (size_t i = 0; i < required; ++i) {
    const TorchValueInfo &info = graph.values[args[i]];
    if (info.kind != TorchTypeKind::Tensor) {
      if (info.kind == TorchTypeKind::Int && inputs[i].shape.empty() &&
          inputs[i].dtype == "i64") {
        argTypes.push_back(RankedTensorType::get({}, b.getI64Type()));
        continue;
      }
      error = origin + ": " + method + " input '" + names[i] + "' has type " + info.typeName +
              (info.kind == TorchTypeKind::Int
                   ? "; give its shape as i64 (a rank-0 i64 tensor at run time)"
                   : "; only tensor and int inputs are supported");
      return failure();
    }
    Type et = dtypeFromName(context, inputs[i].dtype);
    if (!et) {
      error = "unsupported dtype '" + inputs[i].dtype + "' for input '" + names[i] + "'";
      return failure();
    }
    SmallVector<int64_t> shape;
    for (size_t d = 0; d < inputs[i].shape.size(); ++d)
      shape.push_back(dynamic[i][d] ? ShapedType::kDynamic : inputs[i].shape[d]);
    argTypes.push_back(RankedTensorType::get(shape, et));
  }

  b.setInsertionPointToEnd(module.getBody());
  auto func = func::FuncOp::create(b, ctx.loc, entryName, b.getFunctionType(argTypes, {}));
  Block *entry = func.addEntryBlock();
  b.setInsertionPointToStart(entry);
  std::vector<TValue> inputValues;
  for (size_t i = 0; i < required; ++i) {
    if (graph.values[args[i]].kind == TorchTypeKind::Int) {
      // An int argument: its value, read on the host.
      Value scalar = tensor::ExtractOp::create(b, ctx.loc, entry->getArgument(i), ValueRange{});
      Value index = arith::IndexCastOp::create(b, ctx.loc, b.getIndexType(), scalar);
      inputValues.push_back(TValue::ofInt(SymInt::of(index)));
    } else {
      inputValues.push_back(TValue::ofTensor(entry->getArgument(i)));
    }
    NamedAttrList attrs;
    attrs.append("turbine.name", b.getStringAttr(names[i]));
    if (inputs[i].dtype == "u8")
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
  if (failed(importer.importBlock(block, inputValues, outs))) {
    error = (ctx.error.empty() ? "import failed" : ctx.error) + where;
    return failure();
  }
  ctx.loc = FileLineColLoc::get(&context, origin, 0, 0);
  SmallVector<Value> results;
  for (auto [id, v] : llvm::zip(block.outputs, outs))
    if (failed(collectOutputs(ctx, v, results, graph.values[id].debugName))) {
      error = ctx.error + where;
      return failure();
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

  return success();
}

/// Verifies the imported module; an internal error naming `origin` if not.
LogicalResult verifyImported(ModuleOp module, MLIRContext &context, const std::string &origin,
                             std::string &error) {
  std::string where = "\n  in TorchScript file '" + origin + "'";
  std::string diagnostics;
  {
    ScopedDiagnosticHandler handler(&context, [&](Diagnostic &diag) {
      llvm::raw_string_ostream os(diagnostics);
      os << diag.getLocation() << ": " << diag.str() << "\n";
      return success();
    });
    if (failed(verify(module))) {
      error = "internal error: imported IR does not verify" + where + ": " + diagnostics;
      return failure();
    }
  }
  return success();
}


OwningOpRef<ModuleOp> importGraph(MLIRContext &context, const TorchGraph &graph,
                                  const std::string &origin, const ImportOptions &options,
                                  std::string &error) {
  registerImportedDialects(context);
  ImportContext ctx(context, graph, origin);
  ctx.options = &options;
  OwningOpRef<ModuleOp> module = ModuleOp::create(ctx.loc);
  if (failed(importFunction(ctx, *module, options.entryName, "forward", graph.body,
                            graph.inputDefaultsToNone, options.inputs, options.dynamicDims,
                            error)) ||
      failed(verifyImported(*module, context, origin, error)))
    return nullptr;
  return module;
}

/// A stateful import: one function per requested method, the mutated
/// buffers as mutable ml_program globals (StatefulImport.cpp).
OwningOpRef<ModuleOp> importMethods(MLIRContext &context, const TorchGraph &graph,
                                    const std::string &origin, const ImportOptions &options,
                                    std::string &error) {
  registerImportedDialects(context);
  ImportContext ctx(context, graph, origin);
  ctx.options = &options;
  OwningOpRef<ModuleOp> module = ModuleOp::create(ctx.loc);
  ModuleStateImport state;
  ctx.state = &state;
  ctx.reimportNode = [](ImportContext &c, const TorchNode &node) -> LogicalResult {
    const OpHandler *handler = opRegistry().lookup(node.kind);
    return handler ? (*handler)(c, node) : c.unsupported(node);
  };
  if (failed(declareStateGlobals(ctx, *module, error)))
    return nullptr;
  for (auto [spec, method] : llvm::zip(options.functions, graph.methods))
    if (failed(importFunction(ctx, *module, spec.name, "method '" + spec.name + "'", method.body,
                              method.inputDefaultsToNone, spec.inputs, spec.dynamicDims, error)))
      return nullptr;
  if (failed(verifyImported(*module, context, origin, error)))
    return nullptr;
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

Result<ImportOptions> parseImportOptions(const std::vector<std::string> &inputShapes,
                                         const std::vector<std::string> &functionShapes,
                                         const std::vector<std::string> &dynamicDims) {
  ImportOptions options;
  for (const std::string &text : inputShapes) {
    Result<InputSpec> spec = parseInputSpec(text);
    if (!spec)
      return spec.status();
    options.inputs.push_back(*spec);
  }
  for (const std::string &text : functionShapes) {
    size_t colon = text.find(':');
    if (colon == std::string::npos || colon == 0)
      return Status::error("malformed function shapes '" + text +
                           "': expected METHOD:SHAPE,SHAPE,... (e.g. decode:1x1xi64,i64)");
    FunctionSpec f;
    f.name = text.substr(0, colon);
    for (const FunctionSpec &other : options.functions)
      if (other.name == f.name)
        return Status::error("the shapes of method '" + f.name + "' are given twice");
    llvm::SmallVector<llvm::StringRef> items;
    llvm::StringRef(text).substr(colon + 1).split(items, ',');
    for (llvm::StringRef item : items) {
      if (item.empty() && items.size() == 1)
        break; // "METHOD:" declares a method without arguments
      Result<InputSpec> spec = parseInputSpec(item.str());
      if (!spec)
        return Status::error("method '" + f.name + "': " + spec.message());
      f.inputs.push_back(*spec);
    }
    options.functions.push_back(std::move(f));
  }
  if (!options.functions.empty() && !options.inputs.empty())
    return Status::error("give either input shapes (forward) or function shapes (methods), "
                         "not both");
  for (const std::string &text : dynamicDims) {
    std::string dimText = text;
    FunctionSpec *function = nullptr;
    if (!options.functions.empty()) {
      size_t colon = text.find(':');
      std::string name = colon == std::string::npos ? "" : text.substr(0, colon);
      for (FunctionSpec &f : options.functions)
        if (f.name == name)
          function = &f;
      if (!function)
        return Status::error("dynamic dim '" + text +
                             "' must name a method whose shapes are given "
                             "(METHOD:INPUT:DIM, e.g. prefill:0:1)");
      dimText = text.substr(colon + 1);
    }
    Result<DynamicDim> dim = parseDynamicDim(dimText);
    if (!dim)
      return dim.status();
    (function ? function->dynamicDims : options.dynamicDims).push_back(*dim);
  }
  return options;
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
  context.loadDialect<arith::ArithDialect, cf::ControlFlowDialect, func::FuncDialect,
                      linalg::LinalgDialect,
                      math::MathDialect, ml_program::MLProgramDialect, tensor::TensorDialect>();
}

Status loadTorchScriptArchive(const std::string &path) {
  TorchGraph graph;
  std::string error;
  return loadTorchScriptGraph(path, graph, error) ? Status::success() : Status::error(error);
}

Result<OwningOpRef<ModuleOp>> importTorchScriptFile(MLIRContext &context, const std::string &path,
                                                    const ImportOptions &options) {
  TorchGraph graph;
  std::string error;
  for (const FunctionSpec &f : options.functions)
    graph.requestedMethods.push_back(f.name);
  if (!loadTorchScriptGraph(path, graph, error))
    return Status::error(error);
  OwningOpRef<ModuleOp> module = options.functions.empty()
                                     ? importGraph(context, graph, path, options, error)
                                     : importMethods(context, graph, path, options, error);
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
  for (const FunctionSpec &f : options.functions)
    graph.requestedMethods.push_back(f.name);
  if (!loadTorchScriptGraphFromBytes(bytes, origin, graph, error))
    return Status::error(error);
  OwningOpRef<ModuleOp> module = options.functions.empty()
                                     ? importGraph(context, graph, origin, options, error)
                                     : importMethods(context, graph, origin, options, error);
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
