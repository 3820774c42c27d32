//===- Launch.cpp - Specialize, cache (memory + disk), compile, invoke ----===//
//
// Cache levels, in order:
//  1. memory: key = printed kernel graph + specialization key -> loaded module
//  2. disk: <cache dir>/kernels/<XXH64 of the key>.tmod (the key also holds
//     the kernel compiler's version and the host CPU), where the cache dir
//     is $TURBINE_CACHE_DIR, else $XDG_CACHE_HOME/turbine, else
//     ~/.cache/turbine (TURBINE_CACHE_DIR set but empty: no disk cache).
//     Entries are written to a temporary file and renamed (atomic).
//     Loading validates the artifact (header, XXH64 checksum, metadata); an
//     entry that fails is reported (TURBINE_DEBUG) and rebuilt.
//  3. compile.
//===----------------------------------------------------------------------===//
#include "turbine/kernels/Launch.h"

#include "turbine/artifact/Module.h"
#include "turbine/runtime/Device.h"
#include "turbine/runtime/Function.h"
#include "turbine/runtime/Module.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/TargetParser/Host.h"

#include <xxhash.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <functional>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <unistd.h>
#include <sys/stat.h>

namespace turbine::kernels {
namespace {

/// Part of every cache key: bump when the code the kernel compiler emits
/// changes, so stale disk entries are not reused. The host CPU is in the key
/// too (kernels are compiled for it; a shared cache must not serve another).
constexpr int kKernelCompilerVersion = 1;

std::string compilerIdentity() {
  static const std::string id = "turbine-kernels v" +
                                std::to_string(kKernelCompilerVersion) +
                                " cpu=" + llvm::sys::getHostCPUName().str();
  return id;
}

struct CacheEntry {
  CacheEntry(std::shared_ptr<runtime::Module> m, runtime::Function f)
      : module(std::move(m)), function(std::move(f)) {}
  std::shared_ptr<runtime::Module> module;
  runtime::Function function;
};

struct LaunchState {
  std::mutex mutex;
  std::map<std::string, std::shared_ptr<CacheEntry>> entries;
  LaunchStats stats;
  std::unique_ptr<runtime::Device> device;
};

LaunchState &state() {
  static LaunchState s;
  return s;
}

bool debugEnabled() {
  const char *v = std::getenv("TURBINE_DEBUG");
  return v && (std::strstr(v, "kernels") || std::strstr(v, "all"));
}

void debugLog(const std::string &message) {
  if (debugEnabled())
    std::fprintf(stderr, "[turbine kernels] %s\n", message.c_str());
}

std::string cacheDirectory() {
  if (const char *d = std::getenv("TURBINE_CACHE_DIR"))
    return d; // set but empty: no disk cache
  if (const char *x = std::getenv("XDG_CACHE_HOME"); x && *x)
    return std::string(x) + "/turbine";
  if (const char *h = std::getenv("HOME"); h && *h)
    return std::string(h) + "/.cache/turbine";
  return "";
}

bool makeDirectories(const std::string &path) {
  std::string partial;
  for (size_t i = 0; i <= path.size(); ++i) {
    if (i == path.size() || path[i] == '/') {
      if (!partial.empty())
        ::mkdir(partial.c_str(), 0755);
    }
    if (i < path.size())
      partial += path[i];
  }
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

std::string hexHash(const std::string &key) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx",
                static_cast<unsigned long long>(XXH64(key.data(), key.size(), 0)));
  return buf;
}

Result<std::shared_ptr<CacheEntry>> loadEntry(const std::string &bytes,
                                              const std::string &label) {
  Result<std::shared_ptr<runtime::Module>> module =
      runtime::Module::loadFromBytes(bytes, label);
  if (!module.ok())
    return module.status();
  Result<runtime::Function> fn = (*module)->lookupFunction("main");
  if (!fn.ok())
    return fn.status();
  return std::make_shared<CacheEntry>(*module, *fn);
}

bool readWhole(const std::string &path, std::string &out) {
  FILE *f = std::fopen(path.c_str(), "rb");
  if (!f)
    return false;
  char buf[1 << 16];
  size_t n;
  out.clear();
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0)
    out.append(buf, n);
  std::fclose(f);
  return true;
}

bool writeAtomically(const std::string &path, const std::string &bytes) {
  std::string tmp = path + ".tmp." + std::to_string(::getpid());
  FILE *f = std::fopen(tmp.c_str(), "wb");
  if (!f)
    return false;
  bool ok = std::fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size();
  ok = (std::fclose(f) == 0) && ok;
  if (!ok || std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::remove(tmp.c_str());
    return false;
  }
  return true;
}

