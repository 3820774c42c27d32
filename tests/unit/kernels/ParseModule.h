//===- ParseModule.h - Parse MLIR text for the kernel tests ---------------===//
//
// The custom-op tests build models as MLIR text; this parses one with the
// compiler's dialects registered, keeping its context alive beside it, and
// compiles such a module with a default compile session.
//===----------------------------------------------------------------------===//
#ifndef TURBINE_TESTS_UNIT_KERNELS_PARSEMODULE_H
#define TURBINE_TESTS_UNIT_KERNELS_PARSEMODULE_H

#include "turbine/artifact/Module.h"
#include "turbine/compiler/Session.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include <memory>
#include <string>

namespace turbine::testing {

struct ParsedModule {
  std::unique_ptr<mlir::MLIRContext> context;
  mlir::OwningOpRef<mlir::ModuleOp> module; // null if the text did not parse
};

inline ParsedModule parseModule(const std::string &text) {
  mlir::DialectRegistry registry;
  compiler::registerCompilerDialects(registry);
  ParsedModule parsed;
  parsed.context = std::make_unique<mlir::MLIRContext>(registry);
  parsed.context->loadAllAvailableDialects();
  parsed.module = mlir::parseSourceString<mlir::ModuleOp>(text, parsed.context.get());
  return parsed;
}

/// Compiles `module` (its custom-op calls already expanded) to `out`; false
/// with `error` set on failure.
inline bool compileToArtifact(mlir::ModuleOp module, artifact::Module &out, std::string &error) {
  compiler::Session session;
  Result<compiler::CompileOutput> output = session.compileModule(module);
  if (!output) {
    error = output.message();
    return false;
  }
  out = std::move(*output->artifact);
  return true;
}

} // namespace turbine::testing

#endif // TURBINE_TESTS_UNIT_KERNELS_PARSEMODULE_H
