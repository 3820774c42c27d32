//===- CustomOpModelTest.cpp - Custom ops inside a compiled model ----------===//
//
// A model in MLIR calls a registered custom op between two linalg ops; the
// call becomes its own dispatch in the artifact and the result matches a
// plain C++ computation.
//===----------------------------------------------------------------------===//
#include "ExampleSupport.h"
#include "turbine/kernels/KernelLibrary.h"
#include "ParseModule.h"
#include "References.h"
#include "turbine/artifact/Module.h"
#include "turbine/compiler/Session.h"
#include "turbine/kernels/CustomOpCalls.h"
#include "turbine/runtime/Runtime.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include <gtest/gtest.h>

#include <cstdlib>

using namespace turbine;
using namespace turbine::examples;
using namespace turbine::kernels::library;

namespace {

void registerOnce() {
  static bool done = [] {
    Status s = registerCustomOp(makeCustomOp(
        "model.softmax",
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
        [](const CustomOpSelection &) { return softmaxKernel(); }));
    return s.ok();
  }();
  ASSERT_TRUE(done);
}

const char *kModel = R"mlir(
func.func private @softmax(tensor<3x20xf32>) -> tensor<3x20xf32>
    attributes {turbine.custom_op = "model.softmax"}
func.func @main(%x: tensor<3x20xf32>) -> tensor<3x20xf32> {
  %e = tensor.empty() : tensor<3x20xf32>
  %d = linalg.add ins(%x, %x : tensor<3x20xf32>, tensor<3x20xf32>)
                  outs(%e : tensor<3x20xf32>) -> tensor<3x20xf32>
  %s = func.call @softmax(%d) : (tensor<3x20xf32>) -> tensor<3x20xf32>
  %e2 = tensor.empty() : tensor<3x20xf32>
  %r = linalg.mul ins(%s, %s : tensor<3x20xf32>, tensor<3x20xf32>)
                  outs(%e2 : tensor<3x20xf32>) -> tensor<3x20xf32>
  return %r : tensor<3x20xf32>
}
)mlir";

} // namespace

TEST(CustomOpInModel, BecomesItsOwnDispatch) {
  registerOnce();
  turbine::testing::ParsedModule c = turbine::testing::parseModule(kModel);
  ASSERT_TRUE(c.module);
  Status expanded = expandCustomOpCalls(*c.module);
  ASSERT_TRUE(expanded.ok()) << expanded.message();
  artifact::Module artifact;
  std::string error;
  ASSERT_TRUE(turbine::testing::compileToArtifact(*c.module, artifact, error)) << error;
  // add, the custom op, mul: the custom op is a kernel of its own.
  EXPECT_EQ(artifact.kernels.size(), 3u);
  bool found = false;
  for (const std::string &k : artifact.kernels)
    found |= k.find("model_softmax_softmax") != std::string::npos;
  EXPECT_TRUE(found);

  auto loaded = runtime::Module::loadFromBytes(artifact::serialize(artifact));
  ASSERT_TRUE(loaded.ok()) << loaded.message();
  auto fn = (*loaded)->lookupFunction("main");
  ASSERT_TRUE(fn.ok()) << fn.message();
  auto device = runtime::Device::create("local-sync");
  ASSERT_TRUE(device.ok());
  std::vector<float> x = randomValues(3 * 20, 11, -2, 2);
  auto out = fn->invoke(**device, {f32Tensor(x, {3, 20})});
  ASSERT_TRUE(out.ok()) << out.message();
  std::vector<float> doubled(x.size());
  for (size_t i = 0; i < x.size(); ++i)
    doubled[i] = 2 * x[i];
  std::vector<float> expected = softmaxReference(doubled, 3, 20);
  for (float &v : expected)
    v = v * v;
  EXPECT_LE(maxAbsError(valuesOf((*out)[0]), expected), 1e-6);
}

