//===- CudaTarget.cpp - The CUDA target: its pipelines and its link -------===//
//
//   global-opt  canonicalize, cse (no target layouts yet)
//   dispatch    workgroup tiles of 1 along the (up to) three innermost dims
//               of the tiled value: one CUDA thread per output element (a
//               matmul thread loops over K, a reduction thread over the
//               reduced dims); x walks the innermost dim
//   codegen     the CPU target's workgroup-level tiling in its reference
//               form (turbine-cpu-tile-and-vectorize{reference=true}: tiles
//               and fused producers, ops left as plain loops), one-shot
//               bufferization, small temporaries promoted to the stack,
//               buffer deallocation, linalg -> loops,
//               turbine-cuda-outline-kernels (gpu.func kernels in one
//               gpu.module), then upstream's expand-strided-metadata,
//               lower-affine, convert-scf-to-cf, convert-gpu-to-nvvm
//               (libdevice calls for math), reconcile-unrealized-casts
//   link        PTX (gpu-module-to-binary, NVPTX) + a cubin per
//               --cuda-arch (ptxas), EmitCuda.cpp
// Correct first: no shared memory, tensor cores or block-level strategies
// yet (targets/cuda/README.md).
//===----------------------------------------------------------------------===//
#include "targets/cuda/CudaTarget.h"

#include "targets/cuda/EmitCuda.h"

#include "turbine/compiler/Passes.h"

#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

namespace turbine::compiler {
namespace {

/// After bufferization: loops, then the kernels outlined into a gpu.module
/// and lowered to NVVM (pipeline text, module-level on the container).
constexpr const char *kLoopsPipeline =
    "func.func(convert-linalg-to-loops,lower-affine,"
    "convert-vector-to-scf{full-unroll=true},canonicalize,cse)";
constexpr const char *kNVVMPipeline =
    "gpu.module(expand-strided-metadata,lower-affine,convert-scf-to-cf,"
    "convert-gpu-to-nvvm{index-bitwidth=64},canonicalize,cse,"
    "reconcile-unrealized-casts)";

class CudaTarget final : public Target {
public:
  std::string_view name() const override { return "cuda"; }

  void buildGlobalOptPasses(OpPassManager &pm, const CompileOptions &) const override {
    pm.addPass(createCanonicalizerPass());
    pm.addPass(createCSEPass());
  }

  std::string describeKernelRoot(Operation *) const override { return ""; }

  WorkgroupTiling workgroupTiling(llvm::ArrayRef<Operation *>, Value tiled,
                                  const CompileOptions &) const override {
    auto type = cast<RankedTensorType>(tiled.getType());
    int64_t rank = type.getRank();
    WorkgroupTiling tiling;
    tiling.tileSizes.assign(rank, 0);
    for (int axis = 0; axis < 3 && axis < rank; ++axis) {
      int64_t dim = rank - 1 - axis;
      tiling.tileSizes[dim] = 1;
      tiling.gridDims[axis] = dim;
    }
    return tiling;
  }

  Status buildCodegenPasses(OpPassManager &kernelsPm,
                            const CompileOptions &) const override {
    CpuTileAndVectorizeOptions tiling;
    tiling.reference = true;
    kernelsPm.addPass(createCpuTileAndVectorize(tiling));
    OpPassManager &kernels = kernelsPm.nest<func::FuncOp>();
    kernels.addPass(createCanonicalizerPass());
    kernels.addPass(createCSEPass());
    kernelsPm.addPass(createCpuBufferize());
    // Tile-sized temporaries (a fused producer's tile: one element, or a
    // row of a reduction) live in registers/local memory, not in malloc.
    bufferization::PromoteBuffersToStackPassOptions stack;
    stack.maxAllocSizeInBytes = 4096;
    stack.maxRankOfAllocatedMemRef = 8;
    kernelsPm.nest<func::FuncOp>().addPass(bufferization::createPromoteBuffersToStackPass(stack));
    bufferization::buildBufferDeallocationPipeline(kernelsPm);
    std::string errors;
    llvm::raw_string_ostream os(errors);
    if (failed(parsePassPipeline(kLoopsPipeline, kernelsPm, os)))
      return Status::error("internal error: the cuda loop pipeline does not parse: " + errors);
    kernelsPm.addPass(createCudaOutlineKernels());
    if (failed(parsePassPipeline(kNVVMPipeline, kernelsPm, os)))
      return Status::error("internal error: the cuda NVVM pipeline does not parse: " + errors);
    return Status::success();
  }

  Status emitKernels(ModuleOp kernels, const CompileOptions &options,
                     artifact::Module &out) const override {
    return emitCudaKernels(kernels, options, out);
  }
};

} // namespace

std::unique_ptr<Target> createCudaTarget() { return std::make_unique<CudaTarget>(); }

} // namespace turbine::compiler
