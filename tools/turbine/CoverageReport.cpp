//===- CoverageReport.cpp - Markdown report of a conformance run ---------===//
//
// Plain counting over the results; the output is deterministic (sorted by
// suite order, op name, count then text) and carries no timestamp, so
// regenerating it after a change shows exactly what moved in a diff.
//===----------------------------------------------------------------------===//
#include "CoverageReport.h"

#include <algorithm>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>

namespace turbine::tools {
namespace {

struct Tally {
  size_t tests = 0, passed = 0, failed = 0, skipped = 0;
  std::map<std::string, size_t> reasons;

  void add(const ConformanceOutcome &outcome) {
    ++tests;
    switch (outcome.verdict) {
    case ConformanceOutcome::Verdict::Pass: ++passed; break;
    case ConformanceOutcome::Verdict::Skip: ++skipped; break;
    case ConformanceOutcome::Verdict::Fail:
      ++failed;
      ++reasons[failureCategory(outcome.reason)];
      break;
    }
  }
};

/// Reasons sorted by count (descending), then text.
std::vector<std::pair<std::string, size_t>>
sortedReasons(const std::map<std::string, size_t> &reasons) {
  std::vector<std::pair<std::string, size_t>> sorted(reasons.begin(), reasons.end());
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](const auto &a, const auto &b) { return a.second > b.second; });
  return sorted;
}

/// Escapes text for a markdown table cell.
std::string cell(const std::string &text) {
  std::string out;
  for (char c : text) {
    if (c == '|')
      out += "\\|";
    else if (c == '`')
      out += "'";
    else
      out += c;
  }
  return out;
}

std::string percent(size_t part, size_t whole) {
  if (whole == 0)
    return "-";
  std::ostringstream os;
  os.setf(std::ios::fixed);
  os.precision(1);
  os << 100.0 * part / whole << "%";
  return os.str();
}

} // namespace

std::string failureCategory(const std::string &reason) {
  if (reason.rfind("output ", 0) == 0) {
    if (reason.find(", index [") != std::string::npos)
      return "wrong result (output mismatch)";
    return "wrong output type or shape";
  }
  // Fold what differs between tests that fail for the same reason: node
  // names, opset numbers, the model's file name, tensor shapes, quoted value
  // names in runtime signature errors.
  static const std::vector<std::pair<std::regex, std::string>> folds = {
      {std::regex("node '[^']*', "), ""},
      {std::regex("opset [0-9]+"), "opset N"},
      {std::regex(" \\(model '[^']*'\\)"), ""},
      {std::regex("model\\.onnx: "), ""},
      {std::regex("\\b([0-9]+x)+"), "Sx"},
      {std::regex("input [0-9]+ \\('[^']*'\\)"), "input K"},
      {std::regex("graph value '[^']*'"), "graph value"},
      {std::regex(" \\(test_data_set_[0-9]+\\)"), ""},
  };
  std::string category = reason;
  for (const auto &[pattern, replacement] : folds)
    category = std::regex_replace(category, pattern, replacement);
  return category;
}

/// What the known remaining failures would take, by test name.
struct KnownGap {
  const char *testPattern; ///< ECMAScript regex on the test name
  const char *whatItWouldTake;
};
const KnownGap kKnownGaps[] = {
    {"^test_castlike_(BFLOAT16_to_FLOAT|FLOAT_to_BFLOAT16)",
     "Nothing in Turbine: the test data's `like` input is a 1-element tensor while the model "
     "declares 3x4, and the runtime rejects an input that does not match the signature, as for "
     "any model."},
    {"^test_bernoulli",
     "Random ops (Bernoulli, RandomUniformLike) are implemented with Turbine's own seeded "
     "counter-based generator (exact for probabilities 0 and 1, statistics checked in "
     "onnx_ops.bernoulli_* / random_*); the expected outputs are draws of NumPy's seeded "
     "generator, which no independent implementation reproduces."},
    {"^test_training_dropout",
     "Dropout in training mode with ratio > 0 is implemented with Turbine's own seeded mask "
     "(ratio 0/1 and training_mode false are exact); the expected outputs use NumPy's random "
     "mask, which cannot be matched."},
    {"^test_loop(13_seq|16_seq_none)$",
     "Loop with a run-time trip count that carries a sequence growing by one element per "
     "iteration: run-time sequences (list registers in the host program). A run-time Loop is a "
     "host-program loop that carries tensors only, and sequences are import-time lists today "
     "(copies with the trip count folded to a constant are unrolled and pass, see "
     "conformance.node_constant_inputs)."},
    {"^test_if_opt$",
     "If choosing at run time between an empty and a full optional: run-time optionals (a "
     "presence flag in the host program); optionals are import-time values today."},
    {"^test_sequence_insert_at_front$",
     "A run-time insert position over elements of different shapes: run-time sequences "
     "(list registers in the host program); sequences are import-time lists today, and "
     "run-time positions work only over equally shaped elements."},
};

