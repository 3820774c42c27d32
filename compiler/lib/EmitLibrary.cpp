//===- EmitLibrary.cpp - LLVM-dialect kernels -> native shared object -----===//
//
// The link phase for CPU: translates the kernel module to LLVM IR, optimizes
// it for the target CPU (the compiling machine's by default), emits an object
// file and links it into a position-independent shared object with ld.lld
// from LLVM 22. The runtime dlopens that object from memory; kernels may call
// libc/libm (malloc, erf), which the loading process provides.
//===----------------------------------------------------------------------===//
#include "Phases.h"

#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Target/TargetOptions.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/Triple.h"

using namespace mlir;

namespace turbine::compiler {
namespace {

std::unique_ptr<llvm::TargetMachine>
createTargetMachine(const CompileOptions &options, std::string &error) {
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  llvm::Triple triple(llvm::sys::getDefaultTargetTriple());
  const llvm::Target *target =
      llvm::TargetRegistry::lookupTarget(triple, error);
  if (!target)
    return nullptr;
  std::string cpu = options.targetCpu;
  std::string features;
  if (cpu.empty() || cpu == "host") {
    cpu = llvm::sys::getHostCPUName().str();
    std::vector<std::string> list;
    for (const auto &feature : llvm::sys::getHostCPUFeatures())
      list.push_back((feature.second ? "+" : "-") + feature.first().str());
    features = llvm::join(list, ",");
  }
  llvm::CodeGenOptLevel level = options.optLevel >= 3 ? llvm::CodeGenOptLevel::Aggressive
                                : options.optLevel == 2 ? llvm::CodeGenOptLevel::Default
                                : options.optLevel == 1 ? llvm::CodeGenOptLevel::Less
                                                        : llvm::CodeGenOptLevel::None;
  llvm::TargetOptions targetOptions;
  std::unique_ptr<llvm::TargetMachine> machine(target->createTargetMachine(
      triple, cpu, features, targetOptions, llvm::Reloc::PIC_, std::nullopt,
      level));
  if (!machine)
    error = "cannot create a target machine for CPU '" + cpu + "'";
  return machine;
}

/// Removes turbine.* attributes, which LLVM IR translation does not know.
void stripTurbineAttributes(Operation *root) {
  root->walk([](Operation *op) {
    SmallVector<StringAttr> names;
    for (NamedAttribute attr : op->getDiscardableAttrs())
      if (attr.getName().getValue().starts_with("turbine."))
        names.push_back(attr.getName());
    for (StringAttr name : names)
      op->removeDiscardableAttr(name);
  });
}

} // namespace

FailureOr<std::string> emitKernelLibrary(ModuleOp kernels,
                                         const CompileOptions &options) {
  std::string error;
  std::unique_ptr<llvm::TargetMachine> machine =
      createTargetMachine(options, error);
  if (!machine)
    return kernels.emitError("link: ") << error;

  OwningOpRef<ModuleOp> clone = kernels.clone();
  stripTurbineAttributes(*clone);
  llvm::LLVMContext llvmContext;
  std::unique_ptr<llvm::Module> llvmModule =
      translateModuleToLLVMIR(*clone, llvmContext, "turbine_kernels");
  if (!llvmModule)
    return kernels.emitError("link: translation to LLVM IR failed");
  llvmModule->setTargetTriple(machine->getTargetTriple());
  llvmModule->setDataLayout(machine->createDataLayout());

  if (!options.dumpPhasesDir.empty()) {
    std::error_code ec;
    llvm::raw_fd_ostream os(options.dumpPhasesDir + "/kernels.ll", ec);
    if (!ec)
      llvmModule->print(os, nullptr);
  }

  auto optimize = makeOptimizingTransformer(options.optLevel, 0, machine.get());
  if (llvm::Error err = optimize(llvmModule.get()))
    return kernels.emitError("link: LLVM optimization failed: ")
           << llvm::toString(std::move(err));

  llvm::SmallVector<char, 0> object;
  {
    llvm::raw_svector_ostream os(object);
    llvm::legacy::PassManager codegen;
    if (machine->addPassesToEmitFile(codegen, os, nullptr,
                                     llvm::CodeGenFileType::ObjectFile))
      return kernels.emitError("link: target cannot emit object files");
    codegen.run(*llvmModule);
  }

  // Link the object into a shared object with ld.lld.
  llvm::SmallString<128> objectPath, libraryPath;
  int objectFd;
  if (llvm::sys::fs::createTemporaryFile("turbine-kernels", "o", objectFd,
                                         objectPath) ||
      llvm::sys::fs::createTemporaryFile("turbine-kernels", "so", libraryPath))
    return kernels.emitError("link: cannot create temporary files");
  auto cleanup = llvm::make_scope_exit([&] {
    llvm::sys::fs::remove(objectPath);
    llvm::sys::fs::remove(libraryPath);
  });
  {
    llvm::raw_fd_ostream os(objectFd, /*shouldClose=*/true);
    os.write(object.data(), object.size());
  }
  std::string linker = TURBINE_LLD_PATH;
  llvm::SmallVector<llvm::StringRef> args = {
      linker, "-shared", "--hash-style=gnu", "-O1", "-o", libraryPath,
      objectPath};
  std::string linkError;
  int rc = llvm::sys::ExecuteAndWait(linker, args, std::nullopt, {},
                                     /*secondsToWait=*/120, 0, &linkError);
  if (rc != 0)
    return kernels.emitError("link: ld.lld failed (exit ")
           << rc << ")" << (linkError.empty() ? "" : ": ") << linkError;
  auto buffer = llvm::MemoryBuffer::getFile(libraryPath);
  if (!buffer)
    return kernels.emitError("link: cannot read linked library");
  return (*buffer)->getBuffer().str();
}

} // namespace turbine::compiler
