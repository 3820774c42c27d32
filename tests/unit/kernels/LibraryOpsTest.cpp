//===- LibraryOpsTest.cpp - The kernel library's ops, eager and in models -===//
//
// registerLibraryOps(): turbine.layer_norm with its eps attribute called
// eagerly and from a model (the call's turbine.custom_op_attributes), both
// against the C++ reference; turbine.matmul on f16 inputs (the kernel traced
// for the argument dtype); select errors and a non-number attribute.
//===----------------------------------------------------------------------===//
#include "ExampleSupport.h"
#include "ParseModule.h"
#include "References.h"
#include "turbine/artifact/Module.h"
#include "turbine/compiler/Session.h"
#include "turbine/kernels/CustomOpCalls.h"
#include "turbine/kernels/LibraryOps.h"
#include "turbine/runtime/Runtime.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include <gtest/gtest.h>

#include <cstdlib>

using namespace turbine;
using namespace turbine::examples;

namespace {


std::string layerNormModel(const std::string &attributes) {
  return R"mlir(
func.func private @ln(tensor<5x24xf32>, tensor<24xf32>, tensor<24xf32>) -> tensor<5x24xf32>
    attributes {turbine.custom_op = "turbine.layer_norm"}
func.func @main(%x: tensor<5x24xf32>, %w: tensor<24xf32>, %b: tensor<24xf32>) -> tensor<5x24xf32> {
  %y = func.call @ln(%x, %w, %b) )mlir" +
         attributes + R"mlir( : (tensor<5x24xf32>, tensor<24xf32>, tensor<24xf32>) -> tensor<5x24xf32>
  return %y : tensor<5x24xf32>
}
)mlir";
}

} // namespace

TEST(LibraryOps, LayerNormEpsEagerAndInModel) {
  setenv("TURBINE_CACHE_DIR", "", 1); // memory cache only for this process
  ASSERT_TRUE(kernels::registerLibraryOps().ok());
  ASSERT_TRUE(kernels::registerLibraryOps().ok()); // idempotent
  std::vector<float> x = randomValues(5 * 24, 1, -1, 1), w = randomValues(24, 2, 0.5, 1.5),
                     b = randomValues(24, 3, -1, 1);
  // A large eps so that a dropped attribute (default 1e-5) shows.
  std::vector<float> expected = layernormReference(x, w, b, 5, 24, 0.5);
  auto eager = kernels::callCustomOp("turbine.layer_norm",
                                     {f32Tensor(x, {5, 24}), f32Tensor(w, {24}), f32Tensor(b, {24})},
                                     nullptr, {{"eps", 0.5}});
  ASSERT_TRUE(eager.ok()) << eager.message();
  EXPECT_LE(maxAbsError(valuesOf((*eager)[0]), expected), 1e-5);

  turbine::testing::ParsedModule p = turbine::testing::parseModule(layerNormModel("{turbine.custom_op_attributes = {eps = 5.0e-01 : f64}}"));
  ASSERT_TRUE(p.module);
  kernels::Status expanded = kernels::expandCustomOpCalls(*p.module);
  ASSERT_TRUE(expanded.ok()) << expanded.message();
  artifact::Module artifact;
  std::string error;
  ASSERT_TRUE(turbine::testing::compileToArtifact(*p.module, artifact, error)) << error;
  auto loaded = runtime::Module::loadFromBytes(artifact::serialize(artifact));
  ASSERT_TRUE(loaded.ok()) << loaded.message();
  auto fn = (*loaded)->lookupFunction("main");
  ASSERT_TRUE(fn.ok()) << fn.message();
  auto device = runtime::Device::create("local-sync");
  ASSERT_TRUE(device.ok());
  auto out = fn->invoke(**device, {f32Tensor(x, {5, 24}), f32Tensor(w, {24}), f32Tensor(b, {24})});
  ASSERT_TRUE(out.ok()) << out.message();
  EXPECT_LE(maxAbsError(valuesOf((*out)[0]), expected), 1e-5);
}

TEST(LibraryOps, MatmulF16InF32Out) {
  setenv("TURBINE_CACHE_DIR", "", 1);
  ASSERT_TRUE(kernels::registerLibraryOps().ok());
  int64_t M = 9, K = 40, N = 7;
  std::vector<float> a = randomValues(M * K, 4, -1, 1), b = randomValues(K * N, 5, -1, 1);
  auto ta = *runtime::Tensor::allocate(DType::f16, {M, K});
  auto tb = *runtime::Tensor::allocate(DType::f16, {K, N});
  for (int64_t i = 0; i < M * K; ++i) {
    ta.dataAs<_Float16>()[i] = static_cast<_Float16>(a[i]);
    a[i] = static_cast<float>(ta.dataAs<_Float16>()[i]);
  }
  for (int64_t i = 0; i < K * N; ++i) {
    tb.dataAs<_Float16>()[i] = static_cast<_Float16>(b[i]);
    b[i] = static_cast<float>(tb.dataAs<_Float16>()[i]);
  }
  auto out = kernels::callCustomOp("turbine.matmul", {ta, tb});
  ASSERT_TRUE(out.ok()) << out.message();
  ASSERT_EQ((*out)[0].dtype(), DType::f32);
  EXPECT_LE(maxAbsError(valuesOf((*out)[0]), gemmReference(a, b, M, N, K)), 1e-5);
}

TEST(LibraryOps, Errors) {
  setenv("TURBINE_CACHE_DIR", "", 1);
  ASSERT_TRUE(kernels::registerLibraryOps().ok());
  auto bad = kernels::callCustomOp("turbine.softmax", {f32Tensor(randomValues(8, 6, -1, 1), {8})});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.message().find("custom op 'turbine.softmax': x must have rank 2, got 1"),
            std::string::npos)
      << bad.message();
  auto unknown = kernels::callCustomOp(
      "turbine.layer_norm",
      {f32Tensor(randomValues(8, 7, -1, 1), {2, 4}), f32Tensor(randomValues(4, 8, -1, 1), {4}),
       f32Tensor(randomValues(4, 9, -1, 1), {4})},
      nullptr, {{"epsilon", 0.1}});
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.message().find("unknown attribute 'epsilon'"), std::string::npos)
      << unknown.message();

  turbine::testing::ParsedModule p = turbine::testing::parseModule(layerNormModel("{turbine.custom_op_attributes = {eps = \"small\"}}"));
  ASSERT_TRUE(p.module);
  kernels::Status s = kernels::expandCustomOpCalls(*p.module);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("custom op 'turbine.layer_norm' at "), std::string::npos)
      << s.message();
  EXPECT_NE(s.message().find("attribute 'eps' is not a number"), std::string::npos)
      << s.message();
}
