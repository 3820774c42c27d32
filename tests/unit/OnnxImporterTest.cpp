//===- OnnxImporterTest.cpp - unit tests of the ONNX frontend -------------===//
//
// Builds small ModelProtos with the ONNX protobuf API (and loads the models
// exported by tests/models/export_models.py), imports them, and checks that
// the module verifies, uses the expected ops, keeps dynamic dims dynamic,
// stays within the IR contract the compiler accepts, and that each error
// case yields its message.
//===----------------------------------------------------------------------===//
#include "turbine/frontends/onnx/OnnxImporter.h"
#include "UnpackResult.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"

#include "onnx/onnx_pb.h"

#include <gtest/gtest.h>

#include <fstream>
#include <initializer_list>
#include <set>
#include <string>
#include <vector>

using namespace turbine::onnx_frontend;
using turbine::test_support::unpack;

namespace {

//===--- model building helpers -----------------------------------------===//

/// A ModelProto under construction with opset `opset` of the default domain.
struct ModelBuilder {
  onnx::ModelProto model;
  onnx::GraphProto *graph;

  explicit ModelBuilder(int opset = 17) {
    model.set_ir_version(8);
    model.set_producer_name("turbine-test");
    auto *id = model.add_opset_import();
    id->set_domain("");
    id->set_version(opset);
    graph = model.mutable_graph();
    graph->set_name("test");
  }

  /// dims: >= 0 static, -1 dynamic named `dimName` (when given).
  static void setType(onnx::ValueInfoProto *info, const std::string &name, int elemType,
                      std::initializer_list<int64_t> dims, const std::string &dimName) {
    info->set_name(name);
    auto *t = info->mutable_type()->mutable_tensor_type();
    t->set_elem_type(elemType);
    auto *shape = t->mutable_shape();
    for (int64_t d : dims) {
      auto *dim = shape->add_dim();
      if (d >= 0)
        dim->set_dim_value(d);
      else if (!dimName.empty())
        dim->set_dim_param(dimName);
    }
  }
  void input(const std::string &name, std::initializer_list<int64_t> dims,
             int elemType = onnx::TensorProto::FLOAT, const std::string &dimName = "batch") {
    setType(graph->add_input(), name, elemType, dims, dimName);
  }
  void output(const std::string &name, std::initializer_list<int64_t> dims,
              int elemType = onnx::TensorProto::FLOAT, const std::string &dimName = "batch") {
    setType(graph->add_output(), name, elemType, dims, dimName);
  }
  void floatInit(const std::string &name, std::vector<int64_t> dims, float start = 0.1f) {
    auto *t = graph->add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::FLOAT);
    int64_t n = 1;
    for (int64_t d : dims) {
      t->add_dims(d);
      n *= d;
    }
    for (int64_t i = 0; i < n; ++i)
      t->add_float_data(start + 0.01f * static_cast<float>(i));
  }
  void intInit(const std::string &name, std::vector<int64_t> values, bool scalar = false) {
    auto *t = graph->add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::INT64);
    if (!scalar)
      t->add_dims(static_cast<int64_t>(values.size()));
    for (int64_t v : values)
      t->add_int64_data(v);
  }
  onnx::NodeProto *node(const std::string &op, std::vector<std::string> inputs,
                        std::vector<std::string> outputs, const std::string &name = "") {
    auto *n = graph->add_node();
    n->set_op_type(op);
    n->set_name(name.empty() ? op + "_" + std::to_string(graph->node_size()) : name);
    for (auto &i : inputs)
      n->add_input(i);
    for (auto &o : outputs)
      n->add_output(o);
    return n;
  }
  static void intAttr(onnx::NodeProto *n, const std::string &name, int64_t v) {
    auto *a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INT);
    a->set_i(v);
  }
  static void floatAttr(onnx::NodeProto *n, const std::string &name, float v) {
    auto *a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::FLOAT);
    a->set_f(v);
  }
  static void intsAttr(onnx::NodeProto *n, const std::string &name, std::vector<int64_t> v) {
    auto *a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INTS);
    for (int64_t x : v)
      a->add_ints(x);
  }
  static void stringAttr(onnx::NodeProto *n, const std::string &name, const std::string &v) {
    auto *a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::STRING);
    a->set_s(v);
  }
  std::string bytes() const { return model.SerializeAsString(); }
};

/// Result of one import: the module (maybe null), its text and the error.
struct Imported {
  mlir::OwningOpRef<mlir::ModuleOp> module;
  std::string text;
  std::string error;
};

Imported importBytes(mlir::MLIRContext &context, const std::string &bytes,
                     const std::string &origin = "test.onnx") {
  Imported r;
  r.module = unpack(importOnnxBytes(context, bytes, origin, ImportOptions{}), r.error);
  if (r.module) {
    llvm::raw_string_ostream os(r.text);
    r.module->print(os);
  }
  return r;
}

/// Ops the compiler accepts at function top level.
const std::set<std::string> &allowedTopLevelOps() {
  static const std::set<std::string> ops = {
      "arith.constant",   "arith.addi",       "arith.subi",         "arith.muli",
      "arith.divsi",      "arith.ceildivsi",  "arith.floordivsi",   "arith.remsi",
      "arith.minsi",      "arith.maxsi",      "arith.select",       "arith.cmpi",
      "arith.index_cast", "arith.sitofp",     "tensor.dim",         "tensor.empty",
      "tensor.expand_shape", "tensor.collapse_shape", "linalg.fill", "linalg.generic",
      "linalg.matmul",    "linalg.batch_matmul", "linalg.conv_2d_nchw_fchw",
      "linalg.pooling_nchw_max", "linalg.pooling_nchw_sum", "linalg.transpose",
      "tensor.pad",       "scf.while",        "tensor.extract",     "arith.index_castui",
      "tensor.cast",      "cf.assert",        "func.return"};
  return ops;
}

/// Checks the IR contract: one entry function, allowed ops only at top
/// level, arith at top level only on scalars (no tensor arith).
void expectWithinContract(mlir::ModuleOp module) {
  auto funcs = llvm::to_vector(module.getOps<mlir::func::FuncOp>());
  ASSERT_EQ(funcs.size(), 1u);
  for (mlir::Operation &op : funcs[0].getBody().front()) {
    std::string name = op.getName().getStringRef().str();
    EXPECT_TRUE(allowedTopLevelOps().count(name)) << "op not allowed at top level: " << name;
    if (name.rfind("arith.", 0) == 0 && name != "arith.constant")
      for (mlir::Type t : op.getResultTypes())
        EXPECT_FALSE(mlir::isa<mlir::TensorType>(t)) << "tensor arith at top level: " << name;
  }
}

bool contains(const std::string &haystack, const std::string &needle) {
  return haystack.find(needle) != std::string::npos;
}

/// `m` does not import, with an error containing `message`.
void expectImportError(ModelBuilder &m, const std::string &message) {
  mlir::MLIRContext context;
  Imported r = importBytes(context, m.bytes());
  EXPECT_FALSE(r.module);
  EXPECT_TRUE(contains(r.error, message)) << r.error;
}

//===--- happy paths ----------------------------------------------------===//

TEST(OnnxImporter, GemmWithConstantTransposedWeightBecomesPlainMatmul) {
  ModelBuilder m;
  m.input("x", {-1, 4});
  m.floatInit("w", {3, 4});
  m.floatInit("b", {3});
  auto *gemm = m.node("Gemm", {"x", "w", "b"}, {"y"}, "fc");
  ModelBuilder::intAttr(gemm, "transB", 1);
  m.output("y", {-1, 3});
  mlir::MLIRContext context;
  Imported r = importBytes(context, m.bytes());
  ASSERT_TRUE(r.module) << r.error;
  EXPECT_TRUE(mlir::succeeded(mlir::verify(*r.module)));
  EXPECT_TRUE(contains(r.text, "linalg.matmul")) << r.text;
  EXPECT_FALSE(contains(r.text, "linalg.transpose")) << r.text;
  EXPECT_TRUE(contains(r.text, "tensor<4x3xf32>")) << "weight not transposed at import time";
  EXPECT_TRUE(contains(r.text, "func.func @main(%arg0: tensor<?x4xf32>")) << r.text;
  EXPECT_TRUE(contains(r.text, "turbine.name = \"x\"")) << r.text;
  EXPECT_TRUE(contains(r.text, "turbine.dims = [\"batch\", \"\"]")) << r.text;
  EXPECT_TRUE(contains(r.text, "-> (tensor<?x3xf32>")) << r.text;
  expectWithinContract(*r.module);
}

TEST(OnnxImporter, EntryNameFromOptions) {
  ModelBuilder m;
  m.input("x", {2, 2});
  m.node("Relu", {"x"}, {"y"});
  m.output("y", {2, 2});
  mlir::MLIRContext context;
  std::string error;
  ImportOptions options;
  options.entryName = "forward";
  auto module = unpack(importOnnxBytes(context, m.bytes(), "t.onnx", options), error);
  ASSERT_TRUE(module) << error;
  EXPECT_TRUE(module->lookupSymbol<mlir::func::FuncOp>("forward"));
}

TEST(OnnxImporter, BroadcastingElementwiseIsOneGeneric) {
  ModelBuilder m;
  m.input("a", {-1, 3, 4});
  m.input("b", {4}, onnx::TensorProto::FLOAT, "");
  m.node("Add", {"a", "b"}, {"s"});
  m.node("Erf", {"s"}, {"e"});
  m.node("Tanh", {"e"}, {"t"});
  m.output("t", {-1, 3, 4});
  mlir::MLIRContext context;
  Imported r = importBytes(context, m.bytes());
  ASSERT_TRUE(r.module) << r.error;
  EXPECT_TRUE(contains(r.text, "affine_map<(d0, d1, d2) -> (d2)>")) << r.text;
  EXPECT_TRUE(contains(r.text, "math.erf")) << r.text;
  EXPECT_TRUE(contains(r.text, "math.tanh")) << r.text;
  EXPECT_TRUE(contains(r.text, "tensor<?x3x4xf32>")) << r.text;
  expectWithinContract(*r.module);
}

TEST(OnnxImporter, ShapeSubgraphIsEvaluatedSymbolically) {
  // Reshape x[batch, 6] to [Shape(x)[0], 2, 3] via Shape/Gather/Unsqueeze/Concat.
  ModelBuilder m;
  m.input("x", {-1, 6});
  m.intInit("zero", {0}, /*scalar=*/true);
  m.intInit("axes0", {0});
  m.intInit("rest", {2, 3});
  m.node("Shape", {"x"}, {"shape"});
  m.node("Gather", {"shape", "zero"}, {"batch"});
  m.node("Unsqueeze", {"batch", "axes0"}, {"batch1"});
  m.node("Concat", {"batch1", "rest"}, {"target"}, "concat");
  ModelBuilder::intAttr(m.graph->mutable_node(3), "axis", 0);
  m.node("Reshape", {"x", "target"}, {"y"});
  m.output("y", {-1, 2, 3});
  mlir::MLIRContext context;
  Imported r = importBytes(context, m.bytes());
  ASSERT_TRUE(r.module) << r.error;
  EXPECT_TRUE(contains(r.text, "tensor.expand_shape")) << r.text;
  EXPECT_TRUE(contains(r.text, "-> (tensor<?x2x3xf32>")) << r.text;
  EXPECT_FALSE(contains(r.text, "tensor<2xi64>")) << "shape tensor was materialized:\n" << r.text;
  expectWithinContract(*r.module);
}

TEST(OnnxImporter, ReshapeOfADynamicDimToAStaticShapeCasts) {
  // A dim the importer holds dynamic reshaped to a static target (ViT's
  // attention did this): collapse to ?, cast to the static size, expand.
  // The expand_shape used to read the dynamic collapse and not verify.
  ModelBuilder m;
  m.input("x", {-1, 6});
  m.intInit("shape", {2, 2, 3});
  m.node("Reshape", {"x", "shape"}, {"y"});
  m.output("y", {2, 2, 3});
  mlir::MLIRContext context;
  Imported r = importBytes(context, m.bytes());
  ASSERT_TRUE(r.module) << r.error;
  EXPECT_TRUE(contains(r.text, "tensor.cast")) << r.text;
  EXPECT_TRUE(contains(r.text, "tensor<?xf32> to tensor<12xf32>")) << r.text;
  EXPECT_TRUE(contains(r.text, "-> (tensor<2x2x3xf32>")) << r.text;
}

TEST(OnnxImporter, ExpandOfWhereOverEqualShapesStaysStatic) {
  // torch.onnx writes `t.expand(1, -1, -1)` as
  // Expand(t, Where(Equal(target, ConstantOfShape([3]) * -1), ones, target)):
  // folded at import time, the expand is static (it is the identity here).
  ModelBuilder m;
  m.input("x", {1, 1, 4});
  m.intInit("three", {3});
  m.intInit("minus1", {-1}, /*scalar=*/true);
  m.intInit("target", {1, -1, -1});
  auto *ones = m.node("ConstantOfShape", {"three"}, {"ones"});
  auto *value = ones->add_attribute();
  value->set_name("value");
  value->set_type(onnx::AttributeProto::TENSOR);
  value->mutable_t()->set_data_type(onnx::TensorProto::INT64);
  value->mutable_t()->add_dims(1);
  value->mutable_t()->add_int64_data(1);
  m.node("Mul", {"ones", "minus1"}, {"m"});
  m.node("Equal", {"target", "m"}, {"eq"});
  m.node("Where", {"eq", "ones", "target"}, {"w"});
  m.node("Expand", {"x", "w"}, {"y"});
  m.output("y", {1, 1, 4});
  mlir::MLIRContext context;
  Imported r = importBytes(context, m.bytes());
  ASSERT_TRUE(r.module) << r.error;
  EXPECT_TRUE(contains(r.text, "-> (tensor<1x1x4xf32>")) << r.text;
  EXPECT_FALSE(contains(r.text, "tensor.extract")) << "shape read at run time:\n" << r.text;
  expectWithinContract(*r.module);
}

