//===- GpuDevice.h - Devices with their own memory (internal) -------------===//
//
// What the host-program interpreter needs from a device whose kernels run on
// an accelerator with its own memory (the cuda device, runtime/src/cuda):
// the interpreter keeps host Tensors in its registers, and a GpuCall keeps a
// device copy of each tensor a kernel binds, uploading a host copy only when
// it is newer (inputs once per call, parameters once per device) and
// downloading a device copy only when the host reads it (results, globals,
// `load` instructions, string ops, dispatch observers).
//===----------------------------------------------------------------------===//
#ifndef TURBINE_RUNTIME_SRC_GPUDEVICE_H
#define TURBINE_RUNTIME_SRC_GPUDEVICE_H

#include "turbine/runtime/Device.h"
#include "turbine/runtime/Tensor.h"

#include <memory>
#include <vector>

namespace turbine::runtime::detail {

struct LoadedModule;

/// One host-program call on a GpuDevice. Calls on one device are serialized
/// (a GpuCall holds the device until it is destroyed).
class GpuCall {
public:
  virtual ~GpuCall() = default;
  /// Launches kernel #kernel of the module on `bindings` (host tensors whose
  /// device copies are made or reused here), `constants` and the workgroup
  /// `counts` (each > 0). Asynchronous: returns once the launch is queued.
  virtual Status dispatch(size_t kernel, const std::vector<const Tensor *> &bindings,
                          const std::vector<int64_t> &constants, const int64_t counts[3]) = 0;
  /// Makes the host copy of `t` current: downloads it (and waits) when a
  /// kernel may have written the device copy since.
  virtual Status toHost(const Tensor &t) = 0;
  /// `t` was just allocated by the host program: its contents are undefined,
  /// so its device copy needs no upload.
  virtual void allocated(const Tensor &t) = 0;
  /// The host wrote `t`: its device copy is stale.
  virtual void hostWrote(const Tensor &t) = 0;
  /// Waits until every queued launch and copy has finished.
  virtual Status synchronize() = 0;
};

class GpuDevice : public Device {
public:
  int workerCount() const override { return 1; }
  /// CPU kernels cannot run here; the interpreter never calls this for a
  /// GpuDevice (it calls GpuCall::dispatch), so it does nothing.
  void dispatch(turbine_kernel_fn_t, const turbine_dispatch_state_t &) override {}
  /// The compiler target whose artifacts this device runs ("cuda").
  virtual const char *target() const = 0;
  /// Starts a call of a function of `module` with these inputs.
  virtual Result<std::unique_ptr<GpuCall>> beginCall(const LoadedModule &module,
                                                     const std::vector<Tensor> &inputs) = 0;
};

} // namespace turbine::runtime::detail

#endif // TURBINE_RUNTIME_SRC_GPUDEVICE_H
