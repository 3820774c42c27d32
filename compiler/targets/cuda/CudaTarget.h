//===- CudaTarget.h - The NVIDIA GPU (CUDA) target ------------------------===//
#ifndef TURBINE_COMPILER_CUDA_CUDATARGET_H
#define TURBINE_COMPILER_CUDA_CUDATARGET_H

#include "turbine/compiler/Target.h"

#include <memory>

namespace turbine::compiler {

/// Kernels as PTX (LLVM's NVPTX backend, through upstream MLIR's gpu/nvvm
/// dialects) and cubins assembled by the CUDA toolkit's ptxas for
/// CompileOptions::cudaArchs; one CUDA thread per workgroup of the kernel
/// ABI (targets/cuda/README.md).
std::unique_ptr<Target> createCudaTarget();

} // namespace turbine::compiler

#endif // TURBINE_COMPILER_CUDA_CUDATARGET_H
