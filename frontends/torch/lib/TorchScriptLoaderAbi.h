//===- TorchScriptLoaderAbi.h - the loader module's C entry point ---------===//
//
// Private to the TorchScript frontend: the contract between the frontend
// (lib/LoaderLibrary.cpp, which dlopens the module) and the libtorch loader
// module (loader/TorchScriptLoader.cpp). Both sides are built from this tree
// with one compiler, so the TorchGraph and std::string behind the void
// pointers have one layout; the version guards against a stale module.
//===----------------------------------------------------------------------===//
#ifndef TURBINE_FRONTENDS_TORCH_LIB_TORCHSCRIPTLOADERABI_H
#define TURBINE_FRONTENDS_TORCH_LIB_TORCHSCRIPTLOADERABI_H

#include <cstddef>

namespace turbine::torch_frontend {
/// Bump when TorchGraph.h changes.
constexpr int kTorchScriptLoaderAbiVersion = 5;
} // namespace turbine::torch_frontend

/// Loads a TorchScript archive from `path` (or, when `path` is null, from
/// `bytes`/`size`, named `origin` in messages) into `*(TorchGraph *)outGraph`.
/// Returns 1 on success, 0 with `*(std::string *)outError` set. Never throws.
extern "C" int turbine_torchscript_load_graph(int abiVersion, const char *path, const char *bytes,
                                              size_t size, const char *origin, void *outGraph,
                                              void *outError);
using TurbineTorchScriptLoadGraphFn = decltype(&turbine_torchscript_load_graph);

#endif // TURBINE_FRONTENDS_TORCH_LIB_TORCHSCRIPTLOADERABI_H
