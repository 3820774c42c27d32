//===- ConformanceSuite.cpp - Finding the ONNX backend tests on disk -----===//
//
// Directory walking with std::filesystem; model facts from libonnx's
// ModelProto. Runs in the parent process of `turbine conformance`, before any
// child is forked, and touches neither MLIR nor the runtime.
//===----------------------------------------------------------------------===//
#include "ConformanceSuite.h"

#include <onnx/onnx_pb.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <unordered_set>

namespace fs = std::filesystem;

namespace turbine::tools {
namespace {

constexpr const char *kTrainingDomain = "ai.onnx.preview.training";

std::string qualifiedOpType(const onnx::NodeProto &node) {
  const std::string &domain = node.domain();
  if (domain.empty() || domain == "ai.onnx")
    return node.op_type();
  return domain + "." + node.op_type();
}

/// Adds the op types of `graph` and of every subgraph attribute to `ops`.
void collectOpTypes(const onnx::GraphProto &graph, std::set<std::string> &ops,
                    bool &usesTrainingOps) {
  for (const onnx::NodeProto &node : graph.node()) {
    ops.insert(qualifiedOpType(node));
    usesTrainingOps |= node.domain() == kTrainingDomain;
    for (const onnx::AttributeProto &attr : node.attribute()) {
      if (attr.has_g())
        collectOpTypes(attr.g(), ops, usesTrainingOps);
      for (const onnx::GraphProto &g : attr.graphs())
        collectOpTypes(g, ops, usesTrainingOps);
    }
  }
}

/// Whether graph value `value` is a sequence and/or an optional.
ConformanceTestCase::BoundaryValue boundaryValue(const onnx::ValueInfoProto &value) {
  ConformanceTestCase::BoundaryValue boundary;
  boundary.name = value.name();
  const onnx::TypeProto *type = &value.type();
  if (type->has_optional_type()) {
    boundary.optional = true;
    type = &type->optional_type().elem_type();
  }
  boundary.sequence = type->has_sequence_type();
  return boundary;
}

/// Why a graph value cannot be carried by runtime tensors, or "". Sequences
/// of tensors and optionals of those are flattened into tensors.
std::string describeUnsupportedValue(const onnx::ValueInfoProto &value,
                                     const char *role) {
  const onnx::TypeProto *typePtr = &value.type();
  std::string what;
  if (typePtr->has_optional_type())
    typePtr = &typePtr->optional_type().elem_type();
  if (typePtr->has_sequence_type())
    typePtr = &typePtr->sequence_type().elem_type();
  const onnx::TypeProto &type = *typePtr;
  if (type.has_sequence_type())
    what = "nested sequence";
  else if (type.has_optional_type())
    what = "nested optional";
  else if (type.has_map_type())
    what = "map";
  else if (type.has_sparse_tensor_type())
    what = "sparse tensor";
  else if (!type.has_tensor_type())
    what = "non-tensor";
  else if (type.tensor_type().elem_type() == onnx::TensorProto::COMPLEX64 ||
           type.tensor_type().elem_type() == onnx::TensorProto::COMPLEX128)
    what = "complex";
  if (what.empty())
    return "";
  return what + " " + role + " '" + value.name() + "'";
}

/// Reads model.onnx and fills the model facts of `test`.
void readModelFacts(ConformanceTestCase &test) {
  std::ifstream file(test.modelPath(), std::ios::binary);
  onnx::ModelProto model;
  if (!file || !model.ParseFromIstream(&file)) {
    test.modelError = "cannot parse '" + test.modelPath() + "' as an ONNX model";
    return;
  }
  const onnx::GraphProto &graph = model.graph();
  std::set<std::string> ops;
  if (test.suite == "node" && graph.node_size() == 1) {
    // The op under test; a body graph (Loop, If, Scan) only supports it.
    ops.insert(qualifiedOpType(graph.node(0)));
    test.usesTrainingOps = graph.node(0).domain() == kTrainingDomain;
  } else {
    collectOpTypes(graph, ops, test.usesTrainingOps);
  }
  test.opTypes.assign(ops.begin(), ops.end());

  std::unordered_set<std::string> initializers;
  for (const onnx::TensorProto &init : graph.initializer())
    initializers.insert(init.name());
  for (const onnx::ValueInfoProto &input : graph.input()) {
    if (initializers.count(input.name()))
      continue;
    test.inputs.push_back(boundaryValue(input));
    test.unsupportedInterface = describeUnsupportedValue(input, "input");
    if (!test.unsupportedInterface.empty())
      return;
  }
  for (const onnx::ValueInfoProto &output : graph.output()) {
    test.outputs.push_back(boundaryValue(output));
    test.unsupportedInterface = describeUnsupportedValue(output, "output");
    if (!test.unsupportedInterface.empty())
      return;
  }
}

/// The number after the last '_' of a file or directory stem, or -1.
long trailingIndex(const std::string &stem) {
  size_t underscore = stem.rfind('_');
  if (underscore == std::string::npos || underscore + 1 == stem.size())
    return -1;
  std::string digits = stem.substr(underscore + 1);
  if (!std::all_of(digits.begin(), digits.end(), ::isdigit))
    return -1;
  return std::stol(digits);
}

} // namespace

const std::vector<std::string> &conformanceSuiteNames() {
  static const std::vector<std::string> names = {"node", "pytorch-converted",
                                                 "pytorch-operator", "simple"};
  return names;
}

bool discoverConformanceTests(const std::string &dataDir,
                              const std::vector<std::string> &suites,
                              const std::regex &filter,
                              std::vector<ConformanceTestCase> &tests,
                              std::string &error) {
  for (const std::string &suite : suites) {
    fs::path suiteDir = fs::path(dataDir) / suite;
    std::error_code ec;
    if (!fs::is_directory(suiteDir, ec)) {
      error = "no test suite at '" + suiteDir.string() +
              "' (install libonnx-testdata or pass --data-dir)";
      return false;
    }
    std::vector<std::string> names;
    for (const fs::directory_entry &entry : fs::directory_iterator(suiteDir, ec))
      if (entry.is_directory() && fs::exists(entry.path() / "model.onnx"))
        names.push_back(entry.path().filename().string());
    std::sort(names.begin(), names.end());
    for (const std::string &name : names) {
      if (!std::regex_search(name, filter))
        continue;
      ConformanceTestCase test;
      test.suite = suite;
      test.name = name;
      test.directory = (suiteDir / name).string();
      readModelFacts(test);
      tests.push_back(std::move(test));
    }
  }
  return true;
}

std::vector<std::string> listDataSets(const std::string &testDirectory) {
  std::vector<std::pair<long, std::string>> sets;
  std::error_code ec;
  for (const fs::directory_entry &entry : fs::directory_iterator(testDirectory, ec)) {
    std::string stem = entry.path().filename().string();
    if (entry.is_directory() && stem.rfind("test_data_set_", 0) == 0 &&
        trailingIndex(stem) >= 0)
      sets.emplace_back(trailingIndex(stem), entry.path().string());
  }
  std::sort(sets.begin(), sets.end());
  std::vector<std::string> paths;
  for (auto &[index, path] : sets)
    paths.push_back(path);
  return paths;
}

std::vector<std::string> listTensorFiles(const std::string &dataSetDirectory,
                                         const std::string &prefix) {
  std::vector<std::pair<long, std::string>> files;
  std::error_code ec;
  for (const fs::directory_entry &entry : fs::directory_iterator(dataSetDirectory, ec)) {
    const fs::path &path = entry.path();
    std::string stem = path.stem().string();
    if (path.extension() == ".pb" && stem.rfind(prefix + "_", 0) == 0 &&
        trailingIndex(stem) >= 0)
      files.emplace_back(trailingIndex(stem), path.string());
  }
  std::sort(files.begin(), files.end());
  std::vector<std::string> paths;
  for (auto &[index, path] : files)
    paths.push_back(path);
  return paths;
}

} // namespace turbine::tools
