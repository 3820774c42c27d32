//===- ParallelCompileTest.cpp - The compiler's parallel phases -----------===//
//
// A chain of 17 matmul + ReLU layers of different shapes (17 kernels, none
// alike): enough that the codegen phase deals the kernels to 16 sibling
// containers compiled on the context's thread pool (Session.cpp) and the
// link phase optimizes and emits 16 parts on as many threads
// (EmitLibrary.cpp). Checked: the result against a double-precision C++
// reference; an explicit target CPU (the path on which codegen passes look
// up the LLVM target from worker threads); two sessions compiling on two
// threads at once give byte-identical, right artifacts. The compiler-level sanitizer subset
// (tests/sanitizers/README.md) runs these under ThreadSanitizer.
//===----------------------------------------------------------------------===//
#include "CompileAndRun.h"

#include "turbine/artifact/Module.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <sstream>
#include <thread>

using namespace turbine::testing;
using turbine::runtime::Tensor;

namespace {

constexpr int kLayers = 17;
constexpr int64_t kRows = 4;

/// Width of the activations entering layer `i` (layer i maps dim(i) to dim(i + 1)).
int64_t dim(int i) { return 8 + i; }

float xValue(int64_t i) { return float(int64_t(i * 5) % 9 - 4) / 4; }
float wValue(int layer, int64_t i) { return float(int64_t(i * 7 + layer) % 11 - 5) / 8; }

/// func @main(%x: 4 x dim(0), %w0: dim(0) x dim(1), ...) -> 4 x dim(kLayers):
/// x <- relu(x * w_i) for each layer.
std::string source() {
  std::ostringstream os;
  auto t = [](int64_t r, int64_t c) {
    return "tensor<" + std::to_string(r) + "x" + std::to_string(c) + "xf32>";
  };
  os << "func.func @main(%x: " << t(kRows, dim(0));
  for (int i = 0; i < kLayers; ++i)
    os << ", %w" << i << ": " << t(dim(i), dim(i + 1));
  os << ") -> " << t(kRows, dim(kLayers)) << " {\n"
     << "  %zero = arith.constant 0.0 : f32\n";
  std::string in = "%x";
  for (int i = 0; i < kLayers; ++i) {
    std::string n = std::to_string(i), out = t(kRows, dim(i + 1));
    os << "  %e" << n << " = tensor.empty() : " << out << "\n"
       << "  %f" << n << " = linalg.fill ins(%zero : f32) outs(%e" << n << " : " << out
       << ") -> " << out << "\n"
       << "  %p" << n << " = linalg.matmul ins(" << in << ", %w" << n << " : "
       << t(kRows, dim(i)) << ", " << t(dim(i), dim(i + 1)) << ") outs(%f" << n << " : " << out
       << ") -> " << out << "\n"
       << "  %r" << n << " = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, "
          "affine_map<(i, j) -> (i, j)>], iterator_types = [\"parallel\", \"parallel\"]}"
       << " ins(%p" << n << " : " << out << ") outs(%e" << n << " : " << out << ") {\n"
       << "    ^bb0(%a: f32, %o: f32):\n"
       << "      %y = arith.maximumf %a, %zero : f32\n"
       << "      linalg.yield %y : f32\n"
       << "  } -> " << out << "\n";
    in = "%r" + n;
  }
  os << "  return " << in << " : " << t(kRows, dim(kLayers)) << "\n}\n";
  return os.str();
}

/// The chain in double precision.
std::vector<double> reference() {
  std::vector<double> x(kRows * dim(0));
  for (size_t i = 0; i < x.size(); ++i)
    x[i] = xValue(int64_t(i));
  for (int l = 0; l < kLayers; ++l) {
    int64_t k = dim(l), n = dim(l + 1);
    std::vector<double> y(kRows * n, 0.0);
    for (int64_t r = 0; r < kRows; ++r)
      for (int64_t j = 0; j < n; ++j) {
        double s = 0;
        for (int64_t c = 0; c < k; ++c)
          s += x[r * k + c] * wValue(l, c * n + j);
        y[r * n + j] = std::max(s, 0.0);
      }
    x = std::move(y);
  }
  return x;
}

/// Compiles the chain with `options` into `artifact`.
bool compileChain(turbine::artifact::Module &artifact, std::string &error,
                  const turbine::compiler::CompileOptions &options = {}) {
  std::string ir;
  return compileSource(source(), std::nullopt, ir, &artifact, error, options);
}

/// Runs `artifact` on both devices and compares with the reference: relative
/// to the largest output, within 1e-5 (f32 sums of at most 24 terms per
/// layer, reassociated by vectorization).
void expectRight(const turbine::artifact::Module &artifact) {
  auto module = turbine::runtime::Module::loadFromBytes(turbine::artifact::serialize(artifact));
  ASSERT_TRUE(module.ok()) << module.message();
  auto function = module.value()->lookupFunction("main");
  ASSERT_TRUE(function.ok()) << function.message();
  std::vector<Tensor> inputs = {filledTensor({kRows, dim(0)}, xValue)};
  for (int l = 0; l < kLayers; ++l)
    inputs.push_back(
        filledTensor({dim(l), dim(l + 1)}, [l](int64_t i) { return wValue(l, i); }));
  std::vector<double> want = reference();
  double scale = 0;
  for (double v : want)
    scale = std::max(scale, std::abs(v));
  ASSERT_GT(scale, 0.0) << "degenerate reference: every output is 0";
  for (const char *deviceName : {"local-sync", "local-task"}) {
    turbine::runtime::DeviceOptions deviceOptions;
    deviceOptions.taskWorkers = 2;
    auto device = turbine::runtime::Device::create(deviceName, deviceOptions);
    ASSERT_TRUE(device.ok()) << device.message();
    auto result = function.value().invoke(**device, inputs);
    ASSERT_TRUE(result.ok()) << result.message();
    ASSERT_EQ(result.value().size(), 1u);
    const Tensor &out = result.value()[0];
    ASSERT_EQ(out.elementCount(), int64_t(want.size()));
    double worst = 0;
    for (size_t i = 0; i < want.size(); ++i)
      worst = std::max(worst, std::abs(double(out.dataAs<float>()[i]) - want[i]));
    EXPECT_LE(worst / scale, 1e-5) << deviceName;
  }
}

} // namespace

