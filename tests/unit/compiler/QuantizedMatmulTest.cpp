//===- QuantizedMatmulTest.cpp - Fused int8 / int4 matmuls vs a C++ reference
//
// Compiles fill + matmul (+ bias) by a constant f32 B with
// --quantize-weights=int8 / int4 at every group size the CLI documents (32,
// 64, 128) and small ones, at shapes that are not multiples of anything (K
// not a multiple of the group, N not a multiple of the 32 / 128 column
// tiles, M dynamic: 1 (GEMV), 3, 8, 13 rows), runs them on local-sync and on
// local-task with 2 workers and compares with a plain C++ reference: the
// test quantizes B itself with the documented scheme (WeightQuantization.h:
// int8 s = max|w| / 127, int4 s = m / -8, q = round(w / s) clamped) and
// multiplies A by the dequantized weights q * s in double precision.
// Tolerance: |got - want| <= 1e-5 * sum_k |a * w'| + 1e-6 (f32 summation
// order and FMA rounding; a weight quantized one step off would be off by
// |a| * s, about 1e-2 here, and fail). Each case also checks on the
// dispatch IR that the matmul is one kernel (no dequantize dispatch that
// writes f32 weights) reading i8 weights, and on the codegen IR that the
// kernel converts i8 vectors (the fused strategy ran, not scalar loops).
//===----------------------------------------------------------------------===//
#include "CompileAndRun.h"

#include "turbine/runtime/Runtime.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <sstream>
#include <string>
#include <vector>

namespace {

using namespace turbine::testing;

using turbine::runtime::Tensor;

struct QuantCase {
  int bits;
  int64_t group, k, n;
  std::vector<int64_t> rows; // M values to run (M is dynamic)
  bool bias = false;
  int64_t batch = 0; // > 0: a batch_matmul over that many batches (B per batch)
  // CompileOptions::targetCpu; "host" lets int4 GEMV tiles use this CPU's
  // byte dot product (AVX512-VNNI's vpdpbusd, AVX2's vpmaddubsw).
  std::string cpu = "host";
  // How the 1-row int4 tiles must have computed: Either (f32 activations or
  // int8-quantized ones, whichever the tile's shape chose), F32 only (no
  // byte dot product), Int8 only (every output from int8-quantized activations). F32
  // compiles with --quantized-matmul-activations=f32, the others with int8.
  enum class Activations { Either, F32, Int8 } activations = Activations::Either;
  // With Int8: "vpdpbusd" or "vpmaddubsw", the instruction the target CPU's
  // GEMV must use ("": either).
  std::string expectedDot;
};

float aValue(int64_t i, int64_t k) { return float((13 * i + 5 * k) % 17 - 8) / 8; }
float bValue(int64_t e) {
  // A fixed pseudo-random weight in [-1, 1): no ties in q = round(w / s).
  uint32_t x = static_cast<uint32_t>(e) * 2654435761u + 12345u;
  x ^= x >> 13;
  x *= 0x5bd1e995u;
  x ^= x >> 15;
  return float(x % 20000) / 10000.0f - 1.0f;
}
float biasValue(int64_t j) { return float(j % 5 - 2) / 2; }

/// The dequantized weights w' = q * s of B [batches][K][N], quantized as the
/// pass documents (independently of its code).
std::vector<float> dequantized(const QuantCase &c) {
  int64_t batches = std::max<int64_t>(c.batch, 1);
  std::vector<float> out(batches * c.k * c.n);
  for (int64_t b = 0; b < batches; ++b)
    for (int64_t j = 0; j < c.n; ++j)
      for (int64_t k0 = 0; k0 < c.k; k0 += c.group) {
        int64_t k1 = std::min(c.k, k0 + c.group);
        float amax = 0, m = 0;
        for (int64_t k = k0; k < k1; ++k) {
          float w = bValue((b * c.k + k) * c.n + j);
          if (std::fabs(w) > amax) {
            amax = std::fabs(w);
            m = w;
          }
        }
        float s = c.bits == 8 ? amax / 127.0f : m / -8.0f;
        float inverse = s != 0 ? 1.0f / s : 0.0f;
        float lo = c.bits == 8 ? -127.0f : -8.0f, hi = c.bits == 8 ? 127.0f : 7.0f;
        for (int64_t k = k0; k < k1; ++k) {
          float q = std::clamp(std::round(bValue((b * c.k + k) * c.n + j) * inverse), lo, hi);
          out[(b * c.k + k) * c.n + j] = q * s;
        }
      }
  return out;
}

/// What the int8-activation int4 GEMV computes with (QuantizedMatmulCodegen.cpp,
/// emitInt4VnniGemvTile), written independently: row i of A quantized per
/// group of K, amax = max |a|, qa = roundeven(a * (127 / amax)) in f32, and
/// the activation a' = qa * amax / 127 it stands for.
std::vector<double> quantizedActivations(const QuantCase &c, int64_t rows) {
  std::vector<double> out(rows * c.k);
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t k0 = 0; k0 < c.k; k0 += c.group) {
      int64_t k1 = std::min(c.k, k0 + c.group);
      float amax = 0;
      for (int64_t k = k0; k < k1; ++k)
        amax = std::max(amax, std::fabs(aValue(i, k)));
      float inverse = amax > 0 ? 127.0f / amax : 0.0f;
      float scale = amax / 127.0f;
      for (int64_t k = k0; k < k1; ++k)
        out[i * c.k + k] = double(std::nearbyint(aValue(i, k) * inverse)) * scale;
    }
  return out;
}

