//===- EmitLibrary.cpp - LLVM-dialect kernels -> native shared object -----===//
//
// The link phase for CPU: translates the kernel module to LLVM IR, optimizes
// it for the target CPU (the compiling machine's by default), emits object
// files (the kernels split into one part per core, code-generated in
// parallel) and links them into a position-independent shared object with
// ld.lld from LLVM 22. The runtime dlopens that object from memory; kernels may call
// libc/libm (malloc, erf), which the loading process provides.
//===----------------------------------------------------------------------===//
#include "targets/cpu/EmitLibrary.h"

#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Bitcode/BitcodeReader.h"
#include "llvm/Bitcode/BitcodeWriter.h"
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
#include "llvm/Transforms/Utils/SplitModule.h"

#include <thread>

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

/// Object code for `module` into `object`.
bool emitObject(llvm::Module &module, llvm::TargetMachine &machine,
                llvm::SmallVector<char, 0> &object) {
  llvm::raw_svector_ostream os(object);
  llvm::legacy::PassManager codegen;
  if (machine.addPassesToEmitFile(codegen, os, nullptr, llvm::CodeGenFileType::ObjectFile))
    return false;
  codegen.run(module);
  return true;
}

/// Object code for the optimized `module`, one object per part: code
/// generation (most of the link phase: ResNet-18's kernels take ~3 s of
/// instruction selection and scheduling on one core) runs on every core.
/// As LLVM's parallel LTO code generation does, the module is split
/// (llvm::SplitModule, functions dealt round-robin in module order, so the
/// result is deterministic), each part is written to bitcode here and read
/// back on its thread into an LLVMContext of its own (contexts are not
/// shared between threads). Values SplitModule had to make external (a
/// constant two parts use) are hidden: the library exports what it did
/// before, the kernels.
LogicalResult emitObjects(llvm::Module &module, const CompileOptions &options,
                          std::vector<llvm::SmallVector<char, 0>> &objects, std::string &error) {
  unsigned functions = 0;
  for (const llvm::Function &function : module)
    functions += function.isDeclaration() ? 0 : 1;
  unsigned parts = std::min(std::max(1u, std::thread::hardware_concurrency()), functions);
  std::vector<std::unique_ptr<llvm::TargetMachine>> machines;
  for (unsigned i = 0; i < std::max(parts, 1u); ++i) {
    machines.push_back(createTargetMachine(options, error));
    if (!machines.back())
      return failure();
  }
  if (parts <= 1) {
    objects.resize(1);
    if (!emitObject(module, *machines[0], objects[0])) {
      error = "target cannot emit object files";
      return failure();
    }
    return success();
  }
  llvm::StringSet<> exported;
  for (const llvm::GlobalValue &value : module.global_values())
    if (!value.hasLocalLinkage())
      exported.insert(value.getName());
  std::vector<llvm::SmallString<0>> bitcodes;
  llvm::SplitModule(
      module, parts,
      [&](std::unique_ptr<llvm::Module> part) {
        for (llvm::GlobalValue &value : part->global_values())
          if (!value.hasLocalLinkage() && !exported.contains(value.getName()))
            value.setVisibility(llvm::GlobalValue::HiddenVisibility);
        llvm::SmallString<0> &bitcode = bitcodes.emplace_back();
        llvm::raw_svector_ostream os(bitcode);
        llvm::WriteBitcodeToFile(*part, os);
      },
      /*PreserveLocals=*/false, /*RoundRobin=*/true);
  objects.assign(bitcodes.size(), {});
  std::vector<std::string> errors(bitcodes.size());
  std::vector<std::thread> threads;
  for (size_t i = 0; i < bitcodes.size(); ++i)
    threads.emplace_back([&, i] {
      llvm::LLVMContext context;
      llvm::Expected<std::unique_ptr<llvm::Module>> part = llvm::parseBitcodeFile(
          llvm::MemoryBufferRef(bitcodes[i].str(), "turbine_kernels"), context);
      if (!part)
        errors[i] = llvm::toString(part.takeError());
      else if (!emitObject(**part, *machines[i], objects[i]))
        errors[i] = "target cannot emit object files";
    });
  for (std::thread &thread : threads)
    thread.join();
  for (const std::string &message : errors)
    if (!message.empty()) {
      error = message;
      return failure();
    }
  return success();
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

  std::vector<llvm::SmallVector<char, 0>> objects;
  if (failed(emitObjects(*llvmModule, options, objects, error)))
    return kernels.emitError("link: ") << error;

  // Link the objects into a shared object with ld.lld.
  llvm::SmallString<128> libraryPath;
  std::vector<llvm::SmallString<128>> objectPaths(objects.size());
  llvm::scope_exit cleanup([&] {
    for (const llvm::SmallString<128> &path : objectPaths)
      if (!path.empty())
        llvm::sys::fs::remove(path);
    if (!libraryPath.empty())
      llvm::sys::fs::remove(libraryPath);
  });
  for (size_t i = 0; i < objects.size(); ++i) {
    int objectFd;
    if (llvm::sys::fs::createTemporaryFile("turbine-kernels", "o", objectFd, objectPaths[i]))
      return kernels.emitError("link: cannot create temporary files");
    llvm::raw_fd_ostream os(objectFd, /*shouldClose=*/true);
    os.write(objects[i].data(), objects[i].size());
  }
  if (llvm::sys::fs::createTemporaryFile("turbine-kernels", "so", libraryPath))
    return kernels.emitError("link: cannot create temporary files");
  std::string linker = TURBINE_LLD_PATH;
  llvm::SmallVector<llvm::StringRef> args = {linker, "-shared", "--hash-style=gnu", "-O1",
                                             "-o", libraryPath};
  for (const llvm::SmallString<128> &path : objectPaths)
    args.push_back(path);
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
