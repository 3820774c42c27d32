//===- ConcurrencyTest.cpp - One runtime, many threads --------------------===//
//
// The runtime's thread-safety promises, checked with results (and run under
// ThreadSanitizer by `make test SANITIZE=thread`, docs/reliability.md):
//  - many threads invoking the functions of one loaded module at once, on
//    one shared local-task device and on their own local-sync devices: the
//    module's buffer pool is shared by every call, so a block handed to one
//    call while another still used it would show up as a wrong sum;
//  - a module loaded, invoked and unloaded (its kernel library dlclosed)
//    over and over while other threads keep calling another module;
//  - the memory limit (Memory.h) under concurrent allocation: never
//    exceeded, every byte returned.
// Artifacts are hand-built over test_kernels.c (TestArtifacts.h), so every
// expected value is exact.
//===----------------------------------------------------------------------===//
#include "RuntimeTestSupport.h"
#include "TestArtifacts.h"

#include "turbine/runtime/Runtime.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

using namespace turbine;
using namespace turbine::runtime;
using namespace turbine::testing;

namespace {

const std::string &kernelLibrary() {
  static const std::string bytes = readKernelLibrary(TURBINE_TEST_KERNELS_PATH);
  return bytes;
}

std::shared_ptr<Module> load(const artifact::Module &m, const std::string &label) {
  Result<std::shared_ptr<Module>> module = Module::loadFromBytes(artifact::serialize(m), label);
  EXPECT_TRUE(module.ok()) << module.message();
  return module.ok() ? *module : nullptr;
}

Tensor scalarI64(int64_t v) { return *Tensor::fromBytes(DType::i64, {}, &v, sizeof v); }

constexpr int kThreads = 8;

} // namespace

TEST(Concurrency, ManyThreadsInvokeOneModule) {
  auto module = load(makeLoopModule(kernelLibrary()), "shared.tmod");
  ASSERT_TRUE(module);
  Result<Function> add = module->lookupFunction("add");
  Result<Function> repeat = module->lookupFunction("repeat_add");
  ASSERT_TRUE(add.ok() && repeat.ok());
  auto shared = device("local-task", 3);
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      auto own = device("local-sync");
      for (int call = 0; call < 60; ++call) {
        Device &dev = (call % 2) ? *shared : *own;
        // Sizes differ per thread and call, so pooled blocks of several
        // sizes are taken and returned concurrently.
        int64_t n = 1 + (t * 37 + call * 11) % 300;
        std::vector<float> a(n), b(n);
        for (int64_t i = 0; i < n; ++i) {
          a[i] = float(t * 1000 + i);
          b[i] = float(call);
        }
        Result<std::vector<Tensor>> sum = add->invoke(dev, {vector(a), vector(b)});
        int64_t m = call % 4;
        Result<std::vector<Tensor>> rep = repeat->invoke(dev, {vector(a), scalarI64(m)});
        if (!sum.ok() || !rep.ok()) {
          ++failures;
          continue;
        }
        std::vector<float> s = values((*sum)[0]), r = values((*rep)[0]);
        for (int64_t i = 0; i < n; ++i)
          if (s[i] != a[i] + b[i] || r[i] != a[i] * float(m + 1)) {
            ++failures;
            break;
          }
      }
    });
  }
  for (std::thread &t : threads)
    t.join();
  EXPECT_EQ(failures.load(), 0);
}

TEST(Concurrency, ModuleUnloadedWhileAnotherModulesCallsRun) {
  auto steady = load(makeAddModule(kernelLibrary(), 5), "steady.tmod");
  ASSERT_TRUE(steady);
  Function add = steady->functions()[0];
  std::atomic<bool> stop{false};
  std::atomic<int> failures{0}, calls{0};
  auto caller = [&] {
    auto dev = device("local-task", 2);
    std::vector<float> a(257), b(257);
    for (int i = 0; i < 257; ++i) {
      a[i] = float(i);
      b[i] = float(2 * i);
    }
    while (!stop.load()) {
      Result<std::vector<Tensor>> r = add.invoke(*dev, {vector(a), vector(b)});
      if (!r.ok() || values((*r)[0])[256] != 768.0f)
        ++failures;
      ++calls;
    }
  };
  std::thread c1(caller), c2(caller);
  // Waits (up to 60 s, for a loaded machine) until the callers have made
  // `n` calls in all: every round below overlaps calls of the other module.
  auto waitForCalls = [&](int n) {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (calls.load() < n && std::chrono::steady_clock::now() < deadline)
      std::this_thread::yield();
    return calls.load() >= n;
  };
  bool overlapped = waitForCalls(2);
  // Each round dlopens a fresh copy of the kernel library and dlcloses it,
  // with at least one call of the steady module made while it is loaded.
  for (int round = 0; round < 40 && overlapped; ++round) {
    int before = calls.load();
    auto transient = load(makeAddModule(kernelLibrary(), 1 + round % 3), "transient.tmod");
    if (!transient) { // not ASSERT: the threads must be joined first
      ADD_FAILURE() << "the transient module did not load";
      break;
    }
    Result<std::vector<Tensor>> r =
        transient->functions()[0].invoke(*device("local-sync"), {vector({1, 2}), vector({3, 4})});
    EXPECT_TRUE(r.ok()) << r.message();
    if (r.ok())
      EXPECT_EQ(values((*r)[0]), (std::vector<float>{4, 6}));
    overlapped = waitForCalls(before + 1);
    transient.reset(); // unloads: the last reference to the module
  }
  stop = true;
  c1.join();
  c2.join();
  EXPECT_TRUE(overlapped) << "the calling threads made no progress in 60 s";
  EXPECT_EQ(failures.load(), 0);
}

TEST(Concurrency, MemoryLimitHoldsUnderConcurrentAllocation) {
  uint64_t before = memoryInUse();
  const uint64_t block = 1 << 20;
  setMemoryLimit(before + 4 * block);
  std::atomic<uint64_t> peak{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&] {
      for (int i = 0; i < 200; ++i) {
        Result<Tensor> x = Tensor::allocate(DType::u8, {int64_t(block)});
        uint64_t now = memoryInUse();
        uint64_t seen = peak.load();
        while (now > seen && !peak.compare_exchange_weak(seen, now)) {
        }
        if (x.ok())
          EXPECT_EQ(x->byteSize(), block);
      }
    });
  for (std::thread &t : threads)
    t.join();
  setMemoryLimit(0);
  EXPECT_LE(peak.load(), before + 4 * block);
  EXPECT_EQ(memoryInUse(), before);
}
