//===- Pipeline.cpp - Runs the named phases, dumps them, builds artifacts -===//
#include "Phases.h"

#include "turbine/artifact/Module.h"
#include "turbine/compiler/Dialect/TurbineDialect.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;

namespace turbine::compiler {

const std::vector<Phase> &allPhases() {
  static const std::vector<Phase> phases = {Phase::Input, Phase::GlobalOpt,
                                            Phase::Dispatch, Phase::Codegen,
                                            Phase::Link};
  return phases;
}

std::string_view phaseName(Phase phase) {
  switch (phase) {
  case Phase::Input:
    return "input";
  case Phase::GlobalOpt:
    return "global-opt";
  case Phase::Dispatch:
    return "dispatch";
  case Phase::Codegen:
    return "codegen";
  case Phase::Link:
    return "link";
  }
  return "?";
}

std::optional<Phase> parsePhase(std::string_view name) {
  for (Phase p : allPhases())
    if (phaseName(p) == name)
      return p;
  return std::nullopt;
}

void registerCompilerDialects(DialectRegistry &registry) {
  registerAllDialects(registry);
  registerAllExtensions(registry);
  registerAllToLLVMIRTranslations(registry);
  registry.insert<TurbineDialect>();
  // Textual pass pipelines (the kernel lowering) look passes up by name.
  static bool passesRegistered = [] {
    registerAllPasses();
    return true;
  }();
  (void)passesRegistered;
}

ModuleOp getKernelsModule(ModuleOp module, bool create) {
  for (auto nested : module.getOps<ModuleOp>())
    if (nested->hasAttr(kKernelsModuleAttr))
      return nested;
  if (!create)
    return nullptr;
  OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
  auto kernels = ModuleOp::create(b, module.getLoc(), kKernelsModuleName);
  kernels->setAttr(kKernelsModuleAttr, b.getUnitAttr());
  return kernels;
}

static bool dumpPhase(ModuleOp module, const std::string &dir, int index,
                      Phase phase, std::string &error) {
  if (auto ec = llvm::sys::fs::create_directories(dir)) {
    error = "cannot create dump directory '" + dir + "': " + ec.message();
    return false;
  }
  llvm::SmallString<256> path(dir);
  llvm::sys::path::append(path, std::to_string(index) + "." +
                                    std::string(phaseName(phase)) + ".mlir");
  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec);
  if (ec) {
    error = "cannot write '" + std::string(path) + "': " + ec.message();
    return false;
  }
  module->print(os, OpPrintingFlags().elideLargeElementsAttrs(16));
  return true;
}

bool compileModule(ModuleOp module, const CompileOptions &options,
                   artifact::Module *out, std::string &error) {
  // Collect diagnostics into `error` rather than printing them.
  std::string diagnostics;
  llvm::raw_string_ostream diagStream(diagnostics);
  ScopedDiagnosticHandler handler(module.getContext(), [&](Diagnostic &diag) {
    if (diag.getSeverity() != DiagnosticSeverity::Error)
      return success();
    diagStream << diag.getLocation() << ": " << diag << "\n";
    for (Diagnostic &note : diag.getNotes())
      diagStream << "  note: " << note.getLocation() << ": " << note << "\n";
    return success();
  });
  auto fail = [&](Phase phase) {
    error = "phase '" + std::string(phaseName(phase)) + "' failed";
    if (!diagnostics.empty())
      error += ":\n" + diagnostics;
    while (!error.empty() && error.back() == '\n')
      error.pop_back();
    return false;
  };

  if (failed(verify(module))) {
    error = "input module is invalid:\n" + diagnostics;
    return false;
  }
  int index = 0;
  for (Phase phase : allPhases()) {
    LogicalResult result = success();
    switch (phase) {
    case Phase::Input:
      result = runInputPhase(module);
      break;
    case Phase::GlobalOpt:
      result = runGlobalOptPhase(module);
      break;
    case Phase::Dispatch:
      result = runDispatchPhase(module);
      break;
    case Phase::Codegen:
      result = runCodegenPhase(module, options);
      break;
    case Phase::Link: {
      artifact::Module artifact;
      if (failed(buildHostPrograms(module, artifact)))
        return fail(phase);
      FailureOr<std::string> library =
          emitKernelLibrary(getKernelsModule(module, /*create=*/true), options);
      if (failed(library))
        return fail(phase);
      artifact.library = std::move(*library);
      if (out)
        *out = std::move(artifact);
      break;
    }
    }
    if (failed(result) || failed(verify(module)))
      return fail(phase);
    ++index;
    if (!options.dumpPhasesDir.empty() &&
        !dumpPhase(module, options.dumpPhasesDir, index, phase, error))
      return false;
    if (options.stopAfter && *options.stopAfter == phase)
      return true;
  }
  return true;
}

} // namespace turbine::compiler
