//===- Pipeline.h - The compiler's named phases and its entry points ------===//
//
// A module in upstream dialects on tensors goes through named phases, each of
// which can be stopped after and dumped (like IREE's compilation phases):
//
//   input       tosa -> linalg, shape cleanup; the canonical input form
//   global-opt  whole-program simplification, elementwise fusion
//   dispatch    dispatch regions outlined into kernels + turbine.dispatch
//   codegen     per kernel: workgroup tiling, vectorization, bufferization,
//               lowering to the LLVM dialect
//   link        kernels -> native shared object; host program serialized
//
// The finished module and the native library together make an artifact.
//===----------------------------------------------------------------------===//
#ifndef TURBINE_COMPILER_PIPELINE_H
#define TURBINE_COMPILER_PIPELINE_H

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace mlir {
class DialectRegistry;
class ModuleOp;
} // namespace mlir

namespace turbine::artifact {
struct Module;
}

namespace turbine::compiler {

enum class Phase { Input, GlobalOpt, Dispatch, Codegen, Link };

/// All phases in order.
const std::vector<Phase> &allPhases();
std::string_view phaseName(Phase phase);
std::optional<Phase> parsePhase(std::string_view name);

struct CompileOptions {
  /// Stop after this phase (the module is left as that phase produced it).
  std::optional<Phase> stopAfter;
  /// If set, write `N.<phase>.mlir` here after every phase that runs.
  std::string dumpPhasesDir;
  /// Target CPU for kernels ("host" = the machine compiling).
  std::string targetCpu = "host";
  /// LLVM optimization level for kernels (0-3).
  int optLevel = 3;
};

/// Registers every dialect and interface the compiler may see or create.
void registerCompilerDialects(mlir::DialectRegistry &registry);

/// Runs the phases on `module` in place up to `options.stopAfter` (or all).
/// When the link phase runs, `out` receives the artifact. Returns false and
/// sets `error` (phase, op, reason) on failure.
bool compileModule(mlir::ModuleOp module, const CompileOptions &options,
                   artifact::Module *out, std::string &error);

} // namespace turbine::compiler

#endif // TURBINE_COMPILER_PIPELINE_H
