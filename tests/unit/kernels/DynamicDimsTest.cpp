//===- DynamicDimsTest.cpp - Kernels with dynamic symbols ------------------===//
//
// A symbol declared dynamic (KernelBuilder::dynamic) is read by the compiled
// kernel at run time: one compile serves every value. Checked here: a
// softmax and a GEMM with dynamic dims launched at 5+ shapes compile once
// and agree with the C++ references (the launch counters of Launch.h); a
// dim declared a multiple of the tile size drops its masks (printed IR) and
// a value that breaks the declaration, or its bound, is an error; misuse at
// trace time (a dynamic symbol in a tile shape, one no input dim defines);
// a dynamic kernel as a custom op inside a compiled model (push constants).
//===----------------------------------------------------------------------===//
#include "ExampleSupport.h"
#include "ParseModule.h"
#include "References.h"
#include "turbine/artifact/Module.h"
#include "turbine/compiler/Session.h"
#include "turbine/kernels/CustomOpCalls.h"
#include "turbine/kernels/Launch.h"
#include "turbine/kernels/Interpreter.h"
#include "turbine/kernels/Language.h"
#include "turbine/runtime/Runtime.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>

using namespace turbine;
using namespace turbine::examples;
using namespace turbine::kernels;

namespace {

/// The library's row softmax with M and N dynamic (BLOCK_N stays static).
Result<Kernel> dynamicSoftmax() {
  Symbol M("M"), N("N"), BLOCK_N("BLOCK_N");
  return trace("softmax_dyn", {M}, [&](KernelBuilder &k) {
    k.dynamic(M);
    k.dynamic(N, {/*max=*/4096});
    Buffer input = k.input("input", {M, N}, f32);
    Buffer output = k.output("output", {M, N}, f32);
    Expr row = program_id(0);
    Tile x = load(input, {row, 0}, {1, BLOCK_N}, masked(-INFINITY));
    Tile numerator = exp2((x - max(x)) * M_LOG2E);
    store(output, {row, 0}, numerator / sum(numerator), masked());
  });
}

/// The library's GEMM with M, N, K dynamic, each a multiple of `multiple`.
Result<Kernel> dynamicGemm(int64_t multiple) {
  Symbol M("M"), N("N"), K("K");
  Symbol BLOCK_M("BLOCK_M"), BLOCK_N("BLOCK_N"), BLOCK_K("BLOCK_K");
  return trace("gemm_dyn", {ceildiv(M, BLOCK_M), ceildiv(N, BLOCK_N)}, [&](KernelBuilder &k) {
    k.dynamic(M, {0, multiple});
    k.dynamic(N, {0, multiple});
    k.dynamic(K, {0, multiple});
    Buffer a = k.input("a", {M, K}, f32);
    Buffer b = k.input("b", {K, N}, f32);
    Buffer c = k.output("c", {M, N}, f32);
    Expr m = program_id(0) * BLOCK_M, n = program_id(1) * BLOCK_N;
    auto [acc] = for_loop(0, ceildiv(K, BLOCK_K), {constant(0.0, {BLOCK_M, BLOCK_N}, f32)},
                          [&](Expr kk, Tile &acc) {
      Tile ta = load(a, {m, kk * BLOCK_K}, {BLOCK_M, BLOCK_K}, masked());
      Tile tb = load(b, {kk * BLOCK_K, n}, {BLOCK_K, BLOCK_N}, masked());
      acc = dot(ta, tb, acc);
    });
    store(c, {m, n}, acc, masked());
  });
}

class DynamicDims : public ::testing::Test {
protected:
  void SetUp() override {
    setenv("TURBINE_CACHE_DIR", "", 1); // no disk cache: count compiles
    clearLaunchCache();
    resetLaunchStats();
  }
};

} // namespace

