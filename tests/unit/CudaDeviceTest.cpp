//===- CudaDeviceTest.cpp - The cuda device where there may be no GPU -----===//
//
// What can be checked on any machine: Device::create("cuda") is a clear
// error when the driver library is missing, when it is the CUDA toolkit's
// stub (CUDA_ERROR_STUB_LIBRARY, loaded through $TURBINE_CUDA_DRIVER), for a
// bad name, and otherwise either succeeds (a GPU is there) or says the
// device is not available; a cuda artifact loads, and a CPU device refuses
// to run it, naming the target. Running kernels on a GPU is tested in
// compiler/CudaTargetTest (skipped without a GPU).
//===----------------------------------------------------------------------===//
#include "TestArtifacts.h"

#include "turbine/runtime/Runtime.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <optional>

using namespace turbine;
using namespace turbine::runtime;
using namespace turbine::testing;

namespace {

/// Sets $TURBINE_CUDA_DRIVER for the scope of the object.
class DriverOverride {
public:
  explicit DriverOverride(const char *path) {
    if (const char *old = std::getenv("TURBINE_CUDA_DRIVER"))
      old_ = old;
    if (path)
      setenv("TURBINE_CUDA_DRIVER", path, 1);
    else
      unsetenv("TURBINE_CUDA_DRIVER");
  }
  ~DriverOverride() {
    if (old_)
      setenv("TURBINE_CUDA_DRIVER", old_->c_str(), 1);
    else
      unsetenv("TURBINE_CUDA_DRIVER");
  }

private:
  std::optional<std::string> old_;
};

std::string createError(const std::string &name) {
  Result<std::unique_ptr<Device>> device = Device::create(name);
  EXPECT_FALSE(device.ok()) << name << " was created";
  return device.ok() ? std::string() : device.message();
}

TEST(CudaDevice, MissingDriverLibraryIsAClearError) {
  DriverOverride driver("/nonexistent/libcuda.so.1");
  std::string error = createError("cuda");
  EXPECT_NE(error.find("device 'cuda' is not available: cannot load the CUDA driver library "
                       "'/nonexistent/libcuda.so.1' (is an NVIDIA driver installed?)"),
            std::string::npos)
      << error;
}

TEST(CudaDevice, NotADriverLibraryIsAClearError) {
  // A real shared object without the driver API.
  DriverOverride driver("libm.so.6");
  std::string error = createError("cuda");
  EXPECT_NE(error.find("'libm.so.6' lacks entry points this runtime needs (cuInit, "),
            std::string::npos)
      << error;
}

TEST(CudaDevice, ToolkitStubIsReportedAsTheStub) {
  const char *stub = "/usr/local/cuda/lib64/stubs/libcuda.so";
  if (!std::ifstream(stub))
    GTEST_SKIP() << "no CUDA toolkit stub at " << stub;
  DriverOverride driver(stub);
  std::string error = createError("cuda");
  EXPECT_NE(error.find("device 'cuda' is not available: the CUDA driver library '" +
                       std::string(stub) + "' is the CUDA toolkit's stub ("),
            std::string::npos)
      << error;
  EXPECT_NE(error.find("CUDA_ERROR_STUB_LIBRARY"), std::string::npos) << error;
  EXPECT_NE(error.find("not a real driver"), std::string::npos) << error;
}

TEST(CudaDevice, BadNamesAreRefused) {
  for (const char *name : {"cuda:", "cuda:x", "cuda:-1", "cuda:123456"}) {
    std::string error = createError(name);
    EXPECT_NE(error.find("bad cuda device name '" + std::string(name) +
                         "' (expected cuda or cuda:N)"),
              std::string::npos)
        << error;
  }
  std::string error = createError("cudax");
  EXPECT_NE(error.find("unknown device 'cudax' (valid devices: local-sync, local-task, cuda)"),
            std::string::npos)
      << error;
}

TEST(CudaDevice, SystemDriverGivesADeviceOrSaysWhyNot) {
  DriverOverride driver(nullptr);
  Result<std::unique_ptr<Device>> device = Device::create("cuda");
  if (device.ok()) {
    EXPECT_EQ((*device)->name(), "cuda");
    EXPECT_EQ((*device)->workerCount(), 1);
    return;
  }
  EXPECT_EQ(device.message().rfind("device 'cuda' is not available: ", 0), 0u)
      << device.message();
  // A machine with a driver has a GPU 0 or says how many it has.
  std::string beyond = createError("cuda:9999");
  EXPECT_EQ(beyond.rfind("device 'cuda:9999' is not available: ", 0), 0u) << beyond;
}

// A cuda artifact (hand-built: PTX in its library) loads; the CPU devices
// refuse to run it, naming the target and the device to use.
TEST(CudaDevice, CpuDevicesRefuseACudaArtifact) {
  artifact::Module m = makeAddModule(std::string(".version 8.0\n") + '\0');
  m.target = "cuda";
  m.images = {{"ptx", "sm_80", 0, 14}};
  m.kernelLaunch.assign(m.kernels.size(), artifact::KernelLaunch{});
  Result<std::shared_ptr<Module>> module =
      Module::loadFromBytes(artifact::serialize(m), "test.tmod");
  ASSERT_TRUE(module.ok()) << module.message();
  Result<Function> add = (*module)->lookupFunction("add");
  ASSERT_TRUE(add.ok()) << add.message();
  Tensor x = Tensor::zeros(DType::f32, {4}).value();
  for (const char *name : {"local-sync", "local-task"}) {
    std::unique_ptr<Device> device = Device::create(name).value();
    Result<std::vector<Tensor>> r = add->invoke(*device, {x, x});
    ASSERT_FALSE(r.ok()) << name;
    EXPECT_NE(r.message().find("the artifact was compiled for target 'cuda', which device '" +
                               std::string(name) + "' does not run (run it on device 'cuda')"),
              std::string::npos)
        << r.message();
  }
}

// An artifact for a target no device runs is refused at load.
TEST(CudaDevice, UnknownTargetIsRefusedAtLoad) {
  artifact::Module m = makeAddModule(std::string(".version 8.0\n") + '\0');
  m.target = "rocm";
  Result<std::shared_ptr<Module>> module =
      Module::loadFromBytes(artifact::serialize(m), "test.tmod");
  if (module.ok())
    FAIL() << "a rocm artifact loaded";
  EXPECT_NE(module.message().find("was compiled for target 'rocm', which this runtime's "
                                  "devices (local-sync, local-task, cuda) do not run"),
            std::string::npos)
      << module.message();
}

} // namespace