TEST(OnnxImporter, ReshapeWithMinusOneAndZero) {
  ModelBuilder m;
  m.input("x", {-1, 4, 6});
  m.intInit("shape", {0, -1});
  m.node("Reshape", {"x", "shape"}, {"y"});
  m.output("y", {-1, 24});
  mlir::MLIRContext context;
  Imported r = importBytes(context, m.bytes());
  ASSERT_TRUE(r.module) << r.error;
  EXPECT_TRUE(contains(r.text, "tensor.collapse_shape")) << r.text;
  EXPECT_TRUE(contains(r.text, "-> (tensor<?x24xf32>")) << r.text;
  expectWithinContract(*r.module);
}

TEST(OnnxImporter, MatMulNdWithConstantUsesMatmulAndBatchedUsesBatchMatmul) {
  ModelBuilder m;
  m.input("x", {-1, 5, 8});
  m.input("y", {-1, 8, 5});
  m.floatInit("w", {8, 3});
  m.node("MatMul", {"x", "w"}, {"xw"});
  m.node("MatMul", {"x", "y"}, {"xy"});
  m.output("xw", {-1, 5, 3});
  m.output("xy", {-1, 5, 5});
  mlir::MLIRContext context;
  Imported r = importBytes(context, m.bytes());
  ASSERT_TRUE(r.module) << r.error;
  EXPECT_TRUE(contains(r.text, "linalg.matmul")) << r.text;
  EXPECT_TRUE(contains(r.text, "linalg.batch_matmul")) << r.text;
  expectWithinContract(*r.module);
}

TEST(OnnxImporter, ConvWithPadsAndPools) {
  ModelBuilder m;
  m.input("x", {-1, 3, 8, 8});
  m.floatInit("w", {4, 3, 3, 3});
  m.floatInit("b", {4});
  auto *conv = m.node("Conv", {"x", "w", "b"}, {"c"});
  ModelBuilder::intsAttr(conv, "pads", {1, 1, 1, 1});
  ModelBuilder::intsAttr(conv, "kernel_shape", {3, 3});
  auto *pool = m.node("MaxPool", {"c"}, {"p"});
  ModelBuilder::intsAttr(pool, "kernel_shape", {2, 2});
  ModelBuilder::intsAttr(pool, "strides", {2, 2});
  auto *avg = m.node("AveragePool", {"p"}, {"a"});
  ModelBuilder::intsAttr(avg, "kernel_shape", {3, 3});
  ModelBuilder::intsAttr(avg, "pads", {1, 1, 1, 1});
  m.node("GlobalAveragePool", {"a"}, {"g"});
  m.output("g", {-1, 4, 1, 1});
  mlir::MLIRContext context;
  Imported r = importBytes(context, m.bytes());
  ASSERT_TRUE(r.module) << r.error;
  EXPECT_TRUE(contains(r.text, "linalg.conv_2d_nchw_fchw")) << r.text;
  EXPECT_TRUE(contains(r.text, "linalg.pooling_nchw_max")) << r.text;
  EXPECT_TRUE(contains(r.text, "linalg.pooling_nchw_sum")) << r.text;
  EXPECT_TRUE(contains(r.text, "tensor.pad")) << "padding should be a tensor.pad";
  EXPECT_TRUE(contains(r.text, "-> (tensor<?x4x1x1xf32>")) << r.text;
  expectWithinContract(*r.module);
}

TEST(OnnxImporter, NormalizationsAndReductions) {
  ModelBuilder m;
  m.input("x", {-1, 4, 6});
  m.floatInit("scale", {6});
  m.floatInit("bias", {6});
  m.intInit("axes", {1});
  auto *ln = m.node("LayerNormalization", {"x", "scale", "bias"}, {"ln"});
  ModelBuilder::floatAttr(ln, "epsilon", 1e-5f);
  auto *sm = m.node("Softmax", {"ln"}, {"sm"});
  ModelBuilder::intAttr(sm, "axis", -1);
  m.node("ReduceSum", {"sm", "axes"}, {"rs"});
  auto *rm = m.node("ReduceMean", {"x"}, {"rm"});
  ModelBuilder::intsAttr(rm, "axes", {-1});
  ModelBuilder::intAttr(rm, "keepdims", 0);
  m.output("rs", {-1, 1, 6});
  m.output("rm", {-1, 4});
  mlir::MLIRContext context;
  Imported r = importBytes(context, m.bytes());
  ASSERT_TRUE(r.module) << r.error;
  EXPECT_TRUE(contains(r.text, "math.exp")) << r.text;
  EXPECT_TRUE(contains(r.text, "math.rsqrt")) << r.text;
  EXPECT_TRUE(contains(r.text, "\"reduction\"")) << r.text;
  EXPECT_TRUE(contains(r.text, "-> (tensor<?x1x6xf32>")) << r.text;
  expectWithinContract(*r.module);
}

TEST(OnnxImporter, ShapeOpsOnData) {
  ModelBuilder m;
  m.input("x", {2, 6, 4}, onnx::TensorProto::FLOAT, "");
  m.input("idx", {3}, onnx::TensorProto::INT64, "");
  m.intInit("starts", {1});
  m.intInit("ends", {-1});
  m.intInit("axes", {1});
  m.intInit("steps", {2});
  m.intInit("split", {2, 4});
  m.node("Slice", {"x", "starts", "ends", "axes", "steps"}, {"sl"});
  auto *split = m.node("Split", {"x", "split"}, {"s0", "s1"});
  ModelBuilder::intAttr(split, "axis", 1);
  auto *concat = m.node("Concat", {"s1", "s0"}, {"cat"});
  ModelBuilder::intAttr(concat, "axis", 1);
  auto *gather = m.node("Gather", {"cat", "idx"}, {"g"});
  ModelBuilder::intAttr(gather, "axis", 1);
  auto *tr = m.node("Transpose", {"g"}, {"t"});
  ModelBuilder::intsAttr(tr, "perm", {0, 2, 1});
  m.node("Flatten", {"t"}, {"f"});
  m.output("sl", {2, 2, 4});
  m.output("f", {2, 12});
  mlir::MLIRContext context;
  Imported r = importBytes(context, m.bytes());
  ASSERT_TRUE(r.module) << r.error;
  EXPECT_TRUE(contains(r.text, "-> (tensor<2x2x4xf32>")) << r.text;
  EXPECT_TRUE(contains(r.text, "tensor<2x12xf32>")) << r.text;
  EXPECT_TRUE(contains(r.text, "linalg.transpose")) << r.text;
  expectWithinContract(*r.module);
}

TEST(OnnxImporter, LossOps) {
  ModelBuilder m(13);
  m.input("x", {-1, 5, 3});
  m.input("t", {-1, 3}, onnx::TensorProto::INT64);
  m.floatInit("w", {5});
  auto *nll = m.node("NegativeLogLikelihoodLoss", {"x", "t", "w"}, {"nll"});
  ModelBuilder::intAttr(nll, "ignore_index", -1);
  auto *sce = m.node("SoftmaxCrossEntropyLoss", {"x", "t"}, {"sce", "logp"});
  ModelBuilder::stringAttr(sce, "reduction", "none");
  m.output("nll", {});
  m.output("sce", {-1, 3});
  m.output("logp", {-1, 5, 3});
  mlir::MLIRContext context;
  Imported r = importBytes(context, m.bytes());
  ASSERT_TRUE(r.module) << r.error;
  EXPECT_TRUE(contains(r.text, "tensor.extract")) << r.text;
  EXPECT_TRUE(contains(r.text, "math.log")) << r.text;
  EXPECT_TRUE(contains(r.text, "arith.divf")) << r.text;
  EXPECT_TRUE(contains(r.text, ": tensor<f32>, tensor<?x3xf32>, tensor<?x5x3xf32>")) << r.text;
  expectWithinContract(*r.module);
}

TEST(OnnxImporter, TriluCumSumHardmaxShrinkEinsum) {
  ModelBuilder m(14);
  m.input("x", {4, 4}, onnx::TensorProto::FLOAT, "");
  m.input("k", {}, onnx::TensorProto::INT64, "");
  m.input("y", {4, 6}, onnx::TensorProto::FLOAT, "");
  m.intInit("axis", {1}, /*scalar=*/true);
  m.node("Trilu", {"x", "k"}, {"tri"});
  auto *cs = m.node("CumSum", {"x", "axis"}, {"cs"});
  ModelBuilder::intAttr(cs, "reverse", 1);
  m.node("Hardmax", {"x"}, {"hm"});
  m.node("Shrink", {"x"}, {"sh"});
  auto *es = m.node("Einsum", {"x", "y"}, {"es"});
  ModelBuilder::stringAttr(es, "equation", "ij,jk->ik");
  m.output("tri", {4, 4}, onnx::TensorProto::FLOAT, "");
  m.output("cs", {4, 4}, onnx::TensorProto::FLOAT, "");
  m.output("hm", {4, 4}, onnx::TensorProto::FLOAT, "");
  m.output("sh", {4, 4}, onnx::TensorProto::FLOAT, "");
  m.output("es", {4, 6}, onnx::TensorProto::FLOAT, "");
  mlir::MLIRContext context;
  Imported r = importBytes(context, m.bytes());
  ASSERT_TRUE(r.module) << r.error;
  EXPECT_TRUE(contains(r.text, "\"reduction\"")) << r.text;
  EXPECT_TRUE(contains(r.text, "arith.cmpi sge")) << r.text;
  EXPECT_TRUE(contains(r.text, ": tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>, "
                               "tensor<4x6xf32>")) << r.text;
  expectWithinContract(*r.module);
}

TEST(OnnxImporter, ScatterElementsWithAdd) {
  ModelBuilder m(16);
  m.input("data", {-1, 5});
  m.input("idx", {-1, 2}, onnx::TensorProto::INT64);
  m.input("upd", {-1, 2});
  auto *sc = m.node("ScatterElements", {"data", "idx", "upd"}, {"y"});
  ModelBuilder::intAttr(sc, "axis", 1);
  ModelBuilder::stringAttr(sc, "reduction", "add");
  m.output("y", {-1, 5});
  mlir::MLIRContext context;
  Imported r = importBytes(context, m.bytes());
  ASSERT_TRUE(r.module) << r.error;
  EXPECT_TRUE(contains(r.text, "tensor.extract")) << r.text;
  EXPECT_TRUE(contains(r.text, "\"reduction\"")) << r.text;
  EXPECT_TRUE(contains(r.text, "arith.addf")) << r.text;
  expectWithinContract(*r.module);
}

TEST(OnnxImporter, GatherScatterNDEyeLikeReverseSequence) {
  ModelBuilder m(16);
  m.input("data", {4, 3}, onnx::TensorProto::FLOAT, "");
  m.input("idx", {2, 1}, onnx::TensorProto::INT64, "");
  m.input("upd", {2, 3}, onnx::TensorProto::FLOAT, "");
  m.input("lens", {3}, onnx::TensorProto::INT64, "");
  m.node("GatherND", {"data", "idx"}, {"g"});
  m.node("ScatterND", {"data", "idx", "upd"}, {"s"});
  auto *eye = m.node("EyeLike", {"data"}, {"e"});
  ModelBuilder::intAttr(eye, "k", 1);
  m.node("ReverseSequence", {"data", "lens"}, {"rs"});
  m.output("g", {2, 3}, onnx::TensorProto::FLOAT, "");
  m.output("s", {4, 3}, onnx::TensorProto::FLOAT, "");
  m.output("e", {4, 3}, onnx::TensorProto::FLOAT, "");
  m.output("rs", {4, 3}, onnx::TensorProto::FLOAT, "");
  mlir::MLIRContext context;
  Imported r = importBytes(context, m.bytes());
  ASSERT_TRUE(r.module) << r.error;
  EXPECT_TRUE(contains(r.text, "tensor.extract")) << r.text;
  EXPECT_TRUE(contains(r.text, "\"reduction\"")) << r.text;
  EXPECT_TRUE(contains(r.text, ": tensor<2x3xf32>, tensor<4x3xf32>, tensor<4x3xf32>, tensor<4x3xf32>")) << r.text;
  expectWithinContract(*r.module);
}

TEST(OnnxImporter, OneHotWithConstantDepthAndIntegerPow) {
  ModelBuilder m(11);
  m.input("idx", {-1, 3}, onnx::TensorProto::INT64);
  m.input("vals", {2});
  m.input("xi", {4}, onnx::TensorProto::INT32, "");
  m.intInit("depth", {5}, /*scalar=*/true);
  auto *oh = m.node("OneHot", {"idx", "depth", "vals"}, {"oh"});
  ModelBuilder::intAttr(oh, "axis", 1);
  m.node("Pow", {"xi", "xi"}, {"p"});
  m.output("oh", {-1, 5, 3});
  m.output("p", {4}, onnx::TensorProto::INT32, "");
  mlir::MLIRContext context;
  Imported r = importBytes(context, m.bytes());
  ASSERT_TRUE(r.module) << r.error;
  EXPECT_TRUE(contains(r.text, ": tensor<?x5x3xf32>, tensor<4xi32>")) << r.text;
  EXPECT_TRUE(contains(r.text, "arith.muli")) << r.text;
  expectWithinContract(*r.module);
}

