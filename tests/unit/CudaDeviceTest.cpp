//===- CudaDeviceTest.cpp - The cuda device where there may be no GPU -----===//
//
// What can be checked on any machine: Device::create("cuda") is a clear
// error when the driver library is missing, when it is the CUDA toolkit's
// stub (CUDA_ERROR_STUB_LIBRARY, loaded through $TURBINE_CUDA_DRIVER), for a
// bad name, and otherwise either succeeds (a GPU is there) or says the
// device is not available; a cuda artifact loads, and a CPU device refuses
// to run it, naming the target. With a stand-in driver (fake_cuda_driver.c:
// host memory, records calls) the device's own logic is checked: image
// choice (cubin for the GPU's architecture, PTX fallback, none), launch
// geometry and parameters, copies only at the call's edges, the allocation
// cache, and the grid limit. Running real kernels on a GPU is tested in
// compiler/CudaTargetTest (skipped without a GPU).
//===----------------------------------------------------------------------===//
#include "TestArtifacts.h"

#include "turbine/runtime/Runtime.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <fstream>

#include <dlfcn.h>
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

/// What fake_cuda_driver.c records.
struct FakeStats {
  int allocs, frees, h2d, d2h, launches, moduleLoads, ptxLoads, cubinLoads;
  unsigned grid[3], block[3];
  int64_t lastCounts[3];
};

/// Loads the stand-in driver for the test (so its counters outlive the
/// devices), points $TURBINE_CUDA_DRIVER at it and clears its counters.
class FakeDriver {
public:
  FakeDriver() : override_(TURBINE_FAKE_CUDA_DRIVER_PATH) {
    handle_ = dlopen(TURBINE_FAKE_CUDA_DRIVER_PATH, RTLD_NOW | RTLD_LOCAL);
    EXPECT_NE(handle_, nullptr) << dlerror();
    if (handle_)
      stats_ = static_cast<FakeStats *>(dlsym(handle_, "fake_cuda_stats"));
    EXPECT_NE(stats_, nullptr);
    if (stats_)
      std::memset(stats_, 0, sizeof(FakeStats));
  }
  ~FakeDriver() {
    if (handle_)
      dlclose(handle_);
  }
  const FakeStats &stats() const { return *stats_; }

private:
  DriverOverride override_;
  void *handle_ = nullptr;
  FakeStats *stats_ = nullptr;
};

/// makeAddModule as a cuda artifact whose library holds `images` (a fake
/// cubin starts with the ELF magic, a fake PTX is text).
artifact::Module cudaAddModule(const std::vector<std::pair<std::string, std::string>> &images,
                               int64_t workgroups = 4) {
  std::string library;
  std::vector<artifact::CodeImage> listed;
  for (const auto &[format, arch] : images) {
    std::string bytes = format == "cubin" ? std::string("\x7f" "ELF fake cubin")
                                          : std::string(".version 8.0\n") + '\0';
    listed.push_back({format, arch, library.size(), bytes.size()});
    library += bytes;
  }
  artifact::Module m = makeAddModule(library, workgroups);
  m.target = "cuda";
  m.images = listed;
  m.kernelLaunch.assign(m.kernels.size(), artifact::KernelLaunch{3, 1, 256});
  return m;
}

Result<std::vector<Tensor>> runAdd(const artifact::Module &m, Device &device, int64_t n,
                                   int calls = 1) {
  Result<std::shared_ptr<Module>> module =
      Module::loadFromBytes(artifact::serialize(m), "test.tmod");
  if (!module)
    return module.status();
  Tensor x = Tensor::allocate(DType::f32, {n}).value();
  Tensor y = Tensor::allocate(DType::f32, {n}).value();
  for (int64_t i = 0; i < n; ++i) {
    x.dataAs<float>()[i] = static_cast<float>(i);
    y.dataAs<float>()[i] = 0.5f * static_cast<float>(i);
  }
  Result<std::vector<Tensor>> r = Status::error("no call");
  for (int c = 0; c < calls; ++c) {
    r = (*module)->lookupFunction("add")->invoke(device, {x, y});
    if (!r)
      return r;
    for (int64_t i = 0; i < n; ++i)
      if ((*r)[0].dataAs<float>()[i] != 1.5f * static_cast<float>(i))
        return Status::error("wrong sum at " + std::to_string(i));
  }
  return r;
}

