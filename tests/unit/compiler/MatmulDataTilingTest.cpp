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
// not a multiple of 32 below 256, was not) packed, so the test exercises the
// path it names; a constant B with N from 256 not a multiple of 32 is packed
// with zero columns up to whole panels and its result sliced. Matmuls whose B is packed inside the kernel (MatmulKernelPacking.h)
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

/// Elementwise epilogues of the matmul's result (MatmulEpilogueInPlace.h):
/// + bias[n] then ReLU; / 8 (attention's Q.K^T scale); + residual[m, n];
/// mask[n] ? -100 : x / 8 with a constant i1 mask (attention's masked_fill:
/// i1 tensors hold a byte per element, i1 vectors are bit-packed, so an
/// epilogue reading one must not be vectorized as it is). Each changes the
/// result if applied twice or once per K tile.
enum class Epilogue { BiasRelu, Scale, Residual, Masked };

struct MatmulCase {
  int64_t n, k;
  bool constantB;
  bool epilogue;                  // + bias[n], then ReLU
  std::vector<int64_t> rows;      // M values to run (M is dynamic)
  bool expectPacked;
  const char *dataTilingMode;     // CompileOptions::matmulDataTiling ("0", "all"), or null
  bool staticRows = false;        // M static: rows must then hold one value
  bool expectKernelPacked = false;
  const char *kernelPackMode = nullptr; // CompileOptions::matmulKernelPack, or null
  Epilogue epilogueKind = Epilogue::BiasRelu; // which one, if `epilogue`
  int64_t batch = 0; // > 0: a linalg.batch_matmul over that many (run-time B)
};

float aValue(int64_t i, int64_t k) { return float((13 * i + 5 * k) % 9 - 4) / 4; }
float bValue(int64_t k, int64_t j) { return float((7 * k + 3 * j) % 11 - 5) / 8; }
float biasValue(int64_t j) { return float(j % 5 - 2) / 2; }
float residualValue(int64_t i, int64_t j) { return float((5 * i + 3 * j) % 7 - 3) / 4; }
bool maskValue(int64_t j) { return (j * 7) % 5 < 2; }

