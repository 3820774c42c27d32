//===- ConcurrentInvokeTest.cpp - A compiled module called from many threads ===//
//
// A compiled matmul + ReLU (dynamic M, K 70 and N 96: full and partial
// register tiles, packed-B panels) loaded once and invoked by six threads at
// once, on a shared local-task device and on each thread's own local-sync
// device, with M changing from call to call so that the module's buffer
// pool hands blocks of many sizes back and forth between concurrent calls.
// Inputs are small multiples of 1/8 and 1/4, so every sum is exact in any
// order: each result must equal the C++ reference exactly. Run under
// ThreadSanitizer too (`make test SANITIZE=thread`; the kernels themselves
// are compiled code the sanitizer does not see).
//===----------------------------------------------------------------------===//
#include "CompileAndRun.h"

#include "turbine/runtime/Runtime.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>

using namespace turbine::testing;
using turbine::runtime::DType;
using turbine::runtime::Tensor;

namespace {

constexpr int64_t kK = 70, kN = 96;

float aValue(int64_t i, int64_t k) { return float((13 * i + 5 * k) % 9 - 4) / 4; }
float bValue(int64_t k, int64_t j) { return float((7 * k + 3 * j) % 11 - 5) / 8; }

const char *kSource = R"mlir(
func.func @main(%a: tensor<?x70xf32>, %b: tensor<70x96xf32>) -> tensor<?x96xf32> {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %m = tensor.dim %a, %c0 : tensor<?x70xf32>
  %e = tensor.empty(%m) : tensor<?x96xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<?x96xf32>) -> tensor<?x96xf32>
  %p = linalg.matmul ins(%a, %b : tensor<?x70xf32>, tensor<70x96xf32>)
                     outs(%f : tensor<?x96xf32>) -> tensor<?x96xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%p : tensor<?x96xf32>) outs(%e : tensor<?x96xf32>) {
    ^bb0(%x: f32, %o: f32):
      %y = arith.maximumf %x, %zero : f32
      linalg.yield %y : f32
  } -> tensor<?x96xf32>
  return %r : tensor<?x96xf32>
}
)mlir";

} // namespace

TEST(ConcurrentInvoke, ManyThreadsCallOneCompiledModule) {
  std::string ir, error;
  turbine::artifact::Module artifact;
  ASSERT_TRUE(compileSource(kSource, std::nullopt, ir, &artifact, error)) << error;
  auto module = turbine::runtime::Module::loadFromBytes(turbine::artifact::serialize(artifact));
  ASSERT_TRUE(module.ok()) << module.message();
  auto function = module.value()->lookupFunction("main");
  ASSERT_TRUE(function.ok()) << function.message();
  Tensor b = filledTensor({kK, kN}, [](int64_t i) { return bValue(i / kN, i % kN); });
  turbine::runtime::DeviceOptions options;
  options.taskWorkers = 2;
  auto shared = turbine::runtime::Device::create("local-task", options);
  ASSERT_TRUE(shared.ok()) << shared.message();

  constexpr int kThreads = 6, kCalls = 24;
  std::atomic<int> wrong{0}, failed{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      auto own = turbine::runtime::Device::create("local-sync");
      for (int call = 0; call < kCalls; ++call) {
        int64_t m = 1 + (7 * t + 5 * call) % 37;
        Tensor a = filledTensor({m, kK}, [&](int64_t i) { return aValue(i / kK + t, i % kK); });
        turbine::runtime::Device &dev = (call % 2) ? **shared : **own;
        auto result = function.value().invoke(dev, {a, b});
        if (!result.ok()) {
          ++failed;
          continue;
        }
        const float *out = (*result)[0].dataAs<float>();
        for (int64_t i = 0; i < m; ++i)
          for (int64_t j = 0; j < kN; ++j) {
            float sum = 0;
            for (int64_t k = 0; k < kK; ++k)
              sum += aValue(i + t, k) * bValue(k, j);
            if (out[i * kN + j] != std::max(sum, 0.0f)) {
              ++wrong;
              i = m;
              break;
            }
          }
      }
    });
  for (std::thread &t : threads)
    t.join();
  EXPECT_EQ(failed.load(), 0);
  EXPECT_EQ(wrong.load(), 0);
}
