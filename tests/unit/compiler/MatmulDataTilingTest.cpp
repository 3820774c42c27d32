//===- MatmulDataTilingTest.cpp - Packed-B matmuls vs a C++ reference -----===//
//
// Compiles fill + matmul (+ bias + ReLU) functions whose B gets packed into
// panels (MatmulDataTiling.cpp) — constant B folded at compile time, run-time
// B packed by a dispatch — at sizes that are not multiples of the tiles (M
// dynamic and odd, K over the 256 K tile and odd), runs them on local-sync
// and on local-task with 2 workers, and compares with a triple loop. Every
// input is a small multiple of 1/8 and every partial sum a multiple of 1/64
// far below 2^18, so f32 arithmetic is exact in any order: results must be
// equal. Each case also checks, on the global-opt IR, that B was (or, for N
// not a multiple of 32, was not) packed, so the test exercises the path it
// names. Matmuls whose B is packed inside the kernel (MatmulKernelPacking.h)
// are checked the same way: marked in global-opt, and in codegen a stack
// scratch (llvm.alloca) and no heap allocation per tile.
//===----------------------------------------------------------------------===//
#include "CompileAndRun.h"

#include "turbine/runtime/Runtime.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <functional>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

namespace {

using namespace turbine::testing;

using turbine::runtime::DType;
using turbine::runtime::Tensor;

struct MatmulCase {
  int64_t n, k;
  bool constantB;
  bool epilogue;                  // + bias[n], then ReLU
  std::vector<int64_t> rows;      // M values to run (M is dynamic)
  bool expectPacked;
  const char *dataTilingMode;     // TURBINE_MATMUL_DATA_TILING, or null
  bool staticRows = false;        // M static: rows must then hold one value
  bool expectKernelPacked = false;
  const char *kernelPackMode = nullptr; // TURBINE_MATMUL_KERNEL_PACK, or null
};

float aValue(int64_t i, int64_t k) { return float((13 * i + 5 * k) % 9 - 4) / 4; }
float bValue(int64_t k, int64_t j) { return float((7 * k + 3 * j) % 11 - 5) / 8; }
float biasValue(int64_t j) { return float(j % 5 - 2) / 2; }

/// func.func @main(%a: ?xK[, %b: KxN][, %bias: N]) -> ?xN.
std::string matmulSource(const MatmulCase &c) {
  std::string rows = c.staticRows ? std::to_string(c.rows.front()) : "?";
  std::string a = "tensor<" + rows + "x" + std::to_string(c.k) + "xf32>";
  std::string b = "tensor<" + std::to_string(c.k) + "x" + std::to_string(c.n) + "xf32>";
  std::string r = "tensor<" + rows + "x" + std::to_string(c.n) + "xf32>";
  // With M static, %m is unused and the empties take no size.
  std::string emptySize = c.staticRows ? "()" : "(%m)";
  std::string bias = "tensor<" + std::to_string(c.n) + "xf32>";
  std::ostringstream os;
  os << "func.func @main(%a: " << a;
  if (!c.constantB)
    os << ", %b: " << b;
  if (c.epilogue)
    os << ", %bias: " << bias;
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
  os << "  %c0 = arith.constant 0 : index\n"
     << "  %m = tensor.dim %a, %c0 : " << a << "\n"
     << "  %zero = arith.constant 0.0 : f32\n"
     << "  %e = tensor.empty" << emptySize << " : " << r << "\n"
     << "  %f = linalg.fill ins(%zero : f32) outs(%e : " << r << ") -> " << r << "\n"
     << "  %p = linalg.matmul ins(%a, %b : " << a << ", " << b << ") outs(%f : " << r
     << ") -> " << r << "\n";
  if (!c.epilogue) {
    os << "  return %p : " << r << "\n}\n";
    return os.str();
  }
  os << "  %e2 = tensor.empty" << emptySize << " : " << r << "\n"
     << "  %y = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, "
        "affine_map<(i, j) -> (j)>, affine_map<(i, j) -> (i, j)>], iterator_types = "
        "[\"parallel\", \"parallel\"]} ins(%p, %bias : "
     << r << ", " << bias << ") outs(%e2 : " << r << ") {\n"
     << "  ^bb0(%x: f32, %bb: f32, %o: f32):\n"
     << "    %s = arith.addf %x, %bb : f32\n"
     << "    %z = arith.maximumf %s, %zero : f32\n"
     << "    linalg.yield %z : f32\n"
     << "  } -> " << r << "\n"
     << "  return %y : " << r << "\n}\n";
  return os.str();
}

/// Sets (or unsets, for null) an environment variable for one scope, then
/// restores what it was.
class ScopedEnvironment {
public:
  ScopedEnvironment(const char *name, const char *value) : name_(name) {
    if (const char *previous = std::getenv(name))
      previous_ = previous;
    set(value);
  }
  ~ScopedEnvironment() { set(previous_ ? previous_->c_str() : nullptr); }

private:
  void set(const char *value) {
    if (value)
      setenv(name_, value, 1);
    else
      unsetenv(name_);
  }
  const char *name_;
  std::optional<std::string> previous_;
};

std::vector<float> reference(const MatmulCase &c, int64_t m) {
  std::vector<float> out(m * c.n);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < c.n; ++j) {
      double sum = 0;
      for (int64_t k = 0; k < c.k; ++k)
        sum += double(aValue(i, k)) * double(bValue(k, j));
      if (c.epilogue)
        sum = std::max(sum + biasValue(j), 0.0);
      out[i * c.n + j] = float(sum);
    }
  return out;
}

