//===- GgufMatmulTest.cpp - Matmuls reading GGUF weights in place ---------===//
//
// A linear layer (fill + matmul by a constant named `fc.weight.T`) compiled
// with its weight bound from a GGUF file (CompileOptions::ggufTensors, what
// `turbine compile --weights-from` sets): the file (GgufBuilder.h) holds the
// weight as Q8_0 or Q4_0 blocks with pseudo-random f16 scales and quants, or
// as F16 / BF16 / F32 rows of pseudo-random values; the model's own constant
// holds other values, so a result that matches proves the file's bytes were
// read. The artifact must record an external parameter of the file's bytes
// with its ggml type, and the codegen IR must convert i8 vectors (the block
// strategy ran; f16 / bf16 vectors for those types). Run on local-sync and on
// local-task with 2 workers at odd N, K = 32 x odd, M = 1 (GEMV) and
// M > 1 (dynamic), and M = 1 static (the GEMV tiles, with f32 and with int8
// activations: on a CPU with AVX512-VNNI the latter must be vpdpbusd, with
// AVX2 vpmaddubsw, and the reference rounds the activations as the strategy
// documents), against a C++
// reference that decodes the same blocks from ggml's formulas (its own f16
// decoding) and sums in double. Tolerance:
// |got - want| <= 1e-5 * sum_k |a * w| + 1e-6 (f32 summation order; one
// quant off by one step would be off by |a| * d, about 1e-2 here).
// Bad input: the file's tensor of another type or missing at load time.
//===----------------------------------------------------------------------===//
#include "CompileAndRun.h"
#include "../GgufBuilder.h"

#include "turbine/runtime/ParameterArchive.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <unistd.h>
#include <vector>

namespace {

using namespace turbine::testing;
using turbine::runtime::ParameterIndex;
using turbine::runtime::Tensor;

constexpr uint32_t kF32 = 0, kF16 = 1, kQ4_0 = 2, kQ8_0 = 8, kBF16 = 30;

const char *typeName(uint32_t type) {
  switch (type) {
  case kF32: return "F32";
  case kF16: return "F16";
  case kQ4_0: return "Q4_0";
  case kQ8_0: return "Q8_0";
  default: return "BF16";
  }
}

bool isPlain(uint32_t type) { return type != kQ4_0 && type != kQ8_0; }

struct GgufCase {
  uint32_t type;
  int64_t k, n;
  std::vector<int64_t> rows; // M values to run (M is dynamic)
  /// "": M dynamic; "f32" / "int8": M = 1 static (the GEMV strategies), with
  /// that --quantized-matmul-activations.
  std::string gemvActivations = "";
  /// The panel strategy must run (M dynamic, N a multiple of 32 per tile).
  bool panels = false;
  /// CompileOptions::targetCpu: "host" or "x86-64-v3" (AVX2, no AVX-512).
  std::string cpu = "host";
};

/// Whether the case's target CPU has `feature`: avx2, avx512f or
/// avx512vnni.
bool targetHas(const GgufCase &c, const std::string &feature) {
  if (c.cpu == "x86-64-v3")
    return feature == "avx2";
  if (feature == "avx2")
    return __builtin_cpu_supports("avx2");
  if (feature == "avx512f")
    return __builtin_cpu_supports("avx512f");
  return feature == "avx512vnni" && __builtin_cpu_supports("avx512vnni");
}

uint32_t mix(uint64_t e) {
  uint32_t x = static_cast<uint32_t>(e) * 2654435761u + 12345u;
  x ^= x >> 13;
  x *= 0x5bd1e995u;
  x ^= x >> 15;
  return x;
}

float aValue(int64_t i, int64_t k) { return float((13 * i + 5 * k) % 17 - 8) / 8; }

/// f16 bits of block (n, g)'s scale: +-(1 + m / 1024) * 2^e, e in -7..-5.
uint16_t scaleBits(int64_t n, int64_t g) {
  uint32_t x = mix(n * 1000003 + g);
  uint32_t sign = x & 1, exponent = 8 + (x >> 1) % 3, mantissa = (x >> 4) & 0x3FF;
  return static_cast<uint16_t>(sign << 15 | exponent << 10 | mantissa);
}
/// The value of those bits, decoded here (normal numbers only).
double scaleValue(uint16_t bits) {
  double m = 1.0 + double(bits & 0x3FF) / 1024.0;
  double v = std::ldexp(m, int((bits >> 10) & 0x1F) - 15);
  return (bits >> 15) ? -v : v;
}

/// The little-endian bytes of `value` as F32, F16 or BF16; `value` is
/// q / 64 with |q| < 128, exact in each (at most 7 significant bits).
void appendPlain(std::string &out, uint32_t type, float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, 4);
  uint32_t stored = bits, bytes = 4;
  if (type == kBF16) {
    stored = bits >> 16, bytes = 2;
  } else if (type == kF16) {
    int exponent = int((bits >> 23) & 0xFF) - 127 + 15;
    stored = value == 0 ? 0 : (bits >> 16 & 0x8000) | uint32_t(exponent) << 10 | (bits >> 13 & 0x3FF);
    bytes = 2;
  }
  for (uint32_t i = 0; i < bytes; ++i)
    out.push_back(char(stored >> (8 * i) & 0xFF));
}

