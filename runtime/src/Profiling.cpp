//===- Profiling.cpp - Time spent per kernel ------------------------------===//
#include "turbine/runtime/Profiling.h"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>

namespace turbine::runtime {
namespace {

bool enabledFromEnvironment() {
  const char *value = std::getenv("TURBINE_PROFILE");
  return value && *value && std::strcmp(value, "0") != 0;
}

std::atomic<bool> &enabledFlag() {
  static std::atomic<bool> flag{enabledFromEnvironment()};
  return flag;
}

struct ProfileTable {
  std::mutex mutex;
  std::map<std::string, KernelProfile> kernels;
};

ProfileTable &table() {
  static ProfileTable *t = new ProfileTable(); // never destroyed: usable at exit
  return *t;
}

} // namespace

void setDispatchProfiling(bool enabled) { enabledFlag().store(enabled); }

bool dispatchProfilingEnabled() { return enabledFlag().load(std::memory_order_relaxed); }

void detail::recordDispatch(const std::string &kernel, double seconds) {
  ProfileTable &t = table();
  std::lock_guard<std::mutex> lock(t.mutex);
  KernelProfile &entry = t.kernels[kernel];
  entry.kernel = kernel;
  entry.dispatches += 1;
  entry.seconds += seconds;
}

std::vector<KernelProfile> dispatchProfile() {
  ProfileTable &t = table();
  std::vector<KernelProfile> result;
  {
    std::lock_guard<std::mutex> lock(t.mutex);
    for (const auto &[name, entry] : t.kernels)
      result.push_back(entry);
  }
  std::sort(result.begin(), result.end(), [](const KernelProfile &a, const KernelProfile &b) {
    return a.seconds > b.seconds;
  });
  return result;
}

void resetDispatchProfile() {
  ProfileTable &t = table();
  std::lock_guard<std::mutex> lock(t.mutex);
  t.kernels.clear();
}

std::string formatDispatchProfile() {
  std::vector<KernelProfile> entries = dispatchProfile();
  double total = 0;
  size_t width = 6;
  for (const KernelProfile &e : entries) {
    total += e.seconds;
    width = std::max(width, e.kernel.size());
  }
  std::string out;
  char line[512];
  std::snprintf(line, sizeof(line), "%-*s %10s %11s %13s %7s\n", static_cast<int>(width),
                "kernel", "dispatches", "total ms", "us/dispatch", "share");
  out += line;
  for (const KernelProfile &e : entries) {
    std::snprintf(line, sizeof(line), "%-*s %10lld %11.3f %13.2f %6.1f%%\n",
                  static_cast<int>(width), e.kernel.c_str(),
                  static_cast<long long>(e.dispatches), e.seconds * 1e3,
                  e.seconds * 1e6 / static_cast<double>(e.dispatches),
                  total > 0 ? 100.0 * e.seconds / total : 0.0);
    out += line;
  }
  std::snprintf(line, sizeof(line), "%-*s %10s %11.3f\n", static_cast<int>(width), "all", "",
                total * 1e3);
  out += line;
  return out;
}

} // namespace turbine::runtime