bool writeCoverageReport(const std::vector<ConformanceResult> &results,
                         const CoverageReportInfo &info, const std::string &path,
                         std::string &error) {
  std::map<std::string, Tally> bySuite;
  std::vector<std::string> suiteOrder;
  std::map<std::string, Tally> byOp;
  Tally total;
  for (const ConformanceResult &result : results) {
    const ConformanceTestCase &test = *result.test;
    if (!bySuite.count(test.suite))
      suiteOrder.push_back(test.suite);
    bySuite[test.suite].add(result.outcome);
    total.add(result.outcome);
    for (const std::string &op : test.opTypes)
      byOp[op].add(result.outcome);
  }

  std::ostringstream md;
  md << "# ONNX backend test coverage\n\n"
     << "Generated by `" << info.command << "` (run `make conformance` to "
     << "regenerate) from the ONNX backend test data of Debian's "
     << "`libonnx-testdata` (ONNX 1.12). Each test is compiled with the same "
     << "path as `turbine compile` and run on every data set in a forked child "
     << "(time limit " << info.timeoutSeconds << " s, "
     << (info.memoryLimitMiB > 0
             ? "memory limit " + std::to_string(info.memoryLimitMiB) + " MiB"
             : std::string("no memory limit"))
     << " per test; a crash, timeout or runaway "
     << "allocation fails that test only). bfloat16 data, which ONNX 1.12 "
     << "stores as uint16 bit patterns, is read as bfloat16 where the model "
     << "says so. Float outputs "
     << "pass when |got - expected| <= atol + rtol * |expected| with the ONNX "
     << "backend defaults rtol = 1e-3, atol = 1e-7, except rtol = 2^-7 for the "
     << "three float -> bfloat16 cast tests (ONNX 1.12's reference truncates, "
     << "the spec rounds to nearest even: one bfloat16 ulp apart; see "
     << "toleranceFor() in tools/turbine/ConformanceTestRunner.cpp); "
     << "integer and bool outputs must match exactly; shapes and dtypes must "
     << "match. Only tests using the `ai.onnx.preview.training` domain are "
     << "skipped.\n\n";

  md << "## Totals\n\n| Suite | Tests | Passed | Failed | Skipped | Pass rate |\n"
     << "|---|---:|---:|---:|---:|---:|\n";
  for (const std::string &suite : suiteOrder) {
    const Tally &t = bySuite[suite];
    md << "| " << suite << " | " << t.tests << " | " << t.passed << " | "
       << t.failed << " | " << t.skipped << " | "
       << percent(t.passed, t.tests - t.skipped) << " |\n";
  }
  md << "| **all** | " << total.tests << " | " << total.passed << " | "
     << total.failed << " | " << total.skipped << " | "
     << percent(total.passed, total.tests - total.skipped) << " |\n\n";

  md << "## Most common failure reasons\n\n"
     << "Reasons are grouped: node names, opsets and shapes are folded, and all "
     << "value mismatches form one group.\n\n| Tests | Reason |\n|---:|---|\n";
  auto reasons = sortedReasons(total.reasons);
  for (size_t i = 0; i < reasons.size() && i < 25; ++i)
    md << "| " << reasons[i].second << " | " << cell(reasons[i].first) << " |\n";
  md << "\n";

  md << "## By op type\n\n"
     << "A test counts for the op it tests (single-node models in `node/`) or "
     << "for every op type its model uses (multi-node tests, subgraphs "
     << "included).\n\n"
     << "| Op | Tests | Passed | Failed | Most common failure |\n"
     << "|---|---:|---:|---:|---|\n";
  for (const auto &[op, t] : byOp) {
    std::string topReason;
    if (!t.reasons.empty()) {
      auto sorted = sortedReasons(t.reasons);
      topReason = sorted.front().first;
      if (sorted.front().second != t.failed)
        topReason += " (" + std::to_string(sorted.front().second) + " of " +
                     std::to_string(t.failed) + ")";
    }
    md << "| " << cell(op) << " | " << t.tests << " | " << t.passed << " | "
       << t.failed << " | " << cell(topReason) << " |\n";
  }

  md << "\n## Remaining failures and what they would take\n\n";
  std::map<std::string, std::vector<std::string>> byGap;
  for (const ConformanceResult &result : results) {
    if (result.outcome.verdict != ConformanceOutcome::Verdict::Fail)
      continue;
    const std::string &name = result.test->name;
    std::string gap = "Not analysed yet.";
    for (const KnownGap &known : kKnownGaps)
      if (std::regex_search(name, std::regex(known.testPattern))) {
        gap = known.whatItWouldTake;
        break;
      }
    byGap[gap].push_back(result.test->suite + "/" + name);
  }
  if (byGap.empty())
    md << "None.\n";
  for (const auto &[gap, tests] : byGap) {
    md << "- **" << tests.size() << " test" << (tests.size() == 1 ? "" : "s") << "**: ";
    for (size_t i = 0; i < tests.size(); ++i)
      md << (i ? ", " : "") << "`" << tests[i] << "`";
    md << ". " << gap << "\n";
  }

  std::ofstream file(path);
  if (!file) {
    error = "cannot write '" + path + "'";
    return false;
  }
  file << md.str();
  if (!file.flush()) {
    error = "error writing '" + path + "'";
    return false;
  }
  return true;
}

} // namespace turbine::tools
