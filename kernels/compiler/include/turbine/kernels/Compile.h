//===- Compile.h - Compiling a specialized kernel through the compiler ----===//
//
// A specialization (every symbol bound, every tile shape concrete) becomes
// an MLIR module in the form the compiler's dispatch phase produces:
//
//   func.func @main(inputs...) -> outputs...   one turbine.dispatch over the
//                                              grid (workgroup = program_id)
//   module @kernels { func.func @<kernel>(%state, %wg_x, %wg_y, %wg_z) }
//
// The kernel body is already at the vector level: buffers are memref
// bindings, program_id the workgroup ids, load/store vector.transfer_read /
// transfer_write (out-of-bounds lanes masked when the op is masked, declared
// in bounds otherwise), elementwise ops arith/math on vectors, reductions
// vector.multi_reduction, dot vector.contract, for_loop scf.for with
// iter_args, rank-0 tiles scalars. Vector ops are then lowered to what the
// compiler's LLVM lowering takes, and a compile session
// (compiler/include/turbine/compiler/Session.h) runs its phases on the
// module (they find the dispatch formed and the kernel already at the
// vector level) and links the artifact.
//
// Inout buffers are arguments of @main that the kernel writes in place.
// Limits of this first lowering: i1 buffers and unsigned dtypes are
// rejected with an error naming the kernel and buffer.
// This header includes no MLIR header.
//===----------------------------------------------------------------------===//
#ifndef TURBINE_KERNELS_COMPILE_H
#define TURBINE_KERNELS_COMPILE_H

#include "turbine/kernels/Specialization.h"

#include <string>

namespace turbine::artifact {
struct Module;
}

namespace turbine::kernels {

/// Options of a kernel compile.
struct KernelCompileOptions {
  std::string targetCpu = "host";
  int optLevel = 3;
  /// If set, dumps the generated module and every compiler phase here.
  std::string dumpDir;
};

/// The module for `spec` as MLIR text (host function @main + kernel).
Result<std::string> emitKernelModule(const Specialization &spec);

/// Only the kernel, as `module { module @kernels {turbine.kernels} {
/// func.func @<funcName> } }` (vector level, vector ops not yet lowered).
/// Its bindings are the inputs and inouts, then the outputs.
Result<std::string> emitKernelFunction(const Specialization &spec,
                                       const std::string &funcName);

/// Compiles a module in the form emitKernelModule produces (host functions
/// dispatching kernels of the container, kernels at the vector or a lower
/// level, every function of the container a kernel) to an artifact.
/// `label` names it in errors ("custom op 'x'").
Status compileKernelModuleText(const std::string &text, const std::string &label,
                               const KernelCompileOptions &options,
                               artifact::Module &out);

/// Compiles a module on tensors (upstream dialects) whose one function is
/// renamed `main`, with the whole compiler pipeline (a custom op's
/// tensor-level body, called eagerly).
Status compileTensorModuleText(const std::string &text, const std::string &label,
                               const KernelCompileOptions &options,
                               artifact::Module &out);

/// Compiles `spec` to an artifact whose function `main` takes the kernel's
/// input and inout buffers and returns its output buffers (declaration
/// order); inout arguments are updated in place.
Status compileKernel(const Specialization &spec,
                     const KernelCompileOptions &options,
                     artifact::Module &out);

} // namespace turbine::kernels

#endif // TURBINE_KERNELS_COMPILE_H
