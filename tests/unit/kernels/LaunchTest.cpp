//===- LaunchTest.cpp - Compiled kernels: correctness, caches, errors ------===//
//
// Every example kernel compiled and launched eagerly must agree with the
// interpreter and the C++ reference on shapes that are and are not
// multiples of the tile sizes. The caches are checked through the counters:
// memory hits, a disk hit after the memory cache is dropped, and a corrupted
// disk entry that is detected and rebuilt.
//===----------------------------------------------------------------------===//
#include "ExampleSupport.h"
#include "turbine/kernels/KernelLibrary.h"
#include "References.h"
#include "turbine/kernels/Launch.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <dirent.h>
#include <string>

using namespace turbine::examples;
using namespace turbine::kernels::library;

namespace {

/// A fresh cache directory for this test process.
class LaunchTest : public ::testing::Test {
protected:
  void SetUp() override {
    char tmpl[] = "/tmp/turbine-kernel-cache-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    setenv("TURBINE_CACHE_DIR", dir_.c_str(), 1);
    clearLaunchCache();
    resetLaunchStats();
  }
  void TearDown() override {
    std::string cmd = "rm -rf '" + dir_ + "'";
    (void)std::system(cmd.c_str());
  }
  /// Paths of the disk cache entries.
  std::vector<std::string> entries() const {
    std::vector<std::string> out;
    std::string sub = dir_ + "/kernels";
    if (DIR *d = opendir(sub.c_str())) {
      while (dirent *e = readdir(d))
        if (std::string(e->d_name).find(".tmod") != std::string::npos)
          out.push_back(sub + "/" + e->d_name);
      closedir(d);
    }
    return out;
  }
  std::string dir_;
};

} // namespace

TEST_F(LaunchTest, GemmCompiledMatchesInterpreterAndReference) {
  Result<Kernel> k = gemmKernel();
  ASSERT_TRUE(k.ok()) << k.message();
  Bindings tiles = {{"BLOCK_M", 16}, {"BLOCK_N", 16}, {"BLOCK_K", 8}};
  for (auto [M, N, K] : std::vector<std::array<int64_t, 3>>{{32, 32, 16}, {33, 17, 21}}) {
    std::vector<float> a = randomValues(M * K, 1), b = randomValues(K * N, 2);
    auto ta = f32Tensor(a, {M, K}), tb = f32Tensor(b, {K, N});
    auto interp = f32Zeros({M, N}), compiled = f32Zeros({M, N});
    ASSERT_TRUE(interpret(*k, {ta, tb, interp}, tiles).ok());
    Status s = launch(*k, {ta, tb, compiled}, tiles);
    ASSERT_TRUE(s.ok()) << s.message();
    EXPECT_LE(maxAbsError(valuesOf(compiled), gemmReference(a, b, M, N, K)), 1e-5);
    EXPECT_LE(maxAbsError(valuesOf(compiled), valuesOf(interp)), 1e-5);
  }
}

TEST_F(LaunchTest, GemmF16InputsF32AccumulatorCompiled) {
  Result<Kernel> k = gemmKernel(f16);
  ASSERT_TRUE(k.ok()) << k.message();
  int64_t M = 20, N = 24, K = 19;
  auto ta = *turbine::runtime::Tensor::allocate(DType::f16, {M, K});
  auto tb = *turbine::runtime::Tensor::allocate(DType::f16, {K, N});
  std::vector<float> a = randomValues(M * K, 3), b = randomValues(K * N, 4);
  for (int64_t i = 0; i < M * K; ++i) {
    ta.dataAs<_Float16>()[i] = static_cast<_Float16>(a[i]);
    a[i] = static_cast<float>(ta.dataAs<_Float16>()[i]);
  }
  for (int64_t i = 0; i < K * N; ++i) {
    tb.dataAs<_Float16>()[i] = static_cast<_Float16>(b[i]);
    b[i] = static_cast<float>(tb.dataAs<_Float16>()[i]);
  }
  auto tc = f32Zeros({M, N});
  Status s = launch(*k, {ta, tb, tc}, {{"BLOCK_M", 8}, {"BLOCK_N", 8}, {"BLOCK_K", 8}});
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_LE(maxAbsError(valuesOf(tc), gemmReference(a, b, M, N, K)), 1e-5);
}

