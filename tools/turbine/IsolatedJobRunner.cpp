//===- IsolatedJobRunner.cpp - Jobs in forked children, with a time limit ===//
//
// The parent keeps up to `parallelism` children, each with the read end of a
// close-on-exec pipe, and waits on them with poll(). A child puts itself in
// its own process group, so a timeout kill also reaches anything it spawned,
// runs the job, writes the result and leaves with _exit() (no atexit
// handlers or static destructors of the parent's libraries run in it). The
// memory limit is enforced by sampling each child's RSS (/proc/PID/statm)
// between polls rather than with RLIMIT_AS: an address-space limit would also
// count reserved, untouched mappings, and an allocation failing deep inside
// LLVM aborts without saying why.
//===----------------------------------------------------------------------===//
#include "IsolatedJobRunner.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <string>
#include <vector>

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

namespace turbine::tools {
namespace {

using Clock = std::chrono::steady_clock;

/// How often RSS is sampled when a memory limit is set.
constexpr int kMemoryPollMs = 50;

/// Resident set size of `pid` in bytes, or 0 if it cannot be read.
uint64_t residentBytes(pid_t pid) {
  std::string path = "/proc/" + std::to_string(pid) + "/statm";
  FILE *file = std::fopen(path.c_str(), "r");
  if (!file)
    return 0;
  unsigned long long sizePages = 0, residentPages = 0;
  int fields = std::fscanf(file, "%llu %llu", &sizePages, &residentPages);
  std::fclose(file);
  if (fields != 2)
    return 0;
  return residentPages * static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
}

struct RunningChild {
  size_t job;
  pid_t pid;
  int readFd;
  Clock::time_point deadline;
  std::string output;
};

/// Writes all of `text` to `fd`, retrying on short writes and EINTR.
void writeAll(int fd, const std::string &text) {
  size_t done = 0;
  while (done < text.size()) {
    ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return;
    done += static_cast<size_t>(n);
  }
}

/// The body of a forked child: never returns.
[[noreturn]] void runChild(size_t job, int writeFd, const IsolatedJobOptions &options,
                           const std::function<std::string(size_t)> &body) {
  ::setpgid(0, 0);
  if (!options.keepChildOutput) {
    int devNull = ::open("/dev/null", O_WRONLY);
    if (devNull >= 0) {
      ::dup2(devNull, STDOUT_FILENO);
      ::dup2(devNull, STDERR_FILENO);
      ::close(devNull);
    }
  }
  std::string result = body(job);
  writeAll(writeFd, result);
  ::close(writeFd);
  ::_exit(0);
}

/// Why the parent ends a child early.
enum class KillReason { None, Timeout, Memory };

/// Kills `child` (and its process group) if asked, reaps it and describes how
/// it ended.
IsolatedJobResult reap(RunningChild &child, KillReason kill) {
  IsolatedJobResult result;
  if (kill != KillReason::None) {
    ::kill(-child.pid, SIGKILL);
    ::kill(child.pid, SIGKILL);
  }
  int status = 0;
  while (::waitpid(child.pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (kill == KillReason::Timeout) {
    result.ending = IsolatedJobResult::Ending::TimedOut;
  } else if (kill == KillReason::Memory) {
    result.ending = IsolatedJobResult::Ending::OutOfMemory;
  } else if (WIFSIGNALED(status)) {
    result.ending = IsolatedJobResult::Ending::Crashed;
    result.signal = WTERMSIG(status);
  } else if (child.output.empty() || (WIFEXITED(status) && WEXITSTATUS(status) != 0)) {
    result.ending = IsolatedJobResult::Ending::Crashed;
    result.exitStatus = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  } else {
    result.output = std::move(child.output);
  }
  return result;
}

} // namespace

void runIsolatedJobs(size_t count, const IsolatedJobOptions &options,
                     const std::function<std::string(size_t)> &job,
                     const std::function<void(size_t, const IsolatedJobResult &)>
                         &onFinished) {
  size_t parallelism = options.parallelism < 1 ? 1 : options.parallelism;
  std::vector<RunningChild> running;
  size_t next = 0;
  while (next < count || !running.empty()) {
    // Start children up to the limit.
    while (next < count && running.size() < parallelism) {
      size_t index = next++;
      int fds[2];
      if (::pipe2(fds, O_CLOEXEC) != 0) {
        IsolatedJobResult failed;
        failed.ending = IsolatedJobResult::Ending::NotStarted;
        failed.output = std::string("pipe() failed: ") + std::strerror(errno);
        onFinished(index, failed);
        continue;
      }
      std::cout.flush();
      std::cerr.flush();
      std::fflush(nullptr);
      pid_t pid = ::fork();
      if (pid < 0) {
        IsolatedJobResult failed;
        failed.ending = IsolatedJobResult::Ending::NotStarted;
        failed.output = std::string("fork() failed: ") + std::strerror(errno);
        ::close(fds[0]);
        ::close(fds[1]);
        onFinished(index, failed);
        continue;
      }
      if (pid == 0) {
        ::close(fds[0]);
        runChild(index, fds[1], options, job);
      }
      ::close(fds[1]);
      auto deadline = options.timeoutSeconds > 0
                          ? Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                               std::chrono::duration<double>(
                                                   options.timeoutSeconds))
                          : Clock::time_point::max();
      running.push_back({index, pid, fds[0], deadline, {}});
    }
    if (running.empty())
      continue;

    // Wait for output, an end of file, or the nearest deadline.
    Clock::time_point nearest = Clock::time_point::max();
    std::vector<pollfd> fds;
    for (const RunningChild &child : running) {
      fds.push_back({child.readFd, POLLIN, 0});
      nearest = std::min(nearest, child.deadline);
    }
    int waitMs = -1;
    if (nearest != Clock::time_point::max()) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          nearest - Clock::now());
      waitMs = static_cast<int>(std::max<int64_t>(0, left.count() + 1));
    }
    if (options.memoryLimitBytes && (waitMs < 0 || waitMs > kMemoryPollMs))
      waitMs = kMemoryPollMs;
    int ready = ::poll(fds.data(), fds.size(), waitMs);
    if (ready < 0 && errno != EINTR)
      ready = 0;

    Clock::time_point now = Clock::now();
    std::vector<RunningChild> stillRunning;
    for (size_t i = 0; i < running.size(); ++i) {
      RunningChild &child = running[i];
      bool finished = false;
      if (ready > 0 && (fds[i].revents & (POLLIN | POLLHUP | POLLERR))) {
        char buffer[4096];
        ssize_t n = ::read(child.readFd, buffer, sizeof(buffer));
        if (n > 0)
          child.output.append(buffer, static_cast<size_t>(n));
        else if (n == 0 || errno != EINTR)
          finished = true;
      }
      if (finished) {
        ::close(child.readFd);
        onFinished(child.job, reap(child, KillReason::None));
      } else if (now >= child.deadline) {
        ::close(child.readFd);
        onFinished(child.job, reap(child, KillReason::Timeout));
      } else if (options.memoryLimitBytes &&
                 residentBytes(child.pid) > options.memoryLimitBytes) {
        ::close(child.readFd);
        onFinished(child.job, reap(child, KillReason::Memory));
      } else {
        stillRunning.push_back(std::move(child));
      }
    }
    running = std::move(stillRunning);
  }
}

} // namespace turbine::tools