TEST(OnnxImporter, OneHotDepthIsReadAtRunTime) {
  ModelBuilder m(11);
  m.input("idx", {3}, onnx::TensorProto::INT64, "");
  m.input("depth", {}, onnx::TensorProto::INT64, "");
  m.input("vals", {2}, onnx::TensorProto::FLOAT, "");
  m.node("OneHot", {"idx", "depth", "vals"}, {"oh"});
  m.output("oh", {3, -1}, onnx::TensorProto::FLOAT, "");
  mlir::MLIRContext context;
  Imported r = importBytes(context, m.bytes());
  ASSERT_TRUE(r.module) << r.error;
  EXPECT_TRUE(contains(r.text, "tensor.extract %arg1[] : tensor<i64>")) << r.text;
  EXPECT_TRUE(contains(r.text, "depth must be positive")) << r.text;
  EXPECT_TRUE(contains(r.text, "-> tensor<3x?xf32>")) << r.text;
}

TEST(OnnxImporterErrors, OneHotDepthOfDynamicLengthIsRejected) {
  ModelBuilder m(11);
  m.input("idx", {3}, onnx::TensorProto::INT64, "");
  m.input("depth", {-1}, onnx::TensorProto::INT64, "n");
  m.input("vals", {2}, onnx::TensorProto::FLOAT, "");
  m.node("OneHot", {"idx", "depth", "vals"}, {"oh"});
  m.output("oh", {3, -1}, onnx::TensorProto::FLOAT, "");
  mlir::MLIRContext context;
  Imported r = importBytes(context, m.bytes());
  EXPECT_FALSE(r.module);
  EXPECT_TRUE(contains(r.error, "input 'depth' (depth) is read at run time, so it must be a rank-0 "
                                "or rank-1 numeric tensor of static length <= 64; it is tensor<?xi64>"))
      << r.error;
}

TEST(OnnxImporterErrors, GridSampleBatchMismatchAndRnnInputSizeMismatch) {
  // Both imported to IR that did not verify (found by the onnx fuzzer;
  // fuzz/corpus/onnx/regress-*): now errors naming the node's reason.
  {
    ModelBuilder m(16);
    m.input("x", {2, 3, 4, 4});
    m.input("grid", {3, 2, 5, 2});
    m.node("GridSample", {"x", "grid"}, {"gs"});
    m.output("gs", {2, 3, 2, 5});
    mlir::MLIRContext context;
    Imported r = importBytes(context, m.bytes());
    EXPECT_FALSE(r.module);
    EXPECT_TRUE(contains(r.error, "X and grid must have the same batch size N")) << r.error;
  }
  {
    ModelBuilder m(14);
    m.input("x", {5, 1, 3});
    m.floatInit("w", {1, 4, 2});
    m.floatInit("r", {1, 4, 4});
    auto *rnn = m.node("RNN", {"x", "w", "r"}, {"y"});
    ModelBuilder::intAttr(rnn, "hidden_size", 4);
    m.output("y", {5, 1, 1, 4});
    mlir::MLIRContext context;
    Imported r = importBytes(context, m.bytes());
    EXPECT_FALSE(r.module);
    EXPECT_TRUE(contains(r.error, "W's last dim (input size) must equal X's last dim")) << r.error;
  }
}

TEST(OnnxImporterErrors, LayerNormScaleOrBiasOfAnotherShapeOrType) {
  // Both imported to IR that did not verify (found by the onnx fuzzer:
  // fuzz/corpus/onnx/regress-layernorm-*): now errors, or a run-time check
  // where a dim is dynamic.
  auto model = [](std::initializer_list<int64_t> scaleDims, int scaleType,
                  std::initializer_list<int64_t> biasDims) {
    ModelBuilder m(17);
    m.input("x", {2, 3, 4, 5});
    m.input("w", scaleDims, scaleType);
    m.input("b", biasDims);
    auto *ln = m.node("LayerNormalization", {"x", "w", "b"}, {"y"});
    ModelBuilder::intAttr(ln, "axis", 2);
    m.output("y", {2, 3, 4, 5});
    return m.bytes();
  };
  const std::string cases[][2] = {
      {model({5}, onnx::TensorProto::INT32, {4, 5}), "Scale must have X's element type"},
      {model({4, 5}, onnx::TensorProto::FLOAT, {7, 5}), "B does not broadcast to X's normalized dims"},
      {model({3, 5}, onnx::TensorProto::FLOAT, {5}), "Scale does not broadcast to X's normalized dims"},
  };
  for (const auto &c : cases) {
    mlir::MLIRContext context;
    Imported r = importBytes(context, c[0]);
    EXPECT_FALSE(r.module);
    EXPECT_TRUE(contains(r.error, c[1])) << r.error;
  }
  {
    mlir::MLIRContext context;
    Imported r = importBytes(context, model({1, 5}, onnx::TensorProto::FLOAT, {-1, 5}));
    ASSERT_TRUE(r.module) << r.error;
    EXPECT_TRUE(contains(r.text, "B does not broadcast to X's normalized dims")) << r.text;
  }
}

TEST(OnnxImporterErrors, RecurrentStateOfAnotherBatchSize) {
  // initial_c with another batch size than X imported to IR that did not
  // verify (found by the onnx fuzzer: fuzz/corpus/onnx/regress-lstm-*): now
  // an error, or a run-time check where the batch is dynamic.
  auto model = [](std::initializer_list<int64_t> xDims, std::initializer_list<int64_t> cDims) {
    ModelBuilder m(14);
    m.input("x", xDims);
    m.floatInit("w", {1, 12, 4});
    m.floatInit("r", {1, 12, 3});
    m.input("h0", {1, 2, 3});
    m.input("c0", cDims);
    auto *lstm = m.node("LSTM", {"x", "w", "r", "", "", "h0", "c0"}, {"", "yh"});
    ModelBuilder::intAttr(lstm, "hidden_size", 3);
    m.output("yh", {1, 2, 3});
    return m.bytes();
  };
  {
    mlir::MLIRContext context;
    Imported r = importBytes(context, model({1, 2, 4}, {1, 3, 3}));
    EXPECT_FALSE(r.module);
    EXPECT_TRUE(contains(r.error, "initial_c's batch size must equal X's")) << r.error;
  }
  {
    mlir::MLIRContext context;
    Imported r = importBytes(context, model({1, 2, 4}, {1, -1, 3}));
    ASSERT_TRUE(r.module) << r.error;
    EXPECT_TRUE(contains(r.text, "initial_c's batch size must equal X's")) << r.text;
  }
}

TEST(OnnxImporterErrors, SplitScalarReverseSequenceLengthsGemmCType) {
  // Found by the onnx fuzzer (fuzz/corpus/onnx/regress-split-scalar,
  // regress-reversesequence-lens-size): Split read dim 0 of a rank-0 tensor
  // (a null dereference), ReverseSequence's lengths made IR that did not verify.
  {
    ModelBuilder m(8);
    m.input("x", {}, onnx::TensorProto::FLOAT, "");
    m.node("Split", {"x"}, {"a", "b"});
    m.output("a", {});
    m.output("b", {});
    mlir::MLIRContext context;
    Imported r = importBytes(context, m.bytes());
    EXPECT_FALSE(r.module);
    EXPECT_TRUE(contains(r.error, "cannot split a rank-0 tensor")) << r.error;
  }
  {
    // Concat read dim 0 of rank-0 inputs too (regress-concat-scalars).
    ModelBuilder m(13);
    m.input("x", {}, onnx::TensorProto::FLOAT, "");
    m.input("y", {}, onnx::TensorProto::FLOAT, "");
    auto *concat = m.node("Concat", {"x", "y"}, {"z"});
    ModelBuilder::intAttr(concat, "axis", 0);
    m.output("z", {2});
    mlir::MLIRContext context;
    Imported r = importBytes(context, m.bytes());
    EXPECT_FALSE(r.module);
    EXPECT_TRUE(contains(r.error, "cannot concatenate rank-0 tensors")) << r.error;
  }
  {
    ModelBuilder m(10);
    m.input("x", {4, 4});
    m.input("lens", {37}, onnx::TensorProto::INT64);
    m.node("ReverseSequence", {"x", "lens"}, {"y"});
    m.output("y", {4, 4});
    mlir::MLIRContext context;
    Imported r = importBytes(context, m.bytes());
    EXPECT_FALSE(r.module);
    EXPECT_TRUE(contains(r.error, "sequence_lens must have one entry per batch element")) << r.error;
  }
  {
    // Gemm's C of another element type (regress-gemm-c-type).
    ModelBuilder m(13);
    m.input("a", {6, 3});
    m.input("b", {6, 4});
    m.input("c", {1, 4}, onnx::TensorProto::FLOAT16);
    auto *gemm = m.node("Gemm", {"a", "b", "c"}, {"y"});
    ModelBuilder::intAttr(gemm, "transA", 1);
    m.output("y", {3, 4});
    mlir::MLIRContext context;
    Imported r = importBytes(context, m.bytes());
    EXPECT_FALSE(r.module);
    EXPECT_TRUE(contains(r.error, "C must have A's element type")) << r.error;
  }
}

TEST(OnnxImporterErrors, ConvolutionWeightRankIsCheckedBeforeOnnxShapeInference) {
  // libonnx's shape inference of these crashed (a null or wild read) on a W
  // whose rank differs from X's (found by the onnx fuzzer; the inputs are
  // fuzz/corpus/onnx/regress-conv*-weight-rank).
  {
    ModelBuilder m(11);
    m.input("x", {1, 1, 3, 3});
    m.input("w", {3, 3});
    auto *ct = m.node("ConvTranspose", {"x", "w"}, {"y"});
    ModelBuilder::intsAttr(ct, "strides", {3, 2});
    m.output("y", {1, 1, 9, 6});
    mlir::MLIRContext context;
    Imported r = importBytes(context, m.bytes());
    EXPECT_FALSE(r.module);
    EXPECT_TRUE(contains(r.error, "(ConvTranspose): W has rank 2, X has rank 4")) << r.error;
  }
  {
    ModelBuilder m(10);
    m.input("x", {1, 3, 3}, onnx::TensorProto::UINT8);
    m.input("w", {1, 1, 2, 2}, onnx::TensorProto::UINT8);
    m.node("ConvInteger", {"x", "w"}, {"y"});
    m.output("y", {1, 1, 2}, onnx::TensorProto::INT32);
    mlir::MLIRContext context;
    Imported r = importBytes(context, m.bytes());
    EXPECT_FALSE(r.module);
    EXPECT_TRUE(contains(r.error, "(ConvInteger): W has rank 4, X has rank 3")) << r.error;
  }
}

TEST(OnnxImporterErrors, MatMulKIfCondKeepdimsScanOfAScalar) {
  // Found by the onnx fuzzer (fuzz/corpus/onnx/regress-matmul-k-mismatch,
  // -gemm-k-mismatch, -reduce-keepdims-65): IR that did not verify, an
  // importer that disagreed with ONNX's shape inference. Found with them and
  // replayed by fuzz.replay.onnx only: -qlinearmatmul-k-mismatch, -if-float-cond,
  // -scan-scalar-input (a null dereference).
  {
    ModelBuilder m(13);
    m.input("a", {2, 3});
    m.input("b", {4, 5});
    m.node("MatMul", {"a", "b"}, {"y"});
    m.output("y", {2, 5});
    expectImportError(m, "A's last dim (K) must equal B's second-to-last dim");
  }
  {
    ModelBuilder m(13);
    m.input("a", {2, 3});
    m.input("b", {4, 5});
    m.node("Gemm", {"a", "b"}, {"y"});
    m.output("y", {2, 5});
    expectImportError(m, "A's K must equal B's K");
  }
  {
    ModelBuilder m(13);
    m.input("x", {3, 2, 2});
    auto *rp = m.node("ReduceProd", {"x"}, {"y"});
    ModelBuilder::intsAttr(rp, "axes", {1});
    ModelBuilder::intAttr(rp, "keepdims", 65);
    m.output("y", {3, 2});
    expectImportError(m, "keepdims must be 0 or 1");
  }
  {
    // regress-einsum-label-sizes: b is 5 in x, 13 in y.
    ModelBuilder m(12);
    m.input("x", {5, 2, 3});
    m.input("y", {13, 3, 4});
    auto *e = m.node("Einsum", {"x", "y"}, {"z"});
    ModelBuilder::stringAttr(e, "equation", "bij,bjk->bik");
    m.output("z", {5, 2, 4});
    expectImportError(m, "a label's dims must have one size");
  }
}

TEST(OnnxImporterErrors, OpsetNewerThanTheOnnxLibraryIsNotAnInternalError) {
  // ONNX's shape inference applies an older schema to an opset newer than
  // the library knows; its disagreement with the importer was reported as
  // an importer bug (fuzz/corpus/onnx/regress-opset-newer-than-libonnx).
  ModelBuilder m(61);
  m.input("x", {3, 2, 2});
  auto *rs = m.node("ReduceSumSquare", {"x"}, {"r"});
  ModelBuilder::intsAttr(rs, "axes", {1});
  m.node("Identity", {"r"}, {"y"});
  m.output("y", {1, 1, 1});
  mlir::MLIRContext context;
  Imported r = importBytes(context, m.bytes());
  ASSERT_TRUE(r.module) << r.error;
  // From opset 18 on, axes is an input: none given reduces every dim.
  EXPECT_TRUE(contains(r.text, "-> (tensor<1x1x1xf32>")) << r.text;
}