void runCase(const MatmulCase &c) {
  ScopedEnvironment mode("TURBINE_MATMUL_DATA_TILING", c.dataTilingMode);
  ScopedEnvironment kernelMode("TURBINE_MATMUL_KERNEL_PACK", c.kernelPackMode);
  std::string source = matmulSource(c), ir, error;
  ASSERT_TRUE(compileSource(source, turbine::compiler::Phase::GlobalOpt, ir, nullptr, error))
      << error;
  bool packed = ir.find("linalg.contract") != std::string::npos;
  EXPECT_EQ(packed, c.expectPacked) << ir;
  bool kernelPacked = ir.find("turbine.pack_b_in_kernel") != std::string::npos;
  EXPECT_EQ(kernelPacked, c.expectKernelPacked) << ir;
  if (kernelPacked) {
    // The scratch is on the stack: as many heap allocations (an epilogue's
    // tile temporary) as without the pack.
    auto countMallocs = [&](const char *kernelPackMode, std::string &codegenIr) {
      ScopedEnvironment scoped("TURBINE_MATMUL_KERNEL_PACK", kernelPackMode);
      EXPECT_TRUE(compileSource(source, turbine::compiler::Phase::Codegen, codegenIr,
                                nullptr, error))
          << error;
      size_t count = 0;
      for (size_t at = codegenIr.find("llvm.call @malloc"); at != std::string::npos;
           at = codegenIr.find("llvm.call @malloc", at + 1))
        ++count;
      return count;
    };
    std::string withPack, withoutPack;
    size_t mallocs = countMallocs(c.kernelPackMode ? c.kernelPackMode : "auto", withPack);
    EXPECT_NE(withPack.find("llvm.alloca"), std::string::npos) << withPack;
    EXPECT_EQ(mallocs, countMallocs("0", withoutPack)) << withPack;
  }
  if (packed && c.constantB) {
    // Folded: the packed constant is there and no run-time transpose of B
    // (the only generic left is the epilogue).
    std::string packedType = "tensor<" + std::to_string(c.n / 32) + "x" +
                             std::to_string(c.k) + "x32xf32>";
    EXPECT_NE(ir.find("arith.constant dense<"), std::string::npos) << ir;
    EXPECT_NE(ir.find(": " + packedType), std::string::npos) << ir;
    size_t generics = 0;
    for (size_t at = ir.find("linalg.generic"); at != std::string::npos;
         at = ir.find("linalg.generic", at + 1))
      ++generics;
    EXPECT_EQ(generics, c.epilogue ? 1u : 0u) << ir;
  }

  turbine::artifact::Module artifact;
  ASSERT_TRUE(compileSource(source, std::nullopt, ir, &artifact, error)) << error;
  auto module = turbine::runtime::Module::loadFromBytes(turbine::artifact::serialize(artifact));
  ASSERT_TRUE(module.ok()) << module.message();
  auto function = module.value()->lookupFunction("main");
  ASSERT_TRUE(function.ok()) << function.message();
  for (const char *deviceName : {"local-sync", "local-task"}) {
    turbine::runtime::DeviceOptions deviceOptions;
    deviceOptions.taskWorkers = 2;
    auto device = turbine::runtime::Device::create(deviceName, deviceOptions);
    ASSERT_TRUE(device.ok()) << device.message();
    for (int64_t m : c.rows) {
      std::vector<Tensor> inputs;
      inputs.push_back(filledTensor({m, c.k}, [&](int64_t e) { return aValue(e / c.k, e % c.k); }));
      if (!c.constantB)
        inputs.push_back(filledTensor({c.k, c.n}, [&](int64_t e) { return bValue(e / c.n, e % c.n); }));
      if (c.epilogue)
        inputs.push_back(filledTensor({c.n}, [&](int64_t e) { return biasValue(e); }));
      auto results = function.value().invoke(*device.value(), inputs);
      ASSERT_TRUE(results.ok()) << results.message();
      const Tensor &out = results.value().at(0);
      ASSERT_EQ(out.elementCount(), m * c.n);
      std::vector<float> expected = reference(c, m);
      int64_t mismatches = 0, first = -1;
      for (int64_t e = 0; e < m * c.n; ++e)
        if (out.dataAs<float>()[e] != expected[e] && mismatches++ == 0)
          first = e;
      EXPECT_EQ(mismatches, 0) << deviceName << " M=" << m << " N=" << c.n << " K=" << c.k
                               << ": first at (" << first / c.n << ", " << first % c.n
                               << "): " << out.dataAs<float>()[first] << " vs "
                               << expected[first];
    }
  }
}

