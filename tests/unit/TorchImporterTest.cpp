//===- TorchImporterTest.cpp - TorchScript frontend: signatures and errors ===//
//
// Imports the modules exported by tests/models/export_torchscript_models.py
// and checks the signature the importer builds from the user's input specs
// (dynamic dims, names), the folding of control flow known at import time,
// and every error path: spec syntax, wrong number of shapes, unknown dynamic
// dim, malformed and truncated archives, an unsupported op (schema and Python
// source line in the message), branches and loops that depend on a dynamic
// dim or on tensor data. Numerics are checked end to end (tests/e2e).
//===----------------------------------------------------------------------===//
#include "turbine/frontends/torch/TorchImporter.h"
#include "UnpackResult.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/MLIRContext.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

using namespace turbine;
using turbine::test_support::unpack;
using namespace turbine::torch_frontend;

namespace {

std::string modelPath(const std::string &relative) {
  return std::string(TURBINE_TORCH_MODELS_DIR) + "/" + relative;
}

mlir::OwningOpRef<mlir::ModuleOp> importFile(mlir::MLIRContext &context, const std::string &path,
                                             const ImportOptions &options, std::string &error) {
  return unpack(importTorchScriptFile(context, path, options), error);
}

ImportOptions optionsFor(const std::string &shape, std::vector<DynamicDim> dynamic = {}) {
  ImportOptions options;
  Result<InputSpec> spec = parseInputSpec(shape);
  EXPECT_TRUE(spec.ok()) << spec.message();
  options.inputs.push_back(spec ? *spec : InputSpec());
  options.dynamicDims = std::move(dynamic);
  return options;
}

/// Imports `relative` and returns the error (empty on success).
std::string importError(const std::string &relative, const ImportOptions &options) {
  mlir::MLIRContext context;
  std::string error;
  auto module = importFile(context, modelPath(relative), options, error);
  EXPECT_EQ(!module, !error.empty()) << error;
  return error;
}

TEST(TorchInputSpec, ParsesShapesAndDtypes) {
  Result<InputSpec> spec = parseInputSpec("1x3x224x224xf32");
  ASSERT_TRUE(spec.ok()) << spec.message();
  EXPECT_EQ(spec->shape, (std::vector<int64_t>{1, 3, 224, 224}));
  EXPECT_EQ(spec->dtype, "f32");
  Result<InputSpec> scalar = parseInputSpec("i64");
  ASSERT_TRUE(scalar.ok()) << scalar.message();
  EXPECT_TRUE(scalar->shape.empty());
  EXPECT_EQ(scalar->dtype, "i64");
}

TEST(TorchInputSpec, RejectsMalformedSpecs) {
  Result<InputSpec> badDim = parseInputSpec("1xAx3xf32");
  EXPECT_FALSE(badDim.ok());
  EXPECT_NE(badDim.message().find("'A' is not a dim size"), std::string::npos) << badDim.message();
  Result<InputSpec> badType = parseInputSpec("1x3xq7");
  EXPECT_FALSE(badType.ok());
  EXPECT_NE(badType.message().find("unknown element type 'q7'"), std::string::npos)
      << badType.message();
  EXPECT_FALSE(parseInputSpec("").ok());
  Result<DynamicDim> dim = parseDynamicDim("x:-1");
  ASSERT_TRUE(dim.ok()) << dim.message();
  EXPECT_EQ(dim->input, "x");
  EXPECT_EQ(dim->dim, -1);
  EXPECT_FALSE(parseDynamicDim("0").ok());
  Result<DynamicDim> badDimIndex = parseDynamicDim("0:z");
  EXPECT_FALSE(badDimIndex.ok());
  EXPECT_NE(badDimIndex.message().find("expected <input index or name>:<dim>"), std::string::npos)
      << badDimIndex.message();
}

TEST(TorchImporter, DynamicBatchSignature) {
  mlir::MLIRContext context;
  std::string error;
  auto module = importFile(context, modelPath("mlp/traced.pt"),
                                      optionsFor("1x64xf32", {{"x", 0}}), error);
  ASSERT_TRUE(module) << error;
  auto func = module->lookupSymbol<mlir::func::FuncOp>("main");
  ASSERT_TRUE(func);
  auto in = mlir::cast<mlir::RankedTensorType>(func.getArgumentTypes()[0]);
  EXPECT_TRUE(in.isDynamicDim(0));
  EXPECT_EQ(in.getDimSize(1), 64);
  auto out = mlir::cast<mlir::RankedTensorType>(func.getResultTypes()[0]);
  EXPECT_TRUE(out.isDynamicDim(0));
  EXPECT_EQ(out.getDimSize(1), 10);
  EXPECT_EQ(func.getArgAttrOfType<mlir::StringAttr>(0, "turbine.name").str(), "x");
  auto dims = func.getArgAttrOfType<mlir::ArrayAttr>(0, "turbine.dims");
  ASSERT_TRUE(dims);
  EXPECT_EQ(mlir::cast<mlir::StringAttr>(dims[0]).str(), "x_0");
  // The result's batch dim is the input's: same name.
  auto resultDims = func.getResultAttrOfType<mlir::ArrayAttr>(0, "turbine.dims");
  ASSERT_TRUE(resultDims);
  EXPECT_EQ(mlir::cast<mlir::StringAttr>(resultDims[0]).str(), "x_0");
}

TEST(TorchImporter, StaticShapeWithoutDynamicDims) {
  mlir::MLIRContext context;
  std::string error;
  auto module = importFile(context, modelPath("gpt/scripted.pt"),
                                      optionsFor("2x16xi64"), error);
  ASSERT_TRUE(module) << error;
  auto func = module->lookupSymbol<mlir::func::FuncOp>("main");
  auto out = mlir::cast<mlir::RankedTensorType>(func.getResultTypes()[0]);
  EXPECT_EQ(out.getShape(), (llvm::ArrayRef<int64_t>{2, 16, 96}));
}

TEST(TorchImporter, FoldsIfAndUnrollsLoopKnownFromShapes) {
  // prim::If on x.dim() and prim::Loop over x.size(1) // 4 (scripted).
  EXPECT_EQ(importError("control/scripted.pt", optionsFor("1x8xf32", {{"0", 0}})), "");
}

TEST(TorchImporter, WrongNumberOfInputShapes) {
  std::string error = importError("mlp/traced.pt", ImportOptions());
  EXPECT_NE(error.find("forward takes 1 input(s) (x: Tensor) but 0 input shape(s)"),
            std::string::npos) << error;
}

TEST(TorchImporter, UnknownDynamicDimInput) {
  std::string error = importError("mlp/traced.pt", optionsFor("1x64xf32", {{"y", 0}}));
  EXPECT_NE(error.find("names input 'y'"), std::string::npos) << error;
  error = importError("mlp/traced.pt", optionsFor("1x64xf32", {{"0", 5}}));
  EXPECT_NE(error.find("out of range for an input of rank 2"), std::string::npos) << error;
}

TEST(TorchImporter, MalformedArchive) {
  std::string error = importError("errors/not_a_model.pt", optionsFor("2x8xf32"));
  EXPECT_NE(error.find("cannot load TorchScript file"), std::string::npos) << error;
  EXPECT_NE(error.find("not_a_model.pt"), std::string::npos) << error;
  error = importError("errors/truncated.pt", optionsFor("2x8xf32"));
  EXPECT_NE(error.find("cannot load TorchScript file"), std::string::npos) << error;
  error = importError("errors/checkpoint.pt", optionsFor("2x8xf32"));
  EXPECT_NE(error.find("torch.save() checkpoint, not a TorchScript module"), std::string::npos)
      << error;
  error = importError("errors/does_not_exist.pt", optionsFor("2x8xf32"));
  EXPECT_NE(error.find("cannot load TorchScript file"), std::string::npos) << error;

  mlir::MLIRContext context;
  auto module = unpack(importTorchScriptBytes(context, std::string("PK\x03\x04garbage", 11), "<bytes>",
                                       optionsFor("2x8xf32")), error);
  EXPECT_FALSE(module);
  EXPECT_NE(error.find("cannot load TorchScript file '<bytes>'"), std::string::npos) << error;
}

TEST(TorchImporter, UnsupportedOpNamesSchemaAndSourceLine) {
  std::string error = importError("errors/unsupported_op.pt", optionsFor("2x8xf32"));
  EXPECT_NE(error.find("unsupported TorchScript op 'aten::cumsum'"), std::string::npos) << error;
  EXPECT_NE(error.find("schema: aten::cumsum(Tensor self, int dim"), std::string::npos) << error;
  EXPECT_NE(error.find("export_torchscript_models.py:"), std::string::npos) << error;
  EXPECT_NE(error.find("return torch.cumsum(x, dim=1)"), std::string::npos) << error;
}

TEST(TorchImporter, BranchOnDynamicDim) {
  // Static shapes: the branch folds.
  EXPECT_EQ(importError("errors/dynamic_if.pt", optionsFor("2x8xf32")), "");
  std::string error = importError("errors/dynamic_if.pt", optionsFor("2x8xf32", {{"0", 0}}));
  EXPECT_NE(error.find("depends on a dynamic dim"), std::string::npos) << error;
  EXPECT_NE(error.find("if x.size(0) > 2:"), std::string::npos) << error;
}

TEST(TorchImporter, BranchOnTensorData) {
  std::string error = importError("errors/data_dependent_if.pt", optionsFor("2x8xf32"));
  EXPECT_NE(error.find("data-dependent"), std::string::npos) << error;
  EXPECT_NE(error.find("aten::Bool"), std::string::npos) << error;
}

TEST(TorchImporter, LoopOverDynamicDim) {
  EXPECT_EQ(importError("errors/dynamic_loop.pt", optionsFor("2x8xf32")), "");
  std::string error = importError("errors/dynamic_loop.pt", optionsFor("2x8xf32", {{"0", 0}}));
  EXPECT_NE(error.find("prim::Loop"), std::string::npos) << error;
  EXPECT_NE(error.find("trip count"), std::string::npos) << error;
}

TEST(TorchImporter, DropoutInTrainingModeNeedsPZero) {
  // p = 0 in training mode is the identity (vit_train, tests/e2e); p = 0.5 is not.
  EXPECT_EQ(importError("vit_train/traced.pt", optionsFor("1x3x32x32xf32")), "");
  std::string error = importError("errors/train_dropout.pt", optionsFor("2x8xf32"));
  EXPECT_NE(error.find("unsupported TorchScript op 'aten::dropout'"), std::string::npos) << error;
  EXPECT_NE(error.find("p = 0.5"), std::string::npos) << error;
  EXPECT_NE(error.find("training mode"), std::string::npos) << error;
}

TEST(TorchImporter, RecurrentLayersNeedAStaticSequenceLength) {
  EXPECT_EQ(importError("lstm/traced.pt", optionsFor("1x6xi64", {{"0", 0}})), "");
  std::string error = importError("lstm/traced.pt", optionsFor("1x6xi64", {{"0", 1}}));
  EXPECT_NE(error.find("unsupported TorchScript op 'aten::lstm'"), std::string::npos) << error;
  EXPECT_NE(error.find("dynamic sequence length"), std::string::npos) << error;
  EXPECT_NE(error.find("at: "), std::string::npos) << error;
}

TEST(TorchImportOptions, ParsesFunctionShapesAndTheirDynamicDims) {
  Result<ImportOptions> options = parseImportOptions(
      {}, {"prefill:1x8xi64", "decode:1x1xi64,i64", "reset:"}, {"prefill:0:1", "decode:token:0"});
  ASSERT_TRUE(options.ok()) << options.message();
  ASSERT_EQ(options->functions.size(), 3u);
  EXPECT_EQ(options->functions[0].name, "prefill");
  EXPECT_EQ(options->functions[0].inputs[0].shape, (std::vector<int64_t>{1, 8}));
  ASSERT_EQ(options->functions[0].dynamicDims.size(), 1u);
  EXPECT_EQ(options->functions[0].dynamicDims[0].input, "0");
  EXPECT_EQ(options->functions[0].dynamicDims[0].dim, 1);
  ASSERT_EQ(options->functions[1].inputs.size(), 2u);
  EXPECT_TRUE(options->functions[1].inputs[1].shape.empty());
  EXPECT_EQ(options->functions[1].dynamicDims[0].input, "token");
  EXPECT_TRUE(options->functions[2].inputs.empty());
  EXPECT_TRUE(options->inputs.empty());
}

TEST(TorchImportOptions, RejectsMalformedOrConflictingOptions) {
  auto error = [](std::vector<std::string> inputs, std::vector<std::string> functions,
                  std::vector<std::string> dims) {
    Result<ImportOptions> options = parseImportOptions(inputs, functions, dims);
    EXPECT_FALSE(options.ok());
    return options.ok() ? std::string() : options.message();
  };
  EXPECT_NE(error({}, {"1x8xi64"}, {}).find("expected METHOD:SHAPE"), std::string::npos);
  EXPECT_NE(error({}, {"f:i64", "f:1xi64"}, {}).find("'f' are given twice"), std::string::npos);
  EXPECT_NE(error({}, {"f:1xq"}, {}).find("method 'f': malformed input shape"),
            std::string::npos);
  EXPECT_NE(error({"1xf32"}, {"f:1xf32"}, {}).find("not both"), std::string::npos);
  EXPECT_NE(error({}, {"f:1xf32"}, {"g:0:0"}).find("must name a method"), std::string::npos);
  EXPECT_NE(error({"1xf32"}, {}, {"0"}).find("malformed dynamic dim"), std::string::npos);
}

TEST(TorchImporter, LooksLikeTorchScriptFile) {
  EXPECT_TRUE(looksLikeTorchScriptFile("model.pt"));
  EXPECT_TRUE(looksLikeTorchScriptFile(modelPath("mlp/traced.pt")));
  EXPECT_FALSE(looksLikeTorchScriptFile("model.onnx"));
}

} // namespace
