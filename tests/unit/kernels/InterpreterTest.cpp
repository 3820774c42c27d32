//===- InterpreterTest.cpp - Reference semantics: masks, bounds, ops -------===//
#include "ExampleSupport.h"
#include "turbine/kernels/Interpreter.h"
#include "turbine/kernels/Language.h"

#include <gtest/gtest.h>

using namespace turbine::kernels;
using namespace turbine::examples;

namespace {
Symbol M("M"), N("N"), BLOCK("BLOCK");

/// copy: y[i*BLOCK ..] = x[i*BLOCK ..] * 2 over ceildiv(N, BLOCK) workgroups.
Result<Kernel> scaleKernel(bool maskLoad, bool maskStore) {
  return trace("scale", {ceildiv(N, BLOCK)}, [&](KernelBuilder &k) {
    Buffer x = k.input("x", {N}, f32);
    Buffer y = k.output("y", {N}, f32);
    Expr at = program_id(0) * BLOCK;
    Tile t = maskLoad ? load(x, {at}, {BLOCK}, masked(100.0)) : load(x, {at}, {BLOCK});
    if (maskStore)
      store(y, {at}, t * 2.0, masked());
    else
      store(y, {at}, t * 2.0);
  });
}
} // namespace

TEST(Interpreter, MaskedLoadAndStoreHandlePartialTiles) {
  Result<Kernel> k = scaleKernel(true, true);
  ASSERT_TRUE(k.ok()) << k.message();
  std::vector<float> x = {1, 2, 3, 4, 5, 6, 7};
  auto tx = f32Tensor(x, {7});
  auto ty = f32Tensor(std::vector<float>(7, -1.0f), {7});
  Status s = interpret(*k, {tx, ty}, {{"BLOCK", 4}});
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(valuesOf(ty), (std::vector<float>{2, 4, 6, 8, 10, 12, 14}));
}

TEST(Interpreter, MaskedLoadFillsPadding) {
  // Sum of a padded tile shows the padding value (100) was used.
  auto k = trace("padsum", {1}, [&](KernelBuilder &b) {
    Buffer x = b.input("x", {N}, f32);
    Buffer y = b.output("y", {1}, f32);
    store(y, {0}, sum(load(x, {2}, {4}, masked(100.0))));
  });
  ASSERT_TRUE(k.ok()) << k.message();
  auto tx = f32Tensor({1, 2, 3, 4}, {4});
  auto ty = f32Zeros({1});
  ASSERT_TRUE(interpret(*k, {tx, ty}).ok());
  EXPECT_EQ(valuesOf(ty)[0], 3 + 4 + 100 + 100);
}

TEST(Interpreter, UnmaskedOutOfBoundsLoadIsAnError) {
  Result<Kernel> k = scaleKernel(false, true);
  ASSERT_TRUE(k.ok());
  auto tx = f32Zeros({7});
  auto ty = f32Zeros({7});
  Status s = interpret(*k, {tx, ty}, {{"BLOCK", 4}});
  ASSERT_FALSE(s.ok());
  for (const char *part : {"kernel 'scale'", "op #0 'load' on buffer 'x'",
                           "out-of-bounds load of element [7]",
                           "buffer shape [7]", "tile offset [4]",
                           "program_id [1, 0, 0]", "masked()"})
    EXPECT_NE(s.message().find(part), std::string::npos)
        << s.message() << "\nmissing: " << part;
}

TEST(Interpreter, UnmaskedOutOfBoundsStoreIsAnError) {
  Result<Kernel> k = scaleKernel(true, false);
  ASSERT_TRUE(k.ok());
  auto tx = f32Zeros({7});
  auto ty = f32Zeros({7});
  Status s = interpret(*k, {tx, ty}, {{"BLOCK", 4}});
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("'store' on buffer 'y': out-of-bounds store of element [7]"),
            std::string::npos) << s.message();
  // Exact multiples need no mask.
  auto tx8 = f32Zeros({8}), ty8 = f32Zeros({8});
  EXPECT_TRUE(interpret(*k, {tx8, ty8}, {{"BLOCK", 4}}).ok());
}

