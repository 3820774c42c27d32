//===- CustomOpModelTest.cpp - Custom ops inside a compiled model ----------===//
//
// A model in MLIR calls a registered custom op between two linalg ops; the
// call becomes its own dispatch in the artifact and the result matches a
// plain C++ computation.
//===----------------------------------------------------------------------===//
#include "ExampleSupport.h"
#include "Kernels.h"
#include "References.h"
#include "turbine/artifact/Module.h"
#include "turbine/compiler/Pipeline.h"
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

struct Compiled {
  std::unique_ptr<mlir::MLIRContext> context;
  mlir::OwningOpRef<mlir::ModuleOp> module;
};

Compiled parse(const std::string &text) {
  mlir::DialectRegistry registry;
  compiler::registerCompilerDialects(registry);
  Compiled c;
  c.context = std::make_unique<mlir::MLIRContext>(registry);
  c.context->loadAllAvailableDialects();
  c.module = mlir::parseSourceString<mlir::ModuleOp>(text, c.context.get());
  return c;
}

} // namespace

TEST(CustomOpInModel, BecomesItsOwnDispatch) {
  registerOnce();
  Compiled c = parse(kModel);
  ASSERT_TRUE(c.module);
  Status expanded = expandCustomOpCalls(*c.module);
  ASSERT_TRUE(expanded.ok()) << expanded.message();
  artifact::Module artifact;
  std::string error;
  ASSERT_TRUE(compiler::compileModule(*c.module, {}, &artifact, error)) << error;
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
  Compiled wrongResult = parse(R"mlir(
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

  Compiled unknown = parse(R"mlir(
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

  Compiled dynamic = parse(R"mlir(
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
