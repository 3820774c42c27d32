//===- IsolatedLoad.cpp - libtorch's load of an archive in a child process ===//
//
// libtorch 1.13's torch::jit::load is not hardened against malformed
// archives: the torchscript fuzzer found mutated archives on which it
// dereferences wild pointers or asks for tens of gigabytes (inside
// libtorch_cpu.so, docs/reliability.md). checkTorchScriptLoads runs that
// load once in a forked child, so that such an archive is an error of the
// tool that reads it instead of its death.
//===----------------------------------------------------------------------===//

#include "turbine/frontends/torch/TorchImporter.h"

#include "TorchGraph.h"

#include <cerrno>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <string>
#include <sys/wait.h>
#include <unistd.h>

namespace turbine::torch_frontend {

Status checkTorchScriptLoads(const std::string &path) {
  pid_t pid = ::fork();
  if (pid < 0)
    return Status::error(std::string("cannot start a process to load '") + path +
                         "': fork() failed: " + std::strerror(errno));
  if (pid == 0) {
    // The child: libtorch's load and the copy into TorchGraph, nothing
    // printed (the parent's load reports libtorch's own errors).
    int null = ::open("/dev/null", O_WRONLY);
    if (null >= 0) {
      ::dup2(null, STDOUT_FILENO);
      ::dup2(null, STDERR_FILENO);
    }
    TorchGraph graph;
    std::string error;
    ::_exit(loadTorchScriptGraph(path, graph, error) ? 0 : 1);
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0)
    if (errno != EINTR)
      return Status::error(std::string("cannot wait for the process loading '") + path +
                           "': " + std::strerror(errno));
  // A clean failure (libtorch threw) is left to the caller's own load,
  // which reports libtorch's message.
  if (!WIFSIGNALED(status))
    return Status::success();
  int signal = WTERMSIG(status);
  const char *name = sigabbrev_np(signal);
  return Status::error("cannot load TorchScript file '" + path + "': libtorch's loader died of SIG" +
                       std::string(name ? name : std::to_string(signal).c_str()) +
                       " reading it (a malformed or corrupted archive)");
}

} // namespace turbine::torch_frontend