TEST(OnnxImporterErrors, MaxUnpoolIndicesOfAnotherShape) {
  // I of another shape than X imported to IR that did not verify (found by
  // the onnx fuzzer: fuzz/corpus/onnx/regress-maxunpool-indices-shape): now
  // an error, or a run-time check where the dims are dynamic.
  auto model = [](std::initializer_list<int64_t> xDims, std::initializer_list<int64_t> iDims) {
    ModelBuilder m(11);
    m.input("x", xDims);
    m.input("i", iDims, onnx::TensorProto::INT64);
    auto *up = m.node("MaxUnpool", {"x", "i"}, {"y"});
    ModelBuilder::intsAttr(up, "kernel_shape", {2, 2});
    ModelBuilder::intsAttr(up, "strides", {2, 2});
    m.output("y", {1, 3, 4, 4});
    return m.bytes();
  };
  {
    mlir::MLIRContext context;
    Imported r = importBytes(context, model({1, 3, 2, 2}, {1, 1, 2, 2}));
    EXPECT_FALSE(r.module);
    EXPECT_TRUE(contains(r.error, "I must have the shape of X")) << r.error;
  }
  {
    mlir::MLIRContext context;
    Imported r = importBytes(context, model({1, 3, 2, 2}, {-1, 3, 2, 2}));
    ASSERT_TRUE(r.module) << r.error;
    EXPECT_TRUE(contains(r.text, "I must have the shape of X")) << r.text;
  }
}

TEST(OnnxImporter, ConvTransposeAndEdgeReflectPad) {
  ModelBuilder m(13);
  m.input("x", {-1, 2, 3, 3});
  m.floatInit("w", {2, 4, 3, 3});
  m.floatInit("b", {4});
  m.intInit("pads", {0, 0, 1, 2, 0, 0, 1, 2});
  auto *ct = m.node("ConvTranspose", {"x", "w", "b"}, {"ct"});
  ModelBuilder::intsAttr(ct, "strides", {2, 2});
  auto *pe = m.node("Pad", {"x", "pads"}, {"pe"});
  ModelBuilder::stringAttr(pe, "mode", "edge");
  auto *pr = m.node("Pad", {"x", "pads"}, {"pr"});
  ModelBuilder::stringAttr(pr, "mode", "reflect");
  m.output("ct", {-1, 4, 7, 7});
  m.output("pe", {-1, 2, 5, 7});
  m.output("pr", {-1, 2, 5, 7});
  mlir::MLIRContext context;
  Imported r = importBytes(context, m.bytes());
  ASSERT_TRUE(r.module) << r.error;
  EXPECT_TRUE(contains(r.text, ": tensor<?x4x7x7xf32>, tensor<?x2x5x7xf32>, tensor<?x2x5x7xf32>")) << r.text;
  EXPECT_TRUE(contains(r.text, "\"reduction\"")) << r.text;
  EXPECT_TRUE(contains(r.text, "tensor.extract")) << r.text;
  expectWithinContract(*r.module);
}

TEST(OnnxImporter, LrnDetBitShift) {
  ModelBuilder m(13);
  m.input("x", {-1, 5, 3, 3});
  m.input("u", {4}, onnx::TensorProto::UINT8, "");
  auto *lrn = m.node("LRN", {"x"}, {"lrn"});
  ModelBuilder::intAttr(lrn, "size", 3);
  m.node("Det", {"x"}, {"det"});
  auto *bs = m.node("BitShift", {"u", "u"}, {"bs"});
  ModelBuilder::stringAttr(bs, "direction", "RIGHT");
  m.output("lrn", {-1, 5, 3, 3});
  m.output("det", {-1, 5});
  m.output("bs", {4}, onnx::TensorProto::UINT8, "");
  mlir::MLIRContext context;
  Imported r = importBytes(context, m.bytes());
  ASSERT_TRUE(r.module) << r.error;
  EXPECT_TRUE(contains(r.text, ": tensor<?x5x3x3xf32>, tensor<?x5xf32>, tensor<4xi8>")) << r.text;
  EXPECT_TRUE(contains(r.text, "math.powf")) << r.text;
  EXPECT_TRUE(contains(r.text, "arith.shrui")) << r.text;
  expectWithinContract(*r.module);
}

TEST(OnnxImporter, GridSampleAndMeanVarianceNormalization) {
  ModelBuilder m(16);
  m.input("x", {-1, 3, 4, 4});
  m.input("grid", {-1, 2, 5, 2});
  auto *gs = m.node("GridSample", {"x", "grid"}, {"gs"});
  ModelBuilder::stringAttr(gs, "mode", "bicubic");
  ModelBuilder::stringAttr(gs, "padding_mode", "reflection");
  m.node("MeanVarianceNormalization", {"x"}, {"mvn"});
  m.output("gs", {-1, 3, 2, 5});
  m.output("mvn", {-1, 3, 4, 4});
  mlir::MLIRContext context;
  Imported r = importBytes(context, m.bytes());
  ASSERT_TRUE(r.module) << r.error;
  EXPECT_TRUE(contains(r.text, ": tensor<?x3x2x5xf32>, tensor<?x3x4x4xf32>")) << r.text;
  EXPECT_TRUE(contains(r.text, "tensor.extract")) << r.text;
  EXPECT_TRUE(contains(r.text, "math.sqrt")) << r.text;
  // X's and grid's batch sizes are both dynamic: checked at run time.
  EXPECT_TRUE(contains(r.text, "X and grid must have the same batch size N")) << r.text;
  expectWithinContract(*r.module);
}

TEST(OnnxImporter, MaxPoolWithIndices) {
  ModelBuilder m(12);
  m.input("x", {-1, 3, 5, 5});
  auto *mp = m.node("MaxPool", {"x"}, {"y", "idx"});
  ModelBuilder::intsAttr(mp, "kernel_shape", {3, 3});
  ModelBuilder::intsAttr(mp, "pads", {1, 1, 1, 1});
  ModelBuilder::intsAttr(mp, "strides", {2, 2});
  m.output("y", {-1, 3, 3, 3});
  m.output("idx", {-1, 3, 3, 3}, onnx::TensorProto::INT64);
  mlir::MLIRContext context;
  Imported r = importBytes(context, m.bytes());
  ASSERT_TRUE(r.module) << r.error;
  EXPECT_TRUE(contains(r.text, "linalg.pooling_nchw_max")) << r.text;
  EXPECT_TRUE(contains(r.text, ": tensor<?x3x3x3xf32>, tensor<?x3x3x3xi64>")) << r.text;
  expectWithinContract(*r.module);
}

TEST(OnnxImporter, ResizeCubicWithConstantScalesKeepsBatchDynamic) {
  ModelBuilder m(13);
  m.input("x", {-1, 2, 4, 4});
  auto *scales = m.graph->add_initializer();
  scales->set_name("scales");
  scales->set_data_type(onnx::TensorProto::FLOAT);
  scales->add_dims(4);
  for (float v : {1.0f, 1.0f, 2.0f, 0.5f})
    scales->add_float_data(v);
  auto *resize = m.node("Resize", {"x", "", "scales"}, {"y"});
  ModelBuilder::stringAttr(resize, "mode", "cubic");
  m.output("y", {-1, 2, 8, 2});
  mlir::MLIRContext context;
  Imported r = importBytes(context, m.bytes());
  ASSERT_TRUE(r.module) << r.error;
  EXPECT_TRUE(contains(r.text, "tensor.extract")) << r.text;
  EXPECT_TRUE(contains(r.text, "-> tensor<?x2x8x2xf32>")) << r.text;
  expectWithinContract(*r.module);
}

TEST(OnnxImporter, ResizeOnDynamicSpatialDimsComputesTapsInKernel) {
  ModelBuilder m(13);
  m.input("x", {1, 3, -1, -1}, onnx::TensorProto::FLOAT, "hw");
  auto *scales = m.graph->add_initializer();
  scales->set_name("scales");
  scales->set_data_type(onnx::TensorProto::FLOAT);
  scales->add_dims(4);
  for (float v : {1.0f, 1.0f, 2.0f, 0.75f})
    scales->add_float_data(v);
  auto *resize = m.node("Resize", {"x", "", "scales"}, {"y"});
  ModelBuilder::stringAttr(resize, "mode", "linear");
  m.output("y", {1, 3, -1, -1}, onnx::TensorProto::FLOAT, "");
  mlir::MLIRContext context;
  Imported r = importBytes(context, m.bytes());
  ASSERT_TRUE(r.module) << r.error;
  // floor(W * 0.75) = floordiv(W * 3, 4) on the host; coordinates in f64.
  EXPECT_TRUE(contains(r.text, "arith.floordivsi")) << r.text;
  EXPECT_TRUE(contains(r.text, "math.floor")) << r.text;
  EXPECT_TRUE(contains(r.text, "-> tensor<1x3x?x?xf32>")) << r.text;
  expectWithinContract(*r.module);
}

TEST(OnnxImporter, Conv3dAndPool3dAreGenerics) {
  ModelBuilder m(12);
  m.input("x", {-1, 4, 5, 6, 7});
  m.floatInit("w", {6, 2, 3, 3, 3});
  auto *conv = m.node("Conv", {"x", "w"}, {"c"});
  ModelBuilder::intAttr(conv, "group", 2);
  ModelBuilder::intsAttr(conv, "pads", {1, 1, 1, 1, 1, 1});
  auto *pool = m.node("AveragePool", {"c"}, {"p"});
  ModelBuilder::intsAttr(pool, "kernel_shape", {2, 2, 2});
  ModelBuilder::intsAttr(pool, "strides", {2, 2, 2});
  ModelBuilder::intsAttr(pool, "pads", {0, 1, 0, 1, 0, 1});
  m.output("p", {-1, 6, 3, 3, 4});
  mlir::MLIRContext context;
  Imported r = importBytes(context, m.bytes());
  ASSERT_TRUE(r.module) << r.error;
  EXPECT_TRUE(contains(r.text, "-> tensor<?x6x3x3x4xf32>")) << r.text;
  expectWithinContract(*r.module);
}

TEST(OnnxImporter, TopKDftAndWindow) {
  ModelBuilder m(17);
  m.input("x", {-1, 8, 1});
  m.intInit("k", {3});
  m.intInit("size", {8}, /*scalar=*/true);
  m.node("TopK", {"x", "k"}, {"values", "indices"});
  auto *topk = m.graph->mutable_node(0);
  ModelBuilder::intAttr(topk, "axis", 1);
  m.node("DFT", {"x"}, {"spectrum"});
  m.node("HannWindow", {"size"}, {"window"});
  m.output("values", {-1, 3, 1});
  m.output("indices", {-1, 3, 1}, onnx::TensorProto::INT64);
  m.output("spectrum", {-1, 8, 2});
  m.output("window", {8});
  mlir::MLIRContext context;
  Imported r = importBytes(context, m.bytes());
  ASSERT_TRUE(r.module) << r.error;
  EXPECT_TRUE(contains(r.text, "tensor<?x3x1xf32>, tensor<?x3x1xi64>, tensor<?x8x2xf32>, tensor<8xf32>"))
      << r.text;
  expectWithinContract(*r.module);
}

//===--- errors ---------------------------------------------------------===//

TEST(OnnxImporter, UnsignedIntegersUseUnsignedArithmetic) {
  ModelBuilder m(13);
  m.input("a", {4}, onnx::TensorProto::UINT16, "");
  m.input("b", {4}, onnx::TensorProto::UINT16, "");
  m.input("c", {4}, onnx::TensorProto::UINT32, "");
  m.input("d", {4}, onnx::TensorProto::UINT32, "");
  m.node("Div", {"a", "b"}, {"q"});
  m.node("Less", {"c", "d"}, {"lt"});
  m.node("Max", {"c", "d"}, {"mx"});
  m.node("Mod", {"a", "b"}, {"md"});
  auto *cast = m.node("Cast", {"c"}, {"f"});
  ModelBuilder::intAttr(cast, "to", onnx::TensorProto::FLOAT);
  auto *widen = m.node("Cast", {"a"}, {"w"});
  ModelBuilder::intAttr(widen, "to", onnx::TensorProto::INT64);
  m.output("q", {4}, onnx::TensorProto::UINT16, "");
  m.output("lt", {4}, onnx::TensorProto::BOOL, "");
  m.output("mx", {4}, onnx::TensorProto::UINT32, "");
  m.output("md", {4}, onnx::TensorProto::UINT16, "");
  m.output("f", {4}, onnx::TensorProto::FLOAT, "");
  m.output("w", {4}, onnx::TensorProto::INT64, "");
  mlir::MLIRContext context;
  Imported r = importBytes(context, m.bytes());
  ASSERT_TRUE(r.module) << r.error;
  expectWithinContract(*r.module);
  for (const char *op : {"arith.divui", "arith.cmpi ult", "arith.maxui", "arith.remui",
                         "arith.uitofp", "arith.extui", "turbine.dtype = \"u16\"",
                         "turbine.dtype = \"u32\""})
    EXPECT_TRUE(contains(r.text, op)) << op << "\n" << r.text;
  for (const char *op : {"arith.divsi", "arith.cmpi slt", "arith.maxsi", "arith.sitofp", "arith.extsi"})
    EXPECT_FALSE(contains(r.text, op)) << op << "\n" << r.text;
}