TEST(CustomOpInModel, ErrorsNameTheOpAndCall) {
  registerOnce();
  turbine::testing::ParsedModule wrongResult = turbine::testing::parseModule(R"mlir(
func.func private @softmax(tensor<3x20xf32>) -> tensor<3x21xf32>
    attributes {turbine.custom_op = "model.softmax"}
func.func @main(%x: tensor<3x20xf32>) -> tensor<3x21xf32> {
  %s = func.call @softmax(%x) : (tensor<3x20xf32>) -> tensor<3x21xf32>
  return %s : tensor<3x21xf32>
}
)mlir");
  ASSERT_TRUE(wrongResult.module);
  Status s = expandCustomOpCalls(*wrongResult.module);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("custom op 'model.softmax' at "), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("result 0 of the call disagrees"), std::string::npos) << s.message();

  turbine::testing::ParsedModule unknown = turbine::testing::parseModule(R"mlir(
func.func private @f(tensor<?x4xf32>) -> tensor<?x4xf32>
    attributes {turbine.custom_op = "model.unknown"}
func.func @main(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %s = func.call @f(%x) : (tensor<?x4xf32>) -> tensor<?x4xf32>
  return %s : tensor<?x4xf32>
}
)mlir");
  ASSERT_TRUE(unknown.module);
  Status u = expandCustomOpCalls(*unknown.module);
  ASSERT_FALSE(u.ok());
  EXPECT_NE(u.message().find("custom op 'model.unknown'"), std::string::npos);
  EXPECT_NE(u.message().find("not registered"), std::string::npos) << u.message();

  turbine::testing::ParsedModule dynamic = turbine::testing::parseModule(R"mlir(
func.func private @f(tensor<?x4xf32>) -> tensor<?x4xf32>
    attributes {turbine.custom_op = "model.softmax"}
func.func @main(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %s = func.call @f(%x) : (tensor<?x4xf32>) -> tensor<?x4xf32>
  return %s : tensor<?x4xf32>
}
)mlir");
  ASSERT_TRUE(dynamic.module);
  Status d = expandCustomOpCalls(*dynamic.module);
  ASSERT_FALSE(d.ok());
  EXPECT_NE(d.message().find("static shape"), std::string::npos) << d.message();
}

namespace {
/// "model.double": y = 2x for a 1-D f32 tensor, a hand-written MLIR kernel
/// with one workgroup per element.
void registerDoubleOnce() {
  static bool done = [] {
    Status s = registerCustomOp(makeMLIRCustomOp(
        "model.double",
        [](const std::vector<BufferSignature> &args, CustomOpSelection &out) {
          if (args.size() != 1 || args[0].shape.size() != 1 || args[0].dtype != f32)
            return Status::error("expects one 1-D f32 tensor");
          out.results = {args[0]};
          return Status::success();
        },
        [](const std::vector<BufferSignature> &args, const CustomOpSelection &)
            -> Result<MLIRKernelBody> {
          std::string m = "memref<" + std::to_string(args[0].shape[0]) + "xf32>";
          MLIRKernelBody body;
          body.function =
              "func.func @kernel(%state: !llvm.ptr, %x: index, %y: index, %z: index) {\n"
              "  %in = turbine.binding %state[0] : " + m + "\n"
              "  %out = turbine.binding %state[1] : " + m + "\n"
              "  %v = memref.load %in[%x] : " + m + "\n"
              "  %r = arith.addf %v, %v : f32\n"
              "  memref.store %r, %out[%x] : " + m + "\n"
              "  return\n}\n";
          body.grid = {args[0].shape[0], 1, 1};
          return body;
        }));
    return s.ok();
  }();
  ASSERT_TRUE(done);
}
} // namespace

