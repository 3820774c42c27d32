//===- CoverageReport.h - Markdown report of a conformance run -----------===//
//
// Turns the outcomes of `turbine conformance` into docs/onnx-coverage.md:
// totals per suite, the most common failure reasons, and one row per ONNX op
// type (tests using it, passed, failed, the most common failure reason).
// Reasons are grouped by failureCategory(), which folds the details that
// differ from test to test (element values, indices) into one bucket.
//===----------------------------------------------------------------------===//
#ifndef TURBINE_TOOLS_COVERAGEREPORT_H
#define TURBINE_TOOLS_COVERAGEREPORT_H

#include "ConformanceSuite.h"
#include "ConformanceTestRunner.h"

#include <string>
#include <vector>

namespace turbine::tools {

/// One test and how it went.
struct ConformanceResult {
  const ConformanceTestCase *test;
  ConformanceOutcome outcome;
};

/// What the report says about how it was produced.
struct CoverageReportInfo {
  std::string command;
  double timeoutSeconds = 60;
  int memoryLimitMiB = 4096;
};

/// The bucket a failure reason is counted in: wrong values become "wrong
/// result (output mismatch)", wrong types/shapes "wrong output type or
/// shape", and other reasons keep their text with node names, opsets,
/// shapes and value names folded.
std::string failureCategory(const std::string &reason);

/// Writes the markdown report to `path`; false and `error` on I/O failure.
bool writeCoverageReport(const std::vector<ConformanceResult> &results,
                         const CoverageReportInfo &info, const std::string &path,
                         std::string &error);

} // namespace turbine::tools

#endif // TURBINE_TOOLS_COVERAGEREPORT_H
