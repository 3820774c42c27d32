//===- EmitLibrary.h - LLVM-dialect kernels -> a native shared object -----===//
//
// The CPU target's link step (EmitLibrary.cpp).
//===----------------------------------------------------------------------===//
#ifndef TURBINE_COMPILER_CPU_EMITLIBRARY_H
#define TURBINE_COMPILER_CPU_EMITLIBRARY_H

#include "turbine/compiler/Options.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LLVM.h"

#include <string>

namespace turbine::compiler {

/// Compiles the (LLVM-dialect) kernel container to the bytes of an ELF
/// shared object for `options.targetCpu`; errors are diagnostics on
/// `kernels`.
mlir::FailureOr<std::string> emitKernelLibrary(mlir::ModuleOp kernels,
                                               const CompileOptions &options);

} // namespace turbine::compiler

#endif // TURBINE_COMPILER_CPU_EMITLIBRARY_H
