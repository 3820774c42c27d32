//===- CudaDriver.h - The CUDA driver API, loaded at run time (internal) --===//
//
// The few driver-API types and entry points the cuda device uses, declared
// here (no CUDA headers) and resolved from libcuda.so.1 with dlopen/dlsym when
// a cuda device is created, the way IREE's dynamic symbol tables do: the
// runtime has no link-time CUDA dependency and loads on machines without one.
// $TURBINE_CUDA_DRIVER names another library to load (tests point it at the
// toolkit's stub, which every call answers with CUDA_ERROR_STUB_LIBRARY).
//===----------------------------------------------------------------------===//
#ifndef TURBINE_RUNTIME_SRC_CUDA_CUDADRIVER_H
#define TURBINE_RUNTIME_SRC_CUDA_CUDADRIVER_H

#include "turbine/runtime/Status.h"

#include <cstddef>
#include <memory>
#include <string>

namespace turbine::runtime::cuda {

using CUresult = int;
using CUdevice = int;
using CUdeviceptr = unsigned long long;
using CUcontext = struct CUctx_st *;
using CUmodule = struct CUmod_st *;
using CUfunction = struct CUfunc_st *;
using CUstream = struct CUstream_st *;
using CUjit_option = int;

constexpr CUresult CUDA_SUCCESS = 0;
constexpr CUresult CUDA_ERROR_OUT_OF_MEMORY = 2;
constexpr CUresult CUDA_ERROR_STUB_LIBRARY = 34;
constexpr CUresult CUDA_ERROR_NO_DEVICE = 100;
constexpr int CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75;
constexpr int CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76;
constexpr CUjit_option CU_JIT_ERROR_LOG_BUFFER = 5;
constexpr CUjit_option CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES = 6;
constexpr unsigned CU_STREAM_NON_BLOCKING = 1;

/// The resolved entry points of one loaded driver library.
struct Driver {
  CUresult (*cuInit)(unsigned);
  CUresult (*cuDriverGetVersion)(int *);
  CUresult (*cuGetErrorName)(CUresult, const char **);
  CUresult (*cuGetErrorString)(CUresult, const char **);
  CUresult (*cuDeviceGetCount)(int *);
  CUresult (*cuDeviceGet)(CUdevice *, int);
  CUresult (*cuDeviceGetName)(char *, int, CUdevice);
  CUresult (*cuDeviceGetAttribute)(int *, int, CUdevice);
  CUresult (*cuDevicePrimaryCtxRetain)(CUcontext *, CUdevice);
  CUresult (*cuDevicePrimaryCtxRelease)(CUdevice);
  CUresult (*cuCtxSetCurrent)(CUcontext);
  CUresult (*cuStreamCreate)(CUstream *, unsigned);
  CUresult (*cuStreamDestroy)(CUstream);
  CUresult (*cuStreamSynchronize)(CUstream);
  CUresult (*cuMemAlloc)(CUdeviceptr *, size_t);
  CUresult (*cuMemFree)(CUdeviceptr);
  CUresult (*cuMemcpyHtoDAsync)(CUdeviceptr, const void *, size_t, CUstream);
  CUresult (*cuMemcpyDtoHAsync)(void *, CUdeviceptr, size_t, CUstream);
  CUresult (*cuModuleLoadDataEx)(CUmodule *, const void *, unsigned, CUjit_option *,
                                 void **);
  CUresult (*cuModuleUnload)(CUmodule);
  CUresult (*cuModuleGetFunction)(CUfunction *, CUmodule, const char *);
  CUresult (*cuLaunchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned,
                             unsigned, unsigned, CUstream, void **, void **);

  /// "CUDA_ERROR_NO_DEVICE (no CUDA-capable device is detected)".
  std::string describe(CUresult result) const;
  /// Success, or an error "<what>: <describe(result)>".
  Status check(CUresult result, const std::string &what) const;

  /// The library handle (dlclose'd with the last reference).
  std::shared_ptr<void> library;
  std::string path;
};

/// Loads the driver ($TURBINE_CUDA_DRIVER or libcuda.so.1), resolves every
/// entry point and runs cuInit(0). Errors say what is missing: no driver
/// library, a missing symbol, the toolkit's stub library, a failing cuInit.
Result<std::shared_ptr<const Driver>> loadDriver();

} // namespace turbine::runtime::cuda

#endif // TURBINE_RUNTIME_SRC_CUDA_CUDADRIVER_H
