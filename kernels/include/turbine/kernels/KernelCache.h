//===- KernelCache.h - The on-disk cache of compiled kernels --------------===//
//
// Where Launch.h's disk cache lives and how its entries are read and
// written, without the compiler (so that the reader can be tested and
// fuzzed on its own: fuzz/targets/kernel_cache_fuzzer.cpp):
//  - the directory: $TURBINE_CACHE_DIR, else $XDG_CACHE_HOME/turbine, else
//    ~/.cache/turbine; TURBINE_CACHE_DIR set but empty: no disk cache;
//  - an entry: <dir>/kernels/<XXH64 of its key, 16 hex digits>.tmod, an
//    artifact whose function `main` runs the kernel;
//  - writing: to a unique temporary file in the same directory, renamed into
//    place, so a reader (another thread or process) sees the whole old entry
//    or the whole new one, never a partial file; concurrent writers of one
//    entry each rename a complete file;
//  - reading: the artifact reader validates everything (header, checksum,
//    metadata); a corrupt entry is an error the caller reports and rebuilds.
//===----------------------------------------------------------------------===//
#ifndef TURBINE_KERNELS_KERNELCACHE_H
#define TURBINE_KERNELS_KERNELCACHE_H

#include "turbine/runtime/Function.h"
#include "turbine/runtime/Module.h"

#include <memory>
#include <optional>
#include <string>

namespace turbine::kernels {

using runtime::Result;
using runtime::Status;

/// A loaded cache entry.
struct CachedKernel {
  std::shared_ptr<runtime::Module> module;
  runtime::Function function; ///< its `main`
};

/// The cache directory by the rules above; "" when there is none.
std::string kernelCacheDirectory();

/// The entry file for `key` under `directory` (creating
/// `directory`/kernels); "" when the directory cannot be made.
std::string kernelCacheEntryPath(const std::string &directory, const std::string &key);

/// Loads an entry from its bytes; `label` names it in messages.
Result<CachedKernel> loadKernelCacheEntry(const std::string &bytes, const std::string &label);

/// Reads the entry at `path`: nullopt when there is no such file, an error
/// when it cannot be read or is not a valid entry.
Result<std::optional<CachedKernel>> readKernelCacheEntry(const std::string &path);

/// Writes `bytes` as the entry at `path` (atomically, see above).
Status writeKernelCacheEntry(const std::string &path, const std::string &bytes);

} // namespace turbine::kernels

#endif // TURBINE_KERNELS_KERNELCACHE_H
