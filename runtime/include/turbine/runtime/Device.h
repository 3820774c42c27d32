//===- Device.h - Where dispatches run: local-sync, local-task, cuda ------===//
//
// A Device runs the workgroups of one kernel dispatch (the cuda device runs
// whole calls on a GPU instead: see runtime/src/GpuDevice.h). `local-sync` runs every
// workgroup on the calling thread; `local-task` owns a thread pool and splits
// the workgroups of each dispatch across its workers and the caller, returning
// when all are done.
//===----------------------------------------------------------------------===//
#ifndef TURBINE_RUNTIME_DEVICE_H
#define TURBINE_RUNTIME_DEVICE_H

#include "turbine/artifact/KernelABI.h"
#include "turbine/runtime/Status.h"

#include <memory>
#include <string>
#include <vector>

namespace turbine::runtime {

/// Options for Device::create.
struct DeviceOptions {
  /// local-task: number of threads that execute workgroups, counting the
  /// calling thread (so N - 1 pool threads are started). 0 = hardware cores.
  int taskWorkers = 0;
};

/// Executes kernel dispatches.
class Device {
public:
  virtual ~Device();

  /// Creates "local-sync", "local-task" or "cuda" / "cuda:N" (NVIDIA GPU N
  /// through the driver API, loaded at run time: an error when there is no
  /// driver or GPU; it runs artifacts compiled with --target=cuda, the CPU
  /// devices those compiled for 'cpu'); other names give an error listing
  /// the valid ones.
  static Result<std::unique_ptr<Device>> create(const std::string &name,
                                                const DeviceOptions &options = {});
  /// The names create() accepts.
  static std::vector<std::string> availableNames();

  /// The name this device was created with.
  virtual const std::string &name() const = 0;
  /// Threads that execute workgroups, including the caller.
  virtual int workerCount() const = 0;
  /// Runs `kernel` on every workgroup of `state.workgroup_count` and returns
  /// when all have finished. A count <= 0 in any dimension runs nothing.
  /// The cuda device runs no CPU kernels: there this does nothing (its
  /// kernels are launched by Function::invoke on cuda artifacts).
  virtual void dispatch(turbine_kernel_fn_t kernel,
                        const turbine_dispatch_state_t &state) = 0;
};

} // namespace turbine::runtime

#endif // TURBINE_RUNTIME_DEVICE_H
