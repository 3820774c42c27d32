//===- CacheConcurrencyTest.cpp - Kernel caches filled concurrently -------===//
//
// Eager launches from many threads fill one memory cache and one disk cache
// (each specialization compiled exactly once, every result right), and two
// processes filling the same disk cache at once leave only complete, valid
// entries, which a third process then uses without compiling. Run under
// ThreadSanitizer too (`make test SANITIZE=thread`).
//===----------------------------------------------------------------------===//
#include "ExampleSupport.h"
#include "References.h"
#include "turbine/kernels/KernelCache.h"
#include "turbine/kernels/KernelLibrary.h"
#include "turbine/kernels/Launch.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <spawn.h>
#include <sys/wait.h>
#include <thread>

extern char **environ;

using namespace turbine::examples;
using namespace turbine::kernels::library;

namespace {

constexpr int64_t kN = 16;
/// Six specializations of softmax: one per row count.
const std::vector<int64_t> kRowCounts = {1, 2, 3, 4, 5, 6};

/// Launches softmax on `rows` x kN random values; true when it matches the
/// reference.
bool launchAndCheck(const Kernel &k, int64_t rows, uint64_t seed, std::string &error) {
  std::vector<float> x = randomValues(rows * kN, seed, -3, 3);
  auto in = f32Tensor(x, {rows, kN}), out = f32Zeros({rows, kN});
  Status s = launch(k, {in, out}, {{"BLOCK_N", kN}});
  if (!s.ok()) {
    error = s.message();
    return false;
  }
  double err = maxAbsError(valuesOf(out), softmaxReference(x, rows, kN));
  if (err > 1e-6) {
    error = "rows " + std::to_string(rows) + ": max error " + std::to_string(err);
    return false;
  }
  return true;
}

std::vector<std::filesystem::path> filesIn(const std::string &dir) {
  std::vector<std::filesystem::path> out;
  std::error_code ec;
  for (const auto &e : std::filesystem::directory_iterator(dir + "/kernels", ec))
    out.push_back(e.path());
  return out;
}

/// A fresh cache directory, removed afterwards.
class CacheConcurrency : public ::testing::Test {
protected:
  void SetUp() override {
    char tmpl[] = "/tmp/turbine-cache-concurrency-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    setenv("TURBINE_CACHE_DIR", dir_.c_str(), 1);
    clearLaunchCache();
    resetLaunchStats();
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  /// Every file in the cache is a complete entry (no temporary left over).
  void expectOnlyValidEntries(size_t count) {
    std::vector<std::filesystem::path> files = filesIn(dir_);
    EXPECT_EQ(files.size(), count);
    for (const auto &f : files) {
      EXPECT_EQ(f.extension(), ".tmod") << f;
      auto entry = turbine::kernels::readKernelCacheEntry(f.string());
      ASSERT_TRUE(entry.ok()) << entry.message();
      EXPECT_TRUE(entry->has_value()) << f;
    }
  }
  std::string dir_;
};

} // namespace

TEST_F(CacheConcurrency, ThreadsFillOneMemoryAndDiskCache) {
  Result<Kernel> k = softmaxKernel();
  ASSERT_TRUE(k.ok()) << k.message();
  constexpr int kThreads = 6, kRounds = 3;
  std::atomic<int> failures{0};
  std::string firstError;
  std::mutex errorMutex;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      for (int round = 0; round < kRounds; ++round)
        for (size_t i = 0; i < kRowCounts.size(); ++i) {
          // Each thread walks the specializations in its own order.
          int64_t rows = kRowCounts[(i + t) % kRowCounts.size()];
          std::string error;
          if (!launchAndCheck(*k, rows, 100 * t + round, error)) {
            ++failures;
            std::lock_guard<std::mutex> lock(errorMutex);
            if (firstError.empty())
              firstError = error;
          }
        }
    });
  for (std::thread &t : threads)
    t.join();
  EXPECT_EQ(failures.load(), 0) << firstError;
  LaunchStats st = launchStats();
  EXPECT_EQ(st.misses, int64_t(kRowCounts.size())); // each compiled once
  EXPECT_EQ(st.diskHits, 0);
  EXPECT_EQ(st.memoryHits + st.misses, int64_t(kThreads * kRounds * kRowCounts.size()));
  expectOnlyValidEntries(kRowCounts.size());
}

// The worker half of TwoProcessesFillOneDiskCache: skipped unless that test
// started this process.
TEST(KernelCacheWorker, LaunchAll) {
  if (!std::getenv("TURBINE_TEST_CACHE_WORKER"))
    GTEST_SKIP() << "runs as a child of CacheConcurrency.TwoProcessesFillOneDiskCache";
  Result<Kernel> k = softmaxKernel();
  ASSERT_TRUE(k.ok()) << k.message();
  for (int64_t rows : kRowCounts) {
    std::string error;
    EXPECT_TRUE(launchAndCheck(*k, rows, 7, error)) << error;
  }
  EXPECT_EQ(launchStats().corruptEntries, 0);
}

TEST_F(CacheConcurrency, TwoProcessesFillOneDiskCache) {
  std::string filter = "--gtest_filter=KernelCacheWorker.LaunchAll";
  char *argv[] = {const_cast<char *>("/proc/self/exe"), filter.data(), nullptr};
  setenv("TURBINE_TEST_CACHE_WORKER", "1", 1);
  pid_t pids[2];
  for (pid_t &pid : pids)
    ASSERT_EQ(posix_spawn(&pid, "/proc/self/exe", nullptr, nullptr, argv, environ), 0);
  unsetenv("TURBINE_TEST_CACHE_WORKER");
  for (pid_t pid : pids) {
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "worker status " << status;
  }
  expectOnlyValidEntries(kRowCounts.size());
  // A third process (this one: its memory cache is empty) compiles nothing.
  Result<Kernel> k = softmaxKernel();
  ASSERT_TRUE(k.ok());
  for (int64_t rows : kRowCounts) {
    std::string error;
    EXPECT_TRUE(launchAndCheck(*k, rows, 9, error)) << error;
  }
  EXPECT_EQ(launchStats().misses, 0);
  EXPECT_EQ(launchStats().diskHits, int64_t(kRowCounts.size()));
}