/// Memory cache -> disk cache -> compile. Caller holds the mutex. `key`
/// identifies the code (content), `what` names it in logs and errors.
Result<std::shared_ptr<CacheEntry>>
lookupOrCompile(const std::string &contentKey, const std::string &what,
                const std::function<Status(const KernelCompileOptions &,
                                           artifact::Module &)> &compile) {
  LaunchState &s = state();
  std::string key = compilerIdentity() + "\n" + contentKey;
  auto it = s.entries.find(key);
  if (it != s.entries.end()) {
    ++s.stats.memoryHits;
    debugLog("memory hit " + what);
    return it->second;
  }
  std::string dir = cacheDirectory();
  std::string path;
  if (!dir.empty() && makeDirectories(dir + "/kernels"))
    path = dir + "/kernels/" + hexHash(key) + ".tmod";
  if (!path.empty()) {
    std::string bytes;
    if (readWhole(path, bytes)) {
      Result<std::shared_ptr<CacheEntry>> entry = loadEntry(bytes, path);
      if (entry.ok()) {
        ++s.stats.diskHits;
        debugLog("disk hit " + what + " (" + path + ")");
        s.entries[key] = *entry;
        return entry;
      }
      ++s.stats.corruptEntries;
      debugLog("disk entry rejected, rebuilding: " + entry.message());
    }
  }
  ++s.stats.misses;
  debugLog("miss " + what + ": compiling");
  auto start = std::chrono::steady_clock::now();
  artifact::Module artifact;
  KernelCompileOptions options;
  if (const char *dump = std::getenv("TURBINE_KERNELS_DUMP_DIR"); dump && *dump)
    options.dumpDir = std::string(dump) + "/" + hexHash(key);
  Status compiled = compile(options, artifact);
  if (!compiled.ok())
    return compiled;
  std::string bytes = artifact::serialize(artifact);
  double ms = std::chrono::duration<double, std::milli>(
                  std::chrono::steady_clock::now() - start)
                  .count();
  s.stats.compileMillis += ms;
  debugLog("compiled " + what + " in " + std::to_string(ms) + " ms");
  if (!path.empty()) {
    if (writeAtomically(path, bytes))
      debugLog("wrote " + path);
    else
      debugLog("could not write " + path);
  }
  Result<std::shared_ptr<CacheEntry>> entry = loadEntry(bytes, what);
  if (!entry.ok())
    return entry.status();
  s.entries[key] = *entry;
  return entry;
}

/// The cached entry for `contentKey` and the device to run it on.
Status prepare(const std::string &contentKey, const std::string &what,
               const std::function<Status(const KernelCompileOptions &,
                                          artifact::Module &)> &compile,
               std::shared_ptr<CacheEntry> &entry, runtime::Device *&device) {
  LaunchState &s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  Result<std::shared_ptr<CacheEntry>> found = lookupOrCompile(contentKey, what, compile);
  if (!found.ok())
    return found.status();
  entry = *found;
  if (!device) {
    if (!s.device) {
      Result<std::unique_ptr<runtime::Device>> d = runtime::Device::create("local-sync");
      if (!d.ok())
        return d.status();
      s.device = std::move(*d);
    }
    device = s.device.get();
  }
  return Status::success();
}

} // namespace

