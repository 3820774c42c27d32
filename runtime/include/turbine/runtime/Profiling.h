//===- Profiling.h - Time spent per kernel, across all invocations --------===//
//
// When enabled (setDispatchProfiling(true), or TURBINE_PROFILE=1 in the
// environment at startup), every dispatch is timed from launch to completion
// and accumulated per kernel symbol, over all modules and calls in the
// process. `turbine bench --profile` prints the table after its measured calls.
// Profiling adds two clock reads per dispatch; off, it costs one relaxed load.
//===----------------------------------------------------------------------===//
#ifndef TURBINE_RUNTIME_PROFILING_H
#define TURBINE_RUNTIME_PROFILING_H

#include <cstdint>
#include <string>
#include <vector>

namespace turbine::runtime {

/// Accumulated time of one kernel.
struct KernelProfile {
  std::string kernel;  ///< exported symbol name in the artifact
  int64_t dispatches = 0;
  double seconds = 0;  ///< launch to completion, summed
};

void setDispatchProfiling(bool enabled);
bool dispatchProfilingEnabled();
/// The kernels dispatched since the last reset, most time first.
std::vector<KernelProfile> dispatchProfile();
void resetDispatchProfile();
/// A table of dispatchProfile(): kernel, dispatches, total ms, us per
/// dispatch, share of the total.
std::string formatDispatchProfile();

namespace detail {
/// Adds one dispatch of `kernel` that took `seconds`.
void recordDispatch(const std::string &kernel, double seconds);
} // namespace detail

} // namespace turbine::runtime

#endif // TURBINE_RUNTIME_PROFILING_H
