//===- TorchScriptLoader.cpp - libtorch: load, freeze, copy the graph -----===//
//
// The only translation unit of the frontend that includes libtorch, built as
// its own shared module (libturbine_torchscript_loader.so) that the frontend
// dlopens on the first TorchScript import (lib/LoaderLibrary.cpp), so that
// programs linking the frontend (the `turbine` tool) do not pay for loading
// libtorch at every start. It exports one C entry point,
// turbine_torchscript_load_graph. Loads a
// TorchScript archive with torch::jit::load, freezes it in eval mode
// (torch::jit::freeze: parameters and attributes become constants, BatchNorm
// folded into the preceding convolution, dropout removed), inlines calls and
// runs TorchScript's own clean-up passes, then copies the `forward` graph into
// the plain structs of TorchGraph.h. libtorch reports errors as exceptions;
// every one is caught here and turned into an error string.
// Stateful modules (TorchGraph::requestedMethods): freezing preserves the
// requested methods and keeps the buffers they mutate as attributes; each
// method's graph is copied with its prim::GetAttr nodes' dotted paths, and
// the mutated buffers' initial values become TorchGraph::state.
// Before the first load it defines the schemas of Turbine's own torch ops
// (turbine::softmax, ...; TurbineTorchOps.h) unless something in the process
// (libturbine_torch.so) already did: torch::jit::load rejects unknown ops.
//===----------------------------------------------------------------------===//
#include "TorchGraph.h"
#include "TorchScriptLoaderAbi.h"

#include "turbine/frontends/torch/TurbineTorchOps.h"

#include <torch/csrc/jit/passes/constant_propagation.h>
#include <torch/csrc/jit/passes/dead_code_elimination.h>
#include <torch/csrc/jit/passes/freeze_module.h>
#include <torch/csrc/jit/passes/frozen_graph_optimizations.h>
#include <torch/csrc/jit/passes/inliner.h>
#include <torch/csrc/jit/passes/lower_tuples.h>
#include <torch/csrc/jit/passes/remove_mutation.h>
#include <torch/script.h>

#include <ATen/core/dispatch/Dispatcher.h>
#include <torch/library.h>

#include <algorithm>
#include <memory>
#include <mutex>
#include <sstream>
#include <unordered_map>

namespace turbine::torch_frontend {
namespace {

using torch::jit::Block;
using torch::jit::Node;
using torch::jit::Value;

TorchDType convertScalarType(c10::ScalarType t) {
  switch (t) {
  case c10::ScalarType::Float: return TorchDType::f32;
  case c10::ScalarType::Double: return TorchDType::f64;
  case c10::ScalarType::Half: return TorchDType::f16;
  case c10::ScalarType::BFloat16: return TorchDType::bf16;
  case c10::ScalarType::Long: return TorchDType::i64;
  case c10::ScalarType::Int: return TorchDType::i32;
  case c10::ScalarType::Short: return TorchDType::i16;
  case c10::ScalarType::Char: return TorchDType::i8;
  case c10::ScalarType::Byte: return TorchDType::u8;
  case c10::ScalarType::Bool: return TorchDType::i1;
  default: return TorchDType::unsupported;
  }
}

TorchTypeKind convertTypeKind(const c10::TypePtr &type) {
  switch (type->kind()) {
  case c10::TypeKind::TensorType: return TorchTypeKind::Tensor;
  case c10::TypeKind::IntType: return TorchTypeKind::Int;
  case c10::TypeKind::FloatType: return TorchTypeKind::Float;
  case c10::TypeKind::BoolType: return TorchTypeKind::Bool;
  case c10::TypeKind::NoneType: return TorchTypeKind::None;
  case c10::TypeKind::StringType: return TorchTypeKind::String;
  case c10::TypeKind::DeviceObjType: return TorchTypeKind::Device;
  case c10::TypeKind::ListType: return TorchTypeKind::List;
  case c10::TypeKind::TupleType: return TorchTypeKind::Tuple;
  default: return TorchTypeKind::Other;
  }
}

/// The module's parameters and buffers by state_dict key, to name the
/// constants freezing makes of them (freezing shares their storage).
struct NamedTensors {
  std::vector<std::pair<std::string, at::Tensor>> tensors;