namespace {

/// What a launch with one signature (kernel, buffer shapes and dtypes,
/// symbols) needs once compiled: the kernel's entry point, the binding order,
/// the grid and the push constants.
struct PreparedLaunch {
  std::string fingerprint; ///< the kernel's content, checked on every hit
  std::shared_ptr<CacheEntry> entry;
  turbine_kernel_fn_t fn = nullptr;
  std::vector<int> bindingOrder; ///< buffer indices: inputs/inouts, then outputs
  std::vector<int64_t> pushConstants;
  std::array<int64_t, 3> grid = {1, 1, 1};
};

/// Prepared launches by signature key (under LaunchState::mutex).
std::map<std::string, std::shared_ptr<const PreparedLaunch>> &preparedLaunches() {
  static std::map<std::string, std::shared_ptr<const PreparedLaunch>> prepared;
  return prepared;
}

void appendBytes(std::string &key, const void *data, size_t size) {
  key.append(static_cast<const char *>(data), size);
}

/// Bytes identifying a launch signature (not human readable).
std::string signatureKey(const Kernel &kernel, const LaunchBuffer *buffers, size_t count,
                         const Bindings &symbols) {
  std::string key;
  key.reserve(64 + count * 40);
  size_t hash = kernel.fingerprintHash ? kernel.fingerprintHash
                                       : std::hash<std::string>{}(kernel.fingerprint);
  appendBytes(key, &hash, sizeof hash);
  appendBytes(key, &count, sizeof count);
  for (size_t i = 0; i < count; ++i) {
    int32_t dtype = static_cast<int32_t>(buffers[i].dtype);
    int64_t rank = static_cast<int64_t>(buffers[i].rank);
    appendBytes(key, &dtype, sizeof dtype);
    appendBytes(key, &rank, sizeof rank);
    appendBytes(key, buffers[i].shape, sizeof(int64_t) * buffers[i].rank);
  }
  for (const auto &[name, value] : symbols) {
    key += name;
    key += '\0';
    appendBytes(key, &value, sizeof value);
  }
  return key;
}

Result<std::shared_ptr<const PreparedLaunch>>
prepareLaunch(const Kernel &kernel, const LaunchBuffer *buffers, size_t count,
              const Bindings &symbols) {
  std::vector<BufferSignature> signatures;
  for (size_t i = 0; i < count; ++i)
    signatures.push_back({std::vector<int64_t>(buffers[i].shape, buffers[i].shape + buffers[i].rank),
                          buffers[i].dtype});
  Result<Specialization> spec = specialize(kernel, signatures, symbols);
  if (!spec.ok())
    return spec.status();
  const std::string &fingerprint = kernel.fingerprint.empty() ? kernel.print() : kernel.fingerprint;
  Result<std::shared_ptr<CacheEntry>> entry = lookupOrCompile(
      fingerprint + "\n" + spec->key(), spec->key(),
      [&](const KernelCompileOptions &options, artifact::Module &out) {
        return compileKernel(*spec, options, out);
      });
  if (!entry.ok())
    return entry.status();
  auto prepared = std::make_shared<PreparedLaunch>();
  prepared->fingerprint = fingerprint;
  prepared->entry = *entry;
  Result<turbine_kernel_fn_t> fn = (*entry)->module->lookupKernel(kernel.name);
  if (!fn.ok())
    return Status::error("kernel '" + kernel.name + "': " + fn.message());
  prepared->fn = *fn;
  for (int pass = 0; pass < 2; ++pass)
    for (size_t i = 0; i < kernel.buffers.size(); ++i)
      if ((kernel.buffers[i].kind == BufferKind::Output) == (pass == 1))
        prepared->bindingOrder.push_back(static_cast<int>(i));
  for (const DynamicSymbol &d : kernel.dynamicSymbols)
    prepared->pushConstants.push_back(spec->symbols.at(d.name));
  prepared->grid = spec->grid;
  return std::shared_ptr<const PreparedLaunch>(std::move(prepared));
}

} // namespace

Status launchBuffers(const Kernel &kernel, const LaunchBuffer *buffers, size_t count,
                     const Bindings &symbols, runtime::Device *device) {
  std::string key = signatureKey(kernel, buffers, count, symbols);
  std::shared_ptr<const PreparedLaunch> prepared;
  LaunchState &s = state();
  {
    std::lock_guard<std::mutex> lock(s.mutex);
    auto &cache = preparedLaunches();
    auto it = cache.find(key);
    if (it != cache.end() && it->second->fingerprint == kernel.fingerprint &&
        !kernel.fingerprint.empty()) {
      ++s.stats.memoryHits;
      prepared = it->second;
    } else {
      Result<std::shared_ptr<const PreparedLaunch>> made =
          prepareLaunch(kernel, buffers, count, symbols);
      if (!made.ok())
        return made.status();
      prepared = *made;
      cache[key] = prepared;
    }
    if (!device) {
      if (!s.device) {
        Result<std::unique_ptr<runtime::Device>> d = runtime::Device::create("local-sync");
        if (!d.ok())
          return d.status();
        s.device = std::move(*d);
      }
      device = s.device.get();
    }
  }
  for (size_t i = 0; i < count; ++i)
    if (kernel.buffers[i].kind != BufferKind::Input && buffers[i].readOnly)
      return Status::error("kernel '" + kernel.name + "': " +
                           bufferKindName(kernel.buffers[i].kind) + " buffer '" +
                           kernel.buffers[i].name + "' is read-only");
  void *bindings[64];
  std::vector<void *> many;
  void **b = bindings;
  if (count > 64) {
    many.resize(count);
    b = many.data();
  }
  for (size_t p = 0; p < prepared->bindingOrder.size(); ++p)
    b[p] = buffers[prepared->bindingOrder[p]].data;
  turbine_dispatch_state_t dispatch;
  dispatch.bindings = b;
  dispatch.constants = prepared->pushConstants.data();
  for (int a = 0; a < 3; ++a)
    dispatch.workgroup_count[a] = prepared->grid[a];
  device->dispatch(prepared->fn, dispatch);
  return Status::success();
}

