//===- TorchScriptCompiler.cpp - In-process TorchScript -> artifact --------===//
#include "TorchScriptCompiler.h"

#include "turbine/artifact/Module.h"
#include "turbine/compiler/Pipeline.h"
#include "turbine/frontends/torch/TorchImporter.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/raw_ostream.h"

namespace turbine::torch_ext {

bool compileTorchScript(const TorchScriptCompileRequest &request, std::string &result,
                        std::string &error) {
  torch_frontend::ImportOptions options;
  for (const std::string &text : request.inputShapes) {
    torch_frontend::InputSpec spec;
    if (!torch_frontend::parseInputSpec(text, spec, error))
      return false;
    options.inputs.push_back(spec);
  }
  for (const std::string &text : request.dynamicDims) {
    torch_frontend::DynamicDim dim;
    if (!torch_frontend::parseDynamicDim(text, dim, error))
      return false;
    options.dynamicDims.push_back(dim);
  }
  compiler::CompileOptions compileOptions;
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
  mlir::OwningOpRef<mlir::ModuleOp> module = torch_frontend::importTorchScriptBytes(
      context, request.archive, "<torch.jit module>", options, error);
  if (!module)
    return false;
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
  result = artifact::serialize(artifact);
  return true;
}

} // namespace turbine::torch_ext
