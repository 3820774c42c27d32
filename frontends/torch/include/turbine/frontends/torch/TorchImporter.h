//===- TorchImporter.h - TorchScript module -> upstream MLIR on tensors ---===//
//
// Imports a TorchScript archive (`torch.jit.trace(...).save(...)` or
// `torch.jit.script(...).save(...)`, read with libtorch) into a
// builtin.module holding one func.func (named `main` unless told otherwise)
// in upstream dialects on tensors: linalg, tensor, arith, math — the same
// contract the ONNX frontend meets (see frontends/README.md). The module is
// frozen (parameters become arith.constant tensors) and inlined; control flow
// whose condition or trip count is known at import time is folded or
// unrolled, other control flow is an error.
//
// A TorchScript graph carries no reliable input shapes, so the caller gives
// one InputSpec per `forward` argument, and may mark dims dynamic (`?` in the
// IR, named in `turbine.dims`).
//
// Stateful modules (ImportOptions::functions): several methods of one
// scripted module, sharing buffers they mutate (a KV cache:
// `self.k_cache[:, :, pos:pos + t] = k`), import as one module: each method
// an entry function, parameters frozen into named constants, each mutated
// buffer a mutable `ml_program.global` read with global_load and written
// by slice assignment (aten::copy_ into slices/selects of it) as
// tensor.insert_slice + global_store. Neither libtorch nor the importer's internals
// appear in this header.
//===----------------------------------------------------------------------===//
#ifndef TURBINE_FRONTENDS_TORCH_TORCHIMPORTER_H
#define TURBINE_FRONTENDS_TORCH_TORCHIMPORTER_H

#include "turbine/base/Status.h"
#include "turbine/compiler/Importer.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace turbine::torch_frontend {

/// Shape and element type of one `forward` argument.
struct InputSpec {
  std::vector<int64_t> shape;
  std::string dtype = "f32"; ///< f32 f64 f16 bf16 i64 i32 i16 i8 u8 i1
};

/// One `--dynamic-dim=<input>:<dim>`: input by position ("0") or by the
/// argument's name in `forward` ("x"); dim may be negative.
struct DynamicDim {
  std::string input;
  int64_t dim = 0;
};

/// One method of a stateful import: the module's method `name` (exported
/// with @torch.jit.export, or forward) becomes the entry function `name`.
struct FunctionSpec {
  std::string name;
  std::vector<InputSpec> inputs;       ///< one per argument (an int argument: i64)
  std::vector<DynamicDim> dynamicDims;
};

struct ImportOptions {
  std::string entryName = "main";
  /// A stateful import when non-empty: these methods, each an entry
  /// function, and the buffers they mutate as mutable ml_program globals
  /// (named by attribute path, initial value the buffer's); `inputs`,
  /// `dynamicDims` and `entryName` are then unused.
  std::vector<FunctionSpec> functions;
  std::vector<InputSpec> inputs;        ///< one per forward argument, in order
  std::vector<DynamicDim> dynamicDims;  ///< dims to leave symbolic

  /// Custom ops defined outside the importer (python/: turbine_torch
  /// CustomOp subclasses, registered with torch.library). A node of an op the
  /// importer does not know whose kind `customOpName` maps to a custom-op
  /// name ("my_ops::scale" -> "my_ops.scale"; "" when it is none) becomes a
  /// call of a declaration tagged `turbine.custom_op`, as `turbine::` ops do
  /// (tensor arguments are operands, number arguments the call's
  /// attributes by schema name), typed by `customOpResultTypes` (the op's
  /// select step on the operand types and attributes).
  std::function<std::string(const std::string &kind)> customOpName;
  std::function<Result<std::vector<mlir::Type>>(
      const std::string &op, const std::vector<mlir::Type> &operands,
      const std::map<std::string, double> &attributes)>
      customOpResultTypes;
};

/// Parses IREE-style `1x3x224x224xf32` (a scalar: just `f32`); an error naming
/// the text on a malformed spec.
Result<InputSpec> parseInputSpec(const std::string &text);

/// Parses `<input index or name>:<dim>`.
Result<DynamicDim> parseDynamicDim(const std::string &text);

/// The import options from their text forms, as `turbine compile` and
/// turbine_torch take them: input shapes of `forward` ("1x3x224x224xf32"),
/// or, for a stateful import, function shapes ("METHOD:SHAPE,SHAPE,...",
/// e.g. "decode:1x1xi64,i64"); dynamic dims "<input>:<dim>" (forward) or
/// "METHOD:<input>:<dim>" (methods). An error names the malformed text.
Result<ImportOptions> parseImportOptions(const std::vector<std::string> &inputShapes,
                                         const std::vector<std::string> &functionShapes,
                                         const std::vector<std::string> &dynamicDims);

/// True when `path` looks like a TorchScript archive: a .pt/.pth/.torchscript
/// extension, or a zip file whose entries TorchScript writes (`*/data.pkl`).
bool looksLikeTorchScriptFile(const std::string &path);

/// libtorch's load of the archive at `path` and its copy into the importer's
/// graph, nothing imported: libtorch's error if it throws. libtorch is not
/// hardened against malformed archives (SIGSEGV inside libtorch_cpu.so on
/// fuzzed inputs): the CLI runs this in a child process first
/// (tools/turbine/TorchScriptPreflight.h).
Status loadTorchScriptArchive(const std::string &path);

/// Loads the dialects the importer emits into `context`.
void registerImportedDialects(mlir::MLIRContext &context);

/// Imports the archive at `path`. On failure, an error: a malformed archive
/// names the file and libtorch's reason; an unsupported op names the op, its
/// schema and TorchScript's source location.
Result<mlir::OwningOpRef<mlir::ModuleOp>> importTorchScriptFile(mlir::MLIRContext &context,
                                                                const std::string &path,
                                                                const ImportOptions &options);

/// Same, from the bytes of an archive (`origin` names it in messages).
Result<mlir::OwningOpRef<mlir::ModuleOp>> importTorchScriptBytes(mlir::MLIRContext &context,
                                                                 const std::string &bytes,
                                                                 const std::string &origin,
                                                                 const ImportOptions &options);

/// The TorchScript importer as a compile-session frontend
/// (compiler/Importer.h): format "torchscript", recognized by a .pt / .pth /
/// .torchscript extension or a zip archive's first bytes.
std::unique_ptr<compiler::Importer> createTorchScriptImporter(ImportOptions options);

} // namespace turbine::torch_frontend

#endif // TURBINE_FRONTENDS_TORCH_TORCHIMPORTER_H
