//===- CpuFeatures.cpp - Which x86 instructions the target CPU has --------===//
//
// "host": llvm::sys::getHostCPUFeatures (what EmitLibrary gives the target
// machine too); a CPU name: the X86 MCSubtargetInfo of that CPU. The same
// answers go into the artifact, for the runtime to check at load.
//===----------------------------------------------------------------------===//
#include "targets/cpu/CpuFeatures.h"

#include "turbine/artifact/CpuFeatures.h"
#include "turbine/artifact/Module.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/Triple.h"

#include <functional>
#include <memory>
#include <mutex>
#include <string>

namespace turbine::compiler {

void initializeNativeTarget() {
  static const bool initialized = [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
    return true;
  }();
  (void)initialized;
}

namespace {

/// Which LLVM features `targetCpu` ("host" or an LLVM CPU name) has, as a
/// predicate on a feature name; none for an unknown CPU.
std::function<bool(llvm::StringRef)> featureQuery(llvm::StringRef targetCpu) {
  if (targetCpu == "host") {
    auto host = std::make_shared<llvm::StringMap<bool>>(llvm::sys::getHostCPUFeatures());
    return [host](llvm::StringRef name) { return host->lookup(name); };
  }
  initializeNativeTarget();
  llvm::Triple triple(llvm::sys::getDefaultTargetTriple());
  std::string error;
  const llvm::Target *target = llvm::TargetRegistry::lookupTarget(triple, error);
  if (!target)
    return [](llvm::StringRef) { return false; };
  std::shared_ptr<llvm::MCSubtargetInfo> info(
      target->createMCSubtargetInfo(triple, targetCpu, ""));
  if (!info || !info->isCPUStringValid(targetCpu))
    return [](llvm::StringRef) { return false; };
  return [info](llvm::StringRef name) { return info->checkFeatures("+" + name.str()); };
}

} // namespace

CpuFeatures cpuFeatures(llvm::StringRef targetCpu) {
  static std::mutex mutex;
  static llvm::StringMap<CpuFeatures> known;
  std::lock_guard<std::mutex> lock(mutex);
  auto [it, inserted] = known.try_emplace(targetCpu);
  CpuFeatures &features = it->second;
  if (!inserted || targetCpu.empty())
    return features;
  std::function<bool(llvm::StringRef)> has = featureQuery(targetCpu);
  features.avx512f = has("avx512f");
  features.avx512vnni = has("avx512vnni");
  features.avx2 = has("avx2");
  features.avx512bf16 = has("avx512bf16");
  if (features.avx512f) {
    features.vectorBits = 512;
    features.vectorRegisters = 32;
  } else if (has("avx")) {
    features.vectorBits = 256;
  }
  return features;
}

void recordTargetCpu(llvm::StringRef targetCpu, artifact::Module &out) {
  if (targetCpu.empty())
    targetCpu = "host";
  out.targetCpu = targetCpu == "host" ? llvm::sys::getHostCPUName().str() : targetCpu.str();
  std::function<bool(llvm::StringRef)> has = featureQuery(targetCpu);
  out.cpuFeatures.clear();
  for (std::string_view name : artifact::kCpuFeatureNames)
    if (has(llvm::StringRef(name.data(), name.size())))
      out.cpuFeatures.emplace_back(name);
}

} // namespace turbine::compiler