  explicit NamedTensors(const torch::jit::Module &module) {
    for (const auto &p : module.named_parameters(/*recurse=*/true))
      tensors.emplace_back(p.name, p.value);
    for (const auto &b : module.named_buffers(/*recurse=*/true))
      tensors.emplace_back(b.name, b.value);
  }

  /// The name of the parameter or buffer `t` is exactly (storage, offset,
  /// shape, strides, dtype), or "".
  std::string nameOf(const at::Tensor &t) const {
    for (const auto &[name, p] : tensors)
      if (p.defined() && p.data_ptr() == t.data_ptr() && p.sizes() == t.sizes() &&
          p.strides() == t.strides() && p.scalar_type() == t.scalar_type())
        return name;
    return "";
  }
};

void convertConstant(const c10::IValue &v, TorchConstant &c, const NamedTensors *names) {
  using K = TorchConstant::Kind;
  if (v.isNone()) {
    c.kind = K::None;
  } else if (v.isBool()) {
    c.kind = K::Bool;
    c.intValue = v.toBool();
  } else if (v.isInt()) {
    c.kind = K::Int;
    c.intValue = v.toInt();
  } else if (v.isDouble()) {
    c.kind = K::Float;
    c.floatValue = v.toDouble();
  } else if (v.isString()) {
    c.kind = K::String;
    c.text = v.toStringRef();
  } else if (v.isDevice()) {
    c.kind = K::Device;
    c.text = v.toDevice().str();
  } else if (v.isIntList()) {
    c.kind = K::IntList;
    for (int64_t i : v.toIntVector())
      c.ints.push_back(i);
  } else if (v.isDoubleList()) {
    c.kind = K::FloatList;
    for (double d : v.toDoubleVector())
      c.floats.push_back(d);
  } else if (v.isBoolList()) {
    c.kind = K::BoolList;
    for (bool b : v.toBoolList())
      c.ints.push_back(b);
  } else if (v.isTensor()) {
    c.kind = K::Tensor;
    at::Tensor t = v.toTensor();
    if (names && t.defined())
      c.name = names->nameOf(t);
    c.dtypeName = c10::toString(t.scalar_type());
    if (t.is_quantized() || t.is_sparse() || !t.device().is_cpu()) {
      c.dtype = TorchDType::unsupported;
      c.dtypeName += " (quantized, sparse or non-CPU)";
      return;
    }
    c.dtype = convertScalarType(t.scalar_type());
    for (int64_t d : t.sizes())
      c.shape.push_back(d);
    if (c.dtype == TorchDType::unsupported)
      return;
    at::Tensor dense = t.contiguous();
    const char *bytes = static_cast<const char *>(dense.data_ptr());
    c.data.assign(bytes, bytes + dense.nbytes());
  } else if (v.isList() || v.isTuple()) {
    c.kind = K::List;
    std::vector<c10::IValue> elements;
    if (v.isList())
      elements.assign(v.toListRef().begin(), v.toListRef().end());
    else
      elements.assign(v.toTupleRef().elements().begin(), v.toTupleRef().elements().end());
    for (const c10::IValue &e : elements) {
      c.elements.emplace_back();
      convertConstant(e, c.elements.back(), names);
    }
  } else {
    c.kind = K::Other;
    c.text = v.tagKind();
  }
}

/// "file:line:col" and the source line of `range`, preferring the Python
/// source the serialized TorchScript was generated from (kept in the
/// archive's debug info) over the serialized code itself.
void describeLocation(const torch::jit::SourceRange &serialized, TorchNode &n) {
  torch::jit::SourceRange range = serialized;
  if (auto original = serialized.findSourceRangeThatGenerated())
    if (original->source() && original->file_line_col())
      range = *original;
  auto flc = range.file_line_col();
  if (!flc || !range.source())
    return;
  n.location = std::get<0>(*flc) + ":" + std::to_string(std::get<1>(*flc)) + ":" +
               std::to_string(std::get<2>(*flc));
  std::string line = range.source()->get_line(range.source()->lineno_for_offset(range.start())).str();
  size_t first = line.find_first_not_of(" \t");
  size_t last = line.find_last_not_of(" \t\r\n");
  n.sourceLine = first == std::string::npos ? "" : line.substr(first, last - first + 1);
  // A traced call through Python's torch.ops (torch.ops.turbine.softmax)
  // records torch's own frame (torch/_ops.py) first; the range's text is the
  // Python stack, one "file(line): function" per frame: name the first frame
  // outside torch's package instead.
  auto insideTorch = [](const std::string &file) {
    return file.find("-packages/torch/") != std::string::npos;
  };
  if (!insideTorch(std::get<0>(*flc)))
    return;
  std::istringstream frames(range.source()->text_str().str());
  for (std::string frame; std::getline(frames, frame);) {
    size_t open = frame.find('('), close = frame.find("): ");
    if (open == std::string::npos || close == std::string::npos || close < open)
      continue;
    std::string file = frame.substr(0, open);
    if (insideTorch(file))
      continue;
    n.location = file + ":" + frame.substr(open + 1, close - open - 1) + ":0";
    n.sourceLine = frame;
    return;
  }
}

/// Copies libtorch's graph into TorchGraph, numbering values.
class GraphCopier {
public:
  GraphCopier(TorchGraph &out, const NamedTensors &names) : out(out), names(names) {}

