//===- EmitLibrary.cpp - LLVM-dialect kernels -> native shared object -----===//
//
// The link phase for CPU: translates the kernel module to LLVM IR, optimizes
// it for the target CPU (the compiling machine's by default) and emits object
// files (the kernels split into parts, optimized and code-generated on
// every core) and links them into a position-independent shared object with
// ld.lld from LLVM 22, with compiler-rt's builtins for the operations LLVM
// lowers to library calls on CPUs without the instruction (f32 -> bf16
// without AVX512-BF16). The runtime dlopens that object from memory; kernels
// may call libc/libm (malloc, erf), which the loading process provides.
//===----------------------------------------------------------------------===//
#include "targets/cpu/EmitLibrary.h"
#include "targets/cpu/CpuFeatures.h"

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

#include "llvm/Support/Threading.h"

#include <atomic>
#include <thread>

using namespace mlir;

namespace turbine::compiler {
namespace {

std::unique_ptr<llvm::TargetMachine>
createTargetMachine(const CompileOptions &options, std::string &error) {
  initializeNativeTarget();
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

/// How many parts the kernels are split into: fixed (not the core count),
/// so an artifact is byte-identical on every machine, and several per
/// thread, so threads that finish a part early take the next one (kernels
/// differ in cost by 100x: a round-robin of one part per thread left one
/// core idle for much of the phase).
constexpr unsigned kLinkParts = 16;

/// Object code for `module` (translated, not yet optimized), one object per
/// part: LLVM's optimization (-O3 on the module) and code generation, most
/// of the compile time of a model with many kernels (DenseNet-121: ~60 %),
/// run on every core. As LLVM's parallel LTO code generation does, the
/// module is split (llvm::SplitModule, functions dealt round-robin in module
/// order, so the result is deterministic), each part is written to bitcode
/// here and read back on a worker thread into an LLVMContext of its own
/// (contexts are not shared between threads), optimized and code-generated
/// there. The kernels are independent functions (no definitions other than
/// kernels, nothing called across kernels), so optimizing each part alone
/// gives every kernel the code the whole module's -O3 gave it. Values
/// SplitModule had to make external (a constant two parts use) are hidden:
/// the library exports what it did before, the kernels.
LogicalResult emitObjects(llvm::Module &module, const CompileOptions &options,
                          std::vector<llvm::SmallVector<char, 0>> &objects, std::string &error) {
  unsigned functions = 0;
  for (const llvm::Function &function : module)
    functions += function.isDeclaration() ? 0 : 1;
  unsigned parts = std::max(1u, std::min(kLinkParts, functions));
  unsigned threads = std::min(parts, llvm::hardware_concurrency().compute_thread_count());
  std::vector<std::unique_ptr<llvm::TargetMachine>> machines;
  for (unsigned i = 0; i < threads; ++i) {
    machines.push_back(createTargetMachine(options, error));
    if (!machines.back())
      return failure();
  }
  auto optimizeAndEmit = [&](llvm::Module &part, llvm::TargetMachine &machine,
                             llvm::SmallVector<char, 0> &object) -> std::string {
    auto optimize = makeOptimizingTransformer(options.optLevel, 0, &machine);
    if (llvm::Error err = optimize(&part))
      return "LLVM optimization failed: " + llvm::toString(std::move(err));
    // Code generation reads the optimized part back from bitcode, as it
    // did when the whole module was optimized before the split: use lists
    // in the order the reader makes them (instruction order), on which
    // instruction scheduling's ties depend, so a kernel's machine code
    // stays the same.
    llvm::SmallString<0> bitcode;
    {
      llvm::raw_svector_ostream os(bitcode);
      llvm::WriteBitcodeToFile(part, os);
    }
    llvm::LLVMContext context;
    llvm::Expected<std::unique_ptr<llvm::Module>> optimized = llvm::parseBitcodeFile(
        llvm::MemoryBufferRef(bitcode.str(), "turbine_kernels"), context);
    if (!optimized)
      return llvm::toString(optimized.takeError());
    if (!emitObject(**optimized, machine, object))
      return "target cannot emit object files";
    return "";
  };
  if (parts <= 1) {
    objects.resize(1);
    error = optimizeAndEmit(module, *machines[0], objects[0]);
    return failure(!error.empty());
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
        // Use lists as they are: the optimizer sees each kernel as it
        // would in the whole module.
        llvm::WriteBitcodeToFile(*part, os, /*ShouldPreserveUseListOrder=*/true);
      },
      /*PreserveLocals=*/false, /*RoundRobin=*/true);
  objects.assign(bitcodes.size(), {});
  std::vector<std::string> errors(bitcodes.size());
  std::atomic<size_t> next{0};
  auto work = [&](unsigned thread) {
    for (size_t i = next++; i < bitcodes.size(); i = next++) {
      llvm::LLVMContext context;
      llvm::Expected<std::unique_ptr<llvm::Module>> part = llvm::parseBitcodeFile(
          llvm::MemoryBufferRef(bitcodes[i].str(), "turbine_kernels"), context);
      if (!part)
        errors[i] = llvm::toString(part.takeError());
      else
        errors[i] = optimizeAndEmit(**part, *machines[thread], objects[i]);
    }
  };
  std::vector<std::thread> workers;
  for (unsigned t = 1; t < threads; ++t)
    workers.emplace_back(work, t);
  work(0);
  for (std::thread &worker : workers)
    worker.join();
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
  // Last: an archive gives only the members the objects before it need
  // (compiled hidden, so the library exports nothing more).
  args.push_back(TURBINE_CLANG_RT_BUILTINS);
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
