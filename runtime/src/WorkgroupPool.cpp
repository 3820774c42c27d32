//===- WorkgroupPool.cpp - Threads that share a dispatch's workgroups ----===//
//
// Workgroups are linearized (x fastest, then y, then z) and claimed in small
// chunks from an atomic counter by the caller and every worker. The caller
// returns once every worker has acknowledged the job, so the job fields are
// never touched after run() returns.
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
  while (true) {
    int64_t begin = next_.fetch_add(chunk_, std::memory_order_relaxed);
    if (begin >= total_)
      return;
    int64_t end = std::min(begin + chunk_, total_);
    for (int64_t i = begin; i < end; ++i) {
      int64_t z = i / countXY;
      int64_t rest = i - z * countXY;
      int64_t y = rest / countX;
      int64_t x = rest - y * countX;
      kernel_(state_, x, y, z);
    }
  }
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
    runWorkgroups();
    pending_.fetch_sub(1, std::memory_order_acq_rel);
  }
}

void WorkgroupPool::run(turbine_kernel_fn_t kernel,
                        const turbine_dispatch_state_t &state) {
  std::lock_guard<std::mutex> dispatchLock(dispatchMutex_);
  kernel_ = kernel;
  state_ = &state;
  total_ = state.workgroup_count[0] * state.workgroup_count[1] *
           state.workgroup_count[2];
  int participants = threadCount() + 1;
  chunk_ = std::max<int64_t>(1, total_ / (int64_t(participants) * 8));
  next_.store(0, std::memory_order_relaxed);
  pending_.store(threadCount(), std::memory_order_relaxed);
  generation_.fetch_add(1); // seq_cst: publishes the job, ordered before sleeping_
  if (sleeping_.load() > 0) {
    { std::lock_guard<std::mutex> lock(sleepMutex_); }
    wake_.notify_all();
  }
  runWorkgroups();
  for (int i = 0; pending_.load(std::memory_order_acquire) != 0; ++i) {
    if (i < kCallerSpinIterations)
      TURBINE_CPU_RELAX();
    else
      std::this_thread::yield();
  }
}

} // namespace turbine::runtime::detail
