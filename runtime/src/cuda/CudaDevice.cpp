//===- CudaDevice.cpp - Running cuda artifacts on an NVIDIA GPU -----------===//
//
// The device owns the GPU's primary context, one stream and a caching
// allocator of device memory. Per loaded module (and device) it loads the
// artifact's cubin for the GPU's compute capability (or JIT-compiles its PTX
// when no cubin matches), resolves every kernel, and uploads each parameter
// the first time a kernel binds it, keeping it for later calls. A call
// (CudaCall) mirrors the host tensors its kernels bind in device memory:
// inputs are uploaded once, buffers the host program allocates never are,
// and only what the host reads is downloaded (see GpuDevice.h). Launches use
// blocks of up to the kernel's max_threads and grid = ceil(count / block)
// per axis; blockIdx.z is the z workgroup.
//
// NOTE: written and unit-tested on a machine without a GPU: creation errors
// (no driver, the toolkit stub, no GPU) are tested; launching is not.
//===----------------------------------------------------------------------===//
#include "CudaDevice.h"

#include "../GpuDevice.h"
#include "../LoadedModule.h"
#include "CudaDriver.h"

#include <algorithm>
#include <atomic>
#include <cctype>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <unordered_map>

namespace turbine::runtime::cuda {
namespace {

/// A device allocation (size rounded up as allocated).
struct Block {
  CUdeviceptr ptr = 0;
  size_t size = 0;
};

/// The GPU, its context and stream, and the device-memory cache. Shared by
/// the device and by every module state loaded on it.
class Context {
public:
  std::shared_ptr<const Driver> driver;
  int ordinal = 0;
  CUdevice device = 0;
  CUcontext context = nullptr;
  CUstream stream = nullptr;
  int ccMajor = 0, ccMinor = 0;
  std::string gpuName;
  /// Serializes calls (and everything below) on this GPU.
  std::recursive_mutex mutex; // recursive: ~ModuleState may run under it

  ~Context() {
    if (!context)
      return;
    driver->cuCtxSetCurrent(context);
    if (stream)
      driver->cuStreamSynchronize(stream);
    trimCache();
    if (stream)
      driver->cuStreamDestroy(stream);
    driver->cuDevicePrimaryCtxRelease(device);
  }

  std::string arch() const { return "sm_" + std::to_string(ccMajor * 10 + ccMinor); }
  Status makeCurrent() const {
    return driver->check(driver->cuCtxSetCurrent(context), "cuCtxSetCurrent");
  }

  /// Device memory of at least `bytes` (> 0), from the cache when a free
  /// block of up to twice the size is there.
  Result<Block> allocate(size_t bytes) {
    size_t rounded = (bytes + 511) / 512 * 512;
    auto it = cache_.lower_bound(rounded);
    if (it != cache_.end() && it->first <= 2 * rounded) {
      Block b{it->second, it->first};
      cache_.erase(it);
      return b;
    }
    CUdeviceptr ptr = 0;
    CUresult r = driver->cuMemAlloc(&ptr, rounded);
    if (r == CUDA_ERROR_OUT_OF_MEMORY && !cache_.empty()) {
      trimCache();
      r = driver->cuMemAlloc(&ptr, rounded);
    }
    if (r != CUDA_SUCCESS)
      return Status::error("cannot allocate " + std::to_string(rounded) + " bytes on " +
                           gpuName + ": cuMemAlloc: " + driver->describe(r));
    return Block{ptr, rounded};
  }
  /// Returns `b` to the cache. Later work on the one stream is ordered after
  /// every earlier use, so no wait is needed.
  void release(Block b) {
    if (b.ptr)
      cache_.emplace(b.size, b.ptr);
  }
  void trimCache() {
    for (auto &[size, ptr] : cache_)
      driver->cuMemFree(ptr);
    cache_.clear();
  }

private:
  std::multimap<size_t, CUdeviceptr> cache_;
};

/// One module loaded on one device: its CUmodule, kernels and the device
/// copies of the parameters uploaded so far.
struct ModuleState {
  std::shared_ptr<Context> context;
  CUmodule module = nullptr;
  std::vector<CUfunction> functions;
  /// The module's parameters: host data pointer -> byte size.
  std::unordered_map<const void *, size_t> parameterBytes;
  /// Device copies of the parameters bound so far, keyed by the host data
  /// pointer (the module keeps the host copies alive and unchanged).
  std::unordered_map<const void *, Block> parameters;

