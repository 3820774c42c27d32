//===- Passes.td - The kernel layer's passes ------------------------------===//
//
// Passes kernels/ adds to the compiler's pipelines through a compile
// session extension (CustomOpCalls.h).
//===----------------------------------------------------------------------===//
#ifndef TURBINE_KERNELS_PASSES
#define TURBINE_KERNELS_PASSES

include "mlir/Pass/PassBase.td"

def ExpandCustomOpCalls : Pass<"turbine-expand-custom-ops", "mlir::ModuleOp"> {
  let summary = "Custom-op calls become dispatches of their kernels";
  let description = [{
    Every call of a declaration carrying `turbine.custom_op` runs the op's
    select step on the call's static tensor types and attributes, generates
    and specializes its kernel into the kernel container (vector level) and
    is replaced by a `turbine.dispatch` of it. Runs first in the dispatch
    phase, so input and global-opt show the readable calls.
  }];
  let dependentDialects = ["mlir::func::FuncDialect", "mlir::arith::ArithDialect",
                           "mlir::math::MathDialect", "mlir::vector::VectorDialect",
                           "mlir::scf::SCFDialect", "mlir::memref::MemRefDialect",
                           "mlir::LLVM::LLVMDialect", "mlir::affine::AffineDialect",
                           "::turbine::compiler::TurbineDialect"];
}

#endif // TURBINE_KERNELS_PASSES