TEST(OnnxImporter, LstmIsUnrolledOverItsStaticSequence) {
  ModelBuilder m(14);
  m.input("x", {3, 2, 4}, onnx::TensorProto::FLOAT, "");
  m.floatInit("w", {2, 20, 4});
  m.floatInit("r", {2, 20, 5});
  auto *lstm = m.node("LSTM", {"x", "w", "r"}, {"y", "y_h", "y_c"});
  ModelBuilder::intAttr(lstm, "hidden_size", 5);
  ModelBuilder::stringAttr(lstm, "direction", "bidirectional");
  m.output("y", {3, 2, 2, 5}, onnx::TensorProto::FLOAT, "");
  m.output("y_h", {2, 2, 5}, onnx::TensorProto::FLOAT, "");
  m.output("y_c", {2, 2, 5}, onnx::TensorProto::FLOAT, "");
  mlir::MLIRContext context;
  Imported r = importBytes(context, m.bytes());
  ASSERT_TRUE(r.module) << r.error;
  expectWithinContract(*r.module);
  EXPECT_TRUE(contains(r.text, "tensor<3x2x2x5xf32>")) << r.text;
  EXPECT_TRUE(contains(r.text, "math.tanh")) << r.text;
}

TEST(OnnxImporterErrors, RecurrentWithDynamicSequenceLengthIsRejected) {
  ModelBuilder m(14);
  m.input("x", {-1, 2, 4}, onnx::TensorProto::FLOAT, "seq");
  m.floatInit("w", {1, 15, 4});
  m.floatInit("r", {1, 15, 5});
  auto *gru = m.node("GRU", {"x", "w", "r"}, {"y"}, "gru0");
  ModelBuilder::intAttr(gru, "hidden_size", 5);
  m.output("y", {-1, 1, 2, 5}, onnx::TensorProto::FLOAT, "seq");
  mlir::MLIRContext context;
  Imported r = importBytes(context, m.bytes());
  EXPECT_FALSE(r.module);
  EXPECT_TRUE(contains(r.error, "unsupported ONNX op 'GRU' (node 'gru0', opset 14, domain ''): the "
                                "sequence length (X dim 0) must be static"))
      << r.error;
}

TEST(OnnxImporterErrors, RecurrentBeyondTheUnrollingLimitIsRejected) {
  ModelBuilder m(14);
  m.input("x", {300, 1, 2}, onnx::TensorProto::FLOAT, "");
  m.floatInit("w", {1, 3, 2});
  m.floatInit("r", {1, 3, 3});
  auto *rnn = m.node("RNN", {"x", "w", "r"}, {"y"}, "rnn0");
  ModelBuilder::intAttr(rnn, "hidden_size", 3);
  m.output("y", {300, 1, 1, 3}, onnx::TensorProto::FLOAT, "");
  mlir::MLIRContext context;
  Imported r = importBytes(context, m.bytes());
  EXPECT_FALSE(r.module);
  EXPECT_TRUE(contains(r.error, "(node 'rnn0', opset 14, domain ''): sequence length 300 exceeds the "
                                "unrolling limit of 256 steps"))
      << r.error;
}

TEST(OnnxImporterErrors, RecurrentWithUnknownActivationIsRejected) {
  ModelBuilder m(14);
  m.input("x", {2, 2, 4}, onnx::TensorProto::FLOAT, "");
  m.floatInit("w", {1, 5, 4});
  m.floatInit("r", {1, 5, 5});
  auto *rnn = m.node("RNN", {"x", "w", "r"}, {"y"}, "rnn0");
  ModelBuilder::intAttr(rnn, "hidden_size", 5);
  auto *acts = rnn->add_attribute();
  acts->set_name("activations");
  acts->set_type(onnx::AttributeProto::STRINGS);
  acts->add_strings("Gelu");
  m.output("y", {2, 1, 2, 5}, onnx::TensorProto::FLOAT, "");
  mlir::MLIRContext context;
  Imported r = importBytes(context, m.bytes());
  EXPECT_FALSE(r.module);
  EXPECT_TRUE(contains(r.error, "(node 'rnn0', opset 14, domain ''): activation 'gelu' is not supported"))
      << r.error;
}

TEST(OnnxImporter, QuantizeLinearRoundsHalfToEvenAndSaturates) {
  ModelBuilder m(13);
  m.input("x", {2, 3}, onnx::TensorProto::FLOAT, "");
  m.input("scale", {3}, onnx::TensorProto::FLOAT, "");
  m.input("zp", {3}, onnx::TensorProto::INT8, "");
  m.node("QuantizeLinear", {"x", "scale", "zp"}, {"q"});
  m.output("q", {2, 3}, onnx::TensorProto::INT8, "");
  mlir::MLIRContext context;
  Imported r = importBytes(context, m.bytes());
  ASSERT_TRUE(r.module) << r.error;
  expectWithinContract(*r.module);
  for (const char *op : {"math.roundeven", "arith.fptosi", "-1.280000e+02", "1.270000e+02"})
    EXPECT_TRUE(contains(r.text, op)) << op << "\n" << r.text;
}

TEST(OnnxImporterErrors, PerAxisDequantizeWithBadAxisIsRejected) {
  ModelBuilder m(13);
  m.input("x", {2, 3}, onnx::TensorProto::UINT8, "");
  m.input("scale", {3}, onnx::TensorProto::FLOAT, "");
  auto *dq = m.node("DequantizeLinear", {"x", "scale"}, {"y"}, "dq0");
  ModelBuilder::intAttr(dq, "axis", 5);
  m.output("y", {2, 3}, onnx::TensorProto::FLOAT, "");
  mlir::MLIRContext context;
  Imported r = importBytes(context, m.bytes());
  EXPECT_FALSE(r.module);
  EXPECT_TRUE(contains(r.error, "ONNX node 'dq0' (DequantizeLinear, opset 13): axis 5 is out of range "
                                "for an input of rank 2"))
      << r.error;
}

TEST(OnnxImporterErrors, QLinearConvReportsConvLimitsUnderItsOwnName) {
  ModelBuilder m(10);
  // A 4-D (spatial) convolution: beyond what Conv supports.
  m.input("x", {1, 1, 3, 3, 3, 3}, onnx::TensorProto::UINT8, "");
  m.input("xs", {}, onnx::TensorProto::FLOAT, "");
  m.input("xz", {}, onnx::TensorProto::UINT8, "");
  m.input("w", {1, 1, 2, 2, 2, 2}, onnx::TensorProto::UINT8, "");
  m.input("ws", {}, onnx::TensorProto::FLOAT, "");
  m.input("wz", {}, onnx::TensorProto::UINT8, "");
  m.input("ys", {}, onnx::TensorProto::FLOAT, "");
  m.input("yz", {}, onnx::TensorProto::UINT8, "");
  m.node("QLinearConv", {"x", "xs", "xz", "w", "ws", "wz", "ys", "yz"}, {"y"}, "qconv0");
  m.output("y", {1, 1, 2, 2, 2, 2}, onnx::TensorProto::UINT8, "");
  mlir::MLIRContext context;
  Imported r = importBytes(context, m.bytes());
  EXPECT_FALSE(r.module);
  EXPECT_TRUE(contains(r.error, "unsupported ONNX op 'QLinearConv' (node 'qconv0', opset 10, domain '')"))
      << r.error;
}

TEST(OnnxImporterErrors, BadBytes) {
  mlir::MLIRContext context;
  Imported r = importBytes(context, std::string("\xff\xff\xff garbage", 12), "bad.onnx");
  EXPECT_FALSE(r.module);
  EXPECT_EQ(r.error.rfind("failed to parse ONNX model 'bad.onnx': ", 0), 0u) << r.error;
}

TEST(OnnxImporterErrors, EmptyBytes) {
  mlir::MLIRContext context;
  Imported r = importBytes(context, "", "empty.onnx");
  EXPECT_FALSE(r.module);
  EXPECT_EQ(r.error.rfind("failed to parse ONNX model 'empty.onnx'", 0), 0u) << r.error;
}

TEST(OnnxImporterErrors, MissingFile) {
  mlir::MLIRContext context;
  std::string error;
  auto module = unpack(importOnnxFile(context, "/nonexistent/model.onnx", ImportOptions{}), error);
  EXPECT_FALSE(module);
  EXPECT_EQ(error.rfind("failed to parse ONNX model '/nonexistent/model.onnx'", 0), 0u) << error;
}

TEST(OnnxImporterErrors, UnsupportedOpNamesOpNodeAndOpset) {
  ModelBuilder m(15);
  m.input("x", {2});
  m.node("Relu", {"x"}, {"r"});
  m.node("Multinomial", {"r"}, {"y"}, "my_node");
  m.output("y", {2});
  mlir::MLIRContext context;
  Imported r = importBytes(context, m.bytes());
  EXPECT_FALSE(r.module);
  EXPECT_EQ(r.error.rfind("unsupported ONNX op 'Multinomial' (node 'my_node', opset 15, domain '')", 0),
            0u)
      << r.error;
}

// A node of a custom domain is a custom op (kernels/, docs/kernels.md): a
// call of a declaration that names it, resolved after import.
TEST(OnnxImporter, CustomDomainNodeIsACustomOpCall) {
  ModelBuilder m;
  auto *id = m.model.add_opset_import();
  id->set_domain("com.example");
  id->set_version(1);
  m.input("x", {2});
  auto *n = m.node("Relu", {"x"}, {"y"}, "custom");
  n->set_domain("com.example");
  m.output("y", {2});
  mlir::MLIRContext context;
  Imported r = importBytes(context, m.bytes());
  ASSERT_TRUE(r.module) << r.error;
  EXPECT_TRUE(contains(r.text, "turbine.custom_op = \"com.example.Relu\"")) << r.text;
  EXPECT_TRUE(contains(r.text, "call @custom_op_0(")) << r.text;
}

TEST(OnnxImporterErrors, UnsupportedAttributeSaysWhat) {
  ModelBuilder m;
  m.input("x", {1, 2, 4, 4});
  m.intInit("pads", {0, 0, 4, 4, 0, 0, 4, 4});
  auto *pad = m.node("Pad", {"x", "pads"}, {"y"}, "pad0");
  ModelBuilder::stringAttr(pad, "mode", "reflect");
  m.output("y", {1, 2, 12, 12});
  mlir::MLIRContext context;
  Imported r = importBytes(context, m.bytes());
  EXPECT_FALSE(r.module);
  EXPECT_EQ(r.error.rfind("unsupported ONNX op 'Pad' (node 'pad0', opset 17, domain ''): reflect pads must be "
                          "smaller than the dim",
                          0),
            0u)
      << r.error;
}

TEST(OnnxImporterErrors, MissingInputIsReported) {
  ModelBuilder m;
  m.input("x", {2});
  m.node("Add", {"x", "nowhere"}, {"y"}, "add0");
  m.output("y", {2});
  mlir::MLIRContext context;
  Imported r = importBytes(context, m.bytes());
  EXPECT_FALSE(r.module);
  EXPECT_TRUE(contains(r.error, "nowhere")) << r.error;
  EXPECT_TRUE(contains(r.error, "test.onnx")) << r.error;
}

TEST(OnnxImporter, ReshapeTargetIsReadAtRunTime) {
  ModelBuilder m;
  m.input("x", {6});
  m.input("shape", {2}, onnx::TensorProto::INT64, "");
  m.node("Reshape", {"x", "shape"}, {"y"}, "reshape0");
  m.output("y", {-1, -1}, onnx::TensorProto::FLOAT, "");
  mlir::MLIRContext context;
  Imported r = importBytes(context, m.bytes());
  ASSERT_TRUE(r.module) << r.error;
  EXPECT_TRUE(contains(r.text, "tensor.extract %arg1[%c0] : tensor<2xi64>")) << r.text;
  EXPECT_TRUE(contains(r.text, "tensor.extract %arg1[%c1] : tensor<2xi64>")) << r.text;
  EXPECT_TRUE(contains(r.text, "ONNX node 'reshape0' (Reshape, opset 17): the target shape holds a "
                               "different number of elements than the input"))
      << r.text;
  EXPECT_TRUE(contains(r.text, "the target shape has more than one -1")) << r.text;
}

TEST(OnnxImporterErrors, ReshapeTargetOfDynamicLengthIsRejected) {
  ModelBuilder m;
  m.input("x", {6});
  m.input("shape", {-1}, onnx::TensorProto::INT64, "rank");
  m.node("Reshape", {"x", "shape"}, {"y"}, "reshape0");
  m.output("y", {-1, -1}, onnx::TensorProto::FLOAT, "");
  mlir::MLIRContext context;
  Imported r = importBytes(context, m.bytes());
  EXPECT_FALSE(r.module);
  EXPECT_EQ(r.error.rfind("unsupported ONNX op 'Reshape' (node 'reshape0', opset 17", 0), 0u) << r.error;
  EXPECT_TRUE(contains(r.error, "static length")) << r.error;
}

