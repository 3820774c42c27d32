//===- LaunchSupport.h - Compiled runs of the example kernels -------------===//
#ifndef TURBINE_EXAMPLES_KERNELS_LAUNCHSUPPORT_H
#define TURBINE_EXAMPLES_KERNELS_LAUNCHSUPPORT_H

#include "ExampleSupport.h"
#include "turbine/kernels/Launch.h"

#include <cstdio>

namespace turbine::examples {

/// Launches (compiled) once, timing the first call (compile or cache load),
/// then times `repetitions` cached calls. Prints a line; returns the status.
template <typename F>
kernels::Status runCompiled(F &&launchOnce, int repetitions, double &firstMillis,
                   double &microsPerLaunch) {
  auto start = std::chrono::steady_clock::now();
  kernels::Status first = launchOnce();
  firstMillis = std::chrono::duration<double, std::milli>(
                    std::chrono::steady_clock::now() - start)
                    .count();
  if (!first.ok())
    return first;
  kernels::Status status;
  microsPerLaunch = microsPerCall([&] { status = launchOnce(); }, repetitions);
  return status;
}

} // namespace turbine::examples

#endif // TURBINE_EXAMPLES_KERNELS_LAUNCHSUPPORT_H
