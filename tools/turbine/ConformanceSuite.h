//===- ConformanceSuite.h - Finding the ONNX backend tests on disk -------===//
//
// The ONNX backend test data (Debian's libonnx-testdata) is laid out as
// <data-dir>/<suite>/<test>/{model.onnx, test_data_set_N/{input,output}_K.pb}
// for the suites node, pytorch-converted, pytorch-operator and simple. This
// lists the tests of the chosen suites whose name matches a filter and reads
// from each model the facts the run and the coverage report need: the op
// types it exercises, whether it uses training ops, and whether all of its
// graph inputs and outputs are plain numeric tensors.
//===----------------------------------------------------------------------===//
#ifndef TURBINE_TOOLS_CONFORMANCESUITE_H
#define TURBINE_TOOLS_CONFORMANCESUITE_H

#include <regex>
#include <string>
#include <vector>

namespace turbine::tools {

/// Where libonnx-testdata installs the backend test data.
inline constexpr const char *kDefaultOnnxTestDataDir =
    "/usr/share/libonnx-testdata/data";

/// The suites, in the order `--suite=all` runs them.
const std::vector<std::string> &conformanceSuiteNames();

/// One backend test: a model and its data sets.
struct ConformanceTestCase {
  std::string suite;
  std::string name;
  /// The test's directory (holds model.onnx and test_data_set_*/).
  std::string directory;
  /// Op types the test exercises, sorted and unique: the op of a single-node
  /// model, or every op type of a multi-node model (subgraphs included). Ops
  /// outside the default domain are prefixed with theirs ("ai.onnx.ml.Foo").
  std::vector<std::string> opTypes;
  /// True if a node uses the ai.onnx.preview.training domain.
  bool usesTrainingOps = false;
  /// Why the graph's inputs/outputs cannot be fed or checked ("map input
  /// 'x'", "string output 'y'"), or empty when all are numeric tensors or
  /// sequences/optionals of those.
  std::string unsupportedInterface;
  /// Per non-initializer graph input / graph output: is it a sequence, an
  /// optional (their test data are SequenceProto / OptionalProto files)?
  struct BoundaryValue {
    std::string name;
    bool sequence = false;
    bool optional = false;
  };
  std::vector<BoundaryValue> inputs;
  std::vector<BoundaryValue> outputs;
  /// Set when model.onnx could not be read; the test then fails with it.
  std::string modelError;

  std::string modelPath() const { return directory + "/model.onnx"; }
};

/// Lists the tests of `suites` under `dataDir` whose name matches `filter`
/// (std::regex_search), in suite order then by name. Returns false and sets
/// `error` when a suite directory is missing.
bool discoverConformanceTests(const std::string &dataDir,
                              const std::vector<std::string> &suites,
                              const std::regex &filter,
                              std::vector<ConformanceTestCase> &tests,
                              std::string &error);

/// The data set directories of a test (test_data_set_0, _1, ...), in order.
std::vector<std::string> listDataSets(const std::string &testDirectory);

/// The `<prefix>_K.pb` files of a data set ("input" or "output"), by K.
std::vector<std::string> listTensorFiles(const std::string &dataSetDirectory,
                                         const std::string &prefix);

} // namespace turbine::tools

#endif // TURBINE_TOOLS_CONFORMANCESUITE_H
