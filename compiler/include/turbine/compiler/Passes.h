//===- Passes.h - The compiler's passes and phase pipelines ---------------===//
//
// The passes are defined in Passes.td (ODS); this header declares their
// create functions and options and the phase pipelines built from them. For
// tools and layers that build pipelines (turbine-opt, kernels/, tests); a
// compile goes through Session.h. Includes MLIR.
//===----------------------------------------------------------------------===//
#ifndef TURBINE_COMPILER_PASSES_H
#define TURBINE_COMPILER_PASSES_H

#include "turbine/base/Status.h"
#include "turbine/compiler/Options.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"

#include <memory>
#include <string>

namespace turbine::compiler {

class Target;
class PipelineExtension;

#define GEN_PASS_DECL
#include "turbine/compiler/Passes.h.inc"

/// Registers every Turbine pass (and the phase pipelines, as
/// `turbine-input`, `turbine-global-opt`, `turbine-dispatch`,
/// `turbine-codegen-<target>`) with MLIR's pass registry.
void registerTurbinePasses();

/// Adds phase `phase`'s passes for `target` to `pm` (a pass manager on the
/// top-level module), preceded by the extensions' passes. `Link` has no
/// passes: it is the target's emitKernels plus the host programs.
Status buildPhasePipeline(Phase phase, mlir::OpPassManager &pm, const CompileOptions &options,
                        const Target &target,
                        llvm::ArrayRef<const PipelineExtension *> extensions = {});

/// Name of the nested module that holds every kernel function, and the unit
/// attribute marking it.
inline constexpr llvm::StringLiteral kKernelsModuleName = "kernels";
inline constexpr llvm::StringLiteral kKernelsModuleAttr = "turbine.kernels";
/// Unit attribute on every kernel function.
inline constexpr llvm::StringLiteral kKernelAttr = "turbine.kernel";

/// The kernel container of `module`, created if `create`.
mlir::ModuleOp getKernelsModule(mlir::ModuleOp module, bool create);

} // namespace turbine::compiler

#endif // TURBINE_COMPILER_PASSES_H