/// The file's bytes of the weight [N, K] and its dequantized values
/// (row-major [N][K]) by ggml's formulas: Q8_0 d * q; Q4_0 d * (nibble - 8)
/// with element i < 16 the low nibble of byte i, 16 + i its high nibble;
/// plain types their values.
std::string blocks(const GgufCase &c, std::vector<double> &w) {
  std::string out;
  w.assign(c.n * c.k, 0.0);
  if (isPlain(c.type)) {
    for (int64_t e = 0; e < c.n * c.k; ++e) {
      float value = float(int(mix(e ^ 0x33) % 255) - 127) / 64;
      appendPlain(out, c.type, value);
      w[e] = value;
    }
    return out;
  }
  for (int64_t n = 0; n < c.n; ++n)
    for (int64_t g = 0; g < c.k / 32; ++g) {
      uint16_t bits = scaleBits(n, g);
      double d = scaleValue(bits);
      out.push_back(char(bits & 0xFF));
      out.push_back(char(bits >> 8));
      if (c.type == kQ8_0) {
        for (int i = 0; i < 32; ++i) {
          int q = int(mix(((n * 7919 + g) * 32 + i) ^ 0x55) % 255) - 127;
          out.push_back(char(static_cast<int8_t>(q)));
          w[n * c.k + g * 32 + i] = d * q;
        }
      } else {
        uint8_t nibbles[32];
        for (int i = 0; i < 32; ++i) {
          nibbles[i] = mix(((n * 7919 + g) * 32 + i) ^ 0xAA) % 16;
          w[n * c.k + g * 32 + i] = d * (int(nibbles[i]) - 8);
        }
        for (int i = 0; i < 16; ++i)
          out.push_back(char(nibbles[i] | nibbles[i + 16] << 4));
      }
    }
  return out;
}

std::string source(const GgufCase &c) {
  const std::string m = c.gemvActivations.empty() ? "?" : "1";
  std::string a = "tensor<" + m + "x" + std::to_string(c.k) + "xf32>";
  std::string b = "tensor<" + std::to_string(c.k) + "x" + std::to_string(c.n) + "xf32>";
  std::string r = "tensor<" + m + "x" + std::to_string(c.n) + "xf32>";
  std::ostringstream os;
  os << "func.func @main(%a: " << a << ") -> " << r << " {\n"
     << "  %bb = arith.constant {turbine.param_name = \"fc.weight.T\"} dense<[";
  for (int64_t i = 0; i < c.k; ++i) {
    os << (i ? ", [" : "[");
    for (int64_t j = 0; j < c.n; ++j)
      os << (j ? ", " : "") << f32Literal(float((i * c.n + j) % 7) - 3.0f);
    os << "]";
  }
  os << "]> : " << b << "\n"
     << "  %c = arith.constant 0 : index\n"
     << "  %m = tensor.dim %a, %c : " << a << "\n"
     << "  %zero = arith.constant 0.0 : f32\n"
     << "  %e = tensor.empty(" << (c.gemvActivations.empty() ? "%m" : "") << ") : " << r << "\n"
     << "  %f = linalg.fill ins(%zero : f32) outs(%e : " << r << ") -> " << r << "\n"
     << "  %p = linalg.matmul ins(%a, %bb : " << a << ", " << b << ") outs(%f : " << r
     << ") -> " << r << "\n"
     << "  return %p : " << r << "\n}\n";
  return os.str();
}

