//===- Device.cpp - local-sync and local-task devices ---------------------===//
//
// local-sync runs every workgroup inline on the caller. local-task hands
// dispatches with more than one workgroup to a WorkgroupPool; single-workgroup
// dispatches run inline to avoid any handoff. "cuda" / "cuda:N" are created
// in cuda/CudaDevice.cpp.
//===----------------------------------------------------------------------===//
#include "turbine/runtime/Device.h"

#include "WorkgroupPool.h"
#include "cuda/CudaDevice.h"

#include <algorithm>
#include <system_error>
#include <thread>

namespace turbine::runtime {
namespace {

/// Runs all workgroups of `state` on the calling thread.
void runInline(turbine_kernel_fn_t kernel, const turbine_dispatch_state_t &state) {
  for (int64_t z = 0; z < state.workgroup_count[2]; ++z)
    for (int64_t y = 0; y < state.workgroup_count[1]; ++y)
      for (int64_t x = 0; x < state.workgroup_count[0]; ++x)
        kernel(&state, x, y, z);
}

bool isEmptyDispatch(const turbine_dispatch_state_t &state) {
  return state.workgroup_count[0] <= 0 || state.workgroup_count[1] <= 0 ||
         state.workgroup_count[2] <= 0;
}

class LocalSyncDevice final : public Device {
public:
  const std::string &name() const override { return name_; }
  int workerCount() const override { return 1; }
  void dispatch(turbine_kernel_fn_t kernel,
                const turbine_dispatch_state_t &state) override {
    if (!isEmptyDispatch(state))
      runInline(kernel, state);
  }

private:
  std::string name_ = "local-sync";
};

class LocalTaskDevice final : public Device {
public:
  explicit LocalTaskDevice(int workers) : pool_(workers - 1) {}
  const std::string &name() const override { return name_; }
  int workerCount() const override { return pool_.threadCount() + 1; }
  void dispatch(turbine_kernel_fn_t kernel,
                const turbine_dispatch_state_t &state) override {
    if (isEmptyDispatch(state))
      return;
    int64_t total = state.workgroup_count[0] * state.workgroup_count[1] *
                    state.workgroup_count[2];
    if (total == 1 || pool_.threadCount() == 0)
      runInline(kernel, state);
    else
      pool_.run(kernel, state);
  }

private:
  std::string name_ = "local-task";
  detail::WorkgroupPool pool_;
};

} // namespace

Device::~Device() = default;

std::vector<std::string> Device::availableNames() {
  return {"local-sync", "local-task", "cuda"};
}

Result<std::unique_ptr<Device>> Device::create(const std::string &name,
                                               const DeviceOptions &options) {
  if (name == "local-sync")
    return std::unique_ptr<Device>(new LocalSyncDevice());
  if (name == "local-task") {
    constexpr int kMaxWorkers = 1024;
    int workers = options.taskWorkers;
    if (workers < 0 || workers > kMaxWorkers)
      return Status::error("invalid task worker count " + std::to_string(workers) +
                           " (expected 0 for all cores, or 1.." +
                           std::to_string(kMaxWorkers) + ")");
    if (workers == 0)
      workers = std::max(1u, std::thread::hardware_concurrency());
    try {
      return std::unique_ptr<Device>(new LocalTaskDevice(workers));
    } catch (const std::system_error &e) {
      return Status::error("cannot start " + std::to_string(workers - 1) +
                           " worker threads for local-task: " + e.what());
    }
  }
  if (name == "cuda" || name.rfind("cuda:", 0) == 0)
    return cuda::createCudaDevice(name);
  std::string valid;
  for (const std::string &n : availableNames())
    valid += (valid.empty() ? "" : ", ") + n;
  return Status::error("unknown device '" + name + "' (valid devices: " + valid + ")");
}

} // namespace turbine::runtime