  ~ModuleState() {
    std::lock_guard<std::recursive_mutex> guard(context->mutex);
    if (!context->makeCurrent().ok())
      return;
    for (auto &[host, block] : parameters)
      context->release(block);
    if (module)
      context->driver->cuModuleUnload(module);
  }
};

/// "sm_86" -> 86; -1 when not of that form.
int archNumber(const std::string &arch) {
  if (arch.rfind("sm_", 0) != 0 || arch.size() < 4)
    return -1;
  int n = 0;
  size_t i = 3;
  for (; i < arch.size() && std::isdigit(static_cast<unsigned char>(arch[i])); ++i)
    n = n * 10 + (arch[i] - '0');
  return i == 3 ? -1 : n;
}

Result<std::shared_ptr<ModuleState>> loadModule(const std::shared_ptr<Context> &ctx,
                                                const detail::LoadedModule &loaded) {
  const artifact::Module &a = loaded.artifact;
  const Driver &d = *ctx->driver;
  auto state = std::make_shared<ModuleState>();
  state->context = ctx;
  const std::string prefix = "artifact '" + loaded.label + "' on " + ctx->gpuName + " (" +
                             ctx->arch() + ")";
  for (const Tensor &p : loaded.parameters)
    if (p.byteSize())
      state->parameterBytes.emplace(p.data(), p.byteSize());
  if (a.kernels.empty())
    return state;
  const int deviceArch = ctx->ccMajor * 10 + ctx->ccMinor;
  const artifact::CodeImage *cubin = nullptr, *ptx = nullptr;
  std::string listed;
  for (const artifact::CodeImage &image : a.images) {
    listed += (listed.empty() ? "" : ", ") + image.format + " " + image.arch;
    if (image.offset + image.size > a.library.size())
      continue;
    int n = archNumber(image.arch);
    if (image.format == "cubin" && n == deviceArch)
      cubin = &image;
    // PTX runs on its architecture and every later one: take the newest that fits.
    if (image.format == "ptx" && n >= 0 && n <= deviceArch &&
        (!ptx || n > archNumber(ptx->arch)))
      ptx = &image;
  }
  if (!cubin && !ptx)
    return Status::error(prefix + ": no code image runs on this GPU (the artifact has " +
                         (listed.empty() ? std::string("none") : listed) +
                         "): recompile with --cuda-arch=" + ctx->arch());
  std::string failures;
  if (cubin) {
    CUresult r = d.cuModuleLoadDataEx(&state->module, a.library.data() + cubin->offset, 0,
                                      nullptr, nullptr);
    if (r != CUDA_SUCCESS) {
      state->module = nullptr;
      failures = "loading its " + cubin->arch + " cubin failed: " + d.describe(r);
    }
  }
  if (!state->module && ptx) {
    // The driver wants NUL-terminated PTX text.
    std::string text = a.library.substr(ptx->offset, ptx->size);
    text.resize(std::strlen(text.c_str()));
    std::string log(8192, '\0');
    CUjit_option options[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
    void *values[] = {log.data(), reinterpret_cast<void *>(log.size())};
    CUresult r = d.cuModuleLoadDataEx(&state->module, text.c_str(), 2, options, values);
    if (r != CUDA_SUCCESS) {
      state->module = nullptr;
      log.resize(std::strlen(log.c_str()));
      failures += (failures.empty() ? "" : "; ") + std::string("JIT-compiling its ") +
                  ptx->arch + " PTX failed: " + d.describe(r) +
                  (log.empty() ? "" : " (" + log + ")");
    }
  }
  if (!state->module)
    return Status::error(prefix + ": " + failures);
  for (const std::string &name : a.kernels) {
    CUfunction fn = nullptr;
    if (Status s = d.check(d.cuModuleGetFunction(&fn, state->module, name.c_str()),
                           prefix + ": kernel '" + name + "'");
        !s)
      return s;
    state->functions.push_back(fn);
  }
  return state;
}

/// Device ids distinguish module states of different devices.
std::atomic<uint64_t> nextDeviceId{1};

class CudaCall final : public detail::GpuCall {
public:
  CudaCall(std::shared_ptr<Context> ctx, std::shared_ptr<ModuleState> module,
           const detail::LoadedModule &loaded, const std::vector<Tensor> &inputs)
      : ctx_(std::move(ctx)), module_(std::move(module)), lock_(ctx_->mutex),
        loaded_(loaded), inputs_(inputs) {}

  ~CudaCall() override {
    if (!ctx_->makeCurrent().ok())
      return;
    for (auto &[key, entry] : entries_)
      if (!entry.parameter)
        ctx_->release(entry.block);
  }

  Status dispatch(size_t kernel, const std::vector<const Tensor *> &bindings,
                  const std::vector<int64_t> &constants, const int64_t counts[3]) override {
    const artifact::Module &a = loaded_.artifact;
    if (kernel >= module_->functions.size() || kernel >= a.kernelLaunch.size())
      return Status::error("kernel index " + std::to_string(kernel) + " out of range");
    const artifact::KernelLaunch &launch = a.kernelLaunch[kernel];
    const std::string &name = a.kernels[kernel];
    if (bindings.size() < static_cast<size_t>(launch.bindings) ||
        constants.size() < static_cast<size_t>(launch.constants))
      return Status::error("kernel '" + name + "' takes " + std::to_string(launch.bindings) +
                           " buffers and " + std::to_string(launch.constants) +
                           " push constants, the dispatch gives " +
                           std::to_string(bindings.size()) + " and " +
                           std::to_string(constants.size()));
    const int64_t maxThreads = std::max<int64_t>(1, launch.maxThreads);
    const int64_t block[3] = {std::min(counts[0], maxThreads),
                              std::min(counts[1], std::max<int64_t>(1, maxThreads /
                                                                           std::min(counts[0], maxThreads))),
                              1};
    int64_t grid[3];
    const int64_t limit[3] = {INT_MAX, 65535, 65535};
    for (int i = 0; i < 3; ++i) {
      grid[i] = (counts[i] + block[i] - 1) / block[i];
      if (grid[i] > limit[i])
        return Status::error("kernel '" + name + "': workgroup count " +
                             std::to_string(counts[0]) + "x" + std::to_string(counts[1]) +
                             "x" + std::to_string(counts[2]) + " needs a grid of " +
                             std::to_string(grid[i]) + " blocks in " + "xyz"[i] +
                             ", over CUDA's limit of " + std::to_string(limit[i]) +
                             (i ? " (the y and z grid dimensions are limited to 65535)" : ""));
    }
    pointers_.assign(static_cast<size_t>(launch.bindings), 0);
    for (int32_t i = 0; i < launch.bindings; ++i) {
      Result<CUdeviceptr> p = devicePointer(*bindings[i]);
      if (!p)
        return Status::error("kernel '" + name + "' buffer " + std::to_string(i) + ": " +
                             p.message());
      pointers_[i] = *p;
    }
    constants_.assign(constants.begin(), constants.begin() + launch.constants);
    for (int i = 0; i < 3; ++i)
      counts_[i] = counts[i];
    args_.clear();
    for (CUdeviceptr &p : pointers_)
      args_.push_back(&p);
    for (int64_t &c : constants_)
      args_.push_back(&c);
    for (int64_t &c : counts_)
      args_.push_back(&c);
    const Driver &d = *ctx_->driver;
    if (Status s = d.check(
            d.cuLaunchKernel(module_->functions[kernel], static_cast<unsigned>(grid[0]),
                             static_cast<unsigned>(grid[1]), static_cast<unsigned>(grid[2]),
                             static_cast<unsigned>(block[0]), static_cast<unsigned>(block[1]),
                             static_cast<unsigned>(block[2]), 0, ctx_->stream, args_.data(),
                             nullptr),
            "launching kernel '" + name + "'");
        !s)
      return s;
    // Any binding a kernel may write now has its newest value on the device.
    for (int32_t i = 0; i < launch.bindings; ++i)
      if (auto it = entries_.find(bindings[i]->data());
          it != entries_.end() && it->second.kernelsMayWrite)
        it->second.hostValid = false;
    return Status::success();
  }

  Status toHost(const Tensor &t) override {
    auto it = entries_.find(t.data());
    if (it == entries_.end() || it->second.hostValid)
      return Status::success();
    Entry &e = it->second;
    if (e.block.ptr) {
      const Driver &d = *ctx_->driver;
      if (Status s = d.check(d.cuMemcpyDtoHAsync(e.host.data(), e.block.ptr, e.host.byteSize(),
                                                 ctx_->stream),
                             "copying a " + e.host.typeString() + " buffer to the host");
          !s)
        return s;
      if (Status s = synchronize(); !s)
        return s;
    }
    e.hostValid = true;
    return Status::success();
  }

  void allocated(const Tensor &t) override {
    if (t.byteSize() == 0)
      return;
    Entry &e = entries_[t.data()];
    if (!e.parameter)
      ctx_->release(e.block);
    e = Entry{};
    e.host = t;
    e.hostValid = false; // undefined either way: nothing to copy
    e.deviceValid = true;
    e.kernelsMayWrite = true;
  }

  void hostWrote(const Tensor &t) override {
    auto it = entries_.find(t.data());
    if (it == entries_.end())
      return;
    it->second.hostValid = true;
    it->second.deviceValid = false;
  }

  Status synchronize() override {
    const Driver &d = *ctx_->driver;
    return d.check(d.cuStreamSynchronize(ctx_->stream), "waiting for the GPU");
  }

private:
  struct Entry {
    /// Keeps the host storage (and so the key) alive for the call.
    Tensor host;
    Block block;
    bool hostValid = true;
    bool deviceValid = false;
    bool kernelsMayWrite = true;
    /// The block belongs to the module state (uploaded once, kept).
    bool parameter = false;
  };

  Result<CUdeviceptr> devicePointer(const Tensor &t) {
    if (t.byteSize() == 0)
      return CUdeviceptr(0);
    const Driver &d = *ctx_->driver;
    auto it = entries_.find(t.data());
    if (it != entries_.end() && it->second.host.byteSize() < t.byteSize()) {
      if (!it->second.parameter)
        ctx_->release(it->second.block);
      entries_.erase(it);
      it = entries_.end();
    }
    if (it == entries_.end()) {
      Entry e;
      e.host = t;
      auto param = module_->parameterBytes.find(t.data());
      if (param != module_->parameterBytes.end() && param->second == t.byteSize()) {
        // A parameter: one device copy per module and device, kept.
        e.parameter = true;
        e.kernelsMayWrite = false;
        auto [p, inserted] = module_->parameters.try_emplace(t.data());
        if (inserted) {
          Result<Block> b = ctx_->allocate(t.byteSize());
          if (!b) {
            module_->parameters.erase(p);
            return b.status();
          }
          p->second = *b;
          if (Status s = d.check(d.cuMemcpyHtoDAsync(b->ptr, t.data(), t.byteSize(),
                                                     ctx_->stream),
                                 "uploading a " + t.typeString() + " parameter");
              !s)
            return s;
        }
        e.block = p->second;
        e.deviceValid = true;
      } else {
        e.kernelsMayWrite = !t.isReadOnly();
        for (const Tensor &input : inputs_)
          if (input.data() == t.data())
            e.kernelsMayWrite = false; // functions never write their inputs
      }
      it = entries_.emplace(t.data(), std::move(e)).first;
    }
    Entry &e = it->second;
    if (!e.block.ptr) {
      Result<Block> b = ctx_->allocate(e.host.byteSize());
      if (!b)
        return b.status();
      e.block = *b;
    }
    if (!e.deviceValid) {
      if (Status s = d.check(d.cuMemcpyHtoDAsync(e.block.ptr, e.host.data(), e.host.byteSize(),
                                                 ctx_->stream),
                             "uploading a " + e.host.typeString() + " buffer");
          !s)
        return s;
      e.deviceValid = true;
    }
    return e.block.ptr;
  }

  std::shared_ptr<Context> ctx_;
  std::shared_ptr<ModuleState> module_; // outlives lock_ (~ModuleState locks)
  std::unique_lock<std::recursive_mutex> lock_;
  const detail::LoadedModule &loaded_;
  const std::vector<Tensor> &inputs_;
  std::unordered_map<const void *, Entry> entries_;
  std::vector<CUdeviceptr> pointers_;
  std::vector<int64_t> constants_;
  int64_t counts_[3] = {0, 0, 0};
  std::vector<void *> args_;
};

class CudaDevice final : public detail::GpuDevice {
public:
  CudaDevice(std::string name, std::shared_ptr<Context> ctx)
      : name_(std::move(name)), ctx_(std::move(ctx)) {}
  const std::string &name() const override { return name_; }
  const char *target() const override { return "cuda"; }

  Result<std::unique_ptr<detail::GpuCall>>
  beginCall(const detail::LoadedModule &loaded, const std::vector<Tensor> &inputs) override {
    std::shared_ptr<ModuleState> state;
    {
      std::lock_guard<std::mutex> guard(loaded.gpuMutex);
      for (auto &[id, s] : loaded.gpuStates)
        if (id == id_)
          state = std::static_pointer_cast<ModuleState>(s);
    }
    {
      std::lock_guard<std::recursive_mutex> guard(ctx_->mutex);
      if (Status s = ctx_->makeCurrent(); !s)
        return s;
      if (!state) {
        Result<std::shared_ptr<ModuleState>> loadedState = loadModule(ctx_, loaded);
        if (!loadedState)
          return loadedState.status();
        state = *loadedState;
        std::lock_guard<std::mutex> guard2(loaded.gpuMutex);
        loaded.gpuStates.emplace_back(id_, state);
      }
    }
    return std::unique_ptr<detail::GpuCall>(new CudaCall(ctx_, state, loaded, inputs));
  }

private:
  std::string name_;
  std::shared_ptr<Context> ctx_;
  uint64_t id_ = nextDeviceId++;
};

} // namespace

Result<std::unique_ptr<Device>> createCudaDevice(const std::string &name) {
  int ordinal = 0;
  if (name != "cuda") {
    const std::string digits = name.substr(5);
    if (name.rfind("cuda:", 0) != 0 || digits.empty() || digits.size() > 4 ||
        !std::all_of(digits.begin(), digits.end(),
                     [](unsigned char c) { return std::isdigit(c); }))
      return Status::error("bad cuda device name '" + name + "' (expected cuda or cuda:N)");
    ordinal = std::atoi(digits.c_str());
  }
  Result<std::shared_ptr<const Driver>> driver = loadDriver();
  if (!driver)
    return Status::error("device '" + name + "' is not available: " + driver.message());
  const Driver &d = **driver;
  int count = 0;
  CUresult r = d.cuDeviceGetCount(&count);
  if (r != CUDA_SUCCESS || count == 0)
    return Status::error("device '" + name + "' is not available: no CUDA GPU found" +
                         (r != CUDA_SUCCESS ? " (cuDeviceGetCount: " + d.describe(r) + ")"
                                            : ""));
  if (ordinal >= count)
    return Status::error("device '" + name + "' is not available: this machine has " +
                         std::to_string(count) + " CUDA GPU" + (count == 1 ? "" : "s") +
                         " (cuda:0.." + std::to_string(count - 1) + ")");
  auto ctx = std::make_shared<Context>();
  ctx->driver = *driver;
  ctx->ordinal = ordinal;
  const std::string what = "device '" + name + "'";
  if (Status s = d.check(d.cuDeviceGet(&ctx->device, ordinal), what + ": cuDeviceGet"); !s)
    return s;
  char gpuName[256] = {0};
  if (d.cuDeviceGetName(gpuName, sizeof(gpuName) - 1, ctx->device) == CUDA_SUCCESS)
    ctx->gpuName = gpuName;
  ctx->gpuName = "GPU " + std::to_string(ordinal) +
                 (ctx->gpuName.empty() ? "" : " (" + ctx->gpuName + ")");
  if (Status s = d.check(d.cuDeviceGetAttribute(&ctx->ccMajor,
                                                CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
                                                ctx->device),
                         what + ": compute capability");
      !s)
    return s;
  if (Status s = d.check(d.cuDeviceGetAttribute(&ctx->ccMinor,
                                                CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR,
                                                ctx->device),
                         what + ": compute capability");
      !s)
    return s;
  CUcontext context = nullptr;
  if (Status s = d.check(d.cuDevicePrimaryCtxRetain(&context, ctx->device),
                         what + ": cuDevicePrimaryCtxRetain");
      !s)
    return s;
  ctx->context = context;
  if (Status s = ctx->makeCurrent(); !s)
    return s;
  if (Status s = d.check(d.cuStreamCreate(&ctx->stream, CU_STREAM_NON_BLOCKING),
                         what + ": cuStreamCreate");
      !s)
    return s;
  return std::unique_ptr<Device>(new CudaDevice(name, std::move(ctx)));
}

} // namespace turbine::runtime::cuda
