//===- ModelCompiler.h - Model file -> artifact, shared by the tools -----===//
//
// The path every tool takes from a model file on disk to a compiled artifact:
// pick the frontend from the extension (.onnx through the ONNX importer,
// .pt/.pth or a TorchScript zip through the TorchScript importer,
// .mlir/.mlirbc through the MLIR parser), run the compiler's phases, and hand
// back the artifact. `turbine compile` and `turbine conformance` both use it,
// so a conformance run exercises exactly what `turbine compile` would do.
// MLIR stays out of this header: the context lives inside the call.
//===----------------------------------------------------------------------===//
#ifndef TURBINE_TOOLS_MODELCOMPILER_H
#define TURBINE_TOOLS_MODELCOMPILER_H

#include <cstdint>
#include <map>
#include <set>
#include <vector>
#include <string>
#include <vector>

namespace turbine::artifact {
struct Module;
}
namespace turbine::compiler {
struct CompileOptions;
}
namespace turbine::tools {
/// What an ONNX model's sequence and optional graph inputs are compiled
/// for (see onnx_frontend::ImportOptions): the artifact is specialized to
/// these sequence lengths (and element shapes, where given) and takes one
/// tensor argument per sequence element, none for an absent optional.
struct InputSpecialization {
  std::map<std::string, std::vector<std::vector<int64_t>>> sequenceShapes;
  std::map<std::string, int64_t> sequenceLengths;
  std::set<std::string> absentOptionals;

  bool operator==(const InputSpecialization &other) const {
    return sequenceShapes == other.sequenceShapes && sequenceLengths == other.sequenceLengths &&
           absentOptionals == other.absentOptionals;
  }
};
} // namespace turbine::tools

namespace turbine::tools {

/// What the TorchScript frontend needs besides the file: a TorchScript graph
/// carries no input shapes. Spec syntax: TorchImporter.h (`1x3x224x224xf32`,
/// `0:0` or `x:0`).
struct TorchScriptInputs {
  std::vector<std::string> inputShapes; ///< one per forward input, in order
  std::vector<std::string> dynamicDims; ///< `<input index or name>:<dim>`
};

/// Imports or parses the model at `path` and compiles it with `options`.
/// When `options.stopAfter` is set no artifact is produced; instead, if
/// `stoppedModuleText` is non-null, it receives the module as that phase left
/// it, printed with large constants elided. Returns false and sets `error` on
/// failure (unknown extension, import/parse error, or "<path>: <compiler
/// error>").
bool compileModelFile(const std::string &path,
                      const compiler::CompileOptions &options,
                      artifact::Module &out, std::string &error,
                      std::string *stoppedModuleText = nullptr,
                      const TorchScriptInputs *torchInputs = nullptr,
                      const InputSpecialization &specialization = {});

} // namespace turbine::tools

#endif // TURBINE_TOOLS_MODELCOMPILER_H
