//===- EmitKernel.h - A specialized kernel as MLIR, built with OpBuilder --===//
//
// The MLIR-level side of Compile.h, for code that already works on MLIR
// (the kernel compiler, the expansion of custom-op calls in a model): the
// kernel graph of a specialization becomes ops built in place, with no text
// in between. The op mapping is described in Compile.h. Every op carries a
// location naming the kernel and the traced op ("softmax: op #3 'load'").
// Includes MLIR headers: keep it out of headers that many files include.
//===----------------------------------------------------------------------===//
#ifndef TURBINE_KERNELS_EMITKERNEL_H
#define TURBINE_KERNELS_EMITKERNEL_H

#include "turbine/kernels/Compile.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

#include <optional>

namespace turbine::kernels {

/// The MLIR element type of `dtype` (f16, bf16, f32, f64, i1, i8..i64;
/// null for the others: strings, unsigned).
mlir::Type elementTypeOf(mlir::MLIRContext *context, DType dtype);
/// The DType of MLIR element type `type`, for the types elementTypeOf makes.
std::optional<DType> dtypeOfElementType(mlir::Type type);

/// Loads the dialects the kernel emitter builds ops of into `context`.
void loadKernelDialects(mlir::MLIRContext &context);

/// The whole module for `spec` in `context`: host function @main (one
/// turbine.dispatch over the grid) and the kernel container holding the
/// kernel, named after the kernel.
Result<mlir::OwningOpRef<mlir::ModuleOp>> buildKernelModule(mlir::MLIRContext &context,
                                                            const Specialization &spec);

/// Only the kernel function `funcName`, built at `builder`'s insertion point
/// (normally the end of a kernel container). Its bindings are the inputs
/// and inouts, then the outputs. On error nothing is left behind.
Result<mlir::func::FuncOp> buildKernelFunction(mlir::OpBuilder &builder,
                                               const Specialization &spec,
                                               const std::string &funcName);

} // namespace turbine::kernels

#endif // TURBINE_KERNELS_EMITKERNEL_H
