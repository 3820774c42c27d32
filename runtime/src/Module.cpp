//===- Module.cpp - Loading .tmod artifacts -------------------------------===//
//
// Validates the artifact (artifact::deserialize), writes its kernel library
// into an anonymous memfd and dlopens it through /proc/self/fd, resolves all
// kernel symbols, copies the embedded parameters into aligned storage and
// binds external ones to the parameter files given.
//===----------------------------------------------------------------------===//
#include "turbine/runtime/Module.h"

#include "HostCpu.h"
#include "InstanceState.h"
#include "LoadedModule.h"
#include "ParameterFormats.h"

#include "turbine/runtime/Ggml.h"

#include <cerrno>
#include <exception>
#include <cstring>

#include <dlfcn.h>
#include <sys/mman.h>
#include <unistd.h>

namespace turbine::runtime {

namespace detail {
LoadedModule::~LoadedModule() {
  if (libraryHandle)
    dlclose(libraryHandle);
  if (libraryFd >= 0)
    close(libraryFd);
}
} // namespace detail

namespace {

Status writeAll(int fd, const std::string &bytes) {
  size_t written = 0;
  while (written < bytes.size()) {
    ssize_t n = ::write(fd, bytes.data() + written, bytes.size() - written);
    if (n < 0) {
      if (errno == EINTR)
        continue;
      return Status::error(std::strerror(errno));
    }
    written += static_cast<size_t>(n);
  }
  return Status::success();
}

/// Maps the kernel library and resolves every kernel symbol.
/// A read-only view of embedded parameter `p` inside `storage` (the params
/// section; the artifact reader checked the bounds).
Result<Tensor> embeddedParameter(const artifact::Parameter &p, const Tensor &storage) {
  char *base = const_cast<char *>(storage.dataAs<char>()) + p.offset;
  auto holder = std::make_shared<Tensor>(storage);
  std::shared_ptr<const void> keepAlive(holder, holder->data());
  return Tensor::wrap(p.dtype, p.shape, base, std::move(keepAlive), /*readOnly=*/true);
}

/// External parameter `p` from the first of `files` that holds its name.
Result<Tensor> bindExternalParameter(const artifact::Parameter &p,
                                     const std::vector<ParameterIndex> &files) {
  for (const ParameterIndex &file : files)
    if (const ParameterEntry *entry = file.find(p.name)) {
      if (p.ggmlType.empty())
        return file.tensor(*entry, p.dtype, p.shape);
      // Compiled against a block-quantized GGUF tensor: its blocks, as they
      // lie in the mapping (no copy), typed as the kernel reads them.
      std::string shape;
      for (int64_t d : p.ggmlShape)
        shape += (shape.empty() ? "" : "x") + std::to_string(d);
      std::string found = entry->ggmlType ? ggmlTypeName(*entry->ggmlType) : "";
      if (!entry->ggmlType || found != p.ggmlType || entry->shape != p.ggmlShape) {
        std::string got = entry->typeString();
        return Status::error("external parameter '" + p.name + "' in '" + file.origin() +
                             "' is " + got + ", but the artifact was compiled against " +
                             shape + "x" + p.ggmlType + " (recompile with this file's --weights-from)");
      }
      if (!entry->isBlockQuantized()) {
        // F32 / F16 / BF16 compiled against the file: its bytes in place,
        // whatever their alignment (GGUF aligns tensors to 32 bytes; the
        // kernels assume no more than the element's).
        auto bytes = tensorByteSize(p.dtype, p.shape);
        if (!bytes)
          return bytes.status();
        if (entry->kind != ParameterEntry::Kind::data || entry->dtype != p.dtype ||
            *bytes != entry->length)
          return Status::error("external parameter '" + p.name + "' in '" + file.origin() +
                               "' is " + entry->typeString() + " (" +
                               std::to_string(entry->length) + " bytes); the artifact expects " +
                               formatTensorType(p.dtype, p.shape));
        return Tensor::wrap(p.dtype, p.shape, const_cast<uint8_t *>(entry->bytes),
                            file.storage(), /*readOnly=*/true);
      }
      Result<GgmlBlocksView> blocks = file.ggmlBlocks(*entry);
      if (!blocks)
        return blocks.status();
      auto bytes = tensorByteSize(p.dtype, p.shape);
      if (!bytes)
        return bytes.status();
      if (*bytes != entry->length)
        return Status::error("external parameter '" + p.name + "' in '" + file.origin() +
                             "' holds " + std::to_string(entry->length) + " bytes of " +
                             p.ggmlType + " blocks; the artifact expects " +
                             formatTensorType(p.dtype, p.shape));
      return Tensor::wrap(p.dtype, p.shape, const_cast<uint8_t *>(blocks->blocks),
                          blocks->keepAlive, /*readOnly=*/true);
    }
  std::string searched;
  for (const ParameterIndex &file : files)
    searched += (searched.empty() ? "'" : ", '") + file.origin() + "'";
  return Status::error("external parameter '" + p.name + "' (" +
                       formatTensorType(p.dtype, p.shape) + ") " +
                       (files.empty() ? std::string("needs a parameter file (none given)")
                                      : "is not in " + searched));
}

Status loadKernels(detail::LoadedModule &module) {
  const artifact::Module &a = module.artifact;
  const std::string prefix = "artifact '" + module.label + "'";
  if (a.target == "cuda") {
    // Loaded onto a GPU by the cuda device at the first call (GpuDevice.h);
    // here only the launch table is checked.
    if (a.kernelLaunch.size() != a.kernels.size())
      return Status::error(prefix + " lists " + std::to_string(a.kernels.size()) +
                           " kernels but " + std::to_string(a.kernelLaunch.size()) +
                           " kernel launch entries");
    if (!a.kernels.empty() && a.images.empty())
      return Status::error(prefix + " lists " + std::to_string(a.kernels.size()) +
                           " kernels but has no code images");
    return Status::success();
  }
  if (a.target != "cpu")
    return Status::error(prefix + " was compiled for target '" + a.target +
                         "', which this runtime's devices (local-sync, local-task, cuda) do "
                         "not run: compile it for target 'cpu' or 'cuda'");
  if (a.kernels.empty())
    return Status::success();
  if (Status runs = detail::checkHostRunsKernels(a, module.label); !runs)
    return runs;
  if (a.library.empty())
    return Status::error(prefix + " lists " + std::to_string(a.kernels.size()) +
                         " kernels but has no kernel library");
  int fd = memfd_create("turbine-kernels", MFD_CLOEXEC);
  if (fd < 0)
    return Status::error(prefix + ": memfd_create failed: " + std::strerror(errno));
  module.libraryFd = fd;
  if (Status s = writeAll(fd, a.library); !s)
    return Status::error(prefix + ": cannot write kernel library to memfd: " +
                         s.message());
  std::string path = "/proc/self/fd/" + std::to_string(fd);
  dlerror();
  module.libraryHandle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!module.libraryHandle) {
    const char *why = dlerror();
    return Status::error(prefix + ": cannot load kernel library: " +
                         (why ? why : "unknown dlopen error"));
  }
  for (const std::string &name : a.kernels) {
    dlerror();
    void *symbol = dlsym(module.libraryHandle, name.c_str());
    if (!symbol || dlerror())
      return Status::error("kernel '" + name + "' missing from " + prefix +
                           " library");
    turbine_kernel_fn_t fn;
    static_assert(sizeof(fn) == sizeof(symbol));
    std::memcpy(&fn, &symbol, sizeof(fn));
    module.kernels.push_back(fn);
  }
  return Status::success();
}

} // namespace

