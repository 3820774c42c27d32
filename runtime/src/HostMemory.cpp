//===- HostMemory.cpp - The tensor memory limit and counted allocation ----===//
//
// One atomic counter of reserved bytes and one atomic limit. A reservation
// is a compare-and-swap that only succeeds while the new total fits, so the
// counter never passes the limit, even for a moment.
//===----------------------------------------------------------------------===//
#include "HostMemory.h"

#include "turbine/runtime/Memory.h"
#include "turbine/runtime/Tensor.h"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <unistd.h>

namespace turbine::runtime {
namespace {

std::atomic<uint64_t> inUse{0};
std::atomic<uint64_t> limitOverride{0}; // 0: the default

/// "TURBINE_MEMORY_LIMIT=8G" and friends; 0 when unset or malformed.
uint64_t limitFromEnvironment() {
  const char *text = std::getenv("TURBINE_MEMORY_LIMIT");
  if (!text || !*text)
    return 0;
  char *end = nullptr;
  unsigned long long value = std::strtoull(text, &end, 10);
  if (end == text)
    return 0;
  int shift = 0;
  switch (*end) {
  case 'k': case 'K': shift = 10; ++end; break;
  case 'm': case 'M': shift = 20; ++end; break;
  case 'g': case 'G': shift = 30; ++end; break;
  case 't': case 'T': shift = 40; ++end; break;
  default: break;
  }
  if (*end != '\0' || value > (~0ull >> shift))
    return 0;
  return static_cast<uint64_t>(value) << shift;
}

uint64_t physicalMemory() {
  long pages = ::sysconf(_SC_PHYS_PAGES);
  long pageSize = ::sysconf(_SC_PAGESIZE);
  if (pages <= 0 || pageSize <= 0)
    return ~uint64_t(0);
  return static_cast<uint64_t>(pages) * static_cast<uint64_t>(pageSize);
}

uint64_t defaultLimit() {
  static const uint64_t limit = [] {
    uint64_t env = limitFromEnvironment();
    return env ? env : physicalMemory();
  }();
  return limit;
}

std::string formatBytes(uint64_t bytes) {
  const char *units[] = {"bytes", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  if (bytes < 1024)
    return std::to_string(bytes) + " bytes";
  double value = static_cast<double>(bytes);
  int unit = 0;
  while (value >= 1024 && unit < 6) {
    value /= 1024;
    ++unit;
  }
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.1f %s", value, units[unit]);
  return buffer;
}

} // namespace

uint64_t memoryLimit() {
  uint64_t limit = limitOverride.load(std::memory_order_relaxed);
  return limit ? limit : defaultLimit();
}

void setMemoryLimit(uint64_t bytes) { limitOverride.store(bytes, std::memory_order_relaxed); }

uint64_t memoryInUse() { return inUse.load(std::memory_order_relaxed); }

namespace detail {

Status reserveMemory(size_t bytes, const std::string &what) {
  uint64_t limit = memoryLimit();
  uint64_t before = inUse.load(std::memory_order_relaxed);
  while (bytes <= limit && before <= limit - bytes)
    if (inUse.compare_exchange_weak(before, before + bytes, std::memory_order_relaxed))
      return Status::success();
  std::string reason =
      bytes > limit ? "more than the memory limit of " + formatBytes(limit)
                    : "which with the " + formatBytes(before) +
                          " of tensors already allocated exceeds the memory limit of " +
                          formatBytes(limit);
  return Status::error("cannot allocate " + formatBytes(bytes) + " for " + what + ": " +
                       reason + " (set TURBINE_MEMORY_LIMIT to change it)");
}

void releaseMemory(size_t bytes) { inUse.fetch_sub(bytes, std::memory_order_relaxed); }

Result<void *> allocateAligned(size_t bytes, const std::string &what) {
  if (Status s = reserveMemory(bytes, what); !s)
    return s;
  void *p = std::aligned_alloc(kTensorAlignment, bytes);
  if (!p) {
    releaseMemory(bytes);
    return Status::error("out of memory allocating " + formatBytes(bytes) + " for " + what);
  }
  return p;
}

void freeAligned(void *p, size_t bytes) {
  if (!p)
    return;
  std::free(p);
  releaseMemory(bytes);
}

} // namespace detail
} // namespace turbine::runtime