Result<LaunchTimings> timeLaunches(const Kernel &kernel, const LaunchBuffer *buffers,
                                   size_t count, const Bindings &symbols, int repetitions) {
  if (Status s = launchBuffers(kernel, buffers, count, symbols); !s.ok())
    return s;
  std::shared_ptr<const PreparedLaunch> prepared;
  runtime::Device *device = nullptr;
  {
    std::lock_guard<std::mutex> lock(state().mutex);
    prepared = preparedLaunches().at(signatureKey(kernel, buffers, count, symbols));
    device = state().device.get();
  }
  std::vector<void *> bindings;
  for (int b : prepared->bindingOrder)
    bindings.push_back(buffers[b].data);
  turbine_dispatch_state_t dispatch;
  dispatch.bindings = bindings.data();
  dispatch.constants = prepared->pushConstants.data();
  for (int a = 0; a < 3; ++a)
    dispatch.workgroup_count[a] = prepared->grid[a];
  // Median over batches of the mean time per call.
  const int batches = 15;
  int perBatch = std::max(1, repetitions / batches);
  auto median = [&](const std::function<void()> &call) {
    std::vector<double> means;
    for (int b = 0; b < batches; ++b) {
      auto start = std::chrono::steady_clock::now();
      for (int i = 0; i < perBatch; ++i)
        call();
      means.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
                          .count() / perBatch);
    }
    std::sort(means.begin(), means.end());
    return means[means.size() / 2];
  };
  LaunchTimings t;
  Status failed;
  t.launchSeconds = median([&] {
    Status s = launchBuffers(kernel, buffers, count, symbols);
    if (!s.ok())
      failed = s;
  });
  t.dispatchSeconds = median([&] { device->dispatch(prepared->fn, dispatch); });
  if (!failed.ok())
    return failed;
  return t;
}

Status launch(const Kernel &kernel, std::vector<runtime::Tensor> buffers,
              const Bindings &symbols, runtime::Device *device) {
  std::vector<LaunchBuffer> raw(buffers.size());
  for (size_t i = 0; i < buffers.size(); ++i) {
    runtime::Tensor &t = buffers[i];
    raw[i].data = t.isReadOnly() ? const_cast<void *>(t.data()) : t.data();
    raw[i].dtype = t.dtype();
    raw[i].shape = t.shape().data();
    raw[i].rank = t.shape().size();
    raw[i].readOnly = t.isReadOnly();
  }
  if (buffers.size() != kernel.buffers.size())
    return Status::error("kernel '" + kernel.name + "': expected " +
                         std::to_string(kernel.buffers.size()) + " buffers, got " +
                         std::to_string(buffers.size()));
  return launchBuffers(kernel, raw.data(), raw.size(), symbols, device);
}

Result<std::vector<runtime::Tensor>>
launchModule(const std::string &label, const std::string &moduleText,
             const std::vector<runtime::Tensor> &inputs, runtime::Device *device) {
  std::shared_ptr<CacheEntry> entry;
  Status ready = prepare(
      moduleText, label,
      [&](const KernelCompileOptions &options, artifact::Module &out) {
        return compileKernelModuleText(moduleText, label, options, out);
      },
      entry, device);
  if (!ready.ok())
    return ready;
  Result<std::vector<runtime::Tensor>> results = entry->function.invoke(*device, inputs);
  if (!results.ok())
    return Status::error(label + ": " + results.message());
  return results;
}

Result<std::vector<runtime::Tensor>>
launchTensorModule(const std::string &label, const std::string &moduleText,
                   const std::vector<runtime::Tensor> &inputs, runtime::Device *device) {
  std::shared_ptr<CacheEntry> entry;
  Status ready = prepare(
      "tensor-module\n" + moduleText, label,
      [&](const KernelCompileOptions &options, artifact::Module &out) {
        return compileTensorModuleText(moduleText, label, options, out);
      },
      entry, device);
  if (!ready.ok())
    return ready;
  Result<std::vector<runtime::Tensor>> results = entry->function.invoke(*device, inputs);
  if (!results.ok())
    return Status::error(label + ": " + results.message());
  return results;
}

LaunchStats launchStats() {
  std::lock_guard<std::mutex> lock(state().mutex);
  return state().stats;
}

void resetLaunchStats() {
  std::lock_guard<std::mutex> lock(state().mutex);
  state().stats = LaunchStats();
}

void clearLaunchCache() {
  std::lock_guard<std::mutex> lock(state().mutex);
  state().entries.clear();
  preparedLaunches().clear();
}

} // namespace turbine::kernels
