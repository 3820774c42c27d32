//===- Profiling.h - Time spent per kernel, across all invocations --------===//
//
// When enabled (setDispatchProfiling(true), or TURBINE_PROFILE=1 in the
// environment at startup), every dispatch is timed from launch to completion
// and accumulated per kernel symbol and output shape (a kernel with dynamic
// dims run at two shapes is two rows), over all modules and calls in the
// process. Kernels are named after what they compute
// (`matmul_128x768x768_f32`), so the table reads as the seed talk's:
// `turbine bench --profile` prints it after its measured calls.
// Profiling adds two clock reads per dispatch; off, it costs one relaxed load.
//===----------------------------------------------------------------------===//
#ifndef TURBINE_RUNTIME_PROFILING_H
#define TURBINE_RUNTIME_PROFILING_H

#include <cstdint>
#include <string>
#include <vector>

namespace turbine::runtime {

/// Accumulated time of one kernel at one shape.
struct KernelProfile {
  std::string kernel;  ///< exported symbol name in the artifact
  std::string shape;   ///< its (last) output's type at run time, "128x768xf32"
  int64_t dispatches = 0;
  double seconds = 0;  ///< launch to completion, summed
};

void setDispatchProfiling(bool enabled);
bool dispatchProfilingEnabled();
/// The kernels dispatched since the last reset, most time first.
std::vector<KernelProfile> dispatchProfile();
void resetDispatchProfile();
/// A table of dispatchProfile(): name, shape, total ms, share of the total,
/// count of dispatches, average us per dispatch.
std::string formatDispatchProfile();

namespace detail {
/// Adds one dispatch of `kernel` writing a `shape` output that took `seconds`.
void recordDispatch(const std::string &kernel, const std::string &shape, double seconds);
} // namespace detail

} // namespace turbine::runtime

#endif // TURBINE_RUNTIME_PROFILING_H