TEST_F(LaunchTest, SoftmaxLayernormAttentionCompiled) {
  {
    Result<Kernel> k = softmaxKernel();
    ASSERT_TRUE(k.ok());
    int64_t M = 5, N = 100;
    std::vector<float> x = randomValues(M * N, 3, -4, 4);
    auto in = f32Tensor(x, {M, N}), out = f32Zeros({M, N});
    Status s = launch(*k, {in, out}, {{"BLOCK_N", 128}});
    ASSERT_TRUE(s.ok()) << s.message();
    EXPECT_LE(maxAbsError(valuesOf(out), softmaxReference(x, M, N)), 1e-6);
  }
  {
    Result<Kernel> k = layernormKernel(1e-5);
    ASSERT_TRUE(k.ok());
    int64_t M = 4, N = 77;
    std::vector<float> x = randomValues(M * N, 4, -2, 6), w = randomValues(N, 5),
                       b = randomValues(N, 6);
    auto tx = f32Tensor(x, {M, N}), tw = f32Tensor(w, {N}), tb = f32Tensor(b, {N});
    auto ty = f32Zeros({M, N});
    Status s = launch(*k, {tx, tw, tb, ty}, {{"BLOCK_N", 128}});
    ASSERT_TRUE(s.ok()) << s.message();
    EXPECT_LE(maxAbsError(valuesOf(ty), layernormReference(x, w, b, M, N, 1e-5)), 1e-5);
  }
  {
    Result<Kernel> k = attentionKernel();
    ASSERT_TRUE(k.ok());
    int64_t B = 2, S = 19, T = 37, D = 16;
    std::vector<float> q = randomValues(B * S * D, 7), kv = randomValues(B * T * D, 8),
                       v = randomValues(B * T * D, 9);
    auto tq = f32Tensor(q, {B, S, D}), tk = f32Tensor(kv, {B, T, D}),
         tv = f32Tensor(v, {B, T, D}), to = f32Zeros({B, S, D});
    Status s = launch(*k, {tq, tk, tv, to}, {{"BLOCK_M", 16}, {"BLOCK_N", 16}});
    ASSERT_TRUE(s.ok()) << s.message();
    EXPECT_LE(maxAbsError(valuesOf(to), attentionReference(q, kv, v, B, S, T, D)), 1e-5);
  }
}

TEST_F(LaunchTest, MemoryAndDiskCacheCounters) {
  Result<Kernel> k = softmaxKernel();
  ASSERT_TRUE(k.ok());
  auto in = f32Tensor(randomValues(3 * 8, 1), {3, 8}), out = f32Zeros({3, 8});
  Bindings sym = {{"BLOCK_N", 8}};
  ASSERT_TRUE(launch(*k, {in, out}, sym).ok());
  ASSERT_TRUE(launch(*k, {in, out}, sym).ok());
  LaunchStats st = launchStats();
  EXPECT_EQ(st.misses, 1);
  EXPECT_EQ(st.memoryHits, 1);
  EXPECT_GT(st.compileMillis, 0.0);
  ASSERT_EQ(entries().size(), 1u);
  // A new specialization (another M) compiles again.
  auto in2 = f32Tensor(randomValues(4 * 8, 1), {4, 8}), out2 = f32Zeros({4, 8});
  ASSERT_TRUE(launch(*k, {in2, out2}, sym).ok());
  EXPECT_EQ(launchStats().misses, 2);
  // As a new process would: memory cache empty, disk entry used.
  clearLaunchCache();
  ASSERT_TRUE(launch(*k, {in, out}, sym).ok());
  EXPECT_EQ(launchStats().diskHits, 1);
  EXPECT_EQ(launchStats().misses, 2);
  EXPECT_LE(maxAbsError(valuesOf(out), softmaxReference(valuesOf(in), 3, 8)), 1e-6);
}

TEST_F(LaunchTest, CorruptDiskEntryIsRebuilt) {
  Result<Kernel> k = softmaxKernel();
  ASSERT_TRUE(k.ok());
  std::vector<float> x = randomValues(2 * 16, 5);
  auto in = f32Tensor(x, {2, 16}), out = f32Zeros({2, 16});
  Bindings sym = {{"BLOCK_N", 16}};
  ASSERT_TRUE(launch(*k, {in, out}, sym).ok());
  std::vector<std::string> files = entries();
  ASSERT_EQ(files.size(), 1u);
  // Flip a byte in the middle of the entry (inside the checksummed part).
  FILE *f = std::fopen(files[0].c_str(), "r+b");
  ASSERT_NE(f, nullptr);
  std::fseek(f, 0, SEEK_END);
  long size = std::ftell(f);
  std::fseek(f, size / 2, SEEK_SET);
  int c = std::fgetc(f);
  std::fseek(f, size / 2, SEEK_SET);
  std::fputc(c ^ 0xff, f);
  std::fclose(f);
  clearLaunchCache();
  resetLaunchStats();
  out = f32Zeros({2, 16});
  Status s = launch(*k, {in, out}, sym);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(launchStats().corruptEntries, 1);
  EXPECT_EQ(launchStats().diskHits, 0);
  EXPECT_EQ(launchStats().misses, 1);
  EXPECT_LE(maxAbsError(valuesOf(out), softmaxReference(x, 2, 16)), 1e-6);
  // The rebuilt entry is valid again.
  clearLaunchCache();
  ASSERT_TRUE(launch(*k, {in, out}, sym).ok());
  EXPECT_EQ(launchStats().diskHits, 1);
}