class GgufMatmulTest : public ::testing::Test {
protected:
  void SetUp() override {
    dir = std::filesystem::temp_directory_path() /
          ("turbine-gguf-matmul-" + std::to_string(::getpid()) + "-" +
           ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir);
  }
  void TearDown() override { std::filesystem::remove_all(dir); }

  /// A GGUF file holding `bytes` as tensor `name` of `type`, [n, k].
  ParameterIndex file(const std::string &name, uint32_t type, int64_t n, int64_t k,
                      const std::string &bytes) {
    GgufBuilder g;
    g.addTensor(name, {uint64_t(k), uint64_t(n)}, type, bytes);
    std::string path = (dir / (name + std::to_string(type) + ".gguf")).string();
    std::string data = g.build();
    std::ofstream(path, std::ios::binary).write(data.data(), data.size());
    auto index = ParameterIndex::open(path);
    EXPECT_TRUE(index.ok()) << index.message();
    return index.value();
  }

  turbine::compiler::CompileOptions options(const GgufCase &c) {
    turbine::compiler::CompileOptions o;
    o.targetCpu = c.cpu;
    if (!c.gemvActivations.empty())
      o.quantizedMatmulActivations = c.gemvActivations;
    o.ggufTensors = {"fc.weight:blk.0.fc:" + std::string(typeName(c.type)) + ":" +
                     std::to_string(c.n) + "x" + std::to_string(c.k)};
    return o;
  }