/// func.func @main(%a: [B x]?xK[, %b: [B x]KxN][, %bias: N | %res: [B x]?xN])
///   -> [B x]?xN.
std::string matmulSource(const MatmulCase &c) {
  std::string rows = c.staticRows ? std::to_string(c.rows.front()) : "?";
  std::string batch = c.batch > 0 ? std::to_string(c.batch) + "x" : "";
  std::string a = "tensor<" + batch + rows + "x" + std::to_string(c.k) + "xf32>";
  std::string b = "tensor<" + batch + std::to_string(c.k) + "x" + std::to_string(c.n) + "xf32>";
  std::string r = "tensor<" + batch + rows + "x" + std::to_string(c.n) + "xf32>";
  // With M static, %m is unused and the empties take no size.
  std::string emptySize = c.staticRows ? "()" : "(%m)";
  std::string bias = c.epilogueKind == Epilogue::Residual ? r
                     : "tensor<" + std::to_string(c.n) + "xf32>";
  std::ostringstream os;
  os << "func.func @main(%a: " << a;
  if (!c.constantB)
    os << ", %b: " << b;
  if (c.epilogue && (c.epilogueKind == Epilogue::BiasRelu || c.epilogueKind == Epilogue::Residual))
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
  os << "  %c" << (c.batch > 0 ? 1 : 0) << " = arith.constant " << (c.batch > 0 ? 1 : 0)
     << " : index\n"
     << "  %m = tensor.dim %a, %c" << (c.batch > 0 ? 1 : 0) << " : " << a << "\n"
     << "  %zero = arith.constant 0.0 : f32\n"
     << "  %eight = arith.constant 8.0 : f32\n"
     << "  %e = tensor.empty" << emptySize << " : " << r << "\n"
     << "  %f = linalg.fill ins(%zero : f32) outs(%e : " << r << ") -> " << r << "\n"
     << "  %p = linalg." << (c.batch > 0 ? "batch_matmul" : "matmul") << " ins(%a, %b : " << a
     << ", " << b << ") outs(%f : " << r << ") -> " << r << "\n";
  if (!c.epilogue) {
    os << "  return %p : " << r << "\n}\n";
    return os.str();
  }
  std::string dims = c.batch > 0 ? "(h, i, j)" : "(i, j)";
  std::string identity = "affine_map<" + dims + " -> " + dims + ">";
  std::string iterators = c.batch > 0 ? "[\"parallel\", \"parallel\", \"parallel\"]"
                                      : "[\"parallel\", \"parallel\"]";
  os << "  %e2 = tensor.empty" << emptySize << " : " << r << "\n";
  switch (c.epilogueKind) {
  case Epilogue::BiasRelu:
    os << "  %y = linalg.generic {indexing_maps = [" << identity << ", affine_map<" << dims
       << " -> (j)>, " << identity << "], iterator_types = " << iterators
       << "} ins(%p, %bias : " << r << ", " << bias << ") outs(%e2 : " << r << ") {\n"
       << "  ^bb0(%x: f32, %bb: f32, %o: f32):\n"
       << "    %s = arith.addf %x, %bb : f32\n"
       << "    %z = arith.maximumf %s, %zero : f32\n"
       << "    linalg.yield %z : f32\n";
    break;
  case Epilogue::Scale:
    os << "  %y = linalg.generic {indexing_maps = [" << identity << ", " << identity
       << "], iterator_types = " << iterators << "} ins(%p : " << r << ") outs(%e2 : " << r
       << ") {\n"
       << "  ^bb0(%x: f32, %o: f32):\n"
       << "    %z = arith.divf %x, %eight : f32\n"
       << "    linalg.yield %z : f32\n";
    break;
  case Epilogue::Masked:
    os << "  %mask = arith.constant dense<[";
    for (int64_t j = 0; j < c.n; ++j)
      os << (j ? ", " : "") << (maskValue(j) ? "true" : "false");
    os << "]> : tensor<" << c.n << "xi1>\n"
       << "  %fill = arith.constant -100.0 : f32\n"
       << "  %y = linalg.generic {indexing_maps = [affine_map<" << dims << " -> (j)>, " << identity
       << ", " << identity << "], iterator_types = " << iterators << "} ins(%mask, %p : tensor<"
       << c.n << "xi1>, " << r << ") outs(%e2 : " << r << ") {\n"
       << "  ^bb0(%mm: i1, %x: f32, %o: f32):\n"
       << "    %d = arith.divf %x, %eight : f32\n"
       << "    %z = arith.select %mm, %fill, %d : f32\n"
       << "    linalg.yield %z : f32\n";
    break;
  case Epilogue::Residual:
    // The residual first: the matmul's operand is not always the first.
    os << "  %y = linalg.generic {indexing_maps = [" << identity << ", " << identity << ", "
       << identity << "], iterator_types = " << iterators << "} ins(%bias, %p : " << r << ", "
       << r << ") outs(%e2 : " << r << ") {\n"
       << "  ^bb0(%rr: f32, %x: f32, %o: f32):\n"
       << "    %z = arith.addf %rr, %x : f32\n"
       << "    linalg.yield %z : f32\n";
    break;
  }
  os << "  } -> " << r << "\n"
     << "  return %y : " << r << "\n}\n";
  return os.str();
}

/// Compile options with the matmul strategy switches of a case ("0"/"off",
/// "all"; null: the default heuristic).
turbine::compiler::CompileOptions strategyOptions(const char *dataTilingMode,
                                                  const char *kernelPackMode) {
  turbine::compiler::CompileOptions options;
  options.matmulDataTiling =
      *turbine::compiler::parseStrategyMode(dataTilingMode ? dataTilingMode : "auto");
  options.matmulKernelPack =
      *turbine::compiler::parseStrategyMode(kernelPackMode ? kernelPackMode : "auto");
  return options;
};

/// Row `i` of batch `h`: A's and the residual's values continue across
/// batches (row h * M + i); B is the same in every batch.
std::vector<float> reference(const MatmulCase &c, int64_t m) {
  int64_t batches = std::max<int64_t>(c.batch, 1);
  std::vector<float> out(batches * m * c.n);
  for (int64_t row = 0; row < batches * m; ++row)
    for (int64_t j = 0; j < c.n; ++j) {
      double sum = 0;
      for (int64_t k = 0; k < c.k; ++k)
        sum += double(aValue(row, k)) * double(bValue(k, j));
      if (c.epilogue) {
        switch (c.epilogueKind) {
        case Epilogue::BiasRelu:
          sum = std::max(sum + biasValue(j), 0.0);
          break;
        case Epilogue::Scale:
          sum /= 8;
          break;
        case Epilogue::Residual:
          sum += residualValue(row, j);
          break;
        case Epilogue::Masked:
          sum = maskValue(j) ? -100.0 : sum / 8;
          break;
        }
      }
      out[row * c.n + j] = float(sum);
    }
  return out;
}

