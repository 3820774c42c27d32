//===- TorchScriptPreflight.cpp - libtorch's load, first in a child -------===//
//
// See TorchScriptPreflight.h.
//===----------------------------------------------------------------------===//
#include "TorchScriptPreflight.h"

#include "IsolatedJobRunner.h"
#include "turbine/frontends/torch/TorchImporter.h"

#include <csignal>
#include <cstring>

namespace turbine::tools {

Status checkTorchScriptLoads(const std::string &path) {
  IsolatedJobOptions options;
  options.timeoutSeconds = 0; // as long as the command's own load would take
  IsolatedJobResult ending;
  runIsolatedJobs(
      1, options,
      [&](size_t) { return torch_frontend::loadTorchScriptArchive(path) ? "loaded" : "threw"; },
      [&](size_t, const IsolatedJobResult &result) { ending = result; });
  using Ending = IsolatedJobResult::Ending;
  if (ending.ending == Ending::NotStarted)
    return Status::error("cannot start a process to load '" + path + "': " + ending.output);
  if (ending.ending != Ending::Crashed)
    return Status::success();
  const char *name = ending.signal ? sigabbrev_np(ending.signal) : nullptr;
  std::string how = name ? std::string("died of SIG") + name
                         : "exited with status " + std::to_string(ending.exitStatus);
  return Status::error("cannot load TorchScript file '" + path + "': libtorch's loader " + how +
                       " reading it (a malformed or corrupted archive)");
}

} // namespace turbine::tools