TEST(OnnxImporterErrors, ResizeWithRuntimeInputsChecksTheirShapes) {
  {
    // Run-time sizes import (read on the host).
    ModelBuilder m(13);
    m.input("x", {1, 1, 2, 2});
    m.input("sizes", {4}, onnx::TensorProto::INT64, "");
    m.node("Resize", {"x", "", "", "sizes"}, {"y"}, "resize0");
    m.output("y", {-1, -1, -1, -1}, onnx::TensorProto::FLOAT, "");
    mlir::MLIRContext context;
    Imported r = importBytes(context, m.bytes());
    EXPECT_TRUE(r.module) << r.error;
  }
  {
    // Run-time scales must have one entry per axis.
    ModelBuilder m(13);
    m.input("x", {1, 1, 2, 2});
    m.input("scales", {3}, onnx::TensorProto::FLOAT, "");
    m.node("Resize", {"x", "", "scales"}, {"y"}, "resize0");
    m.output("y", {-1, -1, -1, -1}, onnx::TensorProto::FLOAT, "");
    mlir::MLIRContext context;
    Imported r = importBytes(context, m.bytes());
    EXPECT_FALSE(r.module);
    EXPECT_TRUE(contains(r.error, "ONNX node 'resize0' (Resize, opset 13)")) << r.error;
    EXPECT_TRUE(contains(r.error, "scales must be a 1-D float tensor of static length rank(X) = 4")) << r.error;
  }
  {
    // Run-time sizes of unknown length cannot be read on the host.
    ModelBuilder m(13);
    m.input("x", {1, 1, 2, 2});
    m.input("sizes", {-1}, onnx::TensorProto::INT64, "");
    m.node("Resize", {"x", "", "", "sizes"}, {"y"}, "resize0");
    m.output("y", {-1, -1, -1, -1}, onnx::TensorProto::FLOAT, "");
    mlir::MLIRContext context;
    Imported r = importBytes(context, m.bytes());
    EXPECT_FALSE(r.module);
    EXPECT_EQ(r.error.rfind("unsupported ONNX op 'Resize' (node 'resize0', opset 13, domain ''): input "
                            "'sizes' (sizes) is read at run time",
                            0),
              0u)
        << r.error;
  }
}

TEST(OnnxImporterErrors, NonMaxSuppressionNeedsAStaticSmallBoxCount) {
  ModelBuilder m(11);
  m.input("boxes", {1, -1, 4}, onnx::TensorProto::FLOAT, "");
  m.input("scores", {1, 1, -1}, onnx::TensorProto::FLOAT, "");
  m.node("NonMaxSuppression", {"boxes", "scores"}, {"selected"}, "nms0");
  m.output("selected", {-1, 3}, onnx::TensorProto::INT64, "");
  mlir::MLIRContext context;
  Imported r = importBytes(context, m.bytes());
  EXPECT_FALSE(r.module);
  EXPECT_EQ(r.error.rfind("unsupported ONNX op 'NonMaxSuppression' (node 'nms0', opset 11, domain ''): a "
                          "number of boxes that is dynamic or above 64",
                          0),
            0u)
      << r.error;
}

TEST(OnnxImporterErrors, TfIdfVectorizerRefusesStringPools) {
  ModelBuilder m(11);
  m.input("x", {2, 6}, onnx::TensorProto::INT32, "");
  auto *n = m.node("TfIdfVectorizer", {"x"}, {"y"}, "tfidf0");
  ModelBuilder::stringAttr(n, "mode", "TF");
  ModelBuilder::intAttr(n, "min_gram_length", 1);
  ModelBuilder::intAttr(n, "max_gram_length", 1);
  ModelBuilder::intAttr(n, "max_skip_count", 0);
  ModelBuilder::intsAttr(n, "ngram_counts", {0});
  ModelBuilder::intsAttr(n, "ngram_indexes", {0});
  auto *pool = n->add_attribute();
  pool->set_name("pool_strings");
  pool->set_type(onnx::AttributeProto::STRINGS);
  pool->add_strings("a");
  m.output("y", {2, 1}, onnx::TensorProto::FLOAT, "");
  mlir::MLIRContext context;
  Imported r = importBytes(context, m.bytes());
  EXPECT_FALSE(r.module);
  EXPECT_EQ(r.error.rfind("unsupported ONNX op 'TfIdfVectorizer' (node 'tfidf0', opset 11, domain ''): "
                          "pool_strings (string tensors only run in the host string ops",
                          0),
            0u)
      << r.error;
}

TEST(OnnxImporterErrors, IntegerMaxPoolImportsButNotItsIndices) {
  for (bool withIndices : {false, true}) {
    ModelBuilder m(12);
    m.input("x", {1, 1, 4, 4}, onnx::TensorProto::UINT8, "");
    std::vector<std::string> outputs{"y"};
    if (withIndices)
      outputs.push_back("i");
    auto *n = m.node("MaxPool", {"x"}, outputs, "pool0");
    ModelBuilder::intsAttr(n, "kernel_shape", {2, 2});
    m.output("y", {1, 1, 3, 3}, onnx::TensorProto::UINT8, "");
    if (withIndices)
      m.output("i", {1, 1, 3, 3}, onnx::TensorProto::INT64, "");
    mlir::MLIRContext context;
    Imported r = importBytes(context, m.bytes());
    if (!withIndices) {
      EXPECT_TRUE(r.module) << r.error;
      continue;
    }
    EXPECT_FALSE(r.module);
    EXPECT_EQ(r.error.rfind("unsupported ONNX op 'MaxPool' (node 'pool0', opset 12, domain ''): the Indices "
                            "output of integer MaxPool",
                            0),
              0u)
        << r.error;
  }
}

TEST(OnnxImporterErrors, ResizeUnknownModeButTopKRuntimeKImports) {
  {
    ModelBuilder m(13);
    m.input("x", {1, 1, 2, 2});
    m.intInit("sizes", {1, 1, 4, 4});
    auto *n = m.node("Resize", {"x", "", "", "sizes"}, {"y"}, "resize1");
    ModelBuilder::stringAttr(n, "mode", "area");
    m.output("y", {1, 1, 4, 4});
    mlir::MLIRContext context;
    Imported r = importBytes(context, m.bytes());
    EXPECT_FALSE(r.module);
    EXPECT_TRUE(contains(r.error, "'Resize' (node 'resize1', opset 13, domain ''): mode 'area'")) << r.error;
  }
  {
    ModelBuilder m(11);
    m.input("x", {3, 4});
    m.input("k", {1}, onnx::TensorProto::INT64, "");
    m.node("TopK", {"x", "k"}, {"v", "i"}, "topk0");
    m.output("v", {3, -1}, onnx::TensorProto::FLOAT, "");
    m.output("i", {3, -1}, onnx::TensorProto::INT64, "");
    mlir::MLIRContext context;
    Imported r = importBytes(context, m.bytes());
    // K is read on the host at run time (host-program load).
    EXPECT_TRUE(r.module) << r.error;
  }
}

//===--- sequences, optionals and control flow ----------------------------===//

/// A graph value `name` of tensor type with static `dims`.
void setTensorType(onnx::ValueInfoProto *info, const std::string &name, int elemType,
                   std::initializer_list<int64_t> dims) {
  ModelBuilder::setType(info, name, elemType, dims, "");
}

/// Adds subgraph attribute `name` to `node` and returns the graph.
onnx::GraphProto *graphAttr(onnx::NodeProto *node, const std::string &name) {
  auto *a = node->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::GRAPH);
  a->mutable_g()->set_name(name);
  return a->mutable_g();
}

/// Gives `scan` (one state, one scan input) a running-sum body: s_out =
/// s_in + x_t, and y_t = s_out as the scan output; every value declared
/// float [2] but x_t, declared [`slice`].
void runningSumBody(onnx::NodeProto *scan, int64_t slice = 2) {
  ModelBuilder::intAttr(scan, "num_scan_inputs", 1);
  onnx::GraphProto *body = graphAttr(scan, "body");
  setTensorType(body->add_input(), "s_in", onnx::TensorProto::FLOAT, {2});
  setTensorType(body->add_input(), "x_t", onnx::TensorProto::FLOAT, {slice});
  auto *add = body->add_node();
  add->set_op_type("Add");
  add->add_input("s_in");
  add->add_input("x_t");
  add->add_output("s_out");
  auto *identity = body->add_node();
  identity->set_op_type("Identity");
  identity->add_input("s_out");
  identity->add_output("y_t");
  setTensorType(body->add_output(), "s_out", onnx::TensorProto::FLOAT, {2});
  setTensorType(body->add_output(), "y_t", onnx::TensorProto::FLOAT, {2});
}

/// Declares graph output `name` as a float tensor of rank 1, size unstated.
void untypedShapeOutput(ModelBuilder &m, const std::string &name) {
  auto *out = m.graph->add_output();
  out->set_name(name);
  out->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
  out->mutable_type()->mutable_tensor_type()->mutable_shape()->add_dim();
}

/// A Loop that adds 1 to `x` (float [2]) each iteration, trip count `m`.
void addCountingLoop(ModelBuilder &m, const std::string &tripCount,
                     const std::string &condition = "") {
  auto *loop = m.node("Loop", {tripCount, condition, "x"}, {"y"}, "counting_loop");
  onnx::GraphProto *body = graphAttr(loop, "body");
  setTensorType(body->add_input(), "i", onnx::TensorProto::INT64, {});
  setTensorType(body->add_input(), "c", onnx::TensorProto::BOOL, {});
  setTensorType(body->add_input(), "acc", onnx::TensorProto::FLOAT, {2});
  auto *one = body->add_initializer();
  one->set_name("one");
  one->set_data_type(onnx::TensorProto::FLOAT);
  one->add_float_data(1.0f);
  auto *add = body->add_node();
  add->set_op_type("Add");
  add->add_input("acc");
  add->add_input("one");
  add->add_output("acc_next");
  auto *keep = body->add_node();
  keep->set_op_type("Identity");
  keep->add_input("c");
  keep->add_output("c_next");
  setTensorType(body->add_output(), "c_next", onnx::TensorProto::BOOL, {});
  setTensorType(body->add_output(), "acc_next", onnx::TensorProto::FLOAT, {2});
}

TEST(OnnxImporterErrors, ScanBodyInputDeclaredWithAnotherRank) {
  // Found by the onnx fuzzer (fuzz/corpus/onnx/regress-scan-body-input-rank):
  // a scan input's slices are [2], the body declares them [1, 2] and returns
  // them through an Identity as the scan output. ONNX infers the outputs
  // from the declaration, the import from the value: they disagreed.
  ModelBuilder m(11);
  m.input("s0", {2});
  m.input("x", {3, 2});
  auto *scan = m.node("Scan", {"s0", "x"}, {"s", "y"});
  ModelBuilder::intAttr(scan, "num_scan_inputs", 1);
  onnx::GraphProto *body = graphAttr(scan, "body");
  setTensorType(body->add_input(), "s_in", onnx::TensorProto::FLOAT, {2});
  setTensorType(body->add_input(), "x_t", onnx::TensorProto::FLOAT, {1, 2});
  for (auto [from, to] : {std::pair{"s_in", "s_out"}, std::pair{"x_t", "y_t"}}) {
    auto *identity = body->add_node();
    identity->set_op_type("Identity");
    identity->add_input(from);
    identity->add_output(to);
  }
  setTensorType(body->add_output(), "s_out", onnx::TensorProto::FLOAT, {2});
  setTensorType(body->add_output(), "y_t", onnx::TensorProto::FLOAT, {1, 2});
  m.output("s", {2});
  m.output("y", {3, 1, 2});
  mlir::MLIRContext context;
  Imported r = importBytes(context, m.bytes());
  EXPECT_FALSE(r.module);
  EXPECT_TRUE(contains(r.error, "body input 'x_t' is declared with rank 2 but receives a rank-1 tensor"))
      << r.error;
  // Declared as received: imports.
  body->mutable_input(1)->mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim()->erase(
      body->mutable_input(1)->mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim()->begin());
  body->mutable_output(1)->mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim()->erase(
      body->mutable_output(1)->mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim()->begin());
  m.graph->mutable_output(1)->mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim()->erase(
      m.graph->mutable_output(1)->mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim()->begin() + 1);
  Imported ok = importBytes(context, m.bytes());
  EXPECT_TRUE(ok.module) << ok.error;
}

TEST(OnnxImporterErrors, ScanBodyInputDeclaredWithStaticSizes) {
  // Found by the onnx fuzzer (fuzz/corpus/onnx/regress-scan-state-declared-size):
  // a state of size [?] whose body input is declared [2], added to slices
  // of 112. ONNX infers the body from the declaration ([2] + [112] does not
  // broadcast), the import bound the [?] and made [112]: they disagreed.
  // The declared size now refines the state (a run-time check, then
  // static), and the Add fails at import.
  auto model = [](int64_t slice, int64_t declaredSlice) {
    ModelBuilder m(9);
    m.input("s0", {-1});
    m.input("x", {3, slice});
    runningSumBody(m.node("Scan", {"s0", "x"}, {"s", "y"}), declaredSlice);
    m.output("s", {2});
    m.output("y", {3, 2});
    return m;
  };
  ModelBuilder bad = model(112, 112);
  mlir::MLIRContext context;
  Imported r = importBytes(context, bad.bytes());
  EXPECT_FALSE(r.module);
  EXPECT_TRUE(contains(r.error, "(Add, opset 9)")) << r.error;
  // Slices of 2: imports, the state checked against its declared size.
  ModelBuilder good = model(2, 2);
  Imported ok = importBytes(context, good.bytes());
  ASSERT_TRUE(ok.module) << ok.error;
  EXPECT_TRUE(contains(ok.text, "body input 's_in' is declared with size 2 along dim 0"))
      << ok.text;
  // Slices of a dynamic size (the scan input's dim 1), declared 2: likewise.
  ModelBuilder dynamicSlices = model(-1, 2);
  Imported refined = importBytes(context, dynamicSlices.bytes());
  ASSERT_TRUE(refined.module) << refined.error;
  EXPECT_TRUE(contains(refined.text, "body input 'x_t' is declared with size 2 along dim 0"))
      << refined.text;
  // A static size other than the declared one: a clear error.
  ModelBuilder wrong = model(3, 2);
  expectImportError(wrong, "body input 'x_t' is declared with size 2 along dim 0 but receives "
                           "size 3");
}

