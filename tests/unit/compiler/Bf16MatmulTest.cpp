//===- Bf16MatmulTest.cpp - bf16 matmuls (vdpbf16ps tiles) vs a C++ reference
//
// Compiles fill + matmul of bf16 A (M x K) and bf16 B (K x N, a constant
// packed into panels, or a run-time argument) into an f32 result at shapes
// that are not multiples of the tiles (M = 2..7 prefill-like, 13, 37 past
// the 8-row tiles; K odd, K = 1, K past the 256-deep K tile; N a few
// 32-column panels), for the host CPU (AVX512-BF16 where it has it:
// Bf16MatmulCodegen.cpp), for znver4 (selected by the named CPU) and for
// skylake-avx512 (no AVX512-BF16: the f32 strategy) and x86-64-v3 (AVX2),
// runs them on local-sync and local-task with 2 workers (those this
// machine's CPU can run), and
// compares with a plain C++ reference: the inputs are values bf16 holds
// exactly (multiples of 1/64 below 2), so the reference is the exact sum of
// products in double. Tolerance: |got - want| <= 1e-5 * sum_k |a * b| +
// 1e-6 (f32 summation order; a pair dropped or a column misplaced is off by
// ~1e-1 and fails). Each case checks on the codegen IR that vdpbf16ps is
// used exactly when the target CPU has AVX512-BF16 and the matmul has more
// than one row.
//===----------------------------------------------------------------------===//
#include "CompileAndRun.h"

#include "turbine/runtime/Runtime.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <sstream>
#include <string>
#include <vector>

namespace {

using namespace turbine::testing;

using turbine::runtime::Tensor;

struct Bf16Case {
  int64_t m, k, n; // m < 0: M dynamic, run with each of `rows`
  std::vector<int64_t> rows;
  bool constantB = true;
  std::string cpu = "host";
};

/// Values bf16 holds exactly: multiples of 1/64 in [-2, 2).
float aValue(int64_t i, int64_t k) { return float((37 * i + 11 * k) % 256 - 128) / 64; }
float bValue(int64_t k, int64_t j) {
  uint32_t x = static_cast<uint32_t>(k * 4099 + j) * 2654435761u + 12345u;
  x ^= x >> 13;
  return float(int(x % 256) - 128) / 64;
}

uint16_t bf16Bits(float v) {
  uint32_t bits;
  std::memcpy(&bits, &v, 4);
  EXPECT_EQ(bits & 0xffffu, 0u) << v << " is not a bf16 value";
  return static_cast<uint16_t>(bits >> 16);
}

Tensor bf16Tensor(std::vector<int64_t> shape, const std::function<float(int64_t)> &value) {
  Tensor t = Tensor::allocate(turbine::runtime::DType::bf16, std::move(shape)).value();
  for (int64_t i = 0; i < t.elementCount(); ++i)
    t.dataAs<uint16_t>()[i] = bf16Bits(value(i));
  return t;
}

bool hostHasBf16() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx512bf16");
}

/// Whether this machine runs code compiled for `cpu` (the runtime refuses
/// to load it otherwise): the AVX-512 subsets of skylake-avx512 and
/// znver4 (which also has AVX512-BF16), x86-64-v3's AVX2 level.
bool hostRuns(const std::string &cpu) {
  __builtin_cpu_init();
  bool skx = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512cd") &&
             __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512dq") &&
             __builtin_cpu_supports("avx512vl");
  if (cpu == "skylake-avx512")
    return skx;
  if (cpu == "znver4")
    return skx && hostHasBf16();
  if (cpu == "x86-64-v3")
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") &&
           __builtin_cpu_supports("f16c") && __builtin_cpu_supports("bmi2") &&
           __builtin_cpu_supports("movbe") && __builtin_cpu_supports("lzcnt");
  return cpu == "host";
}

std::string source(const Bf16Case &c) {
  std::string m = c.m < 0 ? "?" : std::to_string(c.m);
  std::string a = "tensor<" + m + "x" + std::to_string(c.k) + "xbf16>";
  std::string b = "tensor<" + std::to_string(c.k) + "x" + std::to_string(c.n) + "xbf16>";
  std::string r = "tensor<" + m + "x" + std::to_string(c.n) + "xf32>";
  std::ostringstream os;
  os << "func.func @main(%a: " << a;
  if (!c.constantB)
    os << ", %b: " << b;
  os << ") -> " << r << " {\n";
  if (c.constantB) {
    os << "  %b = arith.constant dense<[";
    for (int64_t k = 0; k < c.k; ++k) {
      os << (k ? ", [" : "[");
      for (int64_t j = 0; j < c.n; ++j)
        os << (j ? ", " : "") << f32Literal(bValue(k, j));
      os << "]";
    }
    os << "]> : " << b << "\n";
  }
  if (c.m < 0)
    os << "  %c0 = arith.constant 0 : index\n"
       << "  %m = tensor.dim %a, %c0 : " << a << "\n"
       << "  %e = tensor.empty(%m) : " << r << "\n";
  else
    os << "  %e = tensor.empty() : " << r << "\n";
  os << "  %zero = arith.constant 0.0 : f32\n"
     << "  %f = linalg.fill ins(%zero : f32) outs(%e : " << r << ") -> " << r << "\n"
     << "  %p = linalg.matmul ins(%a, %b : " << a << ", " << b << ") outs(%f : " << r
     << ") -> " << r << "\n"
     << "  return %p : " << r << "\n}\n";
  return os.str();
}

