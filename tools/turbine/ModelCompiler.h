//===- ModelCompiler.h - Model file -> artifact, shared by the tools -----===//
//
// The path every tool takes from a model file on disk to a compiled artifact:
// pick the frontend from the extension (.onnx through the ONNX importer,
// .mlir/.mlirbc through the MLIR parser), run the compiler's phases, and hand
// back the artifact. `turbine compile` and `turbine conformance` both use it,
// so a conformance run exercises exactly what `turbine compile` would do.
// MLIR stays out of this header: the context lives inside the call.
//===----------------------------------------------------------------------===//
#ifndef TURBINE_TOOLS_MODELCOMPILER_H
#define TURBINE_TOOLS_MODELCOMPILER_H

#include <string>

namespace turbine::artifact {
struct Module;
}
namespace turbine::compiler {
struct CompileOptions;
}

namespace turbine::tools {

/// Imports or parses the model at `path` and compiles it with `options`.
/// When `options.stopAfter` is set no artifact is produced; instead, if
/// `stoppedModuleText` is non-null, it receives the module as that phase left
/// it, printed with large constants elided. Returns false and sets `error` on
/// failure (unknown extension, import/parse error, or "<path>: <compiler
/// error>").
bool compileModelFile(const std::string &path,
                      const compiler::CompileOptions &options,
                      artifact::Module &out, std::string &error,
                      std::string *stoppedModuleText = nullptr);

} // namespace turbine::tools

#endif // TURBINE_TOOLS_MODELCOMPILER_H
