//===- EmitCuda.h - The CUDA target's link: PTX and cubins ----------------===//
//
// The gpu.module left by codegen (turbine-cuda-outline-kernels, then
// upstream's convert-gpu-to-nvvm) becomes PTX through upstream's
// gpu-module-to-binary (format=isa: LLVM's NVPTX backend, libdevice linked
// from the toolkit), and the PTX a cubin per architecture through the
// toolkit's ptxas. The CUDA toolkit is $CUDA_HOME or $CUDA_PATH when set
// (an error if it is not a toolkit), else the directory above a `ptxas` on
// $PATH, else /usr/local/cuda. With --dump-phases the PTX is also written to
// DIR/kernels.ptx.
//===----------------------------------------------------------------------===//
#ifndef TURBINE_COMPILER_CUDA_EMITCUDA_H
#define TURBINE_COMPILER_CUDA_EMITCUDA_H

#include "turbine/base/Status.h"
#include "turbine/compiler/Options.h"

#include <string>

namespace mlir {
class ModuleOp;
}
namespace turbine::artifact {
struct Module;
}

namespace turbine::compiler {

/// The CUDA toolkit's root (holding bin/ptxas and
/// nvvm/libdevice/libdevice.10.bc), or an error saying where it looked.
Result<std::string> findCudaToolkit();

/// The PTX ISA version (as "+ptxNN") LLVM emits for `arch` (sm_NN).
std::string ptxFeatureFor(const std::string &arch);

/// Fills `out.library` with the PTX and one cubin per options.cudaArchs
/// entry (`out.images` says where each lies) and `out.kernelLaunch` with
/// each kernel's parameter counts, from the kernel container `kernels`.
Status emitCudaKernels(mlir::ModuleOp kernels, const CompileOptions &options,
                       artifact::Module &out);

} // namespace turbine::compiler

#endif // TURBINE_COMPILER_CUDA_EMITCUDA_H
