//===- HostProgram.h - Host functions -> the artifact's register programs -===//
//
// The link phase's target-independent half: after codegen, every public host
// function becomes a register program of the artifact, dense constants its
// parameters, and the kernel container's functions its kernel table.
//===----------------------------------------------------------------------===//
#ifndef TURBINE_COMPILER_HOST_HOSTPROGRAM_H
#define TURBINE_COMPILER_HOST_HOSTPROGRAM_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LLVM.h"

namespace turbine::artifact {
struct Module;
}

namespace turbine::compiler {

/// Serializes every host function of `module` (after dispatch formation) into
/// `out` (functions, kernel names, parameters); errors are diagnostics on the
/// offending op.
mlir::LogicalResult buildHostPrograms(mlir::ModuleOp module, artifact::Module &out);

} // namespace turbine::compiler

#endif // TURBINE_COMPILER_HOST_HOSTPROGRAM_H
