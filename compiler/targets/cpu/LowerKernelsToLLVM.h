//===- LowerKernelsToLLVM.h - The end of the CPU codegen pipeline ---------===//
//
// Bufferized, vectorized kernels to the LLVM dialect: after the passes
// turbine-cpu-approximate-math and turbine-cpu-lower-kernel-abi, upstream's
// conversions (loops, affine, vector, math, memref, arith, cf, func -> llvm).
//===----------------------------------------------------------------------===//
#ifndef TURBINE_COMPILER_CPU_LOWERKERNELSTOLLVM_H
#define TURBINE_COMPILER_CPU_LOWERKERNELSTOLLVM_H

#include "turbine/base/Status.h"

namespace mlir {
class OpPassManager;
} // namespace mlir

namespace turbine::compiler {

/// Adds upstream's lowering of the kernel container to the LLVM dialect to
/// `kernelsPm` (a pass manager on the kernel container).
Status addLLVMLoweringPasses(mlir::OpPassManager &kernelsPm);

} // namespace turbine::compiler

#endif // TURBINE_COMPILER_CPU_LOWERKERNELSTOLLVM_H