  void run(const GgufCase &c) {
    const char *type = typeName(c.type);
    SCOPED_TRACE(std::string(type) + " K=" + std::to_string(c.k) + " N=" + std::to_string(c.n) +
                 " " + c.cpu);
    std::string src = source(c), ir, error;
    turbine::artifact::Module artifact;
    ASSERT_TRUE(compileSource(src, std::nullopt, ir, &artifact, error, options(c))) << error;
    // The weight is the file's blocks, external; nothing of it is embedded.
    bool found = false;
    const int64_t blockBytes = c.type == kQ8_0 ? 34 : c.type == kQ4_0 ? 18 : 32;
    for (const auto &p : artifact.parameters) {
      if (!p.external)
        EXPECT_LT(p.size, uint64_t(4 * c.k * c.n)) << "embedded weight '" << p.name << "'";
      if (p.name != "blk.0.fc")
        continue;
      found = true;
      EXPECT_TRUE(p.external);
      EXPECT_EQ(p.ggmlType, type);
      EXPECT_EQ(p.ggmlShape, (std::vector<int64_t>{c.n, c.k}));
      EXPECT_EQ(p.shape, (std::vector<int64_t>{c.n, c.k / 32, blockBytes}));
    }
    EXPECT_TRUE(found) << "no external parameter blk.0.fc";
    // The kernel is named as a matmul by the file's type: matmul_MxNxK_q8_0.
    std::string name = "x" + std::to_string(c.n) + "x" + std::to_string(c.k) + "_" + type;
    std::transform(name.begin(), name.end(), name.begin(), ::tolower);
    EXPECT_TRUE(std::any_of(artifact.kernels.begin(), artifact.kernels.end(),
                            [&](const std::string &k) {
                              return k.rfind("matmul_", 0) == 0 &&
                                     k.find(name) != std::string::npos;
                            }))
        << "no kernel named matmul_?" << name;
    std::string codegen;
    ASSERT_TRUE(compileSource(src, turbine::compiler::Phase::Codegen, codegen, nullptr, error,
                              options(c)))
        << error;
    // int8 activations on a CPU with AVX512-VNNI: vpdpbusd, with AVX2
    // only: vpmaddubsw + vpmaddwd, rounded activations (bounded below);
    // otherwise i8 -> f32 conversions.
    const bool vnni = targetHas(c, "avx512vnni");
    const bool int8 = c.gemvActivations == "int8" && !isPlain(c.type) &&
                      (vnni || targetHas(c, "avx2")) && (c.k / 32) % 2 == 0;
    // (bf16 -> f32: an fpext where the target has AVX512-BF16, else its
    // bits shifted by 16, from a bitcast to i16.)
    if (c.type == kF16 || c.type == kBF16)
      EXPECT_NE(codegen.find(c.type == kF16 ? "vector<32xf16> to vector<32xf32>"
                                            : "vector<32xbf16> to vector<32x"),
                std::string::npos)
          << "no conversion of 32 weights: the GGUF strategy did not run";
    else if (int8)
      EXPECT_NE(codegen.find(vnni ? "llvm.x86.avx512.vpdpbusd.512" : "llvm.x86.avx2.pmadd.ub.sw"),
                std::string::npos)
          << "no byte dot product: the int8 GEMV did not run";
    else if (!isPlain(c.type))
      EXPECT_NE(codegen.find("xi8> to vector<"), std::string::npos)
          << "no i8 vector conversion: the block strategy did not run";
    // The Q4_0 GEMV on an AVX512F CPU: nibbles select f32 weights from the
    // table d * [-8, ..., 7] (lane i = t[nibble i], a vpermps).
    if (!int8 && c.type == kQ4_0 && !c.gemvActivations.empty() && targetHas(c, "avx512f"))
      EXPECT_NE(codegen.find("dense<[-8.000000e+00, -7.000000e+00"), std::string::npos)
          << "no table lookup: the Q4_0 GEMV did not take the vpermps path";
    // Without AVX512F, the Q4_0 GEMV takes a block's nibbles out of its 16
    // bytes by masks where they lie (the first mask: bits 0-3 of four
    // lanes, 4-7 of four more); the other Q4_0 tiles read the bytes as two
    // 8-byte pieces widened to i32 lanes (a vpmovzxbd from memory each).
    if (!int8 && c.type == kQ4_0 && !targetHas(c, "avx512f")) {
      if (!c.gemvActivations.empty())
        EXPECT_NE(codegen.find("dense<[15, 15, 15, 15, 240, 240, 240, 240]> : vector<8xi32>"),
                  std::string::npos)
            << "no nibble masks: the Q4_0 GEMV did not take the mask path";
      else
        EXPECT_NE(codegen.find("vector<8xi8> to vector<8xi32>"), std::string::npos)
            << "Q4_0 bytes not widened in 8-byte pieces";
    }

    // Panels: the blocks decoded into the kernel's scratch and transposed
    // in registers (the first unpack of the transpose: 16 x 16 f32 with
    // AVX512F; without, 8 x 8 f32 for plain types, 8 rows' bytes for
    // quantized ones).
    const char *firstUnpack =
        targetHas(c, "avx512f") ? "[0, 16, 1, 17, 4, 20, 5, 21, 8, 24, 9, 25, 12, 28, 13, 29]"
        : isPlain(c.type)       ? "[0, 8, 1, 9, 4, 12, 5, 13]"
                                : "[0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23]";
    if (c.panels)
      EXPECT_NE(codegen.find(firstUnpack), std::string::npos)
          << "no transpose in registers: the panel strategy did not run";

    std::vector<double> w;
    ParameterIndex index = file("blk.0.fc", c.type, c.n, c.k, blocks(c, w));
    auto module = turbine::runtime::Module::loadFromBytes(turbine::artifact::serialize(artifact),
                                                          "gguf-test", {index});
    ASSERT_TRUE(module.ok()) << module.message();
    auto function = module.value()->lookupFunction("main");
    ASSERT_TRUE(function.ok()) << function.message();
    for (const char *deviceName : {"local-sync", "local-task"}) {
      turbine::runtime::DeviceOptions deviceOptions;
      deviceOptions.taskWorkers = 2;
      auto device = turbine::runtime::Device::create(deviceName, deviceOptions);
      ASSERT_TRUE(device.ok()) << device.message();
      for (int64_t m : c.rows) {
        std::vector<Tensor> inputs{
            filledTensor({m, c.k}, [&](int64_t e) { return aValue(e / c.k, e % c.k); })};
        auto outputs = function.value().invoke(*device.value(), inputs);
        ASSERT_TRUE(outputs.ok()) << deviceName << " M=" << m << ": " << outputs.message();
        const Tensor &out = outputs.value()[0];
        // The activation the kernel multiplies by: a, or (int8) a rounded
        // as the strategy documents it, in its block of 32, in f32:
        // roundeven(a * (127 / amax)) * (amax / 127).
        auto activation = [&](int64_t i, int64_t k) -> double {
          if (!int8)
            return aValue(i, k);
          float amax = 0;
          for (int64_t e = k / 32 * 32; e < k / 32 * 32 + 32; ++e)
            amax = std::max(amax, std::fabs(aValue(i, e)));
          if (amax == 0)
            return 0;
          return double(std::nearbyint(aValue(i, k) * (127.0f / amax))) * double(amax / 127.0f);
        };
        ASSERT_EQ(out.elementCount(), m * c.n);
        int64_t mismatches = 0;
        for (int64_t i = 0; i < m; ++i)
          for (int64_t j = 0; j < c.n; ++j) {
            double sum = 0, magnitude = 0;
            for (int64_t k = 0; k < c.k; ++k) {
              double term = activation(i, k) * w[j * c.k + k];
              sum += term;
              magnitude += std::fabs(term);
            }
            float got = out.dataAs<float>()[i * c.n + j];
            if (std::fabs(got - sum) > 1e-5 * magnitude + 1e-6 && mismatches++ < 5)
              ADD_FAILURE() << deviceName << " M=" << m << " [" << i << ", " << j
                            << "]: expected " << sum << ", got " << got;
          }
        EXPECT_EQ(mismatches, 0) << deviceName << " M=" << m;
      }
    }
  }