TEST(OnnxImporterErrors, LibonnxInferenceCrashesRefusedBeforeItRuns) {
  // Found by the onnx fuzzer: libonnx 1.12's shape inference killed the
  // process (fuzz/corpus/onnx/regress-pool-stride-0,
  // regress-maxunpool-indices-rank); the importer refuses such nodes first.
  for (const char *op : {"AveragePool", "MaxPool", "Conv"}) {
    // A stride of 0: its inference divides by it (SIGFPE).
    ModelBuilder m(11);
    m.input("x", {1, 1, 8, 8});
    std::vector<std::string> inputs = {"x"};
    if (std::string(op) == "Conv") {
      m.floatInit("w", {1, 1, 3, 3});
      inputs.push_back("w");
    }
    auto *node = m.node(op, inputs, {"y"}, "window");
    ModelBuilder::intsAttr(node, "kernel_shape", {3, 3});
    ModelBuilder::intsAttr(node, "strides", {0, 2});
    m.output("y", {1, 1, -1, -1});
    expectImportError(m, "node 'window' (" + std::string(op) +
                             "): every entry of 'strides' must be positive");
  }
  {
    ModelBuilder m(11);
    m.input("x", {1, 1, 8, 8});
    auto *pool = m.node("MaxPool", {"x"}, {"y"}, "pool");
    ModelBuilder::intsAttr(pool, "kernel_shape", {0, 3});
    m.output("y", {1, 1, -1, -1});
    expectImportError(m, "(MaxPool): every entry of 'kernel_shape' must be positive");
  }
  {
    // MaxUnpool's inference reads dim 1 of I (out of bounds for rank 1).
    ModelBuilder m(11);
    m.input("x", {1, 1, 4, 4});
    m.input("i", {4}, onnx::TensorProto::INT64);
    auto *unpool = m.node("MaxUnpool", {"x", "i"}, {"y"}, "unpool");
    ModelBuilder::intsAttr(unpool, "kernel_shape", {2, 2});
    ModelBuilder::intsAttr(unpool, "strides", {2, 2});
    m.output("y", {1, 1, 8, 8});
    expectImportError(m, "node 'unpool' (MaxUnpool): I has rank 1, X has rank 4");
  }
}

TEST(OnnxImporterErrors, FuzzerFindingsOfNovember29) {
  // Found by the onnx fuzzer on 29 Nov (fuzz/corpus/onnx/regress-*): f16
  // indices and lengths made IR that did not verify.
  {
    // regress-scatternd-float-indices
    ModelBuilder m(16);
    m.input("data", {4, 3});
    m.input("indices", {2, 1}, onnx::TensorProto::FLOAT16);
    m.input("updates", {2, 3});
    m.node("ScatterND", {"data", "indices", "updates"}, {"y"});
    m.output("y", {4, 3});
    expectImportError(m, "(ScatterND, opset 16): indices must be integers");
  }
  {
    // regress-reversesequence-float-lens
    ModelBuilder m(10);
    m.input("x", {3, 2});
    m.input("lens", {2}, onnx::TensorProto::FLOAT16);
    m.node("ReverseSequence", {"x", "lens"}, {"y"});
    m.output("y", {3, 2});
    expectImportError(m, "(ReverseSequence, opset 10): sequence_lens must be integers");
  }
}

TEST(OnnxImporterErrors, FuzzerFindingsOfNovember28) {
  // Found by the onnx fuzzer in its run of 2026-11-28 (inputs under
  // fuzz/corpus/onnx/regress-*): each made IR that did not verify, a
  // SmallVector of -1 elements, or an import that disagreed with ONNX's
  // shape inference, a null dereference (in libonnx's inference, or reading
  // the outputs of a Scan of no iteration); now each is a clear error.
  {
    // regress-concat-element-types: float and int16.
    ModelBuilder m(13);
    m.input("a", {2});
    m.input("b", {2}, onnx::TensorProto::INT16);
    ModelBuilder::intAttr(m.node("Concat", {"a", "b"}, {"y"}), "axis", 0);
    m.output("y", {4});
    expectImportError(m, "(Concat, opset 13): inputs have different element types");
  }
  {
    // regress-batchnorm-var-size: one variance for 3 channels.
    ModelBuilder m(15);
    m.input("x", {2, 3, 4, 5});
    for (const char *p : {"s", "bias", "mean"})
      m.input(p, {3});
    m.input("var", {1});
    m.node("BatchNormalization", {"x", "s", "bias", "mean", "var"}, {"y"});
    m.output("y", {2, 3, 4, 5});
    expectImportError(m, "input 4 has 1 values, the input has 3 channels");
  }
  {
    // regress-scan8-scalar-state: Scan-8's axis 0 is the batch; a rank-0
    // state has none.
    ModelBuilder m(8);
    m.input("initial", {});
    m.input("x", {1, 3, 2});
    runningSumBody(m.node("Scan", {"", "initial", "x"}, {"y", "z"}));
    m.output("y", {1, 2});
    expectImportError(m, "state 0 does not have the scan inputs' batch size along axis 0");
  }
  {
    // regress-input-output-declared-twice: x is a float [14] input and a
    // uint8 [6] output.
    ModelBuilder m(11);
    m.input("x", {14});
    m.node("DynamicQuantizeLinear", {"x"}, {"y", "y_scale", "y_zero_point"});
    m.output("x", {6}, onnx::TensorProto::UINT8);
    expectImportError(m, "value 'x' is a graph input and a graph output declared with different types");
  }
  {
    // regress-layernorm-scalar-x: libonnx's LayerNormalization inference
    // dereferenced null for a rank-0 X; refused before it runs.
    ModelBuilder m(17);
    m.input("x", {});
    m.input("w", {4});
    m.input("b", {4});
    m.node("LayerNormalization", {"x", "w", "b"}, {"y"});
    m.output("y", {});
    expectImportError(m, "(LayerNormalization): X has rank 0");
  }
  {
    // regress-scan-length-0: no iteration, and the scan outputs of none
    // were read.
    ModelBuilder m(11);
    m.input("s0", {2});
    m.input("x", {0, 2});
    runningSumBody(m.node("Scan", {"s0", "x"}, {"s", "y"}));
    m.output("s", {2});
    m.output("y", {0, 2});
    expectImportError(m, "the scan inputs have length 0 along the scan axis");
  }
  {
    // regress-instancenorm-scale-size: 44 scales for 2 channels.
    ModelBuilder m(6);
    m.input("x", {1, 2, 1, 3});
    m.input("s", {44});
    m.input("bias", {2});
    m.node("InstanceNormalization", {"x", "s", "bias"}, {"y"});
    m.output("y", {1, 2, 1, 3});
    expectImportError(m, "input 1 has 44 values, the input has 2 channels");
  }
  {
    // regress-sce-weight-type: int8 class weights for float scores.
    ModelBuilder m(13);
    m.input("x", {3, 5});
    m.input("y", {3}, onnx::TensorProto::INT64);
    m.input("w", {5}, onnx::TensorProto::INT8);
    m.node("SoftmaxCrossEntropyLoss", {"x", "y", "w"}, {"z"});
    m.output("z", {});
    expectImportError(m, "weight must have the input's element type");
  }
  {
    // regress-tfidf-output-size: 7 ngram_indexes for the pool's 6 n-grams;
    // the output has max(ngram_indexes) + 1 = 7 entries, as ONNX says (the
    // import made 6).
    ModelBuilder m(9);
    m.input("X", {12}, onnx::TensorProto::INT32);
    auto *t = m.node("TfIdfVectorizer", {"X"}, {"Y"});
    ModelBuilder::intAttr(t, "max_gram_length", 2);
    ModelBuilder::intAttr(t, "min_gram_length", 1);
    ModelBuilder::intAttr(t, "max_skip_count", 5);
    ModelBuilder::stringAttr(t, "mode", "TF");
    ModelBuilder::intsAttr(t, "ngram_counts", {0, 4});
    ModelBuilder::intsAttr(t, "ngram_indexes", {0, 1, 2, 3, 4, 5, 6});
    ModelBuilder::intsAttr(t, "pool_int64s", {83, 4, 5, 6, 7, 8, 6, 7});
    m.output("Y", {7});
    mlir::MLIRContext context;
    Imported r = importBytes(context, m.bytes());
    ASSERT_TRUE(r.module) << r.error;
    EXPECT_TRUE(contains(r.text, "tensor<7xf32>")) << r.text;
  }
}

TEST(OnnxImporter, LoopWithConstantTripCountIsUnrolled) {
  ModelBuilder m(16);
  m.input("x", {2});
  m.intInit("m", {3}, /*scalar=*/true);
  addCountingLoop(m, "m");
  m.output("y", {2});
  mlir::MLIRContext context;
  Imported r = importBytes(context, m.bytes());
  ASSERT_TRUE(r.module) << r.error;
  size_t adds = 0;
  for (size_t at = 0; (at = r.text.find("arith.addf", at)) != std::string::npos; ++at)
    ++adds;
  EXPECT_EQ(adds, 3u) << "one Add per unrolled iteration:\n" << r.text;
  expectWithinContract(*r.module);
}

/// Imports `m` and checks the Loop became one scf.while (a host loop) whose
/// body holds the one Add of the loop body.
void expectHostLoop(ModelBuilder &m) {
  mlir::MLIRContext context;
  Imported r = importBytes(context, m.bytes());
  ASSERT_TRUE(r.module) << r.error;
  EXPECT_TRUE(mlir::succeeded(mlir::verify(*r.module)));
  size_t loops = 0, adds = 0;
  r.module->walk([&](mlir::Operation *op) {
    if (op->getName().getStringRef() == "scf.while")
      ++loops;
    if (op->getName().getStringRef() == "arith.addf") {
      ++adds;
      EXPECT_TRUE(op->getParentOfType<mlir::scf::WhileOp>()) << "the Add runs inside the loop";
    }
  });
  EXPECT_EQ(loops, 1u) << r.text;
  EXPECT_EQ(adds, 1u) << "the body is imported once, not unrolled:\n" << r.text;
  expectWithinContract(*r.module);
}

TEST(OnnxImporter, LoopWithRunTimeTripCountIsAHostLoop) {
  ModelBuilder m(16);
  m.input("x", {2});
  m.input("m", {}, onnx::TensorProto::INT64);
  addCountingLoop(m, "m");
  m.output("y", {2});
  expectHostLoop(m);
}

TEST(OnnxImporter, LoopWithRunTimeConditionAndNoTripCountIsAHostLoop) {
  ModelBuilder m(16);
  m.input("x", {2});
  m.input("go", {}, onnx::TensorProto::BOOL);
  addCountingLoop(m, "", "go");
  m.output("y", {2});
  expectHostLoop(m);
}

TEST(OnnxImporter, LoopBeyondTheUnrollLimitIsAHostLoop) {
  ModelBuilder m(16);
  m.input("x", {2});
  m.intInit("m", {5000}, /*scalar=*/true);
  addCountingLoop(m, "m");
  m.output("y", {2});
  expectHostLoop(m);
}

TEST(OnnxImporterErrors, LoopBodyInputDeclaredWithStaticSizes) {
  // Found by the onnx fuzzer (fuzz/corpus/onnx/regress-loop-carried-declared-size):
  // a loop-carried [96] whose body input is declared [1]; ONNX infers the
  // body from the declaration, the import bound the [96]: they disagreed.
  // As for Scan, the declaration is checked (or refines a dynamic size),
  // whether the loop is unrolled or runs in the host program.
  for (bool hostLoop : {false, true}) {
    SCOPED_TRACE(hostLoop ? "host loop" : "unrolled");
    auto model = [&](int64_t size) {
      ModelBuilder m(16);
      m.input("x", {size});
      if (hostLoop)
        m.input("m", {}, onnx::TensorProto::INT64);
      else
        m.intInit("m", {3}, /*scalar=*/true);
      addCountingLoop(m, "m"); // body input 'acc' declared [2]
      m.output("y", {size});
      return m;
    };
    ModelBuilder wrong = model(96);
    expectImportError(wrong, "body input 'acc' is declared with size 2 along dim 0 but receives "
                             "size 96");
    ModelBuilder dynamic = model(-1);
    mlir::MLIRContext context;
    Imported refined = importBytes(context, dynamic.bytes());
    ASSERT_TRUE(refined.module) << refined.error;
    EXPECT_TRUE(contains(refined.text, "body input 'acc' is declared with size 2 along dim 0"))
        << refined.text;
    expectWithinContract(*refined.module);
  }
}

/// An If on `cond` whose branches return constants of sizes `thenSize`/`elseSize`.
void addConstantIf(ModelBuilder &m, int64_t thenSize, int64_t elseSize) {
  auto *node = m.node("If", {"cond"}, {"y"}, "choose");
  for (auto [name, size] : {std::pair<const char *, int64_t>{"then_branch", thenSize},
                            std::pair<const char *, int64_t>{"else_branch", elseSize}}) {
    onnx::GraphProto *g = graphAttr(node, name);
    auto *c = g->add_node();
    c->set_op_type("Constant");
    c->add_output(std::string(name) + "_value");
    auto *a = c->add_attribute();
    a->set_name("value");
    a->set_type(onnx::AttributeProto::TENSOR);
    a->mutable_t()->set_data_type(onnx::TensorProto::FLOAT);
    a->mutable_t()->add_dims(size);
    for (int64_t k = 0; k < size; ++k)
      a->mutable_t()->add_float_data(static_cast<float>(k));
    auto *out = g->add_output();
    out->set_name(std::string(name) + "_value");
    out->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
    out->mutable_type()->mutable_tensor_type()->mutable_shape()->add_dim();
  }
}

