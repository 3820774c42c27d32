//===- LoadedModule.h - Runtime state of a loaded artifact (internal) ----===//
//
// What Module, Function and the host-program interpreter share: the validated
// artifact, the dlopen'ed kernel library with its resolved kernel entry
// points, and the parameters copied into aligned read-only storage.
//===----------------------------------------------------------------------===//
#ifndef TURBINE_RUNTIME_SRC_LOADEDMODULE_H
#define TURBINE_RUNTIME_SRC_LOADEDMODULE_H

#include "BufferPool.h"
#include "BufferReleasePlan.h"
#include "turbine/artifact/KernelABI.h"
#include "turbine/artifact/Module.h"
#include "turbine/runtime/Tensor.h"

#include <memory>
#include <mutex>
#include <utility>
#include <string>
#include <vector>

namespace turbine::runtime::detail {

struct LoadedModule {
  std::string label;
  /// Functions, kernel names and the parameter table; `library` and
  /// `paramData` are released after loading.
  artifact::Module artifact;
  /// dlopen handle of the kernel library (null when it has no kernels), and
  /// the memfd it was opened from, kept open so its /proc path stays unique.
  void *libraryHandle = nullptr;
  int libraryFd = -1;
  /// Entry point of artifact.kernels[i].
  std::vector<turbine_kernel_fn_t> kernels;
  /// artifact.parameters[i] as a read-only tensor: a view of the embedded
  /// params section or of a bound parameter file, made once at load.
  std::vector<Tensor> parameters;
  /// planBufferReleases(artifact.functions[i]), made once at load.
  std::vector<BufferReleasePlan> releasePlans;
  /// Where every call's Alloc instructions get their storage.
  std::shared_ptr<BufferPool> bufferPool = BufferPool::create();

  /// GPU devices' per-device state of this module (loaded code, uploaded
  /// parameters), keyed by a device id; see GpuDevice.h.
  mutable std::mutex gpuMutex;
  mutable std::vector<std::pair<uint64_t, std::shared_ptr<void>>> gpuStates;

  LoadedModule() = default;
  LoadedModule(const LoadedModule &) = delete;
  LoadedModule &operator=(const LoadedModule &) = delete;
  ~LoadedModule();
};

} // namespace turbine::runtime::detail

#endif // TURBINE_RUNTIME_SRC_LOADEDMODULE_H