bool hostHas(const char *feature) {
  __builtin_cpu_init();
  if (std::string(feature) == "avx512vnni")
    return __builtin_cpu_supports("avx512vnni");
  if (std::string(feature) == "avx512bw")
    return __builtin_cpu_supports("avx512bw");
  return __builtin_cpu_supports("avx2");
}

/// Whether CompileOptions::targetCpu `cpu` (as the cases name them) has
/// AVX-512's 32 vector registers.
bool targetHasAvx512(const std::string &cpu) {
  if (cpu == "host")
    return __builtin_cpu_supports("avx512f");
  return cpu == "skylake-avx512" || cpu == "znver4" || cpu == "cascadelake";
}

std::string source(const QuantCase &c) {
  std::string batch = c.batch > 0 ? std::to_string(c.batch) + "x" : "";
  std::string a = "tensor<" + batch + "?x" + std::to_string(c.k) + "xf32>";
  std::string b = "tensor<" + batch + std::to_string(c.k) + "x" + std::to_string(c.n) + "xf32>";
  std::string r = "tensor<" + batch + "?x" + std::to_string(c.n) + "xf32>";
  int64_t batches = std::max<int64_t>(c.batch, 1);
  std::ostringstream os;
  os << "func.func @main(%a: " << a;
  if (c.bias)
    os << ", %bias: tensor<" << c.n << "xf32>";
  os << ") -> " << r << " {\n  %b = arith.constant dense<[";
  for (int64_t e = 0; e < batches * c.k * c.n; ++e)
    os << (e ? ", " : "") << f32Literal(bValue(e));
  os << "]> : tensor<" << batches * c.k * c.n << "xf32>\n";
  os << "  %bb = tensor.expand_shape %b [[" << (c.batch > 0 ? "0, 1, 2" : "0, 1")
     << "]] output_shape [" << (c.batch > 0 ? std::to_string(c.batch) + ", " : "") << c.k
     << ", " << c.n << "] : tensor<" << batches * c.k * c.n << "xf32> into " << b << "\n";
  int64_t mDim = c.batch > 0 ? 1 : 0;
  os << "  %c = arith.constant " << mDim << " : index\n"
     << "  %m = tensor.dim %a, %c : " << a << "\n"
     << "  %zero = arith.constant 0.0 : f32\n"
     << "  %e = tensor.empty(%m) : " << r << "\n"
     << "  %f = linalg.fill ins(%zero : f32) outs(%e : " << r << ") -> " << r << "\n"
     << "  %p = linalg." << (c.batch > 0 ? "batch_matmul" : "matmul") << " ins(%a, %bb : " << a
     << ", " << b << ") outs(%f : " << r << ") -> " << r << "\n";
  if (!c.bias) {
    os << "  return %p : " << r << "\n}\n";
    return os.str();
  }
  os << "  %e2 = tensor.empty(%m) : " << r << "\n"
     << "  %y = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, "
        "affine_map<(i, j) -> (j)>, affine_map<(i, j) -> (i, j)>], iterator_types = "
        "[\"parallel\", \"parallel\"]} ins(%p, %bias : "
     << r << ", tensor<" << c.n << "xf32>) outs(%e2 : " << r << ") {\n"
     << "  ^bb0(%x: f32, %bv: f32, %o: f32):\n"
     << "    %s = arith.addf %x, %bv : f32\n"
     << "    linalg.yield %s : f32\n"
     << "  } -> " << r << "\n"
     << "  return %y : " << r << "\n}\n";
  return os.str();
}