Module::Module(std::shared_ptr<const detail::LoadedModule> state)
    : state_(std::move(state)) {
  for (size_t i = 0; i < state_->artifact.functions.size(); ++i)
    functions_.emplace_back(state_, i);
  for (const artifact::Global &g : state_->artifact.globals)
    globals_.push_back(GlobalSignature{g.name, g.dtype, g.shape, g.isMutable,
                                       std::string(artifact::globalInitName(g.init))});
}

Result<std::unique_ptr<Instance>> Module::createInstance() const try {
  Result<detail::InstanceState> state = detail::createInstanceState(*state_);
  if (!state)
    return Status::error("cannot create an instance of '" + label() + "': " + state.message());
  return std::unique_ptr<Instance>(
      new Instance(state_, std::make_unique<detail::InstanceState>(std::move(*state))));
} catch (const std::exception &e) {
  return Status::error("cannot create an instance of '" + label() + "': " + e.what());
}

const std::string &Module::label() const { return state_->label; }

Result<std::shared_ptr<Module>>
Module::load(const std::string &path, const std::vector<ParameterIndex> &parameterFiles) try {
  auto state = std::make_shared<detail::LoadedModule>();
  state->label = path;
  Result<artifact::Module> artifact = artifact::readFile(path);
  if (!artifact)
    return artifact.status();
  state->artifact = std::move(*artifact);
  return finishLoading(state, parameterFiles);
} catch (const std::exception &e) {
  return Status::error("cannot load artifact '" + path + "': " + e.what());
}

