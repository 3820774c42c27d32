//===- EmitCuda.cpp - The CUDA target's link: PTX and cubins --------------===//
//
// gpu.module -> PTX (upstream gpu-module-to-binary, format=isa, with the
// module's #nvvm.target set here: chip = the oldest requested arch, PTX ISA
// version for it; libdevice linked from the toolkit path) -> one cubin per architecture
// (the toolkit's ptxas, run as a child process; its messages become the
// error). Library layout: the PTX (NUL-terminated, as cuModuleLoadData wants
// it), then each cubin, 64-byte aligned; Module::images says where.
//===----------------------------------------------------------------------===//
#include "targets/cuda/EmitCuda.h"

#include "turbine/artifact/Module.h"
#include "turbine/compiler/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Pass/PassManager.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"

#include <cstdlib>

using namespace mlir;

namespace turbine::compiler {
namespace {

bool isToolkit(const std::string &root) {
  llvm::SmallString<256> ptxas(root), libdevice(root);
  llvm::sys::path::append(ptxas, "bin", "ptxas");
  llvm::sys::path::append(libdevice, "nvvm", "libdevice", "libdevice.10.bc");
  return llvm::sys::fs::can_execute(ptxas) && llvm::sys::fs::exists(libdevice);
}

std::string pathIn(const std::string &root, const char *a, const char *b = nullptr,
                   const char *c = nullptr) {
  llvm::SmallString<256> path(root);
  llvm::sys::path::append(path, a, b ? b : "", c ? c : "");
  return std::string(path.str());
}

/// Runs `program args`, stdout and stderr into one temporary file; the
/// exit status, and the output in `output`.
int runTool(const std::string &program, llvm::ArrayRef<std::string> args,
            std::string &output) {
  llvm::SmallString<128> log;
  if (llvm::sys::fs::createTemporaryFile("turbine-ptxas", "log", log)) {
    output = "cannot create a temporary file";
    return -1;
  }
  std::vector<llvm::StringRef> argv = {program};
  for (const std::string &arg : args)
    argv.push_back(arg);
  std::optional<llvm::StringRef> redirects[] = {std::nullopt, llvm::StringRef(log),
                                                llvm::StringRef(log)};
  std::string error;
  int rc = llvm::sys::ExecuteAndWait(program, argv, std::nullopt, redirects,
                                     /*SecondsToWait=*/300, /*MemoryLimit=*/0, &error);
  if (auto buffer = llvm::MemoryBuffer::getFile(log))
    output = (*buffer)->getBuffer().str();
  if (!error.empty())
    output += error;
  llvm::sys::fs::remove(log);
  return rc;
}

void appendAligned(std::string &library, const std::string &bytes, artifact::CodeImage &image) {
  size_t offset = (library.size() + 63) / 64 * 64;
  library.resize(offset, '\0');
  image.offset = offset;
  image.size = bytes.size();
  library += bytes;
}

} // namespace

Result<std::string> findCudaToolkit() {
  std::vector<std::string> tried;
  // A toolkit named explicitly is the one to use: a wrong one is an error,
  // not a reason to fall back to another.
  for (const char *variable : {"CUDA_HOME", "CUDA_PATH"})
    if (const char *value = std::getenv(variable); value && *value) {
      if (isToolkit(value))
        return std::string(value);
      return Status::error(std::string("$") + variable + "='" + value +
                           "' is not a CUDA toolkit (the cuda target needs its bin/ptxas "
                           "and nvvm/libdevice/libdevice.10.bc)");
    }
  if (llvm::ErrorOr<std::string> ptxas = llvm::sys::findProgramByName("ptxas")) {
    llvm::SmallString<256> root(*ptxas);
    llvm::sys::path::remove_filename(root); // bin/
    llvm::sys::path::remove_filename(root);
    if (isToolkit(std::string(root.str())))
      return std::string(root.str());
    tried.push_back("ptxas on $PATH (" + *ptxas + ")");
  }
  if (isToolkit("/usr/local/cuda"))
    return std::string("/usr/local/cuda");
  tried.push_back("/usr/local/cuda");
  std::string where;
  for (const std::string &t : tried)
    where += (where.empty() ? "" : ", ") + t;
  return Status::error("the cuda target needs the CUDA toolkit (bin/ptxas and "
                       "nvvm/libdevice/libdevice.10.bc) and found none; set CUDA_HOME "
                       "(looked at: " + where + ")");
}

std::string ptxFeatureFor(const std::string &arch) {
  int number = std::atoi(arch.c_str() + 3);
  if (number >= 120)
    return "+ptx87";
  if (number >= 100)
    return "+ptx86";
  return "+ptx80";
}

Status emitCudaKernels(ModuleOp kernels, const CompileOptions &options, artifact::Module &out) {
  MLIRContext *ctx = kernels.getContext();
  if (options.cudaArchs.empty())
    return Status::error("the cuda target needs at least one architecture (--cuda-arch)");

  // Per kernel (the order of Module::kernels: the container's kernels in
  // block order, as buildHostPrograms listed them), its parameter counts.
  for (Operation &op : kernels.getBody()->getOperations()) {
    auto symbol = op.getAttrOfType<StringAttr>(SymbolTable::getSymbolAttrName());
    if (!symbol || !op.hasAttr(kKernelAttr))
      continue;
    auto bindings = op.getAttrOfType<IntegerAttr>("turbine.cuda.bindings");
    auto constants = op.getAttrOfType<IntegerAttr>("turbine.cuda.constants");
    if (!bindings || !constants)
      return Status::error("internal error: kernel '" + symbol.str() +
                           "' was not outlined for cuda (no turbine.cuda.bindings)");
    artifact::KernelLaunch launch;
    launch.bindings = static_cast<int32_t>(bindings.getInt());
    launch.constants = static_cast<int32_t>(constants.getInt());
    out.kernelLaunch.push_back(launch);
  }
  gpu::GPUModuleOp gpuModule;
  for (auto candidate : kernels.getOps<gpu::GPUModuleOp>())
    gpuModule = candidate;
  if (!gpuModule)
    return out.kernelLaunch.empty()
               ? Status::success()
               : Status::error("internal error: kernels but no gpu.module after codegen");

  // Everything must have reached the LLVM/NVVM dialects; name what did not
  // (e.g. complex arithmetic, which no pass here lowers) and its kernel.
  std::string unlowered;
  gpuModule.walk([&](Operation *op) {
    if (op == gpuModule.getOperation() || !unlowered.empty())
      return;
    StringRef dialect = op->getDialect() ? op->getDialect()->getNamespace() : "";
    if (dialect == "llvm" || dialect == "nvvm" || dialect == "builtin")
      return;
    auto func = op->getParentOfType<LLVM::LLVMFuncOp>();
    unlowered = "the cuda target cannot lower '" + op->getName().getStringRef().str() + "'" +
                (func ? " in kernel '" + func.getSymName().str() + "'" : std::string()) +
                " to NVVM";
    if (auto loc = dyn_cast<FileLineColLoc>(op->getLoc()))
      unlowered += " (" + loc.getFilename().str() + ":" + std::to_string(loc.getLine()) + ")";
  });
  if (!unlowered.empty())
    return Status::error(unlowered);

  Result<std::string> toolkit = findCudaToolkit();
  if (!toolkit)
    return toolkit.status();
  const std::string &ptxArch = options.cudaArchs.front();
  // libdevice: gpu-module-to-binary links it from the toolkit path.
  auto target = NVVM::NVVMTargetAttr::get(ctx, /*optLevel=*/3, "nvptx64-nvidia-cuda", ptxArch,
                                          ptxFeatureFor(ptxArch));
  gpuModule.setTargetsAttr(ArrayAttr::get(ctx, {target}));

  PassManager pm(ctx, ModuleOp::getOperationName());
  GpuModuleToBinaryPassOptions binaryOptions;
  binaryOptions.toolkitPath = *toolkit;
  binaryOptions.compilationTarget = "isa";
  pm.addPass(createGpuModuleToBinaryPass(binaryOptions));
  if (failed(pm.run(kernels)))
    return Status::error("generating PTX for the cuda target failed");
  gpu::BinaryOp binary;
  for (auto candidate : kernels.getOps<gpu::BinaryOp>())
    binary = candidate;
  if (!binary || binary.getObjects().size() != 1)
    return Status::error("internal error: gpu-module-to-binary made no PTX");
  auto object = cast<gpu::ObjectAttr>(binary.getObjects()[0]);
  std::string ptx = object.getObject().str();
  if (!options.dumpPhasesDir.empty()) {
    llvm::SmallString<256> path(options.dumpPhasesDir);
    llvm::sys::path::append(path, "kernels.ptx");
    std::error_code ec;
    llvm::raw_fd_ostream os(path, ec);
    if (ec)
      return Status::error("cannot write " + std::string(path.str()) + ": " + ec.message());
    os << ptx;
  }
  // gpu.binary has no meaning past the link; keep the container as it was
  // for anything that prints it.
  binary.erase();

  std::string library;
  artifact::CodeImage ptxImage{"ptx", ptxArch, 0, 0};
  appendAligned(library, ptx + '\0', ptxImage);
  out.images.push_back(ptxImage);

  llvm::SmallString<128> ptxFile;
  if (llvm::sys::fs::createTemporaryFile("turbine-kernels", "ptx", ptxFile))
    return Status::error("cannot create a temporary file for ptxas");
  {
    std::error_code ec;
    llvm::raw_fd_ostream os(ptxFile, ec);
    if (ec)
      return Status::error("cannot write " + std::string(ptxFile.str()) + ": " + ec.message());
    os << ptx;
  }
  std::string ptxas = pathIn(*toolkit, "bin", "ptxas");
  Status status = Status::success();
  for (const std::string &arch : options.cudaArchs) {
    llvm::SmallString<128> cubinFile;
    if (llvm::sys::fs::createTemporaryFile("turbine-kernels", "cubin", cubinFile)) {
      status = Status::error("cannot create a temporary file for ptxas");
      break;
    }
    std::string log;
    int rc = runTool(ptxas, {"-arch=" + arch, "-O3", std::string(ptxFile.str()), "-o",
                             std::string(cubinFile.str())},
                     log);
    llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> cubin =
        rc == 0 ? llvm::MemoryBuffer::getFile(cubinFile) : nullptr;
    llvm::sys::fs::remove(cubinFile);
    if (rc != 0 || !cubin || !*cubin) {
      status = Status::error("ptxas (" + ptxas + ") rejected the kernels' PTX for " + arch +
                             " (exit " + std::to_string(rc) + "): " + log);
      break;
    }
    artifact::CodeImage image{"cubin", arch, 0, 0};
    appendAligned(library, (*cubin)->getBuffer().str(), image);
    out.images.push_back(image);
  }
  llvm::sys::fs::remove(ptxFile);
  if (!status)
    return status;
  out.library = std::move(library);
  return Status::success();
}

} // namespace turbine::compiler
