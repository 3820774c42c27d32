//===- KernelCache.cpp - Directory, entry files, atomic writes ------------===//
//
// See KernelCache.h. Launch.cpp keeps the policy (memory cache first, what
// a key holds, when to rebuild); this file only knows files.
//===----------------------------------------------------------------------===//
#include "turbine/kernels/KernelCache.h"

#include <xxhash.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace turbine::kernels {
namespace {

/// An entry holds one kernel's code: anything near this size is not one.
constexpr uint64_t kMaxEntryBytes = uint64_t(1) << 30;

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

} // namespace

std::string kernelCacheDirectory() {
  if (const char *d = std::getenv("TURBINE_CACHE_DIR"))
    return d; // set but empty: no disk cache
  if (const char *x = std::getenv("XDG_CACHE_HOME"); x && *x)
    return std::string(x) + "/turbine";
  if (const char *h = std::getenv("HOME"); h && *h)
    return std::string(h) + "/.cache/turbine";
  return "";
}

std::string kernelCacheEntryPath(const std::string &directory, const std::string &key) {
  if (directory.empty() || !makeDirectories(directory + "/kernels"))
    return "";
  return directory + "/kernels/" + hexHash(key) + ".tmod";
}

Result<CachedKernel> loadKernelCacheEntry(const std::string &bytes, const std::string &label) {
  Result<std::shared_ptr<runtime::Module>> module = runtime::Module::loadFromBytes(bytes, label);
  if (!module.ok())
    return module.status();
  Result<runtime::Function> fn = (*module)->lookupFunction("main");
  if (!fn.ok())
    return fn.status();
  return CachedKernel{*module, *fn};
}

Result<std::optional<CachedKernel>> readKernelCacheEntry(const std::string &path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT)
      return std::optional<CachedKernel>();
    return Status::error("cannot open kernel cache entry '" + path + "': " +
                         std::strerror(errno));
  }
  struct stat info {};
  if (::fstat(fd, &info) != 0 || !S_ISREG(info.st_mode)) {
    ::close(fd);
    return Status::error("kernel cache entry '" + path + "' is not a regular file");
  }
  if (static_cast<uint64_t>(info.st_size) > kMaxEntryBytes) {
    ::close(fd);
    return Status::error("kernel cache entry '" + path + "' is " +
                         std::to_string(info.st_size) + " bytes, too large to be one");
  }
  std::string bytes(static_cast<size_t>(info.st_size), '\0');
  size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n = ::read(fd, &bytes[done], bytes.size() - done);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      break;
    done += static_cast<size_t>(n);
  }
  ::close(fd);
  if (done != bytes.size())
    return Status::error("cannot read kernel cache entry '" + path + "'");
  Result<CachedKernel> entry = loadKernelCacheEntry(bytes, path);
  if (!entry)
    return entry.status();
  return std::optional<CachedKernel>(std::move(*entry));
}

Status writeKernelCacheEntry(const std::string &path, const std::string &bytes) {
  std::string tmp = path + ".tmp-XXXXXX";
  int fd = ::mkstemp(tmp.data());
  if (fd < 0)
    return Status::error("cannot create a file next to '" + path + "': " + std::strerror(errno));
  ::fchmod(fd, 0644);
  size_t done = 0;
  bool ok = true;
  while (ok && done < bytes.size()) {
    ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR)
      continue;
    ok = n > 0;
    if (ok)
      done += static_cast<size_t>(n);
  }
  ok = (::close(fd) == 0) && ok;
  if (!ok || std::rename(tmp.c_str(), path.c_str()) != 0) {
    int err = errno;
    std::remove(tmp.c_str());
    return Status::error("cannot write kernel cache entry '" + path + "': " + std::strerror(err));
  }
  return Status::success();
}

} // namespace turbine::kernels
