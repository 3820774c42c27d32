//===- memory_bandwidth.cpp - Read bandwidth of main memory --------------===//
//
// The ceiling for LLM decode on a CPU: every generated token reads all the
// weights once, so tokens/s x bytes of weights can at best reach the rate at
// which the cores can stream memory. This measures that rate for a read-only
// stream: a buffer much larger than the caches (default 1 GiB) is split into
// one contiguous slice per thread, and each thread sums its slice with eight
// independent 64-bit accumulators (no dependency chain; the compiler
// vectorizes the loop). Threads start together at a barrier; a pass's time is
// from the barrier to the last thread's finish. It reports GB/s (10^9 bytes)
// of the best pass and the median pass.
//
//   memory_bandwidth [--threads=N] [--mib=1024] [--passes=10]
// prints: "threads N  buffer M MiB  passes P  best X GB/s  median Y GB/s".
// Bad options: a message on stderr and exit status 2.
//===----------------------------------------------------------------------===//
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

namespace {

/// Sums n uint64 words from p with eight independent accumulators.
uint64_t sumWords(const uint64_t *p, size_t n) {
  uint64_t a0 = 0, a1 = 0, a2 = 0, a3 = 0, a4 = 0, a5 = 0, a6 = 0, a7 = 0;
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    a0 += p[i + 0]; a1 += p[i + 1]; a2 += p[i + 2]; a3 += p[i + 3];
    a4 += p[i + 4]; a5 += p[i + 5]; a6 += p[i + 6]; a7 += p[i + 7];
  }
  for (; i < n; ++i)
    a0 += p[i];
  return a0 + a1 + a2 + a3 + a4 + a5 + a6 + a7;
}

/// Parses "--name=VALUE" as a positive integer into out; false if arg is not --name=.
bool parseOption(const char *arg, const char *name, long &out) {
  size_t len = std::strlen(name);
  if (std::strncmp(arg, name, len) != 0 || arg[len] != '=')
    return false;
  char *end = nullptr;
  long value = std::strtol(arg + len + 1, &end, 10);
  if (end == arg + len + 1 || *end != '\0' || value <= 0) {
    std::fprintf(stderr, "memory_bandwidth: %s needs a positive integer, got '%s'\n", name,
                 arg + len + 1);
    std::exit(2);
  }
  out = value;
  return true;
}

} // namespace

int main(int argc, char **argv) {
  long threads = 1, mib = 1024, passes = 10;
  for (int i = 1; i < argc; ++i) {
    if (parseOption(argv[i], "--threads", threads) || parseOption(argv[i], "--mib", mib) ||
        parseOption(argv[i], "--passes", passes))
      continue;
    std::fprintf(stderr,
                 "memory_bandwidth: unknown argument '%s'\n"
                 "usage: memory_bandwidth [--threads=N] [--mib=1024] [--passes=10]\n",
                 argv[i]);
    return 2;
  }
  if (threads > 256 || mib > (1L << 20)) {
    std::fprintf(stderr, "memory_bandwidth: --threads must be <= 256 and --mib <= 1048576\n");
    return 2;
  }
  size_t words = static_cast<size_t>(mib) * (1u << 20) / sizeof(uint64_t);
  std::vector<uint64_t> buffer;
  try {
    buffer.resize(words);
  } catch (const std::bad_alloc &) {
    std::fprintf(stderr, "memory_bandwidth: cannot allocate %ld MiB\n", mib);
    return 2;
  }
  for (size_t i = 0; i < words; ++i) // touch every page, and defeat zero-page tricks
    buffer[i] = i * 0x9E3779B97F4A7C15ull;

  size_t slice = (words + threads - 1) / threads;
  std::vector<double> seconds;
  uint64_t checksum = 0;
  for (long pass = 0; pass < passes; ++pass) {
    std::atomic<long> ready{0};
    std::atomic<bool> go{false};
    std::vector<uint64_t> sums(threads, 0);
    std::vector<std::thread> workers;
    for (long t = 0; t < threads; ++t) {
      workers.emplace_back([&, t] {
        size_t begin = std::min(words, t * slice), end = std::min(words, begin + slice);
        ready.fetch_add(1);
        while (!go.load(std::memory_order_acquire)) {
        }
        sums[t] = sumWords(buffer.data() + begin, end - begin);
      });
    }
    while (ready.load() != threads) {
    }
    auto start = std::chrono::steady_clock::now();
    go.store(true, std::memory_order_release);
    for (auto &w : workers)
      w.join();
    seconds.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    for (uint64_t s : sums)
      checksum += s;
  }
  std::sort(seconds.begin(), seconds.end());
  double bytes = static_cast<double>(words) * sizeof(uint64_t);
  std::printf("threads %ld  buffer %ld MiB  passes %ld  best %.2f GB/s  median %.2f GB/s"
              "  (checksum %016llx)\n",
              threads, mib, passes, bytes / seconds.front() / 1e9,
              bytes / seconds[seconds.size() / 2] / 1e9, static_cast<unsigned long long>(checksum));
  return 0;
}