  /// Dotted attribute path of a value reached from `self` by prim::GetAttr.
  std::unordered_map<const Value *, std::string> paths;
  /// Tensor attributes read by the copied graphs (their paths).
  std::vector<std::string> tensorAttributes;

  int number(const Value *v) {
    auto it = ids.find(v);
    if (it != ids.end())
      return it->second;
    int id = static_cast<int>(out.values.size());
    ids[v] = id;
    TorchValueInfo info;
    info.debugName = v->debugName();
    info.kind = convertTypeKind(v->type());
    info.typeName = v->type()->annotation_str();
    out.values.push_back(std::move(info));
    return id;
  }

  void copyBlock(const Block *block, TorchBlock &dst, bool skipSelf) {
    for (const Value *in : block->inputs()) {
      if (skipSelf && in->type()->kind() == c10::TypeKind::ClassType) {
        paths[in] = "";
        continue;
      }
      dst.inputs.push_back(number(in));
    }
    for (const Node *node : block->nodes()) {
      TorchNode n;
      n.kind = node->kind().toQualString();
      if (const c10::FunctionSchema *schema = node->maybeSchema()) {
        std::ostringstream os;
        os << *schema;
        n.schema = os.str();
      }
      describeLocation(node->sourceRange(), n);
      for (const Value *in : node->inputs())
        n.inputs.push_back(number(in));
      for (const Value *o : node->outputs())
        n.outputs.push_back(number(o));
      if (node->kind() == c10::prim::GetAttr) {
        auto parent = paths.find(node->input(0));
        if (parent != paths.end()) {
          std::string name = node->s(c10::attr::name);
          n.attributePath = parent->second.empty() ? name : parent->second + "." + name;
          paths[node->output()] = n.attributePath;
          if (node->output()->type()->kind() == c10::TypeKind::TensorType &&
              std::find(tensorAttributes.begin(), tensorAttributes.end(), n.attributePath) ==
                  tensorAttributes.end())
            tensorAttributes.push_back(n.attributePath);
        }
      }
      if (node->kind() == c10::prim::Constant) {
        if (auto iv = torch::jit::toIValue(node->output()))
          convertConstant(*iv, n.constant, &names);
        else
          n.constant.kind = TorchConstant::Kind::Other;
      }
      for (const Block *sub : node->blocks()) {
        n.blocks.emplace_back();
        copyBlock(sub, n.blocks.back(), false);
      }
      dst.nodes.push_back(std::move(n));
    }
    for (const Value *o : block->outputs())
      dst.outputs.push_back(number(o));
  }

private:
  TorchGraph &out;
  const NamedTensors &names;
  std::unordered_map<const Value *, int> ids;
};

/// Defines the schemas of the turbine:: ops that nobody in this process has
/// defined yet (a schema only: deserializing and importing a graph never runs
/// them). The library object lives as long as the process.
void defineTurbineOpSchemas() {
  static std::once_flag once;
  std::call_once(once, [] {
    static std::unique_ptr<torch::Library> library;
    for (const TurbineTorchOp &op : turbineTorchOps()) {
      std::string name = std::string("turbine::") + op.name;
      if (c10::Dispatcher::singleton().findSchema({name, ""}))
        continue;
      if (!library)
        library = std::make_unique<torch::Library>(torch::Library::FRAGMENT, "turbine",
                                                   c10::nullopt, __FILE__, __LINE__);
      library->def(op.schema);
    }
  });
}

/// Runs the frontend's clean-up passes on a copy of `method`'s graph.
std::shared_ptr<torch::jit::Graph> simplifiedGraph(const torch::jit::Method &method) {
  std::shared_ptr<torch::jit::Graph> graph = method.graph()->copy();
  torch::jit::Inline(*graph);
  torch::jit::RemoveListMutation(graph);
  torch::jit::RemoveTensorMutation(graph);
  torch::jit::LowerAllTuples(graph);
  torch::jit::ConstantPropagation(graph);
  torch::jit::EliminateDeadCode(graph);
  return graph;
}

std::vector<bool> defaultsToNone(const torch::jit::Method &method, size_t inputs) {
  std::vector<bool> out;
  for (const c10::Argument &arg : method.function().getSchema().arguments()) {
    if (arg.type()->kind() == c10::TypeKind::ClassType)
      continue; // self
    out.push_back(arg.default_value() && arg.default_value()->isNone());
  }
  out.resize(inputs, false);
  return out;
}

/// The stateful import: the requested methods and the buffers they mutate.
bool loadMethods(torch::jit::Module &module, const std::string &origin, TorchGraph &out,
                 std::string &error) {
  std::string available;
  for (const torch::jit::Method &m : module.get_methods())
    available += (available.empty() ? "" : ", ") + m.name();
  for (const std::string &name : out.requestedMethods)
    if (!module.find_method(name)) {
      error = "TorchScript file '" + origin + "' has no method '" + name + "' (methods: " +
              available + "; export more with @torch.jit.export)";
      return false;
    }
  NamedTensors names(module);
  // torch::jit::freeze, for each requested method rather than `forward`
  // only (which it requires: a program of procedures need not have one).
  torch::jit::Module frozen = torch::jit::freeze_module(module, out.requestedMethods);
  for (const std::string &name : out.requestedMethods) {
    std::shared_ptr<torch::jit::Graph> graph = frozen.get_method(name).graph();
    torch::jit::OptimizeFrozenGraph(graph, /*optimize_numerics=*/true);
  }
  GraphCopier copier(out, names);
  // Kept alive while copying: the copier numbers values by address.
  std::vector<std::shared_ptr<torch::jit::Graph>> graphs;
  for (const std::string &name : out.requestedMethods) {
    torch::jit::Method method = frozen.get_method(name);
    std::shared_ptr<torch::jit::Graph> graph = simplifiedGraph(method);
    graphs.push_back(graph);
    TorchMethod m;
    m.name = name;
    copier.copyBlock(graph->block(), m.body, /*skipSelf=*/true);
    m.inputDefaultsToNone = defaultsToNone(method, m.body.inputs.size());
    m.text = graph->toString();
    out.methods.push_back(std::move(m));
  }
  // The tensors still read as attributes after freezing: mutated state.
  for (const std::string &path : copier.tensorAttributes) {
    c10::IValue value = frozen._ivalue();
    std::stringstream segments(path);
    for (std::string segment; std::getline(segments, segment, '.');)
      value = value.toObjectRef().getAttr(segment);
    if (!value.isTensor()) {
      error = "TorchScript file '" + origin + "': attribute '" + path + "' is not a tensor";
      return false;
    }
    TorchConstant c;
    convertConstant(value, c, nullptr);
    c.name = path;
    out.state.push_back(std::move(c));
  }
  return true;
}

bool loadModule(const std::function<torch::jit::Module()> &load, const std::string &origin,
                TorchGraph &out, std::string &error) {
  try {
    defineTurbineOpSchemas();
    torch::jit::Module module = load();
    module.eval();
    if (!out.requestedMethods.empty())
      return loadMethods(module, origin, out, error);
    if (!module.find_method("forward")) {
      error = "TorchScript file '" + origin + "' has no `forward` method";
      return false;
    }
    NamedTensors names(module);
    torch::jit::Module frozen = torch::jit::freeze(module);
    std::shared_ptr<torch::jit::Graph> graph = frozen.get_method("forward").graph()->copy();
    torch::jit::Inline(*graph);
    torch::jit::RemoveListMutation(graph);
    torch::jit::RemoveTensorMutation(graph);
    torch::jit::LowerAllTuples(graph);
    torch::jit::ConstantPropagation(graph);
    torch::jit::EliminateDeadCode(graph);
    GraphCopier copier(out, names);
    copier.copyBlock(graph->block(), out.body, /*skipSelf=*/true);
    const c10::FunctionSchema &schema = frozen.get_method("forward").function().getSchema();
    for (const c10::Argument &arg : schema.arguments()) {
      if (arg.type()->kind() == c10::TypeKind::ClassType)
        continue; // self
      out.inputDefaultsToNone.push_back(arg.default_value() && arg.default_value()->isNone());
    }
    out.inputDefaultsToNone.resize(out.body.inputs.size(), false);
    out.text = graph->toString();
    return true;
  } catch (const c10::Error &e) {
    error = "cannot load TorchScript file '" + origin + "': " + e.what_without_backtrace();
  } catch (const std::exception &e) {
    error = "cannot load TorchScript file '" + origin + "': " + e.what();
  }
  if (error.find("constants.pkl") != std::string::npos)
    error += " (this looks like a torch.save() checkpoint, not a TorchScript module: save "
             "torch.jit.trace(model, example) or torch.jit.script(model) with .save())";
  if (error.size() > 2000)
    error = error.substr(0, 2000) + "...";
  return false;
}

} // namespace
} // namespace turbine::torch_frontend

extern "C" __attribute__((visibility("default"))) int
turbine_torchscript_load_graph(int abiVersion, const char *path, const char *bytes, size_t size,
                               const char *origin, void *outGraph, void *outError) {
  using namespace turbine::torch_frontend;
  auto &out = *static_cast<TorchGraph *>(outGraph);
  auto &error = *static_cast<std::string *>(outError);
  if (abiVersion != kTorchScriptLoaderAbiVersion) {
    error = "TorchScript loader library has ABI version " +
            std::to_string(kTorchScriptLoaderAbiVersion) + ", the frontend expects " +
            std::to_string(abiVersion) + " (stale build?)";
    return 0;
  }
  if (path)
    return loadModule([&] { return torch::jit::load(std::string(path)); }, path, out, error);
  std::string data(bytes, size);
  return loadModule(
      [&] {
        std::istringstream is(data);
        return torch::jit::load(is);
      },
      origin, out, error);
}