TEST_F(DynamicDims, SoftmaxCompilesOnceForManyShapes) {
  Result<Kernel> k = dynamicSoftmax();
  ASSERT_TRUE(k.ok()) << k.message();
  EXPECT_NE(k->print().find("kernel softmax_dyn grid[M] dynamic[M, N max 4096] ("),
            std::string::npos)
      << k->print();
  std::vector<std::array<int64_t, 2>> shapes = {{3, 5}, {7, 100}, {1, 128}, {64, 33}, {10, 1}, {2, 77}};
  for (auto [M, N] : shapes) {
    std::vector<float> x = randomValues(M * N, static_cast<unsigned>(M * 131 + N), -4, 4);
    auto in = f32Tensor(x, {M, N}), out = f32Zeros({M, N}), interp = f32Zeros({M, N});
    Status s = launch(*k, {in, out}, {{"BLOCK_N", 128}});
    ASSERT_TRUE(s.ok()) << s.message();
    EXPECT_LE(maxAbsError(valuesOf(out), softmaxReference(x, M, N)), 1e-6) << M << "x" << N;
    ASSERT_TRUE(interpret(*k, {in, interp}, {{"BLOCK_N", 128}}).ok());
    EXPECT_LE(maxAbsError(valuesOf(out), valuesOf(interp)), 1e-6);
  }
  EXPECT_EQ(launchStats().misses, 1);
  // Same shapes again: hits only.
  auto in = f32Tensor(randomValues(21, 1), {3, 7}), out = f32Zeros({3, 7});
  ASSERT_TRUE(launch(*k, {in, out}, {{"BLOCK_N", 128}}).ok());
  EXPECT_EQ(launchStats().misses, 1);
  // A new tile size is a new specialization.
  ASSERT_TRUE(launch(*k, {in, out}, {{"BLOCK_N", 8}}).ok());
  EXPECT_EQ(launchStats().misses, 2);
  EXPECT_LE(maxAbsError(valuesOf(out), softmaxReference(valuesOf(in), 3, 7)), 1e-6);
  // The bound is checked.
  auto wide = f32Zeros({1, 5000}), wideOut = f32Zeros({1, 5000});
  Status tooWide = launch(*k, {wide, wideOut}, {{"BLOCK_N", 8192}});
  ASSERT_FALSE(tooWide.ok());
  EXPECT_NE(tooWide.message().find("dynamic symbol 'N' = 5000 (from buffer 'input' dim 1) "
                                   "exceeds its bound (declared: max 4096"),
            std::string::npos)
      << tooWide.message();
}

TEST_F(DynamicDims, GemmCompilesOnceForManyShapes) {
  Result<Kernel> k = dynamicGemm(1);
  ASSERT_TRUE(k.ok()) << k.message();
  Bindings tiles = {{"BLOCK_M", 16}, {"BLOCK_N", 16}, {"BLOCK_K", 8}};
  std::vector<std::array<int64_t, 3>> shapes = {
      {33, 17, 21}, {64, 32, 16}, {5, 40, 7}, {16, 16, 16}, {1, 1, 1}, {50, 3, 64}};
  for (auto [M, N, K] : shapes) {
    std::vector<float> a = randomValues(M * K, 11), b = randomValues(K * N, 12);
    auto ta = f32Tensor(a, {M, K}), tb = f32Tensor(b, {K, N}), tc = f32Zeros({M, N});
    Status s = launch(*k, {ta, tb, tc}, tiles);
    ASSERT_TRUE(s.ok()) << s.message();
    EXPECT_LE(maxAbsError(valuesOf(tc), gemmReference(a, b, M, N, K)), 1e-5)
        << M << "x" << N << "x" << K;
  }
  // One compile; every other shape found the compiled kernel in memory.
  EXPECT_EQ(launchStats().misses, 1);
  EXPECT_EQ(launchStats().memoryHits, static_cast<int64_t>(shapes.size()) - 1);
}

