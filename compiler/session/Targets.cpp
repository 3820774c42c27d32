//===- Targets.cpp - The registry of code-generation targets --------------===//
//
// Adding a target: a folder under compiler/targets implementing Target.h,
// and one line below.
//===----------------------------------------------------------------------===//
#include "turbine/compiler/Target.h"

#include "targets/cpu/CpuTarget.h"
#include "targets/cuda/CudaTarget.h"

namespace turbine::compiler {
namespace {

const std::vector<std::unique_ptr<Target>> &registry() {
  static const std::vector<std::unique_ptr<Target>> targets = [] {
    std::vector<std::unique_ptr<Target>> list;
    list.push_back(createCpuTarget());
    list.push_back(createCudaTarget());
    return list;
  }();
  return targets;
}

} // namespace

const Target *findTarget(std::string_view name) {
  for (const auto &target : registry())
    if (target->name() == name)
      return target.get();
  return nullptr;
}

std::vector<std::string> targetNames() {
  std::vector<std::string> names;
  for (const auto &target : registry())
    names.emplace_back(target->name());
  return names;
}

} // namespace turbine::compiler