// Constant B, folded at compile time; M below, at and over the 8-row and
// 256-row tiles, K over one 256 K tile.
TEST(MatmulDataTiling, ConstantBWithEpilogueOddSizes) {
  runCase({/*n=*/96, /*k=*/301, /*constantB=*/true, /*epilogue=*/true,
           /*rows=*/{1, 7, 8, 61, 130, 300}, /*expectPacked=*/true, nullptr});
}

TEST(MatmulDataTiling, ConstantBNoEpilogue) {
  runCase({64, 33, true, false, {5, 72}, true, nullptr});
}

// Run-time B: the heuristic leaves small shapes alone; "all" forces the pack
// dispatch so that it is checked at small, odd sizes too.
TEST(MatmulDataTiling, RuntimeBPackedByDispatch) {
  runCase({160, 259, false, true, {3, 67, 261}, true, "all"});
}

// Run-time B packed inside the kernel, per workgroup (up to 128 rows x 128
// columns) and per 256-deep K tile. "all" lifts the N >= 1024 threshold so
// that odd sizes stay small: M dynamic below, at and over the 8-row register
// tile and the 128-row workgroup tile, K over one and two K tiles and not a
// multiple of 8, N = 96 (one 96-column workgroup tile: 3 panels) and 160
// (5 panels: 32-column tiles), with and without the bias + ReLU epilogue.
TEST(MatmulKernelPacking, RuntimeBOddSizesDynamicRows) {
  runCase({96, 301, false, true, {1, 7, 8, 61, 130, 300}, false, "0", false, true, "all"});
}

TEST(MatmulKernelPacking, RuntimeBFivePanelsDeepK) {
  runCase({160, 515, false, false, {3, 67, 129}, false, "0", false, true, "all"});
}

TEST(MatmulKernelPacking, StaticRowsNotMultipleOfEight) {
  runCase({128, 259, false, true, {133}, false, "0", true, true, "all"});
}

// The default heuristic: N >= 1024 with M >= 64 or dynamic is packed in the
// kernel (the transformer's 128x3072x768 shape, cut short in K); M = 16
// static is not; TURBINE_MATMUL_KERNEL_PACK=0 turns it off.
TEST(MatmulKernelPacking, DefaultHeuristicWideN) {
  runCase({1024, 40, false, true, {70}, false, nullptr, true, true, nullptr});
  runCase({1024, 40, false, false, {3, 70}, false, nullptr, false, true, nullptr});
  runCase({1024, 40, false, false, {16}, false, nullptr, true, false, nullptr});
  runCase({1024, 40, false, false, {70}, false, nullptr, true, false, "0"});
}

TEST(MatmulDataTiling, RuntimeBSmallIsNotPacked) {
  runCase({64, 40, false, false, {9}, false, nullptr});
}

// N not a multiple of the panel width: never packed, still correct.
TEST(MatmulDataTiling, PanelWidthNotDividingNIsNotPacked) {
  runCase({100, 45, true, true, {11}, false, "all"});
}

// Small matmuls (KernelCodegen.cpp's row split): rows left over after the
// 8-row tiles go one at a time, 128 columns wide, then by 32, and the last
// partial column tile is vectorized with masks. N = 1, 10, 33, 1000 (not
// multiples of 32: never packed), K = 1, 7, 300, 8192, M = 1 and 3 static
// and dynamic (below, at and over the 8-row tile).
TEST(SmallMatmul, ClassifierHeadDynamicBatch) { // the CNN's Linear 8192 -> 10
  runCase({10, 8192, true, true, {1, 3, 8, 11}, false, nullptr});
}

TEST(SmallMatmul, WideGemvConstantB) { // ResNet's fc, K cut short
  runCase({1000, 7, true, false, {1, 3, 9}, false, nullptr});
}

TEST(SmallMatmul, WideRuntimeBOverKTile) {
  runCase({1000, 300, false, true, {1, 3, 17}, false, nullptr});
}

TEST(SmallMatmul, OneColumn) {
  runCase({1, 7, false, false, {1, 3, 8, 17}, false, nullptr});
}

TEST(SmallMatmul, OneDeepColumnsPastATile) {
  runCase({33, 1, false, true, {1, 3, 9}, false, nullptr});
}

TEST(SmallMatmul, StaticOneRow) {
  runCase({1000, 300, true, true, {1}, false, nullptr, /*staticRows=*/true});
}

TEST(SmallMatmul, StaticThreeRowsTenColumns) {
  runCase({10, 8192, false, false, {3}, false, nullptr, true});
}

TEST(SmallMatmul, StaticOneRowPackedGemv) { // N a multiple of 32: panels
  runCase({96, 300, true, true, {1}, true, nullptr, true});
}

} // namespace
