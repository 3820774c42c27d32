//===- CudaDevice.h - The `cuda` runtime device (internal) ----------------===//
//
// Device::create("cuda") / ("cuda:N") lands here: runs artifacts compiled
// with --target=cuda on NVIDIA GPU N (default 0) through the driver API,
// loaded at run time (CudaDriver.h).
//===----------------------------------------------------------------------===//
#ifndef TURBINE_RUNTIME_SRC_CUDA_CUDADEVICE_H
#define TURBINE_RUNTIME_SRC_CUDA_CUDADEVICE_H

#include "turbine/runtime/Device.h"

#include <memory>
#include <string>

namespace turbine::runtime::cuda {

/// Creates the cuda device `name` ("cuda" or "cuda:N"); a clear error when
/// the driver, a GPU or GPU N is missing.
Result<std::unique_ptr<Device>> createCudaDevice(const std::string &name);

} // namespace turbine::runtime::cuda

#endif // TURBINE_RUNTIME_SRC_CUDA_CUDADEVICE_H