TEST_F(DynamicDims, MultipleOfTheTileDropsMasksAndIsChecked) {
  Result<Kernel> k = dynamicGemm(16);
  ASSERT_TRUE(k.ok()) << k.message();
  Bindings tiles = {{"BLOCK_M", 16}, {"BLOCK_N", 16}, {"BLOCK_K", 16}};
  Result<Specialization> spec = specialize(
      *k, {{{32, 48}, f32}, {{48, 16}, f32}, {{32, 16}, f32}}, tiles);
  ASSERT_TRUE(spec.ok()) << spec.message();
  EXPECT_EQ(spec->key(), "gemm_dyn[BLOCK_K=16,BLOCK_M=16,BLOCK_N=16,K=?,M=?,N=?]");
  Result<std::string> text = emitKernelModule(*spec);
  ASSERT_TRUE(text.ok()) << text.message();
  // Dims come from the inputs and reach the kernel as push constants.
  EXPECT_NE(text->find("func.func @main(%arg0: tensor<?x?xf32>, %arg1: tensor<?x?xf32>) -> tensor<?x?xf32>"),
            std::string::npos)
      << *text;
  EXPECT_NE(text->find("turbine.push_constant %arg0[2]"), std::string::npos) << *text;
  EXPECT_NE(text->find("memref<?x?xf32>"), std::string::npos) << *text;
  // Every tile provably fits: no run-time test, no masked transfer.
  EXPECT_EQ(text->find("scf.if"), std::string::npos) << *text;
  // With tiles that do not divide the multiple, the masks stay.
  Result<Specialization> odd = specialize(
      *k, {{{32, 48}, f32}, {{48, 16}, f32}, {{32, 16}, f32}},
      {{"BLOCK_M", 32}, {"BLOCK_N", 16}, {"BLOCK_K", 16}});
  ASSERT_TRUE(odd.ok());
  Result<std::string> oddText = emitKernelModule(*odd);
  ASSERT_TRUE(oddText.ok());
  EXPECT_NE(oddText->find("scf.if"), std::string::npos);

  for (auto [M, N, K] : std::vector<std::array<int64_t, 3>>{
           {32, 48, 16}, {16, 16, 64}, {64, 16, 32}, {48, 32, 48}, {16, 64, 16}}) {
    std::vector<float> a = randomValues(M * K, 21), b = randomValues(K * N, 22);
    auto ta = f32Tensor(a, {M, K}), tb = f32Tensor(b, {K, N}), tc = f32Zeros({M, N});
    Status s = launch(*k, {ta, tb, tc}, tiles);
    ASSERT_TRUE(s.ok()) << s.message();
    EXPECT_LE(maxAbsError(valuesOf(tc), gemmReference(a, b, M, N, K)), 1e-5);
  }
  EXPECT_EQ(launchStats().misses, 1);
  auto ta = f32Zeros({20, 16}), tb = f32Zeros({16, 16}), tc = f32Zeros({20, 16});
  Status s = launch(*k, {ta, tb, tc}, tiles);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("dynamic symbol 'M' = 20 (from buffer 'a' dim 0) is not a "
                             "multiple of its multiple_of (declared: max none, multiple_of 16)"),
            std::string::npos)
      << s.message();
}

TEST_F(DynamicDims, TraceErrors) {
  Symbol M("M"), N("N");
  Result<Kernel> inTile = trace("bad_tile", {1}, [&](KernelBuilder &k) {
    k.dynamic(N);
    Buffer x = k.input("x", {N}, f32);
    Buffer y = k.output("y", {N}, f32);
    store(y, {0}, load(x, {0}, {N}), masked());
  });
  ASSERT_FALSE(inTile.ok());
  EXPECT_NE(inTile.message().find("kernel 'bad_tile': op #0 'load' on buffer 'x' has tile "
                                  "shape [N] with dynamic symbol 'N': tile shapes must be static"),
            std::string::npos)
      << inTile.message();

  Result<Kernel> outputOnly = trace("bad_source", {1}, [&](KernelBuilder &k) {
    k.dynamic(M);
    Buffer x = k.input("x", {4}, f32);
    Buffer y = k.output("y", {M}, f32);
    store(y, {0}, load(x, {0}, {4}), masked());
  });
  ASSERT_FALSE(outputOnly.ok());
  EXPECT_NE(outputOnly.message().find("dynamic symbol 'M' is not a dim of an input or inout buffer"),
            std::string::npos)
      << outputOnly.message();

  Result<Kernel> twice = trace("twice", {1}, [&](KernelBuilder &k) {
    k.dynamic(M);
    k.dynamic(M);
    k.input("x", {M}, f32);
  });
  ASSERT_FALSE(twice.ok());
  EXPECT_NE(twice.message().find("symbol 'M' is declared dynamic twice"), std::string::npos);

  Result<Kernel> notSymbol = trace("expr", {1}, [&](KernelBuilder &k) {
    k.dynamic(M + 1);
    k.input("x", {M}, f32);
  });
  ASSERT_FALSE(notSymbol.ok());
  EXPECT_NE(notSymbol.message().find("dynamic(M + 1): only a symbol can be dynamic"),
            std::string::npos)
      << notSymbol.message();
}