  std::filesystem::path dir;
};

TEST_F(GgufMatmulTest, Q8_0) {
  run({kQ8_0, 96, 45, {1, 3, 8, 13}});
  run({kQ8_0, 160, 7, {1, 4}});
  run({kQ8_0, 32, 1, {1, 2}});
  run({kQ8_0, 288, 130, {1, 5}});
}

// M = 1 static: the one-row GEMV tiles (f32 activations) and, on a CPU with
// AVX512-VNNI or AVX2, the int8-activation tiles (K / 32 even; odd takes
// the f32 tiles); N odd, one and above a workgroup tile.
TEST_F(GgufMatmulTest, Gemv) {
  for (uint32_t type : {kQ8_0, kQ4_0})
    for (const char *activations : {"f32", "int8"}) {
      SCOPED_TRACE(activations);
      run({type, 128, 45, {1}, activations});
      run({type, 96, 7, {1}, activations});
      run({type, 64, 1, {1}, activations});
      run({type, 256, 130, {1}, activations});
    }
}

// The Q4_0 GEMV of a CPU without AVX-512 (x86-64-v3, on any host here)
// with f32 activations: nibbles by masks, the "- 8" folded into a start
// per block; K of 1, 2, 3, 8 and 16 blocks (unrolled by 1, 2 and 8), N odd,
// one and above a workgroup tile.
TEST_F(GgufMatmulTest, Q4_0GemvWithoutAvx512) {
  for (int64_t k : {32, 64, 96, 256, 512})
    for (int64_t n : {1, 45, 130}) {
      GgufCase c{kQ4_0, k, n, {1}, "f32"};
      c.cpu = "x86-64-v3";
      run(c);
    }
}

TEST_F(GgufMatmulTest, Q4_0) {
  run({kQ4_0, 96, 45, {1, 3, 8, 13}});
  run({kQ4_0, 160, 7, {1, 4}});
  run({kQ4_0, 32, 1, {1, 2}});
}

// Weight rows a multiple of 32 (whole workgroup tiles of 128 or one of 96)
// with a dynamic M: the panel strategy (blocks decoded into the kernel's
// panel scratch, transposed, then the f32 GEMM's register tiles), K tiles
// of 8 blocks (K = 512: two), 2 (K = 320) and 1 (K = 96); M below, at and
// above the 8-row register tile and the 64-row workgroup tile.
TEST_F(GgufMatmulTest, Panels) {
  for (uint32_t type : {kQ8_0, kQ4_0}) {
    run({type, 512, 256, {1, 8, 13, 70}, "", true});
    run({type, 320, 96, {3, 16}, "", true});
    run({type, 96, 32, {9}, "", true});
  }
}

