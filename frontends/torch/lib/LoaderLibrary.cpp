//===- LoaderLibrary.cpp - find and dlopen the libtorch loader module -----===//
//
// loadTorchScriptGraph / loadTorchScriptGraphFromBytes (TorchGraph.h) without
// linking libtorch: the first call dlopens libturbine_torchscript_loader.so
// (which links libtorch) and calls its C entry point. Looked up, in order:
// $TURBINE_TORCHSCRIPT_LOADER, next to the library or executable this code
// is linked into (an installed libturbine_torch.so finds the one installed
// beside it), next to the running executable and in its ../lib, and the
// build tree's path compiled in. A missing or broken module
// is an error naming every place tried.
//===----------------------------------------------------------------------===//
#include "TorchGraph.h"
#include "TorchScriptLoaderAbi.h"

#include <dlfcn.h>
#include <unistd.h>

#include <cstdlib>
#include <mutex>
#include <vector>

namespace turbine::torch_frontend {
namespace {

constexpr const char *kModuleName = "libturbine_torchscript_loader.so";

/// The directory of the shared object (or executable) holding this code.
std::string thisObjectDir() {
  Dl_info info;
  if (!dladdr(reinterpret_cast<void *>(&thisObjectDir), &info) || !info.dli_fname)
    return "";
  std::string path = info.dli_fname;
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? "" : path.substr(0, slash);
}

std::string executableDir() {
  std::vector<char> buffer(4096);
  ssize_t n = readlink("/proc/self/exe", buffer.data(), buffer.size() - 1);
  if (n <= 0)
    return "";
  std::string path(buffer.data(), n);
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? "" : path.substr(0, slash);
}

/// The entry point, or null with `error` set. Resolved once per process.
TurbineTorchScriptLoadGraphFn entryPoint(std::string &error) {
  static std::once_flag once;
  static TurbineTorchScriptLoadGraphFn fn = nullptr;
  static std::string loadError;
  std::call_once(once, [] {
    std::vector<std::string> candidates;
    if (const char *env = std::getenv("TURBINE_TORCHSCRIPT_LOADER"))
      candidates.push_back(env);
    std::string own = thisObjectDir();
    if (!own.empty())
      candidates.push_back(own + "/" + kModuleName);
    std::string dir = executableDir();
    if (!dir.empty()) {
      candidates.push_back(dir + "/" + kModuleName);
      candidates.push_back(dir + "/../lib/" + kModuleName);
    }
    candidates.push_back(TURBINE_TORCHSCRIPT_LOADER_BUILD_PATH);
    std::string tried;
    for (const std::string &path : candidates) {
      if (access(path.c_str(), R_OK) != 0) {
        tried += "\n  " + path + ": not found";
        continue;
      }
      void *handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
      if (!handle) {
        tried += "\n  " + path + ": " + dlerror();
        continue;
      }
      fn = reinterpret_cast<TurbineTorchScriptLoadGraphFn>(
          dlsym(handle, "turbine_torchscript_load_graph"));
      if (fn)
        return;
      tried += "\n  " + path + ": no symbol turbine_torchscript_load_graph";
    }
    loadError = std::string("cannot load the TorchScript loader (") + kModuleName +
                ", which links libtorch); tried:" + tried;
  });
  if (!fn)
    error = loadError;
  return fn;
}

} // namespace

bool loadTorchScriptGraph(const std::string &path, TorchGraph &out, std::string &error) {
  TurbineTorchScriptLoadGraphFn fn = entryPoint(error);
  return fn && fn(kTorchScriptLoaderAbiVersion, path.c_str(), nullptr, 0, path.c_str(), &out,
                  &error) == 1;
}

bool loadTorchScriptGraphFromBytes(const std::string &bytes, const std::string &origin,
                                   TorchGraph &out, std::string &error) {
  TurbineTorchScriptLoadGraphFn fn = entryPoint(error);
  return fn && fn(kTorchScriptLoaderAbiVersion, nullptr, bytes.data(), bytes.size(),
                  origin.c_str(), &out, &error) == 1;
}

} // namespace turbine::torch_frontend
