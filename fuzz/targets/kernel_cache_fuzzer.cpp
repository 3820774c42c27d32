//===- kernel_cache_fuzzer.cpp - a kernel cache entry on disk -> reader ---===//
//
// Writes the bytes as an entry file of a private cache directory (a plain
// write, not the cache's fsync'ed writer) and reads it back the way
// Launch.cpp does (kernels/KernelCache.h:
// readKernelCacheEntry: file checks, artifact reader, runtime loader,
// lookup of `main`), then invokes `main` on small inputs (TmodTarget.h:
// checksum fixed up first, only seed kernel libraries are loaded, no kernel
// runs). Seeds: entries written by the kernel tests' launches
// (fuzz/make_seeds.sh).
//===----------------------------------------------------------------------===//
#include "TmodTarget.h"

#include "turbine/kernels/KernelCache.h"

#include <fstream>

#include <unistd.h>

namespace {
std::string &entryPath() {
  static std::string path;
  return path;
}
} // namespace

extern "C" int LLVMFuzzerInitialize(int *argc, char ***argv) {
  turbine::fuzz::initializeTmodTarget(argc, argv);
  std::string dir = std::filesystem::temp_directory_path().string() +
                    "/turbine-fuzz-cache-" + std::to_string(::getpid());
  entryPath() = turbine::kernels::kernelCacheEntryPath(dir, "fuzz");
  if (entryPath().empty())
    std::abort();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  using namespace turbine;
  std::string bytes(reinterpret_cast<const char *>(data), size);
  if (bytes.size() >= 72 && std::memcmp(bytes.data(), artifact::kMagic, 8) == 0) {
    uint64_t hash = XXH64(bytes.data() + 72, bytes.size() - 72, 0);
    std::memcpy(&bytes[64], &hash, 8);
  }
  Result<artifact::Module> module = artifact::deserialize(bytes);
  bool trusted = !module || module->library.empty() ||
                 fuzz::trustedLibraries().count(fuzz::libraryHash(module->library));
  if (!trusted)
    return fuzz::fuzzArtifact(data, size, "main"); // reader only (TmodTarget.h, step 3)
  // A plain write: the cache's own writer (temp file, fsync, rename; tested
  // in kernels/CacheConcurrencyTest) made every execution wait for the disk.
  {
    std::ofstream entry(entryPath(), std::ios::binary | std::ios::trunc);
    entry.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    fuzz::check(static_cast<bool>(entry.flush()), "cannot write the entry file");
  }
  auto entry = kernels::readKernelCacheEntry(entryPath());
  if (!entry) {
    fuzz::check(!entry.message().empty(), "an error without a message");
    return 0;
  }
  fuzz::check(entry->has_value(), "an existing entry reads as missing");
  fuzz::NoKernelDevice device;
  const runtime::Function &fn = (*entry)->function;
  fuzz::check(fn.name() == "main", "the entry's function is not main");
  if (auto inputs = fuzz::smallInputs(fn, data, size)) {
    auto results = fn.invoke(device, *inputs);
    if (results)
      for (const runtime::Tensor &r : *results)
        fuzz::touchAll(r);
  }
  return 0;
}
