//===- LinkKernels.cpp - Codegen tail + link for prebuilt vector kernels --===//
#include "turbine/compiler/LinkKernels.h"

#include "Phases.h"

#include "turbine/artifact/Module.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;

namespace turbine::compiler {

LogicalResult lowerKernelsToLLVM(ModuleOp kernels, const CompileOptions &options);

bool linkVectorKernels(ModuleOp module, const CompileOptions &options,
                       artifact::Module &out, std::string &error) {
  std::string diagnostics;
  llvm::raw_string_ostream diagStream(diagnostics);
  ScopedDiagnosticHandler handler(module.getContext(), [&](Diagnostic &diag) {
    if (diag.getSeverity() == DiagnosticSeverity::Error)
      diagStream << diag.getLocation() << ": " << diag << "\n";
    return success();
  });
  auto fail = [&](const char *what) {
    error = std::string(what) + (diagnostics.empty() ? "" : ":\n" + diagnostics);
    return false;
  };
  ModuleOp kernels = getKernelsModule(module, /*create=*/false);
  if (!kernels)
    return fail("module has no kernel container");
  if (failed(lowerKernelsToLLVM(kernels, options)) || failed(verify(module)))
    return fail("lowering the kernels to LLVM failed");
  artifact::Module artifact;
  if (failed(buildHostPrograms(module, artifact)))
    return fail("building the host program failed");
  FailureOr<std::string> library = emitKernelLibrary(kernels, options);
  if (failed(library))
    return fail("emitting the kernel library failed");
  artifact.library = std::move(*library);
  out = std::move(artifact);
  return true;
}

} // namespace turbine::compiler