size_t count(const std::string &text, const std::string &what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1))
    ++n;
  return n;
}

void runCase(const QuantCase &c) {
  SCOPED_TRACE("int" + std::to_string(c.bits) + " G=" + std::to_string(c.group) +
               " K=" + std::to_string(c.k) + " N=" + std::to_string(c.n) +
               (c.batch ? " batch=" + std::to_string(c.batch) : std::string()) +
               (c.bias ? " +bias" : ""));
  turbine::compiler::CompileOptions options;
  options.quantizeWeights = c.bits == 8 ? "int8" : "int4";
  options.quantizeGroupSize = c.group;
  options.targetCpu = c.cpu;
  options.quantizedMatmulActivations = c.activations == QuantCase::Activations::F32 ? "f32" : "int8";
  std::string src = source(c), ir, error;
  ASSERT_TRUE(compileSource(src, turbine::compiler::Phase::Dispatch, ir, nullptr, error, options))
      << error;
  // One kernel for the matmul (+ bias), plus the pad gather of A when K is
  // not a multiple of the group; the weights stay i8.
  size_t expectedDispatches = c.k % c.group == 0 ? 1 : 2;
  EXPECT_EQ(count(ir, "turbine.dispatch "), expectedDispatches) << ir;
  EXPECT_EQ(count(ir, "linalg.matmul") + count(ir, "linalg.batch_matmul"), 0u) << ir;
  EXPECT_NE(ir.find("xi8>"), std::string::npos) << ir;
  // The weights in column blocks of the target's GEMV tile width (128 with
  // AVX-512's 32 registers, 64 with 16), N when narrower.
  const int64_t block = std::min<int64_t>(c.n, targetHasAvx512(c.cpu) ? 128 : 64);
  EXPECT_NE(ir.find("x" + std::to_string(block) + "xi8>"), std::string::npos)
      << "weights not in column blocks of " << block << ": " << ir;
  // The kernel is named as a matmul by its weights' type.
  EXPECT_NE(ir.find("matmul_"), std::string::npos) << ir;
  EXPECT_NE(ir.find(c.bits == 8 ? "_int8" : "_int4"), std::string::npos) << ir;
  std::string codegen;
  ASSERT_TRUE(
      compileSource(src, turbine::compiler::Phase::Codegen, codegen, nullptr, error, options))
      << error;
  EXPECT_NE(codegen.find("llvm.sitofp"), std::string::npos);
  EXPECT_NE(codegen.find("xi8> to vector<"), std::string::npos)
      << "no i8 vector conversion: the fused strategy did not run";
  // The byte dot product the int8-activation GEMV must have become: the
  // target CPU's (c.expectedDot) when one is named.
  const bool vpdpbusd = codegen.find("llvm.x86.avx512.vpdpbusd.512") != std::string::npos;
  const bool vpmaddubsw = codegen.find("llvm.x86.avx2.pmadd.ub.sw") != std::string::npos;
  const bool int8Dot = vpdpbusd || vpmaddubsw;
  if (c.activations == QuantCase::Activations::Int8) {
    EXPECT_TRUE(int8Dot) << "no byte dot product for an int4 GEMV on " << c.cpu;
    if (!c.expectedDot.empty())
      EXPECT_TRUE(c.expectedDot == "vpdpbusd" ? vpdpbusd : vpmaddubsw)
          << "no " << c.expectedDot << " on " << c.cpu;
  }
  if (c.activations == QuantCase::Activations::F32 || c.bits == 8)
    EXPECT_FALSE(int8Dot) << "a byte dot product on " << c.cpu;

  std::vector<float> w = dequantized(c);
  int64_t batches = std::max<int64_t>(c.batch, 1);
  runOnEachDevice(
      src,
      [&](turbine::runtime::Function &function, turbine::runtime::Device &device,
          const char *deviceName) {
        for (int64_t m : c.rows) {
          std::vector<int64_t> aShape, rShape;
          if (c.batch > 0) {
            aShape.push_back(c.batch);
            rShape.push_back(c.batch);
          }
          aShape.insert(aShape.end(), {m, c.k});
          rShape.insert(rShape.end(), {m, c.n});
          std::vector<Tensor> inputs;
          inputs.push_back(
              filledTensor(aShape, [&](int64_t e) { return aValue(e / c.k, e % c.k); }));
          if (c.bias)
            inputs.push_back(filledTensor({c.n}, [&](int64_t e) { return biasValue(e); }));
          auto outputs = function.invoke(device, inputs);
          ASSERT_TRUE(outputs.ok()) << deviceName << " M=" << m << ": " << outputs.message();
          const Tensor &out = outputs.value()[0];
          ASSERT_EQ(out.elementCount(), batches * m * c.n);
          // Rows past the last multiple of the register tile's rows (8
          // with AVX-512's 32 registers, 6 with 16: RegisterTiles) are
          // 1-row (GEMV) tiles: with a byte dot product, int4 ones multiply
          // int8-quantized activations.
          std::vector<double> aq = quantizedActivations(c, batches * m);
          const int64_t tileRows = targetHasAvx512(c.cpu) ? 8 : 6;
          const int64_t gemvRows = m % tileRows;
          int64_t mismatches = 0;
          for (int64_t b = 0; b < batches; ++b)
            for (int64_t i = 0; i < m; ++i)
              for (int64_t j = 0; j < c.n; ++j) {
                double sum = 0, magnitude = 0, sumQ = 0, magnitudeQ = 0;
                for (int64_t k = 0; k < c.k; ++k) {
                  double term = double(aValue(b * m + i, k)) * w[(b * c.k + k) * c.n + j];
                  sum += term;
                  magnitude += std::fabs(term);
                  double termQ = aq[(b * m + i) * c.k + k] * w[(b * c.k + k) * c.n + j];
                  sumQ += termQ;
                  magnitudeQ += std::fabs(termQ);
                }
                if (c.bias) {
                  sum += biasValue(j);
                  sumQ += biasValue(j);
                }
                float got = out.dataAs<float>()[(b * m + i) * c.n + j];
                bool f32Ok = std::fabs(got - sum) <= 1e-5 * magnitude + 1e-6;
                bool int8Ok = std::fabs(got - sumQ) <= 1e-5 * magnitudeQ + 1e-6;
                bool gemvRow = i >= m - gemvRows && c.bits == 4;
                bool ok = f32Ok;
                if (gemvRow && c.activations == QuantCase::Activations::Int8)
                  ok = int8Ok;
                else if (gemvRow && c.activations == QuantCase::Activations::Either && int8Dot)
                  ok = f32Ok || int8Ok;
                if (!ok && mismatches++ < 5)
                  ADD_FAILURE() << deviceName << " M=" << m << " [" << b << ", " << i << ", "
                                << j << "]: expected " << sum << " (f32 activations) or "
                                << sumQ << " (int8 activations), got " << got;
              }
          EXPECT_EQ(mismatches, 0) << deviceName << " M=" << m;
        }
      },
      options);
}

