//===- CpuTarget.cpp - The CPU target: its pipelines and its link ---------===//
//
//   global-opt  turbine-data-tile-matmuls, canonicalize, cse,
//               turbine-pack-convolution-filters
//   dispatch    workgroup tiles from CpuWorkgroupTiling.cpp
//   codegen     turbine-cpu-tile-and-vectorize, turbine-cpu-lower-vector-masks,
//               canonicalize + cse per kernel, turbine-cpu-bufferize,
//               upstream buffer deallocation, turbine-cpu-prefetch-filter-blocks,
//               turbine-cpu-lower-vectors, turbine-cpu-approximate-math,
//               turbine-cpu-lower-kernel-abi, upstream's LLVM conversions
//   link        LLVM IR -> optimized objects (in parallel) -> ld.lld -> .so
//===----------------------------------------------------------------------===//
#include "targets/cpu/CpuTarget.h"

#include "targets/cpu/CodegenStrategies.h"
#include "targets/cpu/CpuFeatures.h"
#include "targets/cpu/CpuWorkgroupTiling.h"
#include "targets/cpu/EmitLibrary.h"
#include "targets/cpu/LowerKernelsToLLVM.h"

#include "turbine/artifact/Module.h"
#include "turbine/compiler/Passes.h"

#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

namespace turbine::compiler {
namespace {

/// Largest static allocation a kernel keeps on its stack (bytes).
constexpr int64_t kMaxStackTemporaryBytes = 4096;

/// A static allocation of at most kMaxStackTemporaryBytes.
bool isSmallTemporary(Value alloc) {
  auto type = dyn_cast<MemRefType>(alloc.getType());
  if (!type || !type.hasStaticShape() || !type.getElementType().isIntOrFloat())
    return false;
  int64_t bits = type.getNumElements() * type.getElementType().getIntOrFloatBitWidth();
  return bits <= 8 * kMaxStackTemporaryBytes;
}

/// The CPU the kernels are compiled for: --target-cpu, "host" if not given.
std::string targetCpuOf(const CompileOptions &options) {
  return options.targetCpu.empty() ? std::string("host") : options.targetCpu;
}

class CpuTarget final : public Target {
public:
  std::string_view name() const override { return "cpu"; }

  void buildGlobalOptPasses(OpPassManager &pm, const CompileOptions &options) const override {
    DataTileMatmulsOptions tiling;
    tiling.dataTiling = options.matmulDataTiling;
    tiling.kernelPack = options.matmulKernelPack;
    pm.addPass(createDataTileMatmuls(tiling));
    pm.addPass(createCanonicalizerPass());
    pm.addPass(createCSEPass());
    // Last, after fusion: constant convolution filters repacked
    // channel-tile-major.
    pm.addPass(createPackConvolutionFilters());
  }

  // A one-row tile's columns (8 registers: 128 with AVX-512, 64 with 16
  // registers). Blocks of 128 read by 64-column tiles were every other
  // 64-byte line per K step: int8 / int4 GEMVs at 0.3-0.5 of the read
  // bandwidth, 0.6-0.9 in blocks of 64 (docs/performance.md).
  int64_t quantizedWeightColumns(const CompileOptions &options) const override {
    return registerTiles(cpuFeatures(targetCpuOf(options))).gemvColumns;
  }

  std::string describeKernelRoot(Operation *op) const override {
    return describeCpuKernelRoot(op);
  }

  WorkgroupTiling workgroupTiling(llvm::ArrayRef<Operation *> regionOps, Value tiled,
                                  const CompileOptions &options) const override {
    return cpuWorkgroupTiling(regionOps, tiled, registerTiles(cpuFeatures(targetCpuOf(options))));
  }

  Status buildCodegenPasses(OpPassManager &kernelsPm,
                            const CompileOptions &options) const override {
    CpuTileAndVectorizeOptions tiling;
    tiling.reference = options.referenceKernels;
    // The CPU the link compiles for (EmitLibrary: "" is the host too).
    tiling.targetCpu = targetCpuOf(options);
    tiling.int8Activations = options.quantizedMatmulActivations == "int8";
    // Fused attention kernels first: written on their bindings directly,
    // nothing left for the generic strategies.
    kernelsPm.addPass(createCpuLowerAttention());
    kernelsPm.addPass(createCpuTileAndVectorize(tiling));
    kernelsPm.addPass(createCpuLowerVectorMasks());
    OpPassManager &kernels = kernelsPm.nest<func::FuncOp>();
    kernels.addPass(createCanonicalizerPass());
    kernels.addPass(createCSEPass());
    kernelsPm.addPass(createCpuBufferize());
    // Tile-sized temporaries (a register tile's accumulator that its
    // epilogue reads back, 1 KB) are static allocations inside the tile
    // loops, each a malloc / free per register tile: out of the loops and
    // onto the stack, where LLVM keeps them in registers.
    OpPassManager &temporaries = kernelsPm.nest<func::FuncOp>();
    temporaries.addPass(bufferization::createBufferLoopHoistingPass());
    temporaries.addPass(bufferization::createPromoteBuffersToStackPass(isSmallTemporary));
    bufferization::buildBufferDeallocationPipeline(kernelsPm);
    OpPassManager &afterDealloc = kernelsPm.nest<func::FuncOp>();
    afterDealloc.addPass(createCanonicalizerPass());
    afterDealloc.addPass(createCSEPass());
    kernelsPm.addPass(createCpuPrefetchFilterBlocks());
    kernelsPm.addPass(createCpuLowerVectors());
    kernelsPm.addPass(createCpuApproximateMath());
    kernelsPm.addPass(createCpuLowerKernelAbi());
    return addLLVMLoweringPasses(kernelsPm);
  }

  bool codegenPerKernel() const override { return true; }

  Status emitKernels(ModuleOp kernels, const CompileOptions &options,
                     artifact::Module &out) const override {
    FailureOr<std::string> library = emitKernelLibrary(kernels, options);
    if (failed(library))
      return Status::error("emitting the kernel library failed");
    out.library = std::move(*library);
    recordTargetCpu(options.targetCpu, out);
    return Status::success();
  }
};

} // namespace

std::unique_ptr<Target> createCpuTarget() { return std::make_unique<CpuTarget>(); }

} // namespace turbine::compiler
