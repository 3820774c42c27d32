//===- TorchScriptPreflight.h - libtorch's load, first in a child ---------===//
//
// libtorch 1.13's torch::jit::load is not hardened against malformed
// archives: the torchscript fuzzer found archives on which it dereferences
// wild pointers or asks for tens of gigabytes (inside libtorch_cpu.so,
// docs/reliability.md). `turbine compile` and `turbine bisect` load an
// archive once in a forked child (IsolatedJobRunner.h) before importing it,
// so that such an archive is an error of the command, not its death.
//===----------------------------------------------------------------------===//
#ifndef TURBINE_TOOLS_TORCHSCRIPTPREFLIGHT_H
#define TURBINE_TOOLS_TORCHSCRIPTPREFLIGHT_H

#include "turbine/base/Status.h"

#include <string>

namespace turbine::tools {

/// An error if the child loading `path` died (of a signal, or past the
/// runner's memory limit); success otherwise, also when libtorch threw (the
/// caller's own load reports its message). Call while single-threaded: it
/// forks. Costs one more load of the archive.
Status checkTorchScriptLoads(const std::string &path);

} // namespace turbine::tools

#endif // TURBINE_TOOLS_TORCHSCRIPTPREFLIGHT_H