TEST_F(LaunchTest, ErrorsNameTheKernel) {
  Result<Kernel> k = gemmKernel();
  ASSERT_TRUE(k.ok());
  auto a = f32Zeros({4, 4}), b = f32Zeros({4, 4}), c = f32Zeros({4, 4});
  Status unbound = launch(*k, {a, b, c}, {{"BLOCK_M", 4}, {"BLOCK_N", 4}});
  ASSERT_FALSE(unbound.ok());
  EXPECT_NE(unbound.message().find("kernel 'gemm'"), std::string::npos) << unbound.message();
  EXPECT_NE(unbound.message().find("unbound symbol 'BLOCK_K'"), std::string::npos);

  Result<Kernel> i1Kernel = trace("flags", {1}, [&](KernelBuilder &kb) {
    Buffer x = kb.input("x", {4}, f32);
    Buffer f = kb.output("f", {4}, i1);
    store(f, {0}, load(x, {0}, {4}) > 0.0);
  });
  ASSERT_TRUE(i1Kernel.ok()) << i1Kernel.message();
  Status s = launch(*i1Kernel, {f32Zeros({4}), *turbine::runtime::Tensor::zeros(DType::i1, {4})});
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("kernel 'flags': buffer 'f': dtype i1 is not supported"),
            std::string::npos) << s.message();
}

TEST_F(LaunchTest, InOutBufferIsUpdatedInPlace) {
  Symbol N("N"), BLOCK("BLOCK");
  Result<Kernel> k = trace("scale_in_place", {ceildiv(N, BLOCK)}, [&](KernelBuilder &kb) {
    Buffer x = kb.inout("x", {N}, f32);
    Buffer y = kb.output("y", {N}, f32);
    Expr at = program_id(0) * BLOCK;
    Tile t = load(x, {at}, {BLOCK}, masked());
    store(x, {at}, t * 2.0, masked());
    store(y, {at}, t + 1.0, masked());
  });
  ASSERT_TRUE(k.ok()) << k.message();
  std::vector<float> values = {1, 2, 3, 4, 5, 6, 7};
  auto x = f32Tensor(values, {7}), y = f32Zeros({7});
  auto xi = f32Tensor(values, {7}), yi = f32Zeros({7});
  Status s = launch(*k, {x, y}, {{"BLOCK", 4}});
  ASSERT_TRUE(s.ok()) << s.message();
  ASSERT_TRUE(interpret(*k, {xi, yi}, {{"BLOCK", 4}}).ok());
  EXPECT_EQ(valuesOf(x), (std::vector<float>{2, 4, 6, 8, 10, 12, 14}));
  EXPECT_EQ(valuesOf(y), (std::vector<float>{2, 3, 4, 5, 6, 7, 8}));
  EXPECT_EQ(valuesOf(x), valuesOf(xi));
  EXPECT_EQ(valuesOf(y), valuesOf(yi));
}

// A masked load of a [1, BLOCK, D] tile (leading unit dim) whose rows pass
// the buffer's end must read the padding there: summing the rows of V in
// tiles of 16 over T = 53 (a partial last tile) gives the column sums.
// (A regression: the codegen phase once left such rows undefined.)
TEST_F(LaunchTest, PartialTilesOfRank3MaskedLoadsReadThePadding) {
  Symbol B("B"), T("T"), D("D"), BN("BN");
  Result<Kernel> k = trace("column_sums", {B}, [&](KernelBuilder &kb) {
    Buffer v = kb.input("v", {B, T, D}, f32);
    Buffer o = kb.output("o", {B, 1, D}, f32);
    Expr b = program_id(0);
    auto [acc] = for_loop(0, ceildiv(T, BN), {constant(0.0, {1, D}, f32)},
                          [&](Expr j, Tile &acc) {
      Tile vt = reshape(load(v, {b, j * BN, 0}, {1, BN, D}, masked()), {BN, D});
      acc = dot(constant(1.0, {1, BN}, f32), vt, acc);
    });
    store(o, {b, 0, 0}, reshape(acc, {1, 1, D}));
  });
  ASSERT_TRUE(k.ok()) << k.message();
  for (int64_t T_ : {48, 53}) {
    std::vector<float> v = randomValues(2 * T_ * 32, 5);
    auto tv = f32Tensor(v, {2, T_, 32}), to = f32Zeros({2, 1, 32});
    Status s = launch(*k, {tv, to}, {{"BN", 16}});
    ASSERT_TRUE(s.ok()) << s.message();
    std::vector<float> expected(2 * 32, 0.0f);
    for (int64_t b = 0; b < 2; ++b)
      for (int64_t t = 0; t < T_; ++t)
        for (int64_t d = 0; d < 32; ++d)
          expected[b * 32 + d] += v[(b * T_ + t) * 32 + d];
    EXPECT_LE(maxAbsError(valuesOf(to), expected), 1e-4) << "T = " << T_;
  }
}