TEST(CustomOpMLIRBody, EagerAndInAModel) {
  registerDoubleOnce();
  setenv("TURBINE_CACHE_DIR", "", 1);
  std::vector<float> x = {1, -2, 3.5f, 4, 5, 6, 7};
  auto eager = callCustomOp("model.double", {f32Tensor(x, {7})});
  ASSERT_TRUE(eager.ok()) << eager.message();
  EXPECT_EQ(valuesOf((*eager)[0]), (std::vector<float>{2, -4, 7, 8, 10, 12, 14}));

  turbine::testing::ParsedModule c = turbine::testing::parseModule(R"mlir(
func.func private @double(tensor<7xf32>) -> tensor<7xf32>
    attributes {turbine.custom_op = "model.double"}
func.func @main(%x: tensor<7xf32>) -> tensor<7xf32> {
  %d = func.call @double(%x) : (tensor<7xf32>) -> tensor<7xf32>
  %e = tensor.empty() : tensor<7xf32>
  %r = linalg.add ins(%d, %x : tensor<7xf32>, tensor<7xf32>)
                  outs(%e : tensor<7xf32>) -> tensor<7xf32>
  return %r : tensor<7xf32>
}
)mlir");
  ASSERT_TRUE(c.module);
  Status expanded = expandCustomOpCalls(*c.module);
  ASSERT_TRUE(expanded.ok()) << expanded.message();
  artifact::Module artifact;
  std::string error;
  ASSERT_TRUE(turbine::testing::compileToArtifact(*c.module, artifact, error)) << error;
  EXPECT_EQ(artifact.kernels.size(), 2u);
  auto loaded = runtime::Module::loadFromBytes(artifact::serialize(artifact));
  ASSERT_TRUE(loaded.ok()) << loaded.message();
  auto fn = (*loaded)->lookupFunction("main");
  ASSERT_TRUE(fn.ok());
  auto device = runtime::Device::create("local-sync");
  auto out = fn->invoke(**device, {f32Tensor(x, {7})});
  ASSERT_TRUE(out.ok()) << out.message();
  EXPECT_EQ(valuesOf((*out)[0]), (std::vector<float>{3, -6, 10.5f, 12, 15, 18, 21}));
}

TEST(CustomOpMLIRBody, InvalidBodyIsAnErrorNamingTheOp) {
  static bool once = [] {
    return registerCustomOp(makeMLIRCustomOp(
        "model.broken",
        [](const std::vector<BufferSignature> &args, CustomOpSelection &out) {
          out.results = {args[0]};
          return Status::success();
        },
        [](const std::vector<BufferSignature> &, const CustomOpSelection &)
            -> Result<MLIRKernelBody> {
          MLIRKernelBody body;
          body.function = "func.func @kernel(%state: !llvm.ptr, %x: index, %y: index, "
                          "%z: index) {\n  %v = arith.addf %x, %x : f32\n  return\n}\n";
          return body;
        })).ok();
  }();
  ASSERT_TRUE(once);
  setenv("TURBINE_CACHE_DIR", "", 1);
  auto r = callCustomOp("model.broken", {f32Zeros({4})});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.message().find("custom op 'model.broken'"), std::string::npos) << r.message();
  EXPECT_NE(r.message().find("the kernel module is invalid"), std::string::npos) << r.message();
}

namespace {
/// "model.add_one": y = x + 1 as a function on tensors (a tensor-level body):
/// inlined at the call in a model, compiled as its own model eagerly.
/// `wrongType` makes the body's type disagree with the call.
void registerAddOneOnce() {
  static bool done = [] {
    auto select = [](const std::vector<BufferSignature> &args, CustomOpSelection &out) {
      if (args.size() != 1 || args[0].dtype != f32)
        return Status::error("expects one f32 tensor");
      out.results = {args[0]};
      return Status::success();
    };
    auto body = [](int64_t n) {
      std::string t = "tensor<" + std::to_string(n) + "xf32>";
      return "func.func @add_one(%x: " + t + ") -> " + t + " {\n"
             "  %e = tensor.empty() : " + t + "\n"
             "  %one = arith.constant 1.0 : f32\n"
             "  %f = linalg.fill ins(%one : f32) outs(%e : " + t + ") -> " + t + "\n"
             "  %r = linalg.add ins(%x, %f : " + t + ", " + t + ") outs(%e : " + t + ") -> " + t + "\n"
             "  return %r : " + t + "\n}\n";
    };
    bool a = registerCustomOp(makeTensorCustomOp(
        "model.add_one", select,
        [body](const std::vector<BufferSignature> &args, const CustomOpSelection &)
            -> Result<std::string> { return body(args[0].shape[0]); })).ok();
    bool b = registerCustomOp(makeTensorCustomOp(
        "model.add_one_wrong", select,
        [body](const std::vector<BufferSignature> &args, const CustomOpSelection &)
            -> Result<std::string> { return body(args[0].shape[0] + 1); })).ok();
    return a && b;
  }();
  ASSERT_TRUE(done);
}
} // namespace