// The panels of a CPU without AVX512F (8 x 8 transposes in ymm) on a host
// with it (without, Panels and PlainTypes run them).
TEST_F(GgufMatmulTest, PanelsWithoutAvx512) {
  if (!__builtin_cpu_supports("avx512f"))
    GTEST_SKIP() << "the host has no AVX512F: Panels and PlainTypes take this path";
  for (uint32_t type : {kQ8_0, kQ4_0, kF16, kBF16, kF32}) {
    GgufCase c{type, 320, 96, {3, 16, 70}, "", true};
    c.cpu = "x86-64-v3";
    run(c);
  }
}

// Weights the file holds as F16 / BF16 / F32 rows (K a multiple of 32):
// the plain form of the same strategy, GEMV (M = 1 static, int8 activations
// asked for but not taken), few rows and panels.
TEST_F(GgufMatmulTest, PlainTypes) {
  for (uint32_t type : {kF16, kBF16, kF32}) {
    run({type, 128, 45, {1}, "f32"});
    run({type, 96, 7, {1}, "int8"});
    run({type, 96, 45, {1, 3, 8, 13}});
    run({type, 512, 256, {1, 8, 13, 70}, "", true});
    run({type, 320, 96, {3, 16}, "", true});
  }
}

TEST_F(GgufMatmulTest, FileDiffersFromWhatTheArtifactExpects) {
  GgufCase c{kQ8_0, 64, 3, {1}};
  std::string ir, error;
  turbine::artifact::Module artifact;
  ASSERT_TRUE(compileSource(source(c), std::nullopt, ir, &artifact, error, options(c))) << error;
  std::string bytes = turbine::artifact::serialize(artifact);
  std::vector<double> w;
  // The tensor in another type: Q4_0 blocks of the same logical shape.
  GgufCase q4{kQ4_0, 64, 3, {1}};
  auto other = turbine::runtime::Module::loadFromBytes(
      bytes, "gguf-test", {file("blk.0.fc", kQ4_0, 3, 64, blocks(q4, w))});
  ASSERT_FALSE(other.ok());
  EXPECT_NE(other.message().find("'blk.0.fc'"), std::string::npos) << other.message();
  EXPECT_NE(other.message().find("is 3x64xQ4_0, but the artifact was compiled against 3x64xQ8_0"),
            std::string::npos)
      << other.message();
  // Another shape.
  GgufCase wide{kQ8_0, 64, 4, {1}};
  auto shape = turbine::runtime::Module::loadFromBytes(
      bytes, "gguf-test", {file("blk.0.fc", kQ8_0, 4, 64, blocks(wide, w))});
  ASSERT_FALSE(shape.ok());
  EXPECT_NE(shape.message().find("is 4x64xQ8_0, but the artifact was compiled against 3x64xQ8_0"),
            std::string::npos)
      << shape.message();
  // Missing: the file holds another tensor only.
  auto missing = turbine::runtime::Module::loadFromBytes(
      bytes, "gguf-test", {file("blk.1.fc", kQ8_0, 3, 64, blocks(c, w))});
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.message().find("external parameter 'blk.0.fc'"), std::string::npos)
      << missing.message();
  EXPECT_NE(missing.message().find("is not in"), std::string::npos) << missing.message();
}

TEST_F(GgufMatmulTest, CompileErrorsNameTensorAndWeight) {
  GgufCase c{kQ8_0, 64, 3, {1}};
  std::string ir, error;
  turbine::compiler::CompileOptions o;
  o.ggufTensors = {"fc.weight:blk.0.fc:Q8_0:5x64"};
  EXPECT_FALSE(compileSource(source(c), std::nullopt, ir, nullptr, error, o));
  EXPECT_NE(error.find("GGUF tensor 'blk.0.fc' (5x64xQ8_0) does not match the model's weight "
                       "'fc.weight' (3x64xf32"),
            std::string::npos)
      << error;
  o.ggufTensors = {"fc.weight:blk.0.fc:Q5_1:3x64"};
  error.clear();
  EXPECT_FALSE(compileSource(source(c), std::nullopt, ir, nullptr, error, o));
  EXPECT_NE(error.find("unsupported ggml type Q5_1"), std::string::npos) << error;
}

} // namespace