TEST(CudaDeviceFake, RunsWithCopiesOnlyAtTheEdges) {
  FakeDriver fake;
  std::unique_ptr<Device> device = Device::create("cuda").value();
  artifact::Module m = cudaAddModule({{"ptx", "sm_80"}, {"cubin", "sm_80"}});
  Result<std::vector<Tensor>> r = runAdd(m, *device, 1000, /*calls=*/3);
  ASSERT_TRUE(r.ok()) << r.message();
  const FakeStats &s = fake.stats();
  EXPECT_EQ(s.moduleLoads, 1);  // once per module and device
  EXPECT_EQ(s.cubinLoads, 1);   // the cubin for sm_80, not the PTX
  EXPECT_EQ(s.launches, 3);
  EXPECT_EQ(s.h2d, 6);          // x and y per call
  EXPECT_EQ(s.d2h, 3);          // the sum per call
  EXPECT_EQ(s.allocs, 3);       // later calls reuse the cached blocks
  // 4 workgroups: one block of 4 threads; the kernel gets n then the counts.
  EXPECT_EQ(s.grid[0], 1u);
  EXPECT_EQ(s.block[0], 4u);
  EXPECT_EQ(s.block[1], 1u);
  EXPECT_EQ(s.block[2], 1u);
  EXPECT_EQ(s.lastCounts[0], 4);
  EXPECT_EQ(s.lastCounts[1], 1);
  EXPECT_EQ(s.lastCounts[2], 1);
  EXPECT_EQ(s.frees, 0); // freed blocks stay cached for the device
  device.reset();        // (the module is gone too): everything is freed
  EXPECT_EQ(fake.stats().frees, fake.stats().allocs);
}

TEST(CudaDeviceFake, BlocksAndGridCoverTheCounts) {
  FakeDriver fake;
  std::unique_ptr<Device> device = Device::create("cuda").value();
  ASSERT_TRUE(runAdd(cudaAddModule({{"cubin", "sm_80"}}, /*workgroups=*/1000), *device, 10).ok());
  EXPECT_EQ(fake.stats().block[0], 256u);
  EXPECT_EQ(fake.stats().grid[0], 4u); // ceil(1000 / 256)
  EXPECT_EQ(fake.stats().lastCounts[0], 1000);
}

TEST(CudaDeviceFake, PtxWhenNoCubinMatches) {
  FakeDriver fake;
  setenv("FAKE_CUDA_CC", "90", 1);
  std::unique_ptr<Device> device = Device::create("cuda").value();
  Result<std::vector<Tensor>> r =
      runAdd(cudaAddModule({{"ptx", "sm_80"}, {"cubin", "sm_80"}}), *device, 16);
  unsetenv("FAKE_CUDA_CC");
  ASSERT_TRUE(r.ok()) << r.message();
  EXPECT_EQ(fake.stats().ptxLoads, 1);
  EXPECT_EQ(fake.stats().cubinLoads, 0);
}

TEST(CudaDeviceFake, PtxWhenTheDriverRejectsTheCubin) {
  FakeDriver fake;
  setenv("FAKE_CUDA_REJECT_CUBIN", "1", 1);
  std::unique_ptr<Device> device = Device::create("cuda").value();
  Result<std::vector<Tensor>> r =
      runAdd(cudaAddModule({{"ptx", "sm_80"}, {"cubin", "sm_80"}}), *device, 16);
  unsetenv("FAKE_CUDA_REJECT_CUBIN");
  ASSERT_TRUE(r.ok()) << r.message();
  EXPECT_EQ(fake.stats().ptxLoads, 1);
}

TEST(CudaDeviceFake, NoImageForTheGpuIsAClearError) {
  FakeDriver fake;
  std::unique_ptr<Device> device = Device::create("cuda").value();
  Result<std::vector<Tensor>> r =
      runAdd(cudaAddModule({{"ptx", "sm_90"}, {"cubin", "sm_90"}}), *device, 16);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.message().find("artifact 'test.tmod' on GPU 0 (Fake GPU) (sm_80): no code image "
                             "runs on this GPU (the artifact has ptx sm_90, cubin sm_90): "
                             "recompile with --cuda-arch=sm_80"),
            std::string::npos)
      << r.message();
  EXPECT_EQ(fake.stats().launches, 0);
}

TEST(CudaDeviceFake, GridOverTheLimitIsAClearError) {
  FakeDriver fake;
  std::unique_ptr<Device> device = Device::create("cuda").value();
  artifact::Module m = cudaAddModule({{"cubin", "sm_80"}});
  // z workgroups: 70000 (one block each; CUDA allows 65535).
  m.functions[0].code[2] = makeConst(2, 70000);
  Result<std::vector<Tensor>> r = runAdd(m, *device, 16);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.message().find("kernel 'test_add_f32': workgroup count 4x70000x70000 needs a "),
            std::string::npos)
      << r.message();
  EXPECT_NE(r.message().find("over CUDA's limit of 65535 (the y and z grid dimensions are "
                             "limited to 65535)"),
            std::string::npos)
      << r.message();
  EXPECT_EQ(fake.stats().launches, 0);
}

} // namespace
