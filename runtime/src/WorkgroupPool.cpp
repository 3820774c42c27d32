//===- WorkgroupPool.cpp - Threads that share a dispatch's workgroups ----===//
//
// Workgroups are linearized (x fastest, then y, then z) and claimed in chunks
// from an atomic counter by the caller and every worker that joins. Chunks
// are guided: each claim takes a share of what is left (1/(2 x participants)),
// never less than a floor that amortizes the claim, so early claims are large
// and the last ones are single workgroups; the participants then finish
// within about one workgroup of each other even when a workgroup is tens of
// microseconds (ResNet's late convolutions: 112 workgroups of ~40 us, where
// fixed chunks of 7 workgroups could leave one thread idle for 7 of them).
// A worker joins by incrementing the count in `job_` while the dispatch is
// open; after running its own share the caller closes the dispatch and waits
// only for the workers that joined, so the job fields are never touched after
// run() returns and a worker that wakes late does not delay it.
//===----------------------------------------------------------------------===//
#include "WorkgroupPool.h"

#include <algorithm>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define TURBINE_CPU_RELAX() _mm_pause()
#else
#define TURBINE_CPU_RELAX() ((void)0)
#endif

namespace turbine::runtime::detail {
namespace {
/// Spin iterations (each a `pause`, ~40-140 cycles) before a worker sleeps.
constexpr int kWorkerSpinIterations = 4000;
/// Spin iterations before the caller starts yielding while waiting.
constexpr int kCallerSpinIterations = 20000;
constexpr uint64_t kJobClosed = uint64_t(1) << 31;
constexpr uint64_t kJobActiveMask = kJobClosed - 1;
} // namespace

WorkgroupPool::WorkgroupPool(int backgroundThreads) {
  threads_.reserve(std::max(backgroundThreads, 0));
  for (int i = 0; i < backgroundThreads; ++i)
    threads_.emplace_back([this] { workerLoop(); });
}

WorkgroupPool::~WorkgroupPool() {
  {
    std::lock_guard<std::mutex> lock(sleepMutex_);
    stop_.store(true);
    generation_.fetch_add(1);
  }
  wake_.notify_all();
  for (std::thread &t : threads_)
    t.join();
}

void WorkgroupPool::runWorkgroups() {
  const turbine_dispatch_state_t &state = *state_;
  const int64_t countX = state.workgroup_count[0];
  const int64_t countXY = countX * state.workgroup_count[1];
  int64_t begin = next_.load(std::memory_order_relaxed);
  while (true) {
    if (begin >= total_)
      return;
    int64_t chunk = std::max(minChunk_, (total_ - begin) / chunkDivisor_);
    int64_t end = std::min(begin + chunk, total_);
    // On failure `begin` is reloaded with the current counter.
    if (!next_.compare_exchange_weak(begin, end, std::memory_order_relaxed))
      continue;
    for (int64_t i = begin; i < end; ++i) {
      int64_t z = i / countXY;
      int64_t rest = i - z * countXY;
      int64_t y = rest / countX;
      int64_t x = rest - y * countX;
      kernel_(state_, x, y, z);
    }
    begin = next_.load(std::memory_order_relaxed);
  }
}

bool WorkgroupPool::tryJoin(uint64_t generation) {
  uint64_t job = job_.load(std::memory_order_acquire);
  while ((job >> 32) == (generation & 0xffffffffu) && !(job & kJobClosed)) {
    if (job_.compare_exchange_weak(job, job + 1, std::memory_order_acq_rel))
      return true;
  }
  return false;
}

void WorkgroupPool::workerLoop() {
  uint64_t seen = 0;
  while (true) {
    uint64_t current = generation_.load(std::memory_order_acquire);
    for (int i = 0; current == seen && i < kWorkerSpinIterations; ++i) {
      TURBINE_CPU_RELAX();
      current = generation_.load(std::memory_order_acquire);
    }
    if (current == seen) {
      std::unique_lock<std::mutex> lock(sleepMutex_);
      sleeping_.fetch_add(1);
      while ((current = generation_.load()) == seen)
        wake_.wait(lock);
      sleeping_.fetch_sub(1);
    }
    if (stop_.load())
      return;
    seen = current;
    if (!tryJoin(current))
      continue;
    runWorkgroups();
    job_.fetch_sub(1, std::memory_order_acq_rel);
  }
}

void WorkgroupPool::run(turbine_kernel_fn_t kernel,
                        const turbine_dispatch_state_t &state) {
  std::lock_guard<std::mutex> dispatchLock(dispatchMutex_);
  kernel_ = kernel;
  state_ = &state;
  total_ = state.workgroup_count[0] * state.workgroup_count[1] *
           state.workgroup_count[2];
  int64_t participants = threadCount() + 1;
  chunkDivisor_ = 2 * participants;
  minChunk_ = std::max<int64_t>(1, total_ / (participants * 32));
  next_.store(0, std::memory_order_relaxed);
  uint64_t generation = generation_.load(std::memory_order_relaxed) + 1;
  job_.store((generation & 0xffffffffu) << 32, std::memory_order_release);
  generation_.store(generation); // seq_cst: publishes the job, ordered before sleeping_
  if (sleeping_.load() > 0) {
    { std::lock_guard<std::mutex> lock(sleepMutex_); }
    wake_.notify_all();
  }
  runWorkgroups();
  // Every workgroup is claimed; workers that have not joined yet never will.
  job_.fetch_or(kJobClosed, std::memory_order_acq_rel);
  for (int i = 0; (job_.load(std::memory_order_acquire) & kJobActiveMask) != 0; ++i) {
    if (i < kCallerSpinIterations)
      TURBINE_CPU_RELAX();
    else
      std::this_thread::yield();
  }
}

} // namespace turbine::runtime::detail
