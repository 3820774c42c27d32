//===- LinkKernels.h - Link a module whose kernels are already vectorized -===//
//
// For producers that write kernels themselves (the kernel language, see
// kernels/): `module` has host functions on tensors that call
// `turbine.dispatch`, and a kernel container (`module @kernels attributes
// {turbine.kernels}`) whose functions use the kernel ABI ops on memrefs and
// are already at the vector level, with vector ops lowered to what the
// LLVM lowering takes (transfers of rank <= 1 or with masks, no
// vector.contract / multi_reduction). This runs the tail of the codegen
// phase (ABI ops, math approximations, LLVM dialect) and the link phase.
// Includes no MLIR header.
//===----------------------------------------------------------------------===//
#ifndef TURBINE_COMPILER_LINKKERNELS_H
#define TURBINE_COMPILER_LINKKERNELS_H

#include "turbine/compiler/Pipeline.h"

#include <string>

namespace turbine::compiler {

/// Lowers the kernels of `module` to native code and builds the artifact.
/// Returns false and sets `error` (with the MLIR diagnostics) on failure.
bool linkVectorKernels(mlir::ModuleOp module, const CompileOptions &options,
                       artifact::Module &out, std::string &error);

} // namespace turbine::compiler

#endif // TURBINE_COMPILER_LINKKERNELS_H