TEST(OnnxImporter, IfWithRunTimeConditionSelectsElementwise) {
  ModelBuilder m(16);
  m.input("cond", {}, onnx::TensorProto::BOOL);
  addConstantIf(m, 3, 3);
  untypedShapeOutput(m, "y");
  mlir::MLIRContext context;
  Imported r = importBytes(context, m.bytes());
  ASSERT_TRUE(r.module) << r.error;
  EXPECT_TRUE(contains(r.text, "arith.select")) << r.text;
  EXPECT_TRUE(contains(r.text, "-> (tensor<3xf32>")) << r.text;
  expectWithinContract(*r.module);
}

TEST(OnnxImporter, IfWithRunTimeConditionAndDifferentShapesIsAnError) {
  ModelBuilder m(16);
  m.input("cond", {}, onnx::TensorProto::BOOL);
  addConstantIf(m, 3, 4);
  untypedShapeOutput(m, "y");
  mlir::MLIRContext context;
  Imported r = importBytes(context, m.bytes());
  ASSERT_FALSE(r.module);
  EXPECT_TRUE(contains(r.error, "ONNX node 'choose' (If, opset 16)")) << r.error;
  EXPECT_TRUE(contains(r.error, "run-time condition 'cond'")) << r.error;
  EXPECT_TRUE(contains(r.error, "different types (tensor<3xf32> and tensor<4xf32>)")) << r.error;
}

TEST(OnnxImporter, IfWithConstantConditionImportsOneBranch) {
  ModelBuilder m(16);
  auto *t = m.graph->add_initializer();
  t->set_name("cond");
  t->set_data_type(onnx::TensorProto::BOOL);
  t->add_int32_data(0);
  addConstantIf(m, 3, 4); // different shapes are fine: only else is taken
  untypedShapeOutput(m, "y");
  mlir::MLIRContext context;
  Imported r = importBytes(context, m.bytes());
  ASSERT_TRUE(r.module) << r.error;
  EXPECT_TRUE(contains(r.text, "-> (tensor<4xf32>")) << r.text;
}

/// SequenceConstruct(a, b) -> SequenceAt(pos), a: [2], b: [bSize].
ModelBuilder sequenceAtModel(int64_t bSize, bool runTimePosition) {
  ModelBuilder m(16);
  m.input("a", {2});
  m.input("b", {bSize});
  if (runTimePosition)
    m.input("pos", {}, onnx::TensorProto::INT64);
  else
    m.intInit("pos", {-1}, /*scalar=*/true);
  m.node("SequenceConstruct", {"a", "b"}, {"seq"});
  m.node("SequenceAt", {"seq", "pos"}, {"y"}, "pick");
  untypedShapeOutput(m, "y");
  return m;
}

TEST(OnnxImporter, SequenceAtConstantPositionPicksTheElement) {
  mlir::MLIRContext context;
  Imported r = importBytes(context, sequenceAtModel(5, false).bytes());
  ASSERT_TRUE(r.module) << r.error;
  EXPECT_TRUE(contains(r.text, "-> (tensor<5xf32>")) << r.text;
}

TEST(OnnxImporter, SequenceAtRunTimePositionSelectsAmongEqualElements) {
  mlir::MLIRContext context;
  Imported r = importBytes(context, sequenceAtModel(2, true).bytes());
  ASSERT_TRUE(r.module) << r.error;
  EXPECT_TRUE(contains(r.text, "arith.select")) << r.text;
  expectWithinContract(*r.module);
}

TEST(OnnxImporter, SequenceAtRunTimePositionOverDifferentShapesIsAnError) {
  mlir::MLIRContext context;
  Imported r = importBytes(context, sequenceAtModel(5, true).bytes());
  ASSERT_FALSE(r.module);
  EXPECT_TRUE(contains(r.error, "ONNX node 'pick' (SequenceAt, opset 16)")) << r.error;
  EXPECT_TRUE(contains(r.error, "run-time position 'pos'")) << r.error;
  EXPECT_TRUE(contains(r.error, "different types")) << r.error;
}

/// Identity on a sequence input `xs` of float [3] elements.
ModelBuilder sequenceIdentityModel() {
  ModelBuilder m(16);
  auto *in = m.graph->add_input();
  in->set_name("xs");
  auto *elem = in->mutable_type()->mutable_sequence_type()->mutable_elem_type();
  elem->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
  elem->mutable_tensor_type()->mutable_shape()->add_dim()->set_dim_value(3);
  m.node("Identity", {"xs"}, {"ys"});
  auto *out = m.graph->add_output();
  out->set_name("ys");
  *out->mutable_type() = in->type();
  return m;
}

TEST(OnnxImporter, SequenceInputWithoutLengthIsAnError) {
  mlir::MLIRContext context;
  Imported r = importBytes(context, sequenceIdentityModel().bytes());
  ASSERT_FALSE(r.module);
  EXPECT_TRUE(contains(r.error, "sequence input 'xs' needs its length fixed at compile time"))
      << r.error;
  EXPECT_TRUE(contains(r.error, "a sequence length xs=N")) << r.error;
}

TEST(OnnxImporter, SequenceInputIsFlattenedToItsElements) {
  mlir::MLIRContext context;
  ImportOptions options;
  options.sequenceInputLengths["xs"] = 2;
  std::string error;
  auto module = unpack(importOnnxBytes(context, sequenceIdentityModel().bytes(), "t.onnx", options), error);
  ASSERT_TRUE(module) << error;
  std::string text;
  llvm::raw_string_ostream os(text);
  module->print(os);
  EXPECT_TRUE(contains(text, "turbine.name = \"xs[0]\"")) << text;
  EXPECT_TRUE(contains(text, "turbine.name = \"xs[1]\"")) << text;
  EXPECT_TRUE(contains(text, "turbine.name = \"ys[1]\"")) << text;
  EXPECT_TRUE(contains(text, "-> (tensor<3xf32>")) << text;
}

/// SplitToSequence of x (float [6]) by run-time sizes `split` (int64 [2]).
ModelBuilder splitByRunTimeSizes() {
  ModelBuilder m(16);
  m.input("x", {6});
  m.input("split", {2}, onnx::TensorProto::INT64);
  m.node("SplitToSequence", {"x", "split"}, {"pieces"}, "split_by_sizes");
  return m;
}

TEST(OnnxImporter, SequenceLengthOfARunTimeSplitIsKnown) {
  ModelBuilder m = splitByRunTimeSizes();
  m.node("SequenceLength", {"pieces"}, {"n"});
  m.output("n", {}, onnx::TensorProto::INT64);
  mlir::MLIRContext context;
  Imported r = importBytes(context, m.bytes());
  ASSERT_TRUE(r.module) << r.error;
  EXPECT_TRUE(contains(r.text, "dense<2> : tensor<i64>")) << r.text;
}

TEST(OnnxImporter, ElementOfARunTimeSplitIsAnError) {
  ModelBuilder m = splitByRunTimeSizes();
  m.intInit("first", {0}, /*scalar=*/true);
  m.node("SequenceAt", {"pieces", "first"}, {"y"}, "first_piece");
  untypedShapeOutput(m, "y");
  mlir::MLIRContext context;
  Imported r = importBytes(context, m.bytes());
  ASSERT_FALSE(r.module);
  EXPECT_TRUE(contains(r.error, "unsupported ONNX op 'SequenceAt' (node 'first_piece', opset 16"))
      << r.error;
  EXPECT_TRUE(contains(r.error, "the elements of sequence 'pieces' are not known at import time "
                                "(their sizes come from run-time input 'split'"))
      << r.error;
}

TEST(OnnxImporter, SequenceWhereATensorIsExpectedIsAnError) {
  ModelBuilder m(16);
  m.input("a", {2});
  m.node("SequenceConstruct", {"a"}, {"seq"});
  m.node("Relu", {"seq"}, {"y"}, "relu_of_sequence");
  untypedShapeOutput(m, "y");
  mlir::MLIRContext context;
  Imported r = importBytes(context, m.bytes());
  ASSERT_FALSE(r.module);
  EXPECT_TRUE(contains(r.error, "ONNX node 'relu_of_sequence' (Relu, opset 16): input 'seq' is "
                                "a sequence where a tensor is expected"))
      << r.error;
}

//===--- exported PyTorch models ------------------------------------------===//

class ExportedModel : public ::testing::TestWithParam<std::string> {};

TEST_P(ExportedModel, ImportsVerifiesAndKeepsBatchDynamic) {
  std::string path = std::string(TURBINE_TEST_MODELS_DIR) + "/" + GetParam() + "/model.onnx";
  if (!std::ifstream(path).good())
    GTEST_SKIP() << "model not exported: " << path;
  mlir::MLIRContext context;
  std::string error;
  auto module = unpack(importOnnxFile(context, path, ImportOptions{}), error);
  ASSERT_TRUE(module) << error;
  EXPECT_TRUE(mlir::succeeded(mlir::verify(*module)));
  auto func = module->lookupSymbol<mlir::func::FuncOp>("main");
  ASSERT_TRUE(func);
  auto inputType = mlir::cast<mlir::RankedTensorType>(func.getArgumentTypes()[0]);
  auto outputType = mlir::cast<mlir::RankedTensorType>(func.getResultTypes()[0]);
  EXPECT_TRUE(inputType.isDynamicDim(0));
  EXPECT_TRUE(outputType.isDynamicDim(0));
  for (int64_t d = 1; d < outputType.getRank(); ++d)
    EXPECT_FALSE(outputType.isDynamicDim(d)) << "only the batch dim should be dynamic";
  expectWithinContract(*module);
}

INSTANTIATE_TEST_SUITE_P(Models, ExportedModel,
                         ::testing::Values("mlp", "cnn", "transformer"));

} // namespace

//===--- string tensors ------------------------------------------------===//

TEST(OnnxImporter, StringOpsBecomeHostStringOps) {
  ModelBuilder m(13);
  m.input("x", {1, 4}, onnx::TensorProto::STRING);
  auto *normalize = m.node("StringNormalizer", {"x"}, {"y"}, "norm");
  ModelBuilder::stringAttr(normalize, "case_change_action", "UPPER");
  auto *stopwords = normalize->add_attribute();
  stopwords->set_name("stopwords");
  stopwords->set_type(onnx::AttributeProto::STRINGS);
  stopwords->add_strings("monday");
  ModelBuilder::intAttr(m.node("Cast", {"x"}, {"f"}, "parse"), "to", onnx::TensorProto::FLOAT);
  ModelBuilder::intAttr(m.node("Cast", {"f"}, {"s"}, "format"), "to", onnx::TensorProto::STRING);
  m.output("y", {1, -1}, onnx::TensorProto::STRING, "");
  m.output("s", {1, 4}, onnx::TensorProto::STRING);
  mlir::MLIRContext context;
  Imported r = importBytes(context, m.bytes());
  ASSERT_TRUE(r.module) << r.error;
  EXPECT_TRUE(contains(r.text, "turbine.string_normalize %arg0 {case_change = \"UPPER\", "
                               "case_sensitive = false, locale = \"\", stopwords = [\"monday\"]} "
                               ": tensor<1x4x!turbine.string> -> tensor<1x?x!turbine.string>"))
      << r.text;
  EXPECT_TRUE(contains(r.text, "turbine.from_string %arg0 : tensor<1x4x!turbine.string> -> "
                               "tensor<1x4xf32>"))
      << r.text;
  EXPECT_TRUE(contains(r.text, "turbine.to_string")) << r.text;
  EXPECT_FALSE(contains(r.text, "linalg")) << r.text; // strings never enter kernels
}

TEST(OnnxImporter, StringsReachingOtherOpsAreRefused) {
  ModelBuilder m(13);
  m.input("x", {4}, onnx::TensorProto::STRING, "");
  m.node("Add", {"x", "x"}, {"y"}, "add_strings");
  m.output("y", {4}, onnx::TensorProto::STRING, "");
  mlir::MLIRContext context;
  Imported r = importBytes(context, m.bytes());
  ASSERT_FALSE(r.module);
  EXPECT_TRUE(contains(r.error, "unsupported ONNX op 'Add' (node 'add_strings', opset 13, "
                                "domain ''): input 'x' holds strings, which only "
                                "StringNormalizer, Cast, CastLike and Identity take"))
      << r.error;
}

TEST(OnnxImporter, StringConstantsAreRefused) {
  ModelBuilder m(13);
  m.input("x", {1}, onnx::TensorProto::STRING, "");
  auto *t = m.graph->add_initializer();
  t->set_name("words");
  t->set_data_type(onnx::TensorProto::STRING);
  t->add_dims(1);
  t->add_string_data("monday");
  m.node("Identity", {"words"}, {"y"});
  m.output("y", {1}, onnx::TensorProto::STRING, "");
  mlir::MLIRContext context;
  Imported r = importBytes(context, m.bytes());
  ASSERT_FALSE(r.module);
  EXPECT_TRUE(contains(r.error, "tensor 'words' holds strings: string constants are not "
                                "supported"))
      << r.error;
}