Result<std::shared_ptr<Module>>
Module::loadFromBytes(const std::string &bytes, const std::string &label,
                     const std::vector<ParameterIndex> &parameterFiles) try {
  auto state = std::make_shared<detail::LoadedModule>();
  state->label = label;
  Result<artifact::Module> artifact = artifact::deserialize(bytes);
  if (!artifact) {
    // Name the artifact the way readFile does.
    std::string error = artifact.message();
    const std::string generic = "artifact ";
    if (error.compare(0, generic.size(), generic) == 0)
      error = "artifact '" + label + "' " + error.substr(generic.size());
    return Status::error(error);
  }
  state->artifact = std::move(*artifact);
  return finishLoading(state, parameterFiles);
} catch (const std::exception &e) {
  return Status::error("cannot load artifact '" + label + "': " + e.what());
}

Result<std::shared_ptr<Module>>
Module::finishLoading(std::shared_ptr<detail::LoadedModule> state,
                      const std::vector<ParameterIndex> &parameterFiles) {
  if (Status s = loadKernels(*state); !s)
    return s;
  artifact::Module &a = state->artifact;
  Result<Tensor> storage = Tensor::fromBytes(
      DType::u8, {static_cast<int64_t>(a.paramData.size())}, a.paramData.data(),
      a.paramData.size());
  if (!storage)
    return Status::error("artifact '" + state->label +
                         "': cannot load parameters: " + storage.message());
  for (const artifact::Parameter &p : a.parameters) {
    Result<Tensor> tensor = p.external ? bindExternalParameter(p, parameterFiles)
                                       : embeddedParameter(p, *storage);
    if (!tensor)
      return Status::error("artifact '" + state->label + "': " + tensor.message());
    state->parameters.push_back(std::move(*tensor));
  }
  if (a.target == "cpu") // cuda: the code images stay for GPU devices to load
    std::string().swap(a.library);
  std::string().swap(a.paramData);
  for (const artifact::Function &f : a.functions)
    state->releasePlans.push_back(detail::planBufferReleases(f));
  return std::shared_ptr<Module>(new Module(std::move(state)));
}

Result<Function> Module::lookupFunction(const std::string &name) const {
  for (const Function &f : functions_)
    if (f.name() == name)
      return f;
  std::string available;
  for (const Function &f : functions_)
    available += (available.empty() ? "'" : ", '") + f.name() + "'";
  return Status::error("function '" + name + "' not found in '" + label() +
                       "' (available: " + (available.empty() ? "none" : available) +
                       ")");
}

Result<turbine_kernel_fn_t> Module::lookupKernel(const std::string &name) const {
  const std::vector<std::string> &names = state_->artifact.kernels;
  for (size_t i = 0; i < names.size() && i < state_->kernels.size(); ++i)
    if (names[i] == name && state_->kernels[i])
      return state_->kernels[i];
  return Status::error("kernel '" + name + "' not found in '" + label() + "'");
}

} // namespace turbine::runtime
