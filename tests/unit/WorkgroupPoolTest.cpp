//===- WorkgroupPoolTest.cpp - The local-task thread pool ----------------===//
//
// Back-to-back dispatches of different sizes and shapes, on pools of 1 to 4
// threads: every workgroup of every dispatch runs exactly once, with the
// dispatch's own state (a worker that wakes late must never run a workgroup
// of an old dispatch with a new dispatch's state, or the reverse).
//===----------------------------------------------------------------------===//
#include "WorkgroupPool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

using turbine::runtime::detail::WorkgroupPool;

namespace {

struct Counters {
  std::vector<std::atomic<int>> perWorkgroup;
  std::atomic<int> wrongState{0};
  explicit Counters(size_t n) : perWorkgroup(n) {}
};

/// bindings[0] = Counters*, constants[0] = dispatch id, constants[1] = the id
/// every workgroup must see; workgroups whose id is 0 mod 7 sleep a little so
/// the threads interleave differently from run to run.
void countWorkgroup(const turbine_dispatch_state_t *s, int64_t x, int64_t y,
                    int64_t z) {
  auto *counters = static_cast<Counters *>(s->bindings[0]);
  if (s->constants[0] != s->constants[1])
    counters->wrongState.fetch_add(1);
  int64_t linear = x + s->workgroup_count[0] * (y + s->workgroup_count[1] * z);
  if (linear % 7 == 0)
    std::this_thread::sleep_for(std::chrono::microseconds(2));
  counters->perWorkgroup[linear].fetch_add(1);
}

} // namespace

TEST(WorkgroupPool, EveryWorkgroupOfEveryDispatchRunsOnce) {
  for (int threads : {0, 1, 3}) {
    WorkgroupPool pool(threads);
    for (int64_t d = 0; d < 300; ++d) {
      int64_t counts[3] = {1 + d % 13, 1 + (d / 13) % 5, 1 + d % 3};
      int64_t total = counts[0] * counts[1] * counts[2];
      Counters counters(total);
      void *bindings[] = {&counters};
      int64_t constants[] = {d, d};
      turbine_dispatch_state_t state;
      state.bindings = bindings;
      state.constants = constants;
      for (int i = 0; i < 3; ++i)
        state.workgroup_count[i] = counts[i];
      pool.run(countWorkgroup, state);
      // run() returned: every workgroup finished, none runs later.
      constants[1] = -1;
      for (int64_t i = 0; i < total; ++i)
        ASSERT_EQ(counters.perWorkgroup[i].load(), 1)
            << threads << " threads, dispatch " << d << ", workgroup " << i;
      ASSERT_EQ(counters.wrongState.load(), 0);
    }
  }
}
