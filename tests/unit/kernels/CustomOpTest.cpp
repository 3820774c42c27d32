//===- CustomOpTest.cpp - Kernel-backed custom ops: select/generate/call ---===//
#include "ExampleSupport.h"
#include "turbine/kernels/KernelLibrary.h"
#include "References.h"
#include "turbine/kernels/CustomOp.h"

#include <gtest/gtest.h>

#include <cstdlib>

using namespace turbine::examples;
using namespace turbine::kernels::library;

namespace {

/// "test.softmax": rows of a 2-D f32 tensor; BLOCK_N = next power of 2.
std::shared_ptr<const CustomOp> softmaxOp() {
  return makeCustomOp(
      "test.softmax",
      [](const std::vector<BufferSignature> &args, CustomOpSelection &out) {
        if (args.size() != 1 || args[0].shape.size() != 2 || args[0].dtype != f32)
          return Status::error("expects one 2-D f32 tensor");
        int64_t block = 1;
        while (block < args[0].shape[1])
          block *= 2;
        out.results = {args[0]};
        out.symbols = {{"BLOCK_N", block}};
        return Status::success();
      },
      [](const CustomOpSelection &) { return softmaxKernel(); });
}

class CustomOpTest : public ::testing::Test {
protected:
  static void SetUpTestSuite() {
    setenv("TURBINE_CACHE_DIR", "", 1); // memory cache only for this process
    ASSERT_TRUE(registerCustomOp(softmaxOp()).ok());
  }
};

} // namespace

TEST_F(CustomOpTest, CallsTheKernelEagerly) {
  for (auto [M, N] : std::vector<std::pair<int64_t, int64_t>>{{3, 10}, {2, 64}}) {
    std::vector<float> x = randomValues(M * N, 3, -3, 3);
    auto results = callCustomOp("test.softmax", {f32Tensor(x, {M, N})});
    ASSERT_TRUE(results.ok()) << results.message();
    ASSERT_EQ(results->size(), 1u);
    EXPECT_EQ((*results)[0].shape(), (std::vector<int64_t>{M, N}));
    EXPECT_LE(maxAbsError(valuesOf((*results)[0]), softmaxReference(x, M, N)), 1e-6);
  }
}

TEST_F(CustomOpTest, Errors) {
  auto wrong = callCustomOp("test.softmax", {f32Zeros({4})});
  ASSERT_FALSE(wrong.ok());
  EXPECT_EQ(wrong.message(), "custom op 'test.softmax': expects one 2-D f32 tensor");
  auto unknown = callCustomOp("test.nope", {});
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.message().find("custom op 'test.nope' is not registered (registered: "),
            std::string::npos) << unknown.message();
  Status twice = registerCustomOp(softmaxOp());
  ASSERT_FALSE(twice.ok());
  EXPECT_EQ(twice.message(), "custom op 'test.softmax' is already registered");
  // generate() must give a kernel whose buffers are args then results.
  ASSERT_TRUE(registerCustomOp(makeCustomOp(
      "test.mismatch",
      [](const std::vector<BufferSignature> &args, CustomOpSelection &out) {
        out.results = {args[0], args[0]};
        return Status::success();
      },
      [](const CustomOpSelection &) { return softmaxKernel(); })).ok());
  auto mismatch = callCustomOp("test.mismatch", {f32Zeros({2, 2})});
  ASSERT_FALSE(mismatch.ok());
  EXPECT_NE(mismatch.message().find("has 2 buffers, expected 1 arguments + 2 results"),
            std::string::npos) << mismatch.message();
}