TEST(CustomOpTensorBody, EagerAndFusedInAModel) {
  registerAddOneOnce();
  setenv("TURBINE_CACHE_DIR", "", 1);
  std::vector<float> x = {1, -2, 3.5f, 4, 5, 6, 7};
  auto eager = callCustomOp("model.add_one", {f32Tensor(x, {7})});
  ASSERT_TRUE(eager.ok()) << eager.message();
  EXPECT_EQ(valuesOf((*eager)[0]), (std::vector<float>{2, -1, 4.5f, 5, 6, 7, 8}));

  turbine::testing::ParsedModule c = turbine::testing::parseModule(R"mlir(
func.func private @add_one(tensor<7xf32>) -> tensor<7xf32>
    attributes {turbine.custom_op = "model.add_one"}
func.func @main(%x: tensor<7xf32>) -> tensor<7xf32> {
  %e = tensor.empty() : tensor<7xf32>
  %d = linalg.mul ins(%x, %x : tensor<7xf32>, tensor<7xf32>)
                  outs(%e : tensor<7xf32>) -> tensor<7xf32>
  %r = func.call @add_one(%d) : (tensor<7xf32>) -> tensor<7xf32>
  return %r : tensor<7xf32>
}
)mlir");
  ASSERT_TRUE(c.module);
  Status expanded = expandCustomOpCalls(*c.module);
  ASSERT_TRUE(expanded.ok()) << expanded.message();
  artifact::Module artifact;
  std::string error;
  ASSERT_TRUE(turbine::testing::compileToArtifact(*c.module, artifact, error)) << error;
  // x * x and the op's x + 1: one kernel (the body was inlined and fused).
  EXPECT_EQ(artifact.kernels.size(), 1u);
  auto loaded = runtime::Module::loadFromBytes(artifact::serialize(artifact));
  ASSERT_TRUE(loaded.ok()) << loaded.message();
  auto fn = (*loaded)->lookupFunction("main");
  ASSERT_TRUE(fn.ok());
  auto device = runtime::Device::create("local-sync");
  auto out = fn->invoke(**device, {f32Tensor(x, {7})});
  ASSERT_TRUE(out.ok()) << out.message();
  EXPECT_EQ(valuesOf((*out)[0]), (std::vector<float>{2, 5, 13.25f, 17, 26, 37, 50}));

  turbine::testing::ParsedModule wrong = turbine::testing::parseModule(R"mlir(
func.func private @add_one(tensor<7xf32>) -> tensor<7xf32>
    attributes {turbine.custom_op = "model.add_one_wrong"}
func.func @main(%x: tensor<7xf32>) -> tensor<7xf32> {
  %r = func.call @add_one(%x) : (tensor<7xf32>) -> tensor<7xf32>
  return %r : tensor<7xf32>
}
)mlir");
  ASSERT_TRUE(wrong.module);
  Status bad = expandCustomOpCalls(*wrong.module);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.message().find("custom op 'model.add_one_wrong'"), std::string::npos) << bad.message();
  EXPECT_NE(bad.message().find("the tensor-level body has type (tensor<8xf32>) -> tensor<8xf32>, "
                               "the call has type (tensor<7xf32>) -> tensor<7xf32>"),
            std::string::npos)
      << bad.message();
}
