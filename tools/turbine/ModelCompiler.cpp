//===- ModelCompiler.cpp - Model file -> artifact, shared by the tools ---===//
//
// Creates one MLIRContext per call with every dialect the compiler may see,
// single-threaded (kernels are compiled one after another; threads would only
// add overhead, and `turbine conformance` calls this in forked children where
// a thread-free process is the safe one), then imports and compiles.
//===----------------------------------------------------------------------===//
#include "ModelCompiler.h"

#include "turbine/artifact/Module.h"
#include "turbine/compiler/Pipeline.h"
#include "turbine/frontends/onnx/OnnxImporter.h"
#include "turbine/kernels/CustomOpCalls.h"
#include "turbine/kernels/LibraryOps.h"

#include "turbine/frontends/torch/TorchImporter.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

namespace turbine::tools {
namespace {

/// Parses MLIR source, reporting diagnostics into `error`.
mlir::OwningOpRef<mlir::ModuleOp> parseMlirFile(mlir::MLIRContext &context,
                                                const std::string &path,
                                                std::string &error) {
  llvm::SourceMgr sourceMgr;
  std::string diagnostics;
  llvm::raw_string_ostream os(diagnostics);
  mlir::SourceMgrDiagnosticHandler handler(sourceMgr, &context, os);
  auto module = mlir::parseSourceFile<mlir::ModuleOp>(path, sourceMgr,
                                                      mlir::ParserConfig(&context));
  if (!module)
    error = "failed to parse MLIR file '" + path + "'" +
            (diagnostics.empty() ? std::string() : ":\n" + diagnostics);
  return module;
}

/// Imports a TorchScript archive with the user's input specs.
mlir::OwningOpRef<mlir::ModuleOp> importTorchScript(mlir::MLIRContext &context,
                                                    const std::string &path,
                                                    const TorchScriptInputs *inputs,
                                                    std::string &error) {
  torch_frontend::ImportOptions options;
  if (inputs) {
    for (const std::string &text : inputs->inputShapes) {
      Result<torch_frontend::InputSpec> spec = torch_frontend::parseInputSpec(text);
      if (!spec) {
        error = spec.message();
        return nullptr;
      }
      options.inputs.push_back(*spec);
    }
    for (const std::string &text : inputs->dynamicDims) {
      Result<torch_frontend::DynamicDim> dim = torch_frontend::parseDynamicDim(text);
      if (!dim) {
        error = dim.message();
        return nullptr;
      }
      options.dynamicDims.push_back(*dim);
    }
  }
  Result<mlir::OwningOpRef<mlir::ModuleOp>> module =
      torch_frontend::importTorchScriptFile(context, path, options);
  if (!module) {
    error = module.message();
    return nullptr;
  }
  return std::move(*module);
}

mlir::OwningOpRef<mlir::ModuleOp> importOnnx(mlir::MLIRContext &context, const std::string &path,
                                             const onnx_frontend::ImportOptions &options,
                                             std::string &error) {
  Result<mlir::OwningOpRef<mlir::ModuleOp>> module =
      onnx_frontend::importOnnxFile(context, path, options);
  if (!module) {
    error = module.message();
    return nullptr;
  }
  return std::move(*module);
}

} // namespace

bool compileModelFile(const std::string &path,
                      const compiler::CompileOptions &options,
                      artifact::Module &out, std::string &error,
                      std::string *stoppedModuleText,
                      const TorchScriptInputs *torchInputs,
                      const InputSpecialization &specialization) {
  llvm::StringRef ext = llvm::sys::path::extension(path);
  bool isTorch = ext != ".onnx" && ext != ".mlir" && ext != ".mlirbc" &&
                 torch_frontend::looksLikeTorchScriptFile(path);
  if (ext != ".onnx" && ext != ".mlir" && ext != ".mlirbc" && !isTorch) {
    error = "cannot tell the format of '" + path +
            "': expected a .onnx, .pt (TorchScript), .mlir or .mlirbc file";
    return false;
  }
  if (!isTorch && torchInputs &&
      (!torchInputs->inputShapes.empty() || !torchInputs->dynamicDims.empty())) {
    error = "--input-shape/--dynamic-dim apply to TorchScript models only, not '" + path + "'";
    return false;
  }

  mlir::DialectRegistry registry;
  compiler::registerCompilerDialects(registry);
  mlir::MLIRContext context(registry);
  context.loadAllAvailableDialects();
  context.disableMultithreading();

  onnx_frontend::ImportOptions importOptions;
  importOptions.sequenceInputShapes = specialization.sequenceShapes;
  importOptions.sequenceInputLengths = specialization.sequenceLengths;
  importOptions.absentOptionalInputs = specialization.absentOptionals;
  mlir::OwningOpRef<mlir::ModuleOp> module =
      isTorch          ? importTorchScript(context, path, torchInputs, error)
      : ext == ".onnx" ? importOnnx(context, path, importOptions, error)
                       : parseMlirFile(context, path, error);
  if (!module)
    return false;
  // Calls of custom ops (e.g. ONNX nodes of a custom domain, turbine:: torch
  // ops) -> dispatches; the kernel library's ops (turbine.softmax, ...) are known.
  if (kernels::Status s = kernels::registerLibraryOps(); !s.ok()) {
    error = s.message();
    return false;
  }
  if (kernels::Status s = kernels::expandCustomOpCalls(*module); !s.ok()) {
    error = path + ": " + s.message();
    return false;
  }

  if (!compiler::compileModule(*module, options, &out, error)) {
    error = path + ": " + error;
    return false;
  }
  if (options.stopAfter && stoppedModuleText) {
    mlir::OpPrintingFlags flags;
    flags.elideLargeElementsAttrs(16);
    llvm::raw_string_ostream os(*stoppedModuleText);
    module->print(os, flags);
  }
  return true;
}

} // namespace turbine::tools
