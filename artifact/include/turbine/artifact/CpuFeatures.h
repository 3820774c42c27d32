//===- CpuFeatures.h - x86 extensions an artifact's kernels may require ---===//
//
// A CPU artifact records the LLVM CPU its kernels were compiled for and
// which of the instruction-set extensions below that CPU has (Module.h,
// `targetCpu` / `cpuFeatures`): code compiled for one CPU may use any of
// them, so the runtime refuses to load the artifact on a CPU that lacks one
// (a clear error instead of SIGILL in the first kernel that uses it). The
// names are LLVM's (`-mattr=+avx2`), which GCC's and clang's
// `__builtin_cpu_supports` also accept; the compiler records only these,
// and the runtime knows how to check each (runtime/src/HostCpu.cpp).
// Adding a name: it must be one both understand.
//===----------------------------------------------------------------------===//
#ifndef TURBINE_ARTIFACT_CPUFEATURES_H
#define TURBINE_ARTIFACT_CPUFEATURES_H

#include <string_view>

namespace turbine::artifact {

/// The extensions an artifact may list, roughly oldest first.
inline constexpr std::string_view kCpuFeatureNames[] = {
    "sse4.1",     "sse4.2",       "popcnt",          "avx",          "avx2",
    "fma",        "f16c",         "bmi",             "bmi2",         "lzcnt",
    "movbe",      "avxvnni",      "avx512f",         "avx512cd",     "avx512bw",
    "avx512dq",   "avx512vl",     "avx512ifma",      "avx512vbmi",   "avx512vbmi2",
    "avx512vnni", "avx512bitalg", "avx512vpopcntdq", "avx512bf16",   "avx512fp16",
    "gfni",       "vaes",         "vpclmulqdq",      "amx-tile",     "amx-int8",
    "amx-bf16",
};

} // namespace turbine::artifact

#endif // TURBINE_ARTIFACT_CPUFEATURES_H
