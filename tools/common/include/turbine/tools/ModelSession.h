//===- ModelSession.h - The compile session of every tool -----------------===//
//
// What every front door of the tools layer compiles with (the `turbine` CLI,
// `turbine conformance`, the PyTorch extension): a compiler::Session with
// the frontends it reads (each importer with its options: the CLI adds
// ONNX and TorchScript, the PyTorch extension TorchScript only, so that a
// process with torch loaded never loads libonnx) and the custom-op
// extension of kernels/, so a model compiles the same way wherever it comes
// from. No MLIR header beyond the session's forward declarations.
//===----------------------------------------------------------------------===//
#ifndef TURBINE_TOOLS_MODELSESSION_H
#define TURBINE_TOOLS_MODELSESSION_H

#include "turbine/base/Status.h"
#include "turbine/compiler/Session.h"

#include <memory>
#include <vector>

namespace turbine::tools {

/// A session compiling with `options`, reading MLIR and the formats of
/// `importers` (frontends/: createOnnxImporter, createTorchScriptImporter),
/// expanding custom-op calls (the kernel library's ops registered).
Result<std::unique_ptr<compiler::Session>>
createModelSession(compiler::CompileOptions options,
                   std::vector<std::unique_ptr<compiler::Importer>> importers);

} // namespace turbine::tools

#endif // TURBINE_TOOLS_MODELSESSION_H
