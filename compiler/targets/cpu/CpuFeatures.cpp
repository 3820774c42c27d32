//===- CpuFeatures.cpp - Which x86 instructions the target CPU has --------===//
//
// "host": llvm::sys::getHostCPUFeatures (what EmitLibrary gives the target
// machine too); a CPU name: the X86 MCSubtargetInfo of that CPU.
//===----------------------------------------------------------------------===//
#include "targets/cpu/CpuFeatures.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/Triple.h"

#include <memory>
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

CpuFeatures cpuFeatures(llvm::StringRef targetCpu) {
  CpuFeatures features;
  if (targetCpu.empty())
    return features;
  if (targetCpu == "host") {
    llvm::StringMap<bool> host = llvm::sys::getHostCPUFeatures();
    features.avx512f = host.lookup("avx512f");
    features.avx512vnni = host.lookup("avx512vnni");
    features.avx512bf16 = host.lookup("avx512bf16");
    return features;
  }
  initializeNativeTarget();
  llvm::Triple triple(llvm::sys::getDefaultTargetTriple());
  std::string error;
  const llvm::Target *target = llvm::TargetRegistry::lookupTarget(triple, error);
  if (!target)
    return features;
  std::unique_ptr<llvm::MCSubtargetInfo> info(
      target->createMCSubtargetInfo(triple, targetCpu, ""));
  if (!info || !info->isCPUStringValid(targetCpu))
    return features;
  features.avx512f = info->checkFeatures("+avx512f");
  features.avx512vnni = info->checkFeatures("+avx512vnni");
  features.avx512bf16 = info->checkFeatures("+avx512bf16");
  return features;
}

} // namespace turbine::compiler