void runCase(const Bf16Case &c) {
  SCOPED_TRACE("M=" + (c.m < 0 ? std::string("?") : std::to_string(c.m)) + " K=" +
               std::to_string(c.k) + " N=" + std::to_string(c.n) +
               (c.constantB ? " constant B" : " run-time B") + " cpu=" + c.cpu);
  turbine::compiler::CompileOptions options;
  options.targetCpu = c.cpu;
  std::string src = source(c), codegen, error;
  ASSERT_TRUE(
      compileSource(src, turbine::compiler::Phase::Codegen, codegen, nullptr, error, options))
      << error;
  bool dot = codegen.find("llvm.x86.avx512bf16.dpbf16ps.512") != std::string::npos;
  bool expectDot = (c.cpu == "host" ? hostHasBf16() : c.cpu == "znver4") && c.m != 1;
  EXPECT_EQ(dot, expectDot) << "vdpbf16ps " << (dot ? "used" : "not used");
  if (!hostRuns(c.cpu))
    return; // Compiled for a CPU this machine is not: checked the IR only.

  std::vector<int64_t> rows = c.m < 0 ? c.rows : std::vector<int64_t>{c.m};
  runOnEachDevice(
      src,
      [&](turbine::runtime::Function &function, turbine::runtime::Device &device,
          const char *deviceName) {
        for (int64_t m : rows) {
          std::vector<Tensor> inputs;
          inputs.push_back(bf16Tensor({m, c.k}, [&](int64_t e) { return aValue(e / c.k, e % c.k); }));
          if (!c.constantB)
            inputs.push_back(
                bf16Tensor({c.k, c.n}, [&](int64_t e) { return bValue(e / c.n, e % c.n); }));
          auto outputs = function.invoke(device, inputs);
          ASSERT_TRUE(outputs.ok()) << deviceName << " M=" << m << ": " << outputs.message();
          const Tensor &out = outputs.value()[0];
          ASSERT_EQ(out.elementCount(), m * c.n);
          int64_t mismatches = 0;
          for (int64_t i = 0; i < m; ++i)
            for (int64_t j = 0; j < c.n; ++j) {
              double sum = 0, magnitude = 0;
              for (int64_t k = 0; k < c.k; ++k) {
                double term = double(aValue(i, k)) * bValue(k, j);
                sum += term;
                magnitude += std::fabs(term);
              }
              float got = out.dataAs<float>()[i * c.n + j];
              if (!(std::fabs(got - sum) <= 1e-5 * magnitude + 1e-6) && mismatches++ < 5)
                ADD_FAILURE() << deviceName << " M=" << m << " [" << i << ", " << j
                              << "]: expected " << sum << ", got " << got;
            }
          EXPECT_EQ(mismatches, 0) << deviceName << " M=" << m;
        }
      },
      options);
}

TEST(Bf16Matmul, PrefillRowsAndOddK) {
  for (int64_t m : {2, 3, 5, 7, 8, 13})
    runCase({m, 67, 64, {}});
}

TEST(Bf16Matmul, KTiles) {
  // K = 1 (only the odd step), 2, 256 (one K tile), 257 / 301 (a last K
  // tile of 1 / 45: odd), 512.
  for (int64_t k : {1, 2, 256, 257, 301, 512})
    runCase({9, k, 96, {}});
}

TEST(Bf16Matmul, DynamicRows) {
  // Full 8-row tiles by vdpbf16ps, the dynamic leftover by the f32 tiles.
  runCase({-1, 129, 64, {1, 3, 8, 13, 37}});
}

TEST(Bf16Matmul, RuntimeB) {
  // B not packed (small M: its rows read in place), then packed in the
  // kernel (N >= 1024, M >= 64) and at run time (M >= 512).
  runCase({37, 75, 96, {}, /*constantB=*/false});
  runCase({64, 33, 1024, {}, /*constantB=*/false});
  runCase({512, 19, 1024, {}, /*constantB=*/false});
}

TEST(Bf16Matmul, Gemv) {
  // A static single row keeps the f32 1 x 128 tiles.
  runCase({1, 300, 160, {}});
}

TEST(Bf16Matmul, WithoutAvx512Bf16) {
  // The f32 strategy, on a CPU without AVX512-BF16.
  runCase({13, 67, 64, {}, true, "skylake-avx512"});
  // A run-time B with N = 96 on an AVX2 CPU: its masked (partial-column)
  // loads of bf16 vectors make LLVM call compiler-rt's __truncsfbf2, which
  // the kernel library links (it did not: "undefined symbol" at load).
  runCase({-1, 257, 96, {3, 16}, false, "x86-64-v3"});
}

TEST(Bf16Matmul, CompiledForZnver4) {
  // Selected by the named CPU's features, not the host's.
  runCase({5, 33, 32, {}, true, "znver4"});
}

} // namespace