TEST_F(DynamicDims, TraceLocationsNameTheSource) {
  Result<Kernel> k = trace("located", {1}, [&](KernelBuilder &kb) {
    Buffer x = kb.input("x", {4}, f32);
    Buffer y = kb.input("y", {8}, f32);
    setTraceLocation("my_kernel.py:7");
    Tile a = load(x, {0}, {4});
    setTraceLocation("my_kernel.py:8");
    Tile b = load(y, {0}, {8});
    setTraceLocation("my_kernel.py:9");
    (void)(a + b);
    setTraceLocation("");
  });
  ASSERT_FALSE(k.ok());
  EXPECT_NE(k.message().find("kernel 'located': op #2 'add' at my_kernel.py:9: shape mismatch"),
            std::string::npos)
      << k.message();
  // A location set outside a trace does not leak into the next one.
  setTraceLocation("stale.py:1");
  Result<Kernel> plain = trace("plain", {1}, [&](KernelBuilder &kb) {
    Buffer x = kb.input("x", {4}, f32);
    (void)(load(x, {0}, {4}) + load(x, {0}, {2}));
  });
  ASSERT_FALSE(plain.ok());
  EXPECT_EQ(plain.message().find("stale.py"), std::string::npos) << plain.message();
  EXPECT_NE(plain.message().find("kernel 'plain': op #2 'add': shape mismatch"), std::string::npos)
      << plain.message();
}

namespace {
const char *kDynamicModel = R"mlir(
func.func private @softmax(tensor<3x20xf32>) -> tensor<3x20xf32>
    attributes {turbine.custom_op = "dynamic.softmax"}
func.func @main(%x: tensor<3x20xf32>) -> tensor<3x20xf32> {
  %s = func.call @softmax(%x) : (tensor<3x20xf32>) -> tensor<3x20xf32>
  return %s : tensor<3x20xf32>
}
)mlir";
} // namespace

TEST_F(DynamicDims, DynamicKernelAsCustomOpInAModel) {
  static Status registered = registerCustomOp(makeCustomOp(
      "dynamic.softmax",
      [](const std::vector<BufferSignature> &args, CustomOpSelection &out) {
        out.results = {args[0]};
        out.symbols = {{"BLOCK_N", 32}};
        return Status::success();
      },
      [](const CustomOpSelection &) { return dynamicSoftmax(); }));
  ASSERT_TRUE(registered.ok()) << registered.message();
  turbine::testing::ParsedModule c = turbine::testing::parseModule(kDynamicModel);
  ASSERT_TRUE(c.module);
  Status expanded = expandCustomOpCalls(*c.module);
  ASSERT_TRUE(expanded.ok()) << expanded.message();
  artifact::Module artifact;
  std::string error;
  ASSERT_TRUE(turbine::testing::compileToArtifact(*c.module, artifact, error)) << error;
  auto module = runtime::Module::loadFromBytes(artifact::serialize(artifact), "dyn");
  ASSERT_TRUE(module.ok()) << module.message();
  auto fn = (*module)->lookupFunction("main");
  ASSERT_TRUE(fn.ok());
  auto device = runtime::Device::create("local-sync");
  std::vector<float> x = randomValues(60, 9, -3, 3);
  auto results = fn->invoke(**device, {f32Tensor(x, {3, 20})});
  ASSERT_TRUE(results.ok()) << results.message();
  EXPECT_LE(maxAbsError(valuesOf((*results)[0]), softmaxReference(x, 3, 20)), 1e-6);
}
