//===- IsolatedJobRunner.h - Jobs in forked children, with a time limit --===//
//
// Runs a list of jobs, each in its own forked child process, at most N at a
// time. A job returns a short text (its result), which the child writes to a
// pipe before exiting. Whatever a job does — crash, abort, hang, exit — the
// parent survives: a child killed by a signal is reported as crashed, one that
// runs past the time limit is killed (with its whole process group) and
// reported as timed out, and one whose resident memory grows past the memory
// limit is killed too, before it can drive the machine into the OOM killer.
// The parent must be single-threaded when runIsolatedJobs() is called (fork()
// copies only the calling thread).
//===----------------------------------------------------------------------===//
#ifndef TURBINE_TOOLS_ISOLATEDJOBRUNNER_H
#define TURBINE_TOOLS_ISOLATEDJOBRUNNER_H

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>

namespace turbine::tools {

/// How one job ended.
struct IsolatedJobResult {
  enum class Ending {
    Finished, ///< The child returned from the job and exited; `output` is set.
    Crashed,  ///< Killed by signal `signal` (or exited without a result).
    TimedOut, ///< Ran past the time limit and was killed.
    OutOfMemory, ///< Its resident memory passed the limit; it was killed.
    NotStarted, ///< fork() or pipe() failed; `output` says why.
  };
  Ending ending = Ending::Finished;
  std::string output;
  int signal = 0;
  /// Exit status when the child exited without writing a result.
  int exitStatus = 0;
};

struct IsolatedJobOptions {
  /// Children running at once (at least 1).
  int parallelism = 1;
  /// Wall-clock limit per job in seconds (<= 0: none).
  double timeoutSeconds = 60;
  /// Resident memory (RSS) a child may use before it is killed, in bytes
  /// (0: no limit). Checked every 50 ms.
  uint64_t memoryLimitBytes = 0;
  /// Keep the children's stdout/stderr; by default both go to /dev/null so
  /// that diagnostics of a job never interleave with the parent's report.
  bool keepChildOutput = false;
};

/// Runs `job(i)` for every i in [0, count) in forked children. `onFinished`
/// is called in the parent, once per job, in completion order.
void runIsolatedJobs(size_t count, const IsolatedJobOptions &options,
                     const std::function<std::string(size_t)> &job,
                     const std::function<void(size_t, const IsolatedJobResult &)>
                         &onFinished);

} // namespace turbine::tools

#endif // TURBINE_TOOLS_ISOLATEDJOBRUNNER_H
