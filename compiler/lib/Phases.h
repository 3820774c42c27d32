//===- Phases.h - Entry points of the individual compiler phases ----------===//
//
// Internal to the compiler library. Each phase transforms the module in place
// and reports failures as MLIR diagnostics on the offending op.
//===----------------------------------------------------------------------===//
#ifndef TURBINE_COMPILER_LIB_PHASES_H
#define TURBINE_COMPILER_LIB_PHASES_H

#include "turbine/compiler/Pipeline.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LLVM.h"

#include <string>

namespace mlir {
class RewritePatternSet;
} // namespace mlir

namespace turbine::artifact {
struct Module;
struct Function;
} // namespace turbine::artifact

namespace turbine::compiler {

/// Name of the nested module that holds every kernel function.
inline constexpr llvm::StringLiteral kKernelsModuleName = "kernels";
/// Unit attribute marking the kernel container.
inline constexpr llvm::StringLiteral kKernelsModuleAttr = "turbine.kernels";

/// Returns the kernel container of `module`, creating it if `create`.
mlir::ModuleOp getKernelsModule(mlir::ModuleOp module, bool create);

mlir::LogicalResult runInputPhase(mlir::ModuleOp module);
mlir::LogicalResult runGlobalOptPhase(mlir::ModuleOp module);
/// Part of global-opt: NCHW convolutions and pooling become NHWC ones between
/// transposes (ChannelsLastConvolutions.cpp).
void convertConvolutionsToChannelsLast(mlir::ModuleOp module);
/// Part of global-opt: tensor.pad ops become gathering linalg.generics
/// (LowerPads.cpp).
mlir::LogicalResult lowerPadsToGathers(mlir::ModuleOp module);
/// Part of global-opt: gathers (lowered pads) read function arguments through
/// their transposes instead of a transposed copy (TransposeElimination.cpp).
void populateTransposeEliminationPatterns(mlir::RewritePatternSet &patterns);
mlir::LogicalResult runDispatchPhase(mlir::ModuleOp module);
/// Part of codegen's vector lowering: reductions of one innermost dim by an
/// order-independent kind become vector.reduction (VectorReductions.cpp).
void populateInnerReductionPatterns(mlir::RewritePatternSet &patterns);
mlir::LogicalResult runCodegenPhase(mlir::ModuleOp module,
                                    const CompileOptions &options);

/// Link: compiles the (LLVM-dialect) kernels to a native shared object.
mlir::FailureOr<std::string> emitKernelLibrary(mlir::ModuleOp kernels,
                                               const CompileOptions &options);

/// Serializes every host function of `module` (after dispatch formation) into
/// `out` (functions, kernel names, parameters).
mlir::LogicalResult buildHostPrograms(mlir::ModuleOp module,
                                      artifact::Module &out);

} // namespace turbine::compiler

#endif // TURBINE_COMPILER_LIB_PHASES_H