/// How many heap allocations `codegenIr` makes.
size_t countMallocs(const std::string &codegenIr) {
  size_t count = 0;
  for (size_t at = codegenIr.find("llvm.call @malloc"); at != std::string::npos;
       at = codegenIr.find("llvm.call @malloc", at + 1))
    ++count;
  return count;
}

void runCase(const MatmulCase &c) {
  const turbine::compiler::CompileOptions options =
      strategyOptions(c.dataTilingMode, c.kernelPackMode);
  std::string source = matmulSource(c), ir, error;
  ASSERT_TRUE(
      compileSource(source, turbine::compiler::Phase::GlobalOpt, ir, nullptr, error, options))
      << error;
  bool packed = ir.find("linalg.contract") != std::string::npos;
  EXPECT_EQ(packed, c.expectPacked) << ir;
  bool kernelPacked = ir.find("turbine.pack_b_in_kernel") != std::string::npos;
  EXPECT_EQ(kernelPacked, c.expectKernelPacked) << ir;
  if (kernelPacked) {
    // The scratch is on the stack: as many heap allocations (an epilogue's
    // tile temporary) as without the pack.
    auto compileMallocs = [&](const char *kernelPackMode, std::string &codegenIr) {
      EXPECT_TRUE(compileSource(source, turbine::compiler::Phase::Codegen, codegenIr, nullptr,
                                error, strategyOptions(c.dataTilingMode, kernelPackMode)))
          << error;
      return countMallocs(codegenIr);
    };
    std::string withPack, withoutPack;
    size_t mallocs = compileMallocs(c.kernelPackMode ? c.kernelPackMode : "auto", withPack);
    EXPECT_NE(withPack.find("llvm.alloca"), std::string::npos) << withPack;
    EXPECT_EQ(mallocs, compileMallocs("0", withoutPack)) << withPack;
  }
  if (c.epilogue) {
    // The matmul accumulates into the output tile and the epilogue updates
    // it in place: no heap temporary tile.
    std::string codegenIr;
    ASSERT_TRUE(compileSource(source, turbine::compiler::Phase::Codegen, codegenIr, nullptr,
                              error, options))
        << error;
    EXPECT_EQ(countMallocs(codegenIr), 0u) << codegenIr;
  }
  if (packed && c.constantB) {
    // Folded: the packed constant is there (N padded to whole panels) and
    // no run-time transpose of B (the only generic left is the epilogue, or
    // for a padded N the slice of the result, fused into the epilogue).
    std::string packedType = "tensor<" + std::to_string((c.n + 31) / 32) + "x" +
                             std::to_string(c.k) + "x32xf32>";
    EXPECT_NE(ir.find("arith.constant dense<"), std::string::npos) << ir;
    EXPECT_NE(ir.find(": " + packedType), std::string::npos) << ir;
    size_t generics = 0;
    for (size_t at = ir.find("linalg.generic"); at != std::string::npos;
         at = ir.find("linalg.generic", at + 1))
      ++generics;
    EXPECT_EQ(generics, c.epilogue || c.n % 32 != 0 ? 1u : 0u) << ir;
  }

  runOnEachDevice(source, [&](turbine::runtime::Function &function,
                              turbine::runtime::Device &device, const char *deviceName) {
    for (int64_t m : c.rows) {
      // Shapes with the batch dim in front when there is one.
      auto shape = [&](int64_t rows, int64_t columns) {
        std::vector<int64_t> dims;
        if (c.batch > 0)
          dims.push_back(c.batch);
        dims.push_back(rows);
        dims.push_back(columns);
        return dims;
      };
      int64_t batches = std::max<int64_t>(c.batch, 1);
      std::vector<Tensor> inputs;
      inputs.push_back(filledTensor(shape(m, c.k), [&](int64_t e) { return aValue(e / c.k, e % c.k); }));
      if (!c.constantB)
        inputs.push_back(filledTensor(shape(c.k, c.n), [&](int64_t e) {
          return bValue((e / c.n) % c.k, e % c.n);
        }));
      if (c.epilogue && c.epilogueKind == Epilogue::BiasRelu)
        inputs.push_back(filledTensor({c.n}, [&](int64_t e) { return biasValue(e); }));
      if (c.epilogue && c.epilogueKind == Epilogue::Residual)
        inputs.push_back(filledTensor(shape(m, c.n), [&](int64_t e) {
          return residualValue(e / c.n, e % c.n);
        }));
      auto results = function.invoke(device, inputs);
      ASSERT_TRUE(results.ok()) << results.message();
      const Tensor &out = results.value().at(0);
      ASSERT_EQ(out.elementCount(), batches * m * c.n);
      std::vector<float> expected = reference(c, m);
      int64_t mismatches = 0, first = -1;
      for (int64_t e = 0; e < batches * m * c.n; ++e)
        if (out.dataAs<float>()[e] != expected[e] && mismatches++ == 0)
          first = e;
      EXPECT_EQ(mismatches, 0) << deviceName << " M=" << m << " N=" << c.n << " K=" << c.k
                               << ": first at (" << first / c.n << ", " << first % c.n
                               << "): " << out.dataAs<float>()[first] << " vs "
                               << expected[first];
    }
  }, options);
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
// static is not; kernel-pack=off turns it off.
TEST(MatmulKernelPacking, DefaultHeuristicWideN) {
  runCase({1024, 40, false, true, {70}, false, nullptr, true, true, nullptr});
  runCase({1024, 40, false, false, {3, 70}, false, nullptr, false, true, nullptr});
  runCase({1024, 40, false, false, {16}, false, nullptr, true, false, nullptr});
  runCase({1024, 40, false, false, {70}, false, nullptr, true, false, "0"});
}

TEST(MatmulDataTiling, RuntimeBSmallIsNotPacked) {
  runCase({64, 40, false, false, {9}, false, nullptr});
}

// N not a multiple of the panel width and below 256: not packed (the zero
// columns would be too large a part), still correct.
TEST(MatmulDataTiling, PanelWidthNotDividingNIsNotPacked) {
  runCase({100, 45, true, true, {11}, false, "all"});
}

// A constant B with N from 256 not a multiple of 32 (a classifier's 1000):
// packed with zero columns up to whole panels (1024: the last panel 8
// columns wide; 260: 4), the result sliced; M dynamic (the leftover-row
// GEMV tiles and full register tiles), K over a 256 K tile, with and
// without the bias + ReLU epilogue.
TEST(MatmulDataTiling, ConstantBPaddedToWholePanels) {
  runCase({1000, 300, true, true, {1, 3, 8, 13}, true, nullptr});
  runCase({260, 33, true, false, {1, 7, 9}, true, nullptr});
}

// Small matmuls (KernelCodegen.cpp's row split): rows left over after the
// 8-row tiles go one at a time, 128 columns wide, then by 32, and the last
// partial column tile is vectorized with masks. N = 1, 10, 33, 1000 (not
// multiples of 32: packed with zero columns only where B is a constant and
// N >= 256), K = 1, 7, 300, 8192, M = 1 and 3 static and dynamic (below, at
// and over the 8-row tile).
TEST(SmallMatmul, ClassifierHeadDynamicBatch) { // the CNN's Linear 8192 -> 10
  runCase({10, 8192, true, true, {1, 3, 8, 11}, false, nullptr});
}

TEST(SmallMatmul, WideGemvConstantB) { // ResNet's fc, K cut short: padded panels
  runCase({1000, 7, true, false, {1, 3, 9}, true, nullptr});
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
  runCase({1000, 300, true, true, {1}, true, nullptr, /*staticRows=*/true});
  runCase({1000, 300, false, true, {1}, false, nullptr, /*staticRows=*/true});
}

TEST(SmallMatmul, StaticThreeRowsTenColumns) {
  runCase({10, 8192, false, false, {3}, false, nullptr, true});
}

TEST(SmallMatmul, StaticOneRowPackedGemv) { // N a multiple of 32: panels
  runCase({96, 300, true, true, {1}, true, nullptr, true});
}

// Static rows left over by the register tile's (a batch of 2 to 5, 32 =
// 5 x 6 + 2 on AVX2), constant B packed: several rows per leftover tile
// where they divide the count (tileLeftoverMatmulRows); exact results, and
// on an AVX2 CPU without AVX-512 the 2-row batch in one tile: two 32-lane
// multiply-adds (8 ymm accumulators) per step, where one row at a time had
// one (4).
TEST(SmallMatmul, StaticLeftoverRowsPacked) {
  for (int64_t rows : {2, 3, 4, 5, 32})
    runCase({96, 300, true, false, {rows}, true, nullptr, /*staticRows=*/true});
  if (!__builtin_cpu_supports("avx2") || __builtin_cpu_supports("avx512f"))
    return;
  MatmulCase twoRows{96, 300, true, false, {2}, true, nullptr, true};
  std::string codegen, error;
  ASSERT_TRUE(compileSource(matmulSource(twoRows), turbine::compiler::Phase::Codegen, codegen,
                            nullptr, error, strategyOptions(nullptr, nullptr)))
      << error;
  // The most 32-lane multiply-adds between two labels of the lowered kernel.
  size_t most = 0, here = 0;
  std::istringstream lines(codegen);
  for (std::string line; std::getline(lines, line);) {
    if (line.find("^bb") != std::string::npos && line.find(':') != std::string::npos)
      here = 0;
    if (line.find("llvm.intr.fmuladd") != std::string::npos &&
        line.find("vector<32xf32>") != std::string::npos)
      most = std::max(most, ++here);
  }
  EXPECT_EQ(most, 2u) << "2 rows: not one tile of both rows (a 32-lane multiply-add per row "
                      << "and step)\n" << codegen;
}

// Epilogues other than bias + ReLU (MatmulEpilogueInPlace.h): the matmul
// accumulates into the output tile and the epilogue updates it in place, so
// the kernel allocates no temporary (checked in runCase); an epilogue run
// twice or once per 256-deep K tile (K = 301, 515) changes the result.
// Plain, packed-B (constant and run-time), kernel-packed and batch matmuls,
// M dynamic and odd.
// K within one 256-deep K tile and columns a multiple of 32: the epilogue
// runs on the register tile's accumulators (KernelCodegen.cpp,
// tileMatmulWithEpilogue), full 8-row tiles and the masked partial one.
TEST(MatmulEpilogue, BiasReluPlainRegisterTileDynamicRows) {
  runCase({64, 100, false, true, {1, 7, 9, 70}, false, nullptr, false, false, nullptr,
           Epilogue::BiasRelu});
}

TEST(MatmulEpilogue, ResidualConstantBPackedRegisterTile) {
  runCase({96, 200, true, true, {1, 9, 67, 261}, true, nullptr, false, false, nullptr,
           Epilogue::Residual});
}

TEST(MatmulEpilogue, ScaleBatchMatmulRegisterTileStaticOddRows) {
  runCase({64, 64, false, true, {13}, false, nullptr, true, false, nullptr, Epilogue::Scale,
           /*batch=*/2});
}

TEST(MatmulEpilogue, ScalePlainOddSizes) {
  runCase({100, 301, false, true, {1, 7, 9, 70}, false, nullptr, false, false, nullptr,
           Epilogue::Scale});
}

TEST(MatmulEpilogue, ResidualPlainOddSizes) {
  runCase({33, 301, false, true, {3, 17, 130}, false, nullptr, false, false, nullptr,
           Epilogue::Residual});
}

TEST(MatmulEpilogue, ResidualConstantBPacked) {
  runCase({96, 259, true, true, {1, 9, 67}, true, nullptr, false, false, nullptr,
           Epilogue::Residual});
}

TEST(MatmulEpilogue, ScaleRuntimeBPackedByDispatch) {
  runCase({64, 33, false, true, {5, 61}, true, "all", false, false, nullptr,
           Epilogue::Scale});
}

TEST(MatmulEpilogue, ResidualKernelPackedDeepK) {
  runCase({160, 515, false, true, {3, 67, 129}, false, "0", false, true, "all",
           Epilogue::Residual});
}

TEST(MatmulEpilogue, ScaleBatchMatmulOddSizes) { // attention's Q.K^T / 8
  runCase({40, 65, false, true, {1, 9, 70}, false, nullptr, false, false, nullptr,
           Epilogue::Scale, /*batch=*/3});
}

TEST(MatmulEpilogue, BiasReluBatchMatmulDeepK) {
  runCase({33, 300, false, true, {7, 17}, false, nullptr, false, false, nullptr,
           Epilogue::BiasRelu, /*batch=*/2});
}

// A constant i1 mask (attention's masked_fill), on register-tile columns
// (32 and 16, a multiple of every CPU's register tile: the GPT block's
// 16 x 16 scores were miscompiled with AVX2's 16-column tiles) and not.
TEST(MatmulEpilogue, MaskedBatchMatmulRegisterTiles) {
  for (int64_t n : {16, 32, 40})
    runCase({n, 16, false, true, {16, 3}, false, nullptr, false, false, nullptr, Epilogue::Masked,
             /*batch=*/2});
}

TEST(MatmulEpilogue, ResidualBatchMatmulStaticRows) {
  runCase({128, 64, false, true, {128}, false, nullptr, true, false, nullptr,
           Epilogue::Residual, /*batch=*/4});
}

} // namespace
