//===- ConformanceTestRunner.h - Compile, run and check one backend test -===//
//
// Runs one ONNX backend test in the calling process: compiles model.onnx the
// way `turbine compile` does (compileModelFile), loads the artifact with the
// runtime, invokes it on every test_data_set_N and compares each result with
// output_K.pb. `turbine conformance` calls this inside a forked child; the
// outcome travels back to the parent as one line of text (encode/decode).
//
// Tolerances are the ONNX backend test defaults (rtol 1e-3, atol 1e-7, as in
// onnx/backend/test/runner), applied as |got - expected| <= atol + rtol *
// |expected|; per-test overrides are listed, with their reasons, in
// toleranceFor().
//===----------------------------------------------------------------------===//
#ifndef TURBINE_TOOLS_CONFORMANCETESTRUNNER_H
#define TURBINE_TOOLS_CONFORMANCETESTRUNNER_H

#include "ConformanceSuite.h"

#include <string>
#include <vector>

namespace turbine::tools {

/// The verdict on one test and, unless it passed, the reason (one line).
struct ConformanceOutcome {
  enum class Verdict { Pass, Fail, Skip };
  Verdict verdict = Verdict::Fail;
  std::string reason;

  static ConformanceOutcome pass() { return {Verdict::Pass, ""}; }
  static ConformanceOutcome fail(std::string reason);
  static ConformanceOutcome skip(std::string reason) {
    return {Verdict::Skip, std::move(reason)};
  }

  /// "PASS", "FAIL <reason>" or "SKIP <reason>".
  std::string encode() const;
  /// Inverse of encode(); anything else is a failure naming the bad text.
  static ConformanceOutcome decode(const std::string &text);
};

/// Comparison tolerances for floating-point outputs.
struct ConformanceTolerance {
  double rtol = 1e-3;
  double atol = 1e-7;
};

/// The tolerance for `testName`: the ONNX defaults unless overridden.
ConformanceTolerance toleranceFor(const std::string &testName);

/// How tests are compiled and whether they run.
struct ConformanceRunOptions {
  /// The compile target ("cpu", "cuda") and, for cuda, its architectures.
  std::string target = "cpu";
  std::vector<std::string> cudaArchs = {"sm_80", "sm_90"};
  /// Compile only: a test passes when it compiles (for cuda: PTX made and
  /// accepted by ptxas for every architecture); nothing runs. What a machine
  /// without the target's device can check.
  bool compileOnly = false;
  /// With compileOnly: DIR/<test>/ receives what a machine with only the
  /// runtime needs to run the test there (tests/conformance/README.md):
  /// model.tmod, each data set's inputs and expected outputs
  /// (test_data_set_N/input_K.npy, output_K.npy; raw bytes for dtypes NumPy
  /// lacks, text for strings) and test.json (function, tolerances, data
  /// sets, how to pass each value). A model compiled per data set (sequence or
  /// optional inputs) has its model.tmod in each data set's folder.
  std::string saveArtifactsDir;
};

/// Compiles and runs `test`, comparing every output of every data set.
/// Training-domain tests are skipped without compiling.
ConformanceOutcome runConformanceTest(const ConformanceTestCase &test,
                                      const ConformanceRunOptions &options = {});

} // namespace turbine::tools

#endif // TURBINE_TOOLS_CONFORMANCETESTRUNNER_H
