//===- ModelSession.h - A compile session that reads every model format ---===//
//
// What every front door of the tools layer compiles with (the `turbine` CLI,
// `turbine conformance`, the PyTorch extension): a compiler::Session with
// the ONNX and TorchScript importers (each with its options) and the custom
// op extension of kernels/ added, so `.onnx`, `.pt` and `.mlir` compile the
// same way wherever they come from. Includes the frontends' headers (MLIR).
//===----------------------------------------------------------------------===//
#ifndef TURBINE_TOOLS_MODELSESSION_H
#define TURBINE_TOOLS_MODELSESSION_H

#include "turbine/base/Status.h"
#include "turbine/compiler/Session.h"
#include "turbine/frontends/onnx/OnnxImporter.h"
#include "turbine/frontends/torch/TorchImporter.h"

#include <memory>

namespace turbine::tools {

/// What the frontends need besides the file: ONNX sequence / optional
/// specializations, TorchScript input shapes and dynamic dims.
struct FrontendOptions {
  onnx_frontend::ImportOptions onnx;
  torch_frontend::ImportOptions torch;
};

/// A session compiling with `options`, reading MLIR, ONNX and TorchScript,
/// expanding custom-op calls (the kernel library's ops registered).
Result<std::unique_ptr<compiler::Session>> createModelSession(compiler::CompileOptions options,
                                                              FrontendOptions frontends = {});

} // namespace turbine::tools

#endif // TURBINE_TOOLS_MODELSESSION_H
