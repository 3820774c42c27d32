//===- CustomOpOnnxTest.cpp - ONNX nodes of a custom domain -> custom ops --===//
//
// An ONNX model (built here with the ONNX protobuf API) uses a node of domain
// "turbine.test" between two standard ops; the importer turns it into a
// custom-op call, expandCustomOpCalls into a dispatch of the registered
// kernel, and the compiled model matches a plain C++ computation.
//===----------------------------------------------------------------------===//
#include "ExampleSupport.h"
#include "turbine/kernels/KernelLibrary.h"
#include "References.h"
#include "turbine/artifact/Module.h"
#include "turbine/compiler/Session.h"
#include "turbine/frontends/onnx/OnnxImporter.h"
#include "../UnpackResult.h"
#include "ParseModule.h"
#include "turbine/kernels/CustomOpCalls.h"
#include "turbine/runtime/Runtime.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"

#include "onnx/onnx_pb.h"

#include <gtest/gtest.h>

using namespace turbine;
using namespace turbine::examples;
using namespace turbine::kernels::library;

namespace {

void setTensorType(onnx::ValueInfoProto *info, const std::string &name,
                   std::vector<int64_t> shape) {
  info->set_name(name);
  auto *t = info->mutable_type()->mutable_tensor_type();
  t->set_elem_type(onnx::TensorProto::FLOAT);
  for (int64_t d : shape)
    t->mutable_shape()->add_dim()->set_dim_value(d);
}

/// X -> Add(X, X) -> turbine.test.RowSoftmax -> Mul(S, S) -> Y, all [3, 20].
std::string buildModel(bool declareCustomOutput) {
  onnx::ModelProto model;
  model.set_ir_version(8);
  auto *opset = model.add_opset_import();
  opset->set_domain("");
  opset->set_version(17);
  auto *custom = model.add_opset_import();
  custom->set_domain("turbine.test");
  custom->set_version(1);
  onnx::GraphProto *g = model.mutable_graph();
  g->set_name("custom_domain");
  setTensorType(g->add_input(), "X", {3, 20});
  setTensorType(g->add_output(), "Y", {3, 20});
  if (declareCustomOutput)
    setTensorType(g->add_value_info(), "S", {3, 20});
  auto *add = g->add_node();
  add->set_op_type("Add");
  add->add_input("X");
  add->add_input("X");
  add->add_output("D");
  auto *softmax = g->add_node();
  softmax->set_op_type("RowSoftmax");
  softmax->set_domain("turbine.test");
  softmax->set_name("my_softmax");
  softmax->add_input("D");
  softmax->add_output("S");
  auto *mul = g->add_node();
  mul->set_op_type("Mul");
  mul->add_input("S");
  mul->add_input("S");
  mul->add_output("Y");
  return model.SerializeAsString();
}

void registerRowSoftmax() {
  static bool done = registerCustomOp(makeCustomOp(
      "turbine.test.RowSoftmax",
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
      [](const CustomOpSelection &) { return softmaxKernel(); })).ok();
  ASSERT_TRUE(done);
}

} // namespace

TEST(CustomOpOnnx, CustomDomainNodeBecomesItsOwnDispatch) {
  registerRowSoftmax();
  mlir::DialectRegistry registry;
  compiler::registerCompilerDialects(registry);
  mlir::MLIRContext context(registry);
  onnx_frontend::registerImportedDialects(context);
  context.loadAllAvailableDialects();
  std::string error;
  auto module = turbine::test_support::unpack(onnx_frontend::importOnnxBytes(context, buildModel(true), "custom.onnx", {}), error);
  ASSERT_TRUE(module) << error;
  Status expanded = expandCustomOpCalls(*module);
  ASSERT_TRUE(expanded.ok()) << expanded.message();
  artifact::Module artifact;
  ASSERT_TRUE(turbine::testing::compileToArtifact(*module, artifact, error)) << error;
  bool found = false;
  for (const std::string &k : artifact.kernels)
    found |= k.find("turbine_test_RowSoftmax") != std::string::npos;
  EXPECT_TRUE(found);

  auto loaded = runtime::Module::loadFromBytes(artifact::serialize(artifact));
  ASSERT_TRUE(loaded.ok()) << loaded.message();
  auto fn = (*loaded)->lookupFunction("main");
  ASSERT_TRUE(fn.ok()) << fn.message();
  auto device = runtime::Device::create("local-sync");
  std::vector<float> x = randomValues(60, 5, -2, 2);
  auto out = fn->invoke(**device, {f32Tensor(x, {3, 20})});
  ASSERT_TRUE(out.ok()) << out.message();
  std::vector<float> doubled(60);
  for (size_t i = 0; i < 60; ++i)
    doubled[i] = 2 * x[i];
  std::vector<float> expected = softmaxReference(doubled, 3, 20);
  for (float &v : expected)
    v *= v;
  EXPECT_LE(maxAbsError(valuesOf((*out)[0]), expected), 1e-6);
}

TEST(CustomOpOnnx, UndeclaredOutputTypeIsAnError) {
  mlir::MLIRContext context;
  onnx_frontend::registerImportedDialects(context);
  std::string error;
  auto module = turbine::test_support::unpack(onnx_frontend::importOnnxBytes(context, buildModel(false), "custom.onnx", {}), error);
  ASSERT_FALSE(module);
  EXPECT_NE(error.find("custom op 'turbine.test.RowSoftmax': output 'S' has no declared "
                       "tensor type"), std::string::npos) << error;
}