TEST(QuantizedMatmul, Int8GroupSizes) {
  for (int64_t group : {32, 64, 128})
    runCase({8, group, 256, 160, {1, 3, 8, 13}});
}

TEST(QuantizedMatmul, Int4GroupSizes) {
  for (int64_t group : {32, 64, 128})
    runCase({4, group, 256, 160, {1, 3, 8, 13}});
}

// 16 rows or more (M dynamic: chosen per workgroup at run time): the
// weights dequantized per K tile into the kernel's panel scratch, then the
// f32 GEMM's register tiles (tileMatmulOnDecodedPanels); 1 and 15 rows the
// register tiles above. K = 512: two K tiles of 256 (group 32: 8 groups
// per tile, 128: 2); K = 100 with groups of 32: one K tile of 4 groups,
// the last group padded; N = 64: one column block of two panels.
TEST(QuantizedMatmul, Panels) {
  for (int bits : {8, 4}) {
    for (int64_t group : {32, 128})
      runCase({bits, group, 512, 256, {1, 15, 16, 40, 70}});
    runCase({bits, 32, 100, 64, {16, 21}});
  }
}

// Blocks of 64 columns (16 vector registers: x86-64-v3 on any host here,
// the host itself without AVX-512) in workgroups of 64 columns, GEMV and
// panels, int8 and int4; N a multiple of 64, and not.
TEST(QuantizedMatmul, ColumnBlocksOf64) {
  for (int bits : {8, 4})
    for (int64_t n : {192, 100}) {
      QuantCase c{bits, 32, 256, n, {1, 5, 16, 40}};
      c.cpu = "x86-64-v3";
      runCase(c);
    }
}

