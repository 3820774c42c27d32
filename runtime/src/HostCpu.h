//===- HostCpu.h - Whether this CPU runs an artifact's kernels (internal) -===//
//
// A CPU artifact lists the instruction-set extensions its kernels may use
// (artifact/CpuFeatures.h); loading it on a CPU without one of them would
// end in SIGILL inside the first kernel that uses it. The loader checks
// them first, with the compiler's own CPU detection (__builtin_cpu_supports,
// which also asks the OS whether it saves the wider vector registers).
//===----------------------------------------------------------------------===//
#ifndef TURBINE_RUNTIME_SRC_HOSTCPU_H
#define TURBINE_RUNTIME_SRC_HOSTCPU_H

#include "turbine/artifact/Module.h"
#include "turbine/base/Status.h"

#include <optional>
#include <string>
#include <string_view>

namespace turbine::runtime::detail {

/// Whether this CPU has extension `name` (a name of kCpuFeatureNames);
/// nullopt for a name this runtime does not know.
std::optional<bool> hostHasCpuFeature(std::string_view name);

/// An error naming the extensions of `artifact.cpuFeatures` this CPU lacks
/// (or does not know), with `label` naming the artifact; success when it
/// has them all, or when the artifact records none.
Status checkHostRunsKernels(const artifact::Module &artifact, const std::string &label);

} // namespace turbine::runtime::detail

#endif // TURBINE_RUNTIME_SRC_HOSTCPU_H
