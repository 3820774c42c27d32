//===- WorkgroupPool.h - Threads that share a dispatch's workgroups ------===//
//
// A fixed set of worker threads that, together with the calling thread, run
// all workgroups of one dispatch at a time. Workers spin briefly on a
// generation counter before sleeping on a condition variable, so back-to-back
// dispatches cost about a microsecond of handoff. The caller never waits for
// a worker that has not joined the dispatch: a worker descheduled by a busy
// machine finds the dispatch closed when it wakes and skips it, so a late
// worker costs nothing but its share of the work, done by the caller.
//===----------------------------------------------------------------------===//
#ifndef TURBINE_RUNTIME_SRC_WORKGROUPPOOL_H
#define TURBINE_RUNTIME_SRC_WORKGROUPPOOL_H

#include "turbine/artifact/KernelABI.h"

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

namespace turbine::runtime::detail {

/// Runs one dispatch at a time on `backgroundThreads` workers plus the caller.
class WorkgroupPool {
public:
  explicit WorkgroupPool(int backgroundThreads);
  ~WorkgroupPool();
  WorkgroupPool(const WorkgroupPool &) = delete;
  WorkgroupPool &operator=(const WorkgroupPool &) = delete;

  /// Runs every workgroup of `state` (counts must all be >= 1) and returns
  /// when all have finished. Thread-safe: concurrent calls are serialized.
  void run(turbine_kernel_fn_t kernel, const turbine_dispatch_state_t &state);

  int threadCount() const { return static_cast<int>(threads_.size()); }

private:
  void workerLoop();
  void runWorkgroups();
  /// Joins dispatch `generation` unless it is closed or over.
  bool tryJoin(uint64_t generation);

  std::vector<std::thread> threads_;
  std::mutex dispatchMutex_;

  // The current job; written by the caller before bumping generation_.
  turbine_kernel_fn_t kernel_ = nullptr;
  const turbine_dispatch_state_t *state_ = nullptr;
  int64_t total_ = 0;
  /// A claim takes max(minChunk_, remaining / chunkDivisor_) workgroups.
  int64_t chunkDivisor_ = 2;
  int64_t minChunk_ = 1;

  alignas(64) std::atomic<int64_t> next_{0};
  alignas(64) std::atomic<uint64_t> generation_{0};
  /// The dispatch workers may join: generation (high 32 bits), a closed bit
  /// and the number of workers that joined (low bits).
  alignas(64) std::atomic<uint64_t> job_{0};
  alignas(64) std::atomic<int> sleeping_{0};
  std::atomic<bool> stop_{false};
  std::mutex sleepMutex_;
  std::condition_variable wake_;
};

} // namespace turbine::runtime::detail

#endif // TURBINE_RUNTIME_SRC_WORKGROUPPOOL_H
