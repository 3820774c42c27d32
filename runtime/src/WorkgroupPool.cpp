//===- WorkgroupPool.cpp - Threads that share a dispatch's workgroups ----===//
//
// Workgroups are linearized (x fastest, then y, then z) and claimed in chunks
// by the caller and every worker that sees the dispatch, through one atomic
// cursor that packs the dispatch's ticket with the next unclaimed workgroup:
// a claim is a compare-and-swap, so it succeeds only for the current
// dispatch, and a worker that woke late (holding an old ticket) simply fails
// to claim. Each participant adds the workgroups it finished to done_; the
// caller, once nothing is left to claim, waits for done_ to reach the total,
// that is only for chunks still running, not for workers that never claimed.
//
// Chunks are guided: each claim takes a share of what is left (1/(2 x
// participants)), never less than a floor that amortizes the claim, so early
// claims are large and the last ones are single workgroups; the participants
// then finish within about one workgroup of each other even when a workgroup
// is tens of microseconds (ResNet's late convolutions: 112 workgroups of
// ~40 us, where fixed chunks of 7 workgroups could leave one thread idle for
// 7 of them).
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
/// cursor_ = ticket << kIndexBits | next workgroup.
constexpr int kIndexBits = 40;
constexpr uint64_t kIndexMask = (uint64_t(1) << kIndexBits) - 1;
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

void WorkgroupPool::runWorkgroups(uint64_t ticket) {
  uint64_t cursor = cursor_.load(std::memory_order_acquire);
  while ((cursor >> kIndexBits) == ticket) {
    const int64_t begin = static_cast<int64_t>(cursor & kIndexMask);
    const int64_t total = total_.load(std::memory_order_relaxed);
    if (begin >= total)
      return;
    const int64_t chunk =
        std::max(minChunk_.load(std::memory_order_relaxed),
                 (total - begin) / chunkDivisor_.load(std::memory_order_relaxed));
    const int64_t end = std::min(begin + chunk, total);
    turbine_kernel_fn_t kernel = kernel_.load(std::memory_order_relaxed);
    const turbine_dispatch_state_t *state = state_.load(std::memory_order_relaxed);
    // Success proves the values above belong to `ticket`: the caller writes
    // the next dispatch's only after every workgroup of this one finished,
    // which cannot happen while [begin, end) is still unclaimed.
    if (!cursor_.compare_exchange_weak(cursor,
                                       (ticket << kIndexBits) | uint64_t(end),
                                       std::memory_order_acq_rel,
                                       std::memory_order_acquire))
      continue;
    const int64_t countX = state->workgroup_count[0];
    const int64_t countXY = countX * state->workgroup_count[1];
    for (int64_t i = begin; i < end; ++i) {
      int64_t z = i / countXY;
      int64_t rest = i - z * countXY;
      int64_t y = rest / countX;
      int64_t x = rest - y * countX;
      kernel(state, x, y, z);
    }
    done_.fetch_add(end - begin, std::memory_order_release);
    cursor = cursor_.load(std::memory_order_acquire);
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
    runWorkgroups(cursor_.load(std::memory_order_acquire) >> kIndexBits);
  }
}

void WorkgroupPool::run(turbine_kernel_fn_t kernel,
                        const turbine_dispatch_state_t &state) {
  std::lock_guard<std::mutex> dispatchLock(dispatchMutex_);
  const int64_t total = state.workgroup_count[0] * state.workgroup_count[1] *
                        state.workgroup_count[2];
  if (static_cast<uint64_t>(total) > kIndexMask) {
    // More workgroups than the cursor can count (2^40): run them here.
    for (int64_t z = 0; z < state.workgroup_count[2]; ++z)
      for (int64_t y = 0; y < state.workgroup_count[1]; ++y)
        for (int64_t x = 0; x < state.workgroup_count[0]; ++x)
          kernel(&state, x, y, z);
    return;
  }
  const int64_t participants = threadCount() + 1;
  kernel_.store(kernel, std::memory_order_relaxed);
  state_.store(&state, std::memory_order_relaxed);
  total_.store(total, std::memory_order_relaxed);
  chunkDivisor_.store(2 * participants, std::memory_order_relaxed);
  minChunk_.store(std::max<int64_t>(1, total / (participants * 32)),
                  std::memory_order_relaxed);
  done_.store(0, std::memory_order_relaxed);
  const uint64_t ticket =
      ((cursor_.load(std::memory_order_relaxed) >> kIndexBits) + 1) &
      ((uint64_t(1) << (64 - kIndexBits)) - 1);
  // Release: publishes the fields above with the new ticket.
  cursor_.store(ticket << kIndexBits, std::memory_order_release);
  generation_.fetch_add(1); // seq_cst: ordered before reading sleeping_
  if (sleeping_.load() > 0) {
    { std::lock_guard<std::mutex> lock(sleepMutex_); }
    wake_.notify_all();
  }
  runWorkgroups(ticket);
  // Nothing is left to claim; wait for the chunks other threads still run.
  for (int i = 0; done_.load(std::memory_order_acquire) < total; ++i) {
    if (i < kCallerSpinIterations)
      TURBINE_CPU_RELAX();
    else
      std::this_thread::yield();
  }
}

} // namespace turbine::runtime::detail
