//===- Launch.h - Eager launch of kernels on host tensors -----------------===//
//
//   Status s = launch(*kernel, {a, b, c}, {{"BLOCK_M", 32}, ...});
//
// Specializes the kernel for the tensors' shapes and the given symbols,
// compiles the specialization on first use (Compile.h), keeps the loaded
// runtime module in an in-memory cache keyed by the kernel's printed graph
// and its symbol values (dynamic symbols excluded: one compiled kernel
// serves all their values), and runs it: the kernel is dispatched directly
// over the grid on the caller's buffers (inputs read, outputs and inouts
// written in place; no copies), with the dynamic symbols' values as push
// constants. A call with the same kernel, buffer shapes, dtypes and symbols
// as an earlier one skips specialization too (its checks passed then).
// A content-hashed disk cache ($TURBINE_CACHE_DIR, else
// $XDG_CACHE_HOME/turbine, else ~/.cache/turbine; TURBINE_CACHE_DIR="" turns
// it off; see Launch.cpp) lets a new
// process skip compiling; a corrupt entry is detected and rebuilt.
// `launchStats()` counts cache hits and misses and the time spent compiling;
// TURBINE_DEBUG=kernels (or =all) logs every cache decision to stderr;
// TURBINE_KERNELS_DUMP_DIR=DIR writes, per compile, DIR/<hash>/0.kernel.mlir
// (as emitted) and 1.vector-lowered.mlir.
//===----------------------------------------------------------------------===//
#ifndef TURBINE_KERNELS_LAUNCH_H
#define TURBINE_KERNELS_LAUNCH_H

#include "turbine/kernels/Compile.h"
#include "turbine/runtime/Tensor.h"

namespace turbine::runtime {
class Device;
}

namespace turbine::kernels {

struct LaunchStats {
  int64_t memoryHits = 0;
  int64_t diskHits = 0;
  int64_t misses = 0;         // compiles
  int64_t corruptEntries = 0; // disk entries rejected and rebuilt
  double compileMillis = 0;   // total time compiling
};

/// Runs `kernel` on `buffers` (declaration order), compiling on first use.
/// `device` defaults to a process-wide local-sync device.
Status launch(const Kernel &kernel, std::vector<runtime::Tensor> buffers,
              const Bindings &symbols = {}, runtime::Device *device = nullptr);

/// A buffer argument in caller memory: dense and row-major; `shape` points
/// at `rank` dims and must stay valid during the call.
struct LaunchBuffer {
  void *data = nullptr;
  DType dtype = DType::f32;
  const int64_t *shape = nullptr;
  size_t rank = 0;
  bool readOnly = false;
};

/// launch() on raw buffers (what language bindings call: no tensor objects
/// are made per call).
Status launchBuffers(const Kernel &kernel, const LaunchBuffer *buffers, size_t count,
                     const Bindings &symbols = {}, runtime::Device *device = nullptr);

/// For benchmarks: seconds per call of launchBuffers (median of batches),
/// and of the compiled kernel's dispatches alone on the same buffers, grid
/// and push constants (the kernel's own time: no cache lookup, no checks).
struct LaunchTimings {
  double launchSeconds = 0;
  double dispatchSeconds = 0;
};
Result<LaunchTimings> timeLaunches(const Kernel &kernel, const LaunchBuffer *buffers,
                                   size_t count, const Bindings &symbols, int repetitions);

/// Runs @main of a kernel module (the form compileKernelModuleText takes)
/// on `inputs` and returns its results; compiled on first use and cached
/// like launch() (the text is the cache key). `label` names it in errors.
Result<std::vector<runtime::Tensor>>
launchModule(const std::string &label, const std::string &moduleText,
             const std::vector<runtime::Tensor> &inputs,
             runtime::Device *device = nullptr);

/// Runs a model given as MLIR text whose @main is on tensors in upstream
/// dialects (a custom op's tensor-level body): compiled on first use with the
/// whole compiler pipeline (compiler::compileModule) and cached like
/// launchModule (in memory and on disk; the text is the key).
Result<std::vector<runtime::Tensor>>
launchTensorModule(const std::string &label, const std::string &moduleText,
                   const std::vector<runtime::Tensor> &inputs,
                   runtime::Device *device = nullptr);

/// Counters since process start (or the last reset).
LaunchStats launchStats();
void resetLaunchStats();
/// Drops every cached compiled kernel (the next launch compiles again).
void clearLaunchCache();

} // namespace turbine::kernels

#endif // TURBINE_KERNELS_LAUNCH_H