TEST(ParallelCompile, ManyKernelsRight) {
  turbine::artifact::Module artifact;
  std::string error;
  ASSERT_TRUE(compileChain(artifact, error)) << error;
  // One kernel per layer: the codegen and link phases split them 16 ways.
  EXPECT_EQ(artifact.kernels.size(), size_t(kLayers));
  expectRight(artifact);
}

// A named CPU (not "host"): the codegen passes, running on worker threads,
// look the CPU's features up in LLVM's target registry. x86-64 (SSE2) runs
// on every x86-64 machine.
TEST(ParallelCompile, NamedTargetCpu) {
  turbine::compiler::CompileOptions options;
  options.targetCpu = "x86-64";
  turbine::artifact::Module artifact;
  std::string error;
  ASSERT_TRUE(compileChain(artifact, error, options)) << error;
  EXPECT_EQ(artifact.kernels.size(), size_t(kLayers));
  expectRight(artifact);
}

// Sessions on two threads at once (each its own MLIRContext, worker
// threads and target machines): byte-identical artifacts (a compile is
// deterministic, whatever runs beside it), and right.
TEST(ParallelCompile, SessionsOnThreadsCompileAlike) {
  constexpr int kThreads = 2;
  std::vector<turbine::artifact::Module> artifacts(kThreads);
  std::vector<std::string> errors(kThreads);
  std::vector<int> compiled(kThreads, 0); // not vector<bool>: threads write separate elements
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] { compiled[t] = compileChain(artifacts[t], errors[t]); });
  for (std::thread &thread : threads)
    thread.join();
  for (int t = 0; t < kThreads; ++t)
    ASSERT_TRUE(compiled[t]) << "thread " << t << ": " << errors[t];
  EXPECT_TRUE(turbine::artifact::serialize(artifacts[0]) ==
              turbine::artifact::serialize(artifacts[1]))
      << "two sessions compiling at once gave different artifacts";
  expectRight(artifacts[0]);
}
