//===- TorchGraph.h - a frozen TorchScript graph as plain C++ data --------===//
//
// Private to the TorchScript frontend. The one translation unit that includes
// libtorch (TorchScriptLoader.cpp) loads, freezes and inlines a module and
// copies its forward graph into these structs; everything that builds MLIR
// works on them and never sees a libtorch header (libtorch headers cost ~30 s
// per translation unit to compile). Values are numbered; nodes keep their
// kind (`aten::linear`), schema, TorchScript source location and nested
// blocks (prim::If / prim::Loop). Constants carry their payload, tensors
// included (parameters after freezing).
//===----------------------------------------------------------------------===//
#ifndef TURBINE_FRONTENDS_TORCH_LIB_TORCHGRAPH_H
#define TURBINE_FRONTENDS_TORCH_LIB_TORCHGRAPH_H

#include <cstdint>
#include <string>
#include <vector>

namespace turbine::torch_frontend {

/// Element types a constant tensor may have (the subset the importer maps).
enum class TorchDType { f32, f64, f16, bf16, i64, i32, i16, i8, u8, i1, unsupported };

/// The payload of a prim::Constant.
struct TorchConstant {
  enum class Kind { None, Bool, Int, Float, String, Device, IntList, FloatList, BoolList,
                    Tensor, List, Other };
  Kind kind = Kind::None;
  int64_t intValue = 0;    ///< Int, Bool (0/1)
  double floatValue = 0.0; ///< Float
  std::string text;        ///< String, Device; Other: the type's name
  std::vector<int64_t> ints;    ///< IntList, BoolList (0/1)
  std::vector<double> floats;   ///< FloatList
  // Tensor:
  TorchDType dtype = TorchDType::unsupported;
  std::string dtypeName;        ///< torch's name, for messages
  std::vector<int64_t> shape;
  std::vector<char> data;       ///< contiguous row-major bytes (bool: 1 byte each)
  /// The module's name for this tensor (its state_dict key, `fc1.weight`)
  /// when it is a parameter or buffer as such (same storage, shape and
  /// strides); "" for tensors freezing computed (BatchNorm folded into a
  /// convolution, constant-propagated results).
  std::string name;
  /// List (a GenericList or tuple constant: freezing folds the list of an
  /// nn.LSTM's weights into one) holds its elements, each any kind above.
  std::vector<TorchConstant> elements;
};

/// What TorchScript declares a value to be.
enum class TorchTypeKind { Tensor, Int, Float, Bool, None, String, Device, List, Tuple,
                           Other };

struct TorchValueInfo {
  std::string debugName; ///< `%x.1` without the `%`
  TorchTypeKind kind = TorchTypeKind::Other;
  std::string typeName;  ///< TorchScript's spelling, for messages
};

struct TorchBlock;

struct TorchNode {
  std::string kind;      ///< `aten::add`, `prim::If`, ...
  std::string schema;    ///< the matched schema, or "" for prim ops without one
  std::string location;  ///< "file:line:col" TorchScript recorded, or ""
  std::string sourceLine; ///< the source text of that line, or ""
  std::vector<int> inputs;
  std::vector<int> outputs;
  std::vector<TorchBlock> blocks;
  TorchConstant constant; ///< prim::Constant only
  /// prim::GetAttr only: the attribute's dotted path from `self`
  /// ("layers.0.attention.k_cache"; a submodule's path for a module).
  std::string attributePath;
};

struct TorchBlock {
  std::vector<int> inputs;
  std::vector<TorchNode> nodes;
  std::vector<int> outputs;
};

/// One method of a stateful import (TorchGraph::methods).
struct TorchMethod {
  std::string name;
  TorchBlock body;                    ///< inputs exclude `self`
  std::vector<bool> inputDefaultsToNone;
  std::string text;
};

/// The frozen, inlined `forward` of a module; or, when `requestedMethods` is
/// set before loading, those methods (freezing preserves them and the
/// buffers they mutate: `state`).
struct TorchGraph {
  std::vector<TorchValueInfo> values; ///< indexed by value number
  TorchBlock body;                    ///< inputs exclude `self`
  /// Per body input: its declared default is None (`output_size:
  /// Optional[List[int]] = None`), so a caller may leave it out.
  std::vector<bool> inputDefaultsToNone;
  std::string text;                   ///< the graph as TorchScript prints it

  // Stateful import (several entry points sharing mutable buffers).
  /// Input: the methods to import (`@torch.jit.export`ed or `forward`);
  /// empty: `forward` only, into the fields above.
  std::vector<std::string> requestedMethods;
  /// Output: those methods, in the order requested (values numbered in
  /// `values`, shared by all methods).
  std::vector<TorchMethod> methods;
  /// Output: the tensors freezing kept as attributes because a method
  /// mutates them (name = attribute path, data = the initial value).
  std::vector<TorchConstant> state;
};

/// Loads the TorchScript archive at `path` (torch.jit.save of a traced or
/// scripted module), freezes it in eval mode, inlines calls and simplifies
/// (mutation removal, tuple lowering, constant propagation, loop unrolling of
/// constant trip counts, dead code elimination), and copies `forward`.
/// Returns false with `error` set ("cannot load TorchScript file 'p': ...")
/// on any libtorch error; never throws.
bool loadTorchScriptGraph(const std::string &path, TorchGraph &out, std::string &error);

/// Same, from the bytes of such an archive (`origin` names it in messages).
bool loadTorchScriptGraphFromBytes(const std::string &bytes, const std::string &origin,
                                   TorchGraph &out, std::string &error);

} // namespace turbine::torch_frontend

#endif // TURBINE_FRONTENDS_TORCH_LIB_TORCHGRAPH_H
