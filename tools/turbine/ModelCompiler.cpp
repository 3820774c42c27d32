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

} // namespace

bool compileModelFile(const std::string &path,
                      const compiler::CompileOptions &options,
                      artifact::Module &out, std::string &error,
                      std::string *stoppedModuleText,
                      const InputSpecialization &specialization) {
  llvm::StringRef ext = llvm::sys::path::extension(path);
  if (ext != ".onnx" && ext != ".mlir" && ext != ".mlirbc") {
    error = "cannot tell the format of '" + path +
            "': expected a .onnx, .mlir or .mlirbc file";
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
      ext == ".onnx" ? onnx_frontend::importOnnxFile(context, path, importOptions, error)
                     : parseMlirFile(context, path, error);
  if (!module)
    return false;

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
