//===- TorchScriptCompiler.cpp - In-process TorchScript -> artifact --------===//
#include "TorchScriptCompiler.h"

#include "turbine/artifact/Module.h"
#include "turbine/compiler/Pipeline.h"
#include "turbine/frontends/torch/TorchImporter.h"
#include "turbine/kernels/CustomOpCalls.h"
#include "turbine/kernels/LibraryOps.h"

#include "turbine/tools/ParameterExternalization.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/raw_ostream.h"

namespace turbine::torch_ext {

bool compileTorchScript(const TorchScriptCompileRequest &request, std::string &result,
                        std::string &error) {
  torch_frontend::ImportOptions options;
  for (const std::string &text : request.inputShapes) {
    Result<torch_frontend::InputSpec> spec = torch_frontend::parseInputSpec(text);
    if (!spec) {
      error = spec.message();
      return false;
    }
    options.inputs.push_back(*spec);
  }
  for (const std::string &text : request.dynamicDims) {
    Result<torch_frontend::DynamicDim> dim = torch_frontend::parseDynamicDim(text);
    if (!dim) {
      error = dim.message();
      return false;
    }
    options.dynamicDims.push_back(*dim);
  }
  compiler::CompileOptions compileOptions;
  if (!request.externalizeParams.empty() && !request.compileTo.empty()) {
    error = "externalize_params needs an artifact to write (not compile_to='" +
            request.compileTo + "')";
    return false;
  }
  if (!request.compileTo.empty()) {
    compileOptions.stopAfter = compiler::parsePhase(request.compileTo);
    if (!compileOptions.stopAfter) {
      error = "unknown phase '" + request.compileTo +
              "' (input, global-opt, dispatch, codegen, link)";
      return false;
    }
  }

  mlir::DialectRegistry registry;
  compiler::registerCompilerDialects(registry);
  mlir::MLIRContext context(registry);
  context.loadAllAvailableDialects();
  context.disableMultithreading();
  Result<mlir::OwningOpRef<mlir::ModuleOp>> imported = torch_frontend::importTorchScriptBytes(
      context, request.archive, "<torch.jit module>", options);
  if (!imported) {
    error = imported.message();
    return false;
  }
  mlir::OwningOpRef<mlir::ModuleOp> module = std::move(*imported);
  // After the input phase, Turbine ops are still calls of their custom-op
  // declarations (the readable form); later phases see their dispatches.
  if (request.compileTo != "input") {
    if (kernels::Status s = kernels::registerLibraryOps(); !s.ok()) {
      error = s.message();
      return false;
    }
    if (kernels::Status s = kernels::expandCustomOpCalls(*module); !s.ok()) {
      error = s.message();
      return false;
    }
  }
  artifact::Module artifact;
  if (!compiler::compileModule(*module, compileOptions, &artifact, error))
    return false;
  if (compileOptions.stopAfter) {
    mlir::OpPrintingFlags flags;
    flags.elideLargeElementsAttrs(16);
    llvm::raw_string_ostream os(result);
    module->print(os, flags);
    return true;
  }
  if (!request.externalizeParams.empty()) {
    auto moved = tools::externalizeParameters(artifact, request.externalizeParams,
                                              request.externalizeMinBytes);
    if (!moved) {
      error = moved.message();
      return false;
    }
  }
  result = artifact::serialize(artifact);
  return true;
}

} // namespace turbine::torch_ext
