//===- ExamplesTest.cpp - Example kernels vs plain C++ references ----------===//
//
// Each example kernel runs in the interpreter on shapes that are and are not
// multiples of its tile sizes and must match References.h (f32 tolerances:
// the interpreter rounds every op to f32; references compute in double).
//===----------------------------------------------------------------------===//
#include "ExampleSupport.h"
#include "turbine/kernels/KernelLibrary.h"
#include "References.h"

#include <gtest/gtest.h>

using namespace turbine::examples;
using namespace turbine::kernels::library;

namespace {
int64_t nextPow2(int64_t n) {
  int64_t p = 1;
  while (p < n)
    p *= 2;
  return p;
}
} // namespace

TEST(KernelExamples, Softmax) {
  Result<Kernel> k = softmaxKernel();
  ASSERT_TRUE(k.ok()) << k.message();
  for (auto [M, N] : std::vector<std::pair<int64_t, int64_t>>{{4, 64}, {5, 100}, {1, 1}}) {
    std::vector<float> x = randomValues(M * N, 7, -5.0f, 5.0f);
    auto in = f32Tensor(x, {M, N});
    auto out = f32Zeros({M, N});
    Status s = interpret(*k, {in, out}, {{"BLOCK_N", nextPow2(N)}});
    ASSERT_TRUE(s.ok()) << s.message();
    EXPECT_LE(maxAbsError(valuesOf(out), softmaxReference(x, M, N)), 1e-6)
        << "M=" << M << " N=" << N;
  }
}

TEST(KernelExamples, Gemm) {
  Result<Kernel> k = gemmKernel();
  ASSERT_TRUE(k.ok()) << k.message();
  for (auto [M, N, K] : std::vector<std::array<int64_t, 3>>{
           {32, 32, 32}, {33, 17, 40}, {5, 3, 7}, {16, 48, 1}}) {
    std::vector<float> a = randomValues(M * K, 1), b = randomValues(K * N, 2);
    auto ta = f32Tensor(a, {M, K}), tb = f32Tensor(b, {K, N});
    auto tc = f32Zeros({M, N});
    Status s = interpret(*k, {ta, tb, tc},
                         {{"BLOCK_M", 16}, {"BLOCK_N", 16}, {"BLOCK_K", 8}});
    ASSERT_TRUE(s.ok()) << s.message();
    EXPECT_LE(maxAbsError(valuesOf(tc), gemmReference(a, b, M, N, K)), 1e-5)
        << "M=" << M << " N=" << N << " K=" << K;
  }
}

TEST(KernelExamples, GemmF16InputsF32Accumulator) {
  Result<Kernel> k = gemmKernel(f16);
  ASSERT_TRUE(k.ok()) << k.message();
  int64_t M = 20, N = 24, K = 19;
  std::vector<float> a = randomValues(M * K, 3), b = randomValues(K * N, 4);
  auto ta = *turbine::runtime::Tensor::allocate(DType::f16, {M, K});
  auto tb = *turbine::runtime::Tensor::allocate(DType::f16, {K, N});
  for (int64_t i = 0; i < M * K; ++i) {
    ta.dataAs<_Float16>()[i] = static_cast<_Float16>(a[i]);
    a[i] = static_cast<float>(ta.dataAs<_Float16>()[i]);
  }
  for (int64_t i = 0; i < K * N; ++i) {
    tb.dataAs<_Float16>()[i] = static_cast<_Float16>(b[i]);
    b[i] = static_cast<float>(tb.dataAs<_Float16>()[i]);
  }
  auto tc = f32Zeros({M, N});
  Status s = interpret(*k, {ta, tb, tc}, {{"BLOCK_M", 8}, {"BLOCK_N", 8}, {"BLOCK_K", 8}});
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_LE(maxAbsError(valuesOf(tc), gemmReference(a, b, M, N, K)), 1e-5);
}

TEST(KernelExamples, Layernorm) {
  Result<Kernel> k = layernormKernel(1e-5);
  ASSERT_TRUE(k.ok()) << k.message();
  for (auto [M, N] : std::vector<std::pair<int64_t, int64_t>>{{3, 64}, {4, 77}}) {
    std::vector<float> x = randomValues(M * N, 5, -2.0f, 6.0f);
    std::vector<float> w = randomValues(N, 6), b = randomValues(N, 7);
    auto tx = f32Tensor(x, {M, N}), tw = f32Tensor(w, {N}), tb = f32Tensor(b, {N});
    auto ty = f32Zeros({M, N});
    Status s = interpret(*k, {tx, tw, tb, ty}, {{"BLOCK_N", nextPow2(N)}});
    ASSERT_TRUE(s.ok()) << s.message();
    EXPECT_LE(maxAbsError(valuesOf(ty), layernormReference(x, w, b, M, N, 1e-5)), 1e-5)
        << "M=" << M << " N=" << N;
  }
}

TEST(KernelExamples, Attention) {
  Result<Kernel> k = attentionKernel();
  ASSERT_TRUE(k.ok()) << k.message();
  for (auto [B, S, T, D] : std::vector<std::array<int64_t, 4>>{
           {1, 32, 32, 8}, {2, 19, 37, 16}, {1, 1, 5, 4}}) {
    std::vector<float> q = randomValues(B * S * D, 1, -2.0f, 2.0f);
    std::vector<float> kv = randomValues(B * T * D, 2, -2.0f, 2.0f);
    std::vector<float> v = randomValues(B * T * D, 3);
    auto tq = f32Tensor(q, {B, S, D}), tk = f32Tensor(kv, {B, T, D}),
         tv = f32Tensor(v, {B, T, D});
    auto to = f32Zeros({B, S, D});
    Status s = interpret(*k, {tq, tk, tv, to}, {{"BLOCK_M", 16}, {"BLOCK_N", 16}});
    ASSERT_TRUE(s.ok()) << s.message();
    EXPECT_LE(maxAbsError(valuesOf(to), attentionReference(q, kv, v, B, S, T, D)), 1e-5)
        << "B=" << B << " S=" << S << " T=" << T << " D=" << D;
  }
}