TEST(QuantizedMatmul, OddShapes) {
  // K not a multiple of the group (last group shorter), N not a multiple of
  // 32 or 128 (masked column tiles), N below one vector.
  runCase({8, 32, 100, 45, {1, 9}});
  runCase({4, 32, 100, 45, {1, 9}});
  runCase({8, 64, 70, 130, {1, 2, 17}});
  runCase({4, 64, 70, 130, {1, 2, 17}});
  runCase({8, 4, 10, 7, {1, 8, 11}});
  runCase({4, 2, 3, 10, {1, 5}});
  runCase({8, 4, 10, 1, {1, 9}}); // N = 1: one-column blocks
  runCase({4, 4, 10, 1, {1, 9}});
}

TEST(QuantizedMatmul, BiasEpilogueAndBatch) {
  runCase({8, 32, 96, 64, {1, 8, 10}, /*bias=*/true});
  runCase({4, 32, 96, 64, {1, 8, 10}, /*bias=*/true});
  runCase({8, 16, 40, 33, {1, 9}, /*bias=*/false, /*batch=*/3});
  runCase({4, 16, 40, 33, {1, 9}, /*bias=*/false, /*batch=*/3});
}

} // namespace

namespace {

// int4 GEMV rows (N a multiple of 128: no partial column tile, which takes
// the f32 path) with --quantized-matmul-activations=int8, compiled for this
// CPU (vpdpbusd with AVX512-VNNI, else vpmaddubsw + vpmaddwd with AVX2) and
// for x86-64-v3 (AVX2: vpmaddubsw, whose saturating 16-bit pair sums the
// biased nibbles cannot reach): every output from int8-quantized
// activations, matching the reference that quantizes them the same way;
// the f32-activation reference differs by about |a| / 254 per term, far
// above the tolerance.
TEST(QuantizedMatmul, Int4GemvInt8Activations) {
  if (!hostHas("avx2"))
    GTEST_SKIP() << "this CPU has no AVX2";
  for (const char *cpu : {"host", "x86-64-v3"}) {
    SCOPED_TRACE(cpu);
    std::string dot = std::string(cpu) == "host" && hostHas("avx512vnni") ? "vpdpbusd" : "vpmaddubsw";
    auto int8Case = [&](QuantCase c) {
      c.cpu = cpu;
      c.activations = QuantCase::Activations::Int8;
      c.expectedDot = dot;
      runCase(c);
    };
    for (int64_t group : {32, 64, 128})
      int8Case({4, group, 256, 256, {1}});
    // K padded to whole groups, a bias epilogue, M = 9: the register tile's
    // rows (8 with AVX-512, 6 with AVX2) with f32 activations, the rest
    // GEMV tiles.
    int8Case({4, 32, 100, 256, {1, 3, 9}, /*bias=*/true});
    int8Case({4, 16, 40, 128, {1, 2}, /*bias=*/false, /*batch=*/2});
  }
}

// The same GEMVs with --quantized-matmul-activations=f32 (the default) for
// CPUs with and without AVX512-VNNI: the f32-activation path, f32 accuracy,
// no byte dot product.
TEST(QuantizedMatmul, Int4GemvF32Activations) {
  for (const char *cpu : {"skylake-avx512", "x86-64-v3", "host"}) {
    if (!hostHas(std::string(cpu) == "x86-64-v3" ? "avx2" : "avx512bw"))
      continue;
    SCOPED_TRACE(cpu);
    QuantCase c{4, 32, 256, 256, {1, 3}};
    c.cpu = cpu;
    c.activations = QuantCase::Activations::F32;
    runCase(c);
  }
}

} // namespace
