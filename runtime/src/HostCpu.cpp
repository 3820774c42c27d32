//===- HostCpu.cpp - Whether this CPU runs an artifact's kernels ----------===//
#include "HostCpu.h"

#include "turbine/artifact/CpuFeatures.h"

#include <utility>

namespace turbine::runtime::detail {
namespace {

struct FeatureCheck {
  std::string_view name;
  bool (*has)();
};

// __builtin_cpu_supports takes a string literal only: one function each.
#define TURBINE_CPU_FEATURE(NAME) {NAME, [] { return __builtin_cpu_supports(NAME) != 0; }}
constexpr FeatureCheck kChecks[] = {
    TURBINE_CPU_FEATURE("sse4.1"),       TURBINE_CPU_FEATURE("sse4.2"),
    TURBINE_CPU_FEATURE("popcnt"),       TURBINE_CPU_FEATURE("avx"),
    TURBINE_CPU_FEATURE("avx2"),         TURBINE_CPU_FEATURE("fma"),
    TURBINE_CPU_FEATURE("f16c"),         TURBINE_CPU_FEATURE("bmi"),
    TURBINE_CPU_FEATURE("bmi2"),         TURBINE_CPU_FEATURE("lzcnt"),
    TURBINE_CPU_FEATURE("movbe"),        TURBINE_CPU_FEATURE("avxvnni"),
    TURBINE_CPU_FEATURE("avx512f"),      TURBINE_CPU_FEATURE("avx512cd"),
    TURBINE_CPU_FEATURE("avx512bw"),     TURBINE_CPU_FEATURE("avx512dq"),
    TURBINE_CPU_FEATURE("avx512vl"),     TURBINE_CPU_FEATURE("avx512ifma"),
    TURBINE_CPU_FEATURE("avx512vbmi"),   TURBINE_CPU_FEATURE("avx512vbmi2"),
    TURBINE_CPU_FEATURE("avx512vnni"),   TURBINE_CPU_FEATURE("avx512bitalg"),
    TURBINE_CPU_FEATURE("avx512vpopcntdq"), TURBINE_CPU_FEATURE("avx512bf16"),
    TURBINE_CPU_FEATURE("avx512fp16"),   TURBINE_CPU_FEATURE("gfni"),
    TURBINE_CPU_FEATURE("vaes"),         TURBINE_CPU_FEATURE("vpclmulqdq"),
    TURBINE_CPU_FEATURE("amx-tile"),     TURBINE_CPU_FEATURE("amx-int8"),
    TURBINE_CPU_FEATURE("amx-bf16"),
};
#undef TURBINE_CPU_FEATURE

static_assert(std::size(kChecks) == std::size(artifact::kCpuFeatureNames),
              "a check for every name an artifact may list");

} // namespace

std::optional<bool> hostHasCpuFeature(std::string_view name) {
  static const bool initialized = [] {
    __builtin_cpu_init();
    return true;
  }();
  (void)initialized;
  for (const FeatureCheck &check : kChecks)
    if (check.name == name)
      return check.has();
  return std::nullopt;
}

Status checkHostRunsKernels(const artifact::Module &artifact, const std::string &label) {
  std::string lacking, unknown;
  for (const std::string &feature : artifact.cpuFeatures) {
    std::optional<bool> has = hostHasCpuFeature(feature);
    std::string &list = has ? lacking : unknown;
    if (!has || !*has)
      list += (list.empty() ? "" : ", ") + feature;
  }
  if (lacking.empty() && unknown.empty())
    return Status::success();
  std::string compiledFor =
      "artifact '" + label + "' was compiled for CPU '" + artifact.targetCpu + "'";
  if (!lacking.empty())
    return Status::error(compiledFor + " and may use " + lacking +
                         ", which this CPU does not have: compile it for this CPU or for "
                         "one without them");
  return Status::error(compiledFor + " and may use " + unknown +
                       ", which this runtime cannot check for: load it with the runtime "
                       "of the compiler that wrote it");
}

} // namespace turbine::runtime::detail
