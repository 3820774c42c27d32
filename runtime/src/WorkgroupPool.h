//===- WorkgroupPool.h - Threads that share a dispatch's workgroups ------===//
//
// A fixed set of worker threads that, together with the calling thread, run
// all workgroups of one dispatch at a time. Workers spin briefly on a
// generation counter before sleeping on a condition variable, so back-to-back
// dispatches cost about a microsecond of handoff. The caller waits only for
// workgroups that were claimed and are still running, never for a worker as
// such: a worker descheduled by a busy machine before it claimed anything
// finds the dispatch over when it runs again and skips it, so a late worker
// costs nothing but its share of the work, done by the caller.
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
  /// Claims and runs chunks of dispatch `ticket` (the high bits of cursor_)
  /// until none are left or another dispatch has begun.
  void runWorkgroups(uint64_t ticket);

  std::vector<std::thread> threads_;
  std::mutex dispatchMutex_;

  // The current dispatch, written by the caller before it publishes a new
  // ticket in cursor_. Atomics because a worker holding an old ticket may
  // read them while the caller writes the next dispatch's values; it only
  // uses what it read if its claim (a CAS on cursor_) then succeeds, which
  // proves the values belong to its ticket.
  std::atomic<turbine_kernel_fn_t> kernel_{nullptr};
  std::atomic<const turbine_dispatch_state_t *> state_{nullptr};
  std::atomic<int64_t> total_{0};
  /// A claim takes max(minChunk_, remaining / chunkDivisor_) workgroups.
  std::atomic<int64_t> chunkDivisor_{2};
  std::atomic<int64_t> minChunk_{1};

  /// Dispatch ticket (high kTicketBits) and the next unclaimed workgroup
  /// (low bits).
  alignas(64) std::atomic<uint64_t> cursor_{0};
  /// Workgroups of the current dispatch that have finished.
  alignas(64) std::atomic<int64_t> done_{0};
  /// Bumped once per dispatch; workers wait for it to change.
  alignas(64) std::atomic<uint64_t> generation_{0};
  alignas(64) std::atomic<int> sleeping_{0};
  std::atomic<bool> stop_{false};
  std::mutex sleepMutex_;
  std::condition_variable wake_;
};

} // namespace turbine::runtime::detail

#endif // TURBINE_RUNTIME_SRC_WORKGROUPPOOL_H