TEST(Interpreter, RoundsToTheResultDType) {
  auto k = trace("round", {1}, [&](KernelBuilder &b) {
    Buffer x = b.input("x", {N}, f32);
    Buffer h = b.output("h", {N}, f16);
    Buffer bf = b.output("bf", {N}, bf16);
    Buffer i = b.output("i", {N}, i32);
    Tile t = load(x, {0}, {N});
    store(h, {0}, to_dtype(t, f16));
    store(bf, {0}, to_dtype(t, bf16));
    store(i, {0}, to_dtype(t, i32));
  });
  ASSERT_TRUE(k.ok()) << k.message();
  auto tx = f32Tensor({1.0f + 1.0f / 4096, -2.75f, 1.0f + 1.0f / 256}, {3});
  auto th = *turbine::runtime::Tensor::zeros(DType::f16, {3});
  auto tb = *turbine::runtime::Tensor::zeros(DType::bf16, {3});
  auto ti = *turbine::runtime::Tensor::zeros(DType::i32, {3});
  Status s = interpret(*k, {tx, th, tb, ti});
  ASSERT_TRUE(s.ok()) << s.message();
  const _Float16 *hv = th.dataAs<_Float16>();
  EXPECT_EQ(static_cast<float>(hv[0]), 1.0f); // 1 + 2^-12 rounds to 1 in f16
  EXPECT_EQ(static_cast<float>(hv[1]), -2.75f);
  const uint16_t *bv = tb.dataAs<uint16_t>();
  EXPECT_EQ(bv[2], 0x3f80); // 1 + 2^-8 ties to even -> 1.0 in bf16
  EXPECT_EQ(ti.dataAs<int32_t>()[1], -2); // truncation toward zero
}

TEST(Interpreter, TransposeReshapeIotaSelectLoop) {
  // y = transpose(x) masked to the upper triangle, plus a loop that adds
  // k (0..3) to a carried tile: result = x^T * (col >= row) + 6.
  auto k = trace("mix", {1}, [&](KernelBuilder &b) {
    Buffer x = b.input("x", {2, 3}, f32);
    Buffer y = b.output("y", {3, 2}, f32);
    Tile t = transpose(load(x, {0, 0}, {2, 3}));
    Tile keep = iota({3, 2}, 1) >= iota({3, 2}, 0);
    Tile masked_t = select(keep, t, 0.0);
    auto [acc] = for_loop(0, 4, {reshape(masked_t, {6})}, [&](Expr i, Tile &acc) {
      acc = acc + constant(i, f32);
    });
    store(y, {0, 0}, reshape(acc, {3, 2}));
  });
  ASSERT_TRUE(k.ok()) << k.message();
  auto tx = f32Tensor({1, 2, 3, 4, 5, 6}, {2, 3});
  auto ty = f32Zeros({3, 2});
  Status s = interpret(*k, {tx, ty});
  ASSERT_TRUE(s.ok()) << s.message();
  // x^T = [[1,4],[2,5],[3,6]]; keep col >= row: [[1,4],[0,5],[0,0]]
  EXPECT_EQ(valuesOf(ty), (std::vector<float>{7, 10, 6, 11, 6, 6}));
}

TEST(Interpreter, RejectsBuffersThatDoNotMatch) {
  Result<Kernel> k = scaleKernel(true, true);
  ASSERT_TRUE(k.ok());
  auto tx = f32Zeros({7}), ty = f32Zeros({8});
  Status s = interpret(*k, {tx, ty}, {{"BLOCK", 4}});
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("symbol 'N' is 8 from buffer 'y' dim 0 but 7"),
            std::string::npos) << s.message();
}
