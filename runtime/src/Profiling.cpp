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
  std::map<std::pair<std::string, std::string>, KernelProfile> kernels; // (kernel, shape)
};

ProfileTable &table() {
  static ProfileTable *t = new ProfileTable(); // never destroyed: usable at exit
  return *t;
}

} // namespace

void setDispatchProfiling(bool enabled) { enabledFlag().store(enabled); }

bool dispatchProfilingEnabled() { return enabledFlag().load(std::memory_order_relaxed); }

void detail::recordDispatch(const std::string &kernel, const std::string &shape,
                            double seconds) {
  ProfileTable &t = table();
  std::lock_guard<std::mutex> lock(t.mutex);
  KernelProfile &entry = t.kernels[{kernel, shape}];
  entry.kernel = kernel;
  entry.shape = shape;
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
  int64_t count = 0;
  size_t nameWidth = 4, shapeWidth = 5;
  for (const KernelProfile &e : entries) {
    total += e.seconds;
    count += e.dispatches;
    nameWidth = std::max(nameWidth, e.kernel.size());
    shapeWidth = std::max(shapeWidth, e.shape.size());
  }
  const int nw = static_cast<int>(nameWidth), sw = static_cast<int>(shapeWidth);
  std::string out;
  char line[1024];
  std::snprintf(line, sizeof(line), "%-*s  %-*s %11s %7s %7s %10s\n", nw, "name", sw, "shape",
                "total ms", "share", "count", "avg us");
  out += line;
  for (const KernelProfile &e : entries) {
    std::snprintf(line, sizeof(line), "%-*s  %-*s %11.3f %6.1f%% %7lld %10.2f\n", nw,
                  e.kernel.c_str(), sw, e.shape.c_str(), e.seconds * 1e3,
                  total > 0 ? 100.0 * e.seconds / total : 0.0,
                  static_cast<long long>(e.dispatches),
                  e.seconds * 1e6 / static_cast<double>(e.dispatches));
    out += line;
  }
  std::snprintf(line, sizeof(line), "%-*s  %-*s %11.3f %6.1f%% %7lld\n", nw, "all", sw, "",
                total * 1e3, 100.0, static_cast<long long>(count));
  out += line;
  return out;
}

} // namespace turbine::runtime
