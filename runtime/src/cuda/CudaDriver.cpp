//===- CudaDriver.cpp - dlopen the CUDA driver and resolve its API --------===//
//
// See CudaDriver.h. Symbols are looked up by their versioned export names
// (cuMemAlloc_v2 and so on), which the driver keeps stable across releases.
//===----------------------------------------------------------------------===//
#include "CudaDriver.h"

#include <cstdlib>
#include <cstring>

#include <dlfcn.h>

namespace turbine::runtime::cuda {

namespace {
/// Names of the codes this device meets most, for drivers (the stub) whose
/// cuGetErrorName does not answer.
const char *knownErrorName(CUresult result) {
  switch (result) {
  case 1: return "CUDA_ERROR_INVALID_VALUE";
  case 2: return "CUDA_ERROR_OUT_OF_MEMORY";
  case 3: return "CUDA_ERROR_NOT_INITIALIZED";
  case 34: return "CUDA_ERROR_STUB_LIBRARY";
  case 35: return "CUDA_ERROR_INSUFFICIENT_DRIVER";
  case 100: return "CUDA_ERROR_NO_DEVICE";
  case 209: return "CUDA_ERROR_NO_BINARY_FOR_GPU";
  case 218: return "CUDA_ERROR_INVALID_PTX";
  case 222: return "CUDA_ERROR_UNSUPPORTED_PTX_VERSION";
  case 700: return "CUDA_ERROR_ILLEGAL_ADDRESS";
  case 701: return "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES";
  case 999: return "CUDA_ERROR_UNKNOWN";
  default: return nullptr;
  }
}
} // namespace

std::string Driver::describe(CUresult result) const {
  const char *name = nullptr, *text = nullptr;
  if (!cuGetErrorName || cuGetErrorName(result, &name) != CUDA_SUCCESS)
    name = knownErrorName(result);
  if (cuGetErrorString && cuGetErrorString(result, &text) != CUDA_SUCCESS)
    text = nullptr;
  std::string out = name ? name : "CUDA error " + std::to_string(result);
  if (text)
    out += std::string(" (") + text + ")";
  return out;
}

Status Driver::check(CUresult result, const std::string &what) const {
  if (result == CUDA_SUCCESS)
    return Status::success();
  return Status::error(what + ": " + describe(result));
}

namespace {

template <typename Fn>
bool resolve(void *library, const char *name, Fn &slot, std::string &missing) {
  dlerror();
  void *symbol = dlsym(library, name);
  if (!symbol) {
    missing += (missing.empty() ? "" : ", ") + std::string(name);
    return false;
  }
  static_assert(sizeof(Fn) == sizeof(void *));
  std::memcpy(&slot, &symbol, sizeof(slot));
  return true;
}

} // namespace

Result<std::shared_ptr<const Driver>> loadDriver() {
  const char *override = std::getenv("TURBINE_CUDA_DRIVER");
  std::string path = override && *override ? override : "libcuda.so.1";
  dlerror();
  void *handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char *why = dlerror();
    return Status::error("cannot load the CUDA driver library '" + path +
                         "' (is an NVIDIA driver installed?): " +
                         (why ? why : "unknown dlopen error"));
  }
  auto driver = std::make_shared<Driver>();
  driver->library = std::shared_ptr<void>(handle, [](void *h) { dlclose(h); });
  driver->path = path;
  std::string missing;
  Driver &d = *driver;
  resolve(handle, "cuInit", d.cuInit, missing);
  resolve(handle, "cuDriverGetVersion", d.cuDriverGetVersion, missing);
  resolve(handle, "cuGetErrorName", d.cuGetErrorName, missing);
  resolve(handle, "cuGetErrorString", d.cuGetErrorString, missing);
  resolve(handle, "cuDeviceGetCount", d.cuDeviceGetCount, missing);
  resolve(handle, "cuDeviceGet", d.cuDeviceGet, missing);
  resolve(handle, "cuDeviceGetName", d.cuDeviceGetName, missing);
  resolve(handle, "cuDeviceGetAttribute", d.cuDeviceGetAttribute, missing);
  resolve(handle, "cuDevicePrimaryCtxRetain", d.cuDevicePrimaryCtxRetain, missing);
  resolve(handle, "cuDevicePrimaryCtxRelease_v2", d.cuDevicePrimaryCtxRelease, missing);
  resolve(handle, "cuCtxSetCurrent", d.cuCtxSetCurrent, missing);
  resolve(handle, "cuStreamCreate", d.cuStreamCreate, missing);
  resolve(handle, "cuStreamDestroy_v2", d.cuStreamDestroy, missing);
  resolve(handle, "cuStreamSynchronize", d.cuStreamSynchronize, missing);
  resolve(handle, "cuMemAlloc_v2", d.cuMemAlloc, missing);
  resolve(handle, "cuMemFree_v2", d.cuMemFree, missing);
  resolve(handle, "cuMemcpyHtoDAsync_v2", d.cuMemcpyHtoDAsync, missing);
  resolve(handle, "cuMemcpyDtoHAsync_v2", d.cuMemcpyDtoHAsync, missing);
  resolve(handle, "cuModuleLoadDataEx", d.cuModuleLoadDataEx, missing);
  resolve(handle, "cuModuleUnload", d.cuModuleUnload, missing);
  resolve(handle, "cuModuleGetFunction", d.cuModuleGetFunction, missing);
  resolve(handle, "cuLaunchKernel", d.cuLaunchKernel, missing);
  if (!missing.empty())
    return Status::error("the CUDA driver library '" + path +
                         "' lacks entry points this runtime needs (" + missing +
                         "): the driver is too old or not a CUDA driver");
  CUresult init = d.cuInit(0);
  if (init == CUDA_ERROR_STUB_LIBRARY)
    return Status::error("the CUDA driver library '" + path +
                         "' is the CUDA toolkit's stub (" + d.describe(init) +
                         "), not a real driver: install the NVIDIA driver, or put its "
                         "libcuda.so.1 ahead of the toolkit's stubs directory in the "
                         "library path");
  if (init != CUDA_SUCCESS)
    return Status::error("cannot initialize the CUDA driver '" + path + "': cuInit failed: " +
                         d.describe(init) +
                         (init == CUDA_ERROR_NO_DEVICE ? " (this machine has no NVIDIA GPU)"
                                                       : ""));
  return std::shared_ptr<const Driver>(std::move(driver));
}

} // namespace turbine::runtime::cuda
