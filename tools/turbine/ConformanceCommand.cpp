//===- ConformanceCommand.cpp - `turbine conformance` ---------------------===//
//
//   turbine conformance [--suite=node|pytorch-converted|pytorch-operator|
//                        simple|all] [--filter=REGEX] [-j N] [--timeout=S]
//                       [--coverage=docs/onnx-coverage.md] [--require-all]
//                       [--min-passed=N]
//                       [--target=cuda --compile-only [--save-artifacts=DIR]]
//
// Runs the ONNX backend tests (libonnx-testdata) through Turbine: every test
// is compiled and run in its own forked child (IsolatedJobRunner), so a
// compiler crash, hang or runaway allocation fails that test only
// (--timeout, default 60 s; --memory-limit, default 4096 MiB per test). Prints one line per test, in
// test order — "PASS name", "FAIL name: reason", "SKIP name: training op" —
// then "N passed, N failed[, N skipped]".
//
// Exit code: 0 whenever the run completed, failures or not, so the command
// can chart progress; with --require-all, 1 if any test failed; with
// --min-passed=N, 1 if fewer than N passed (a regression guard over a whole
// suite that still has known failures). Bad options,
// a missing suite or a filter that selects nothing exit with 1 and an error.
//===----------------------------------------------------------------------===//
#include "Commands.h"
#include "ConformanceSuite.h"
#include "ConformanceTestRunner.h"
#include "CoverageReport.h"
#include "IsolatedJobRunner.h"
#include "turbine/compiler/Target.h"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <csignal>
#include <cstring>
#include <iostream>
#include <memory>
#include <optional>
#include <regex>
#include <thread>

namespace turbine::tools {
namespace {

struct ConformanceArgs {
  std::string suite = "all";
  std::string filter;
  int jobs = 0;
  double timeoutSeconds = 60;
  int memoryLimitMiB = 4096;
  std::string coveragePath;
  std::string dataDir = kDefaultOnnxTestDataDir;
  bool requireAll = false;
  size_t minPassed = 0;
  bool keepChildOutput = false;
  std::string target = "cpu";
  std::string cudaArch = "sm_80,sm_90";
  bool compileOnly = false;
  std::string saveArtifactsDir;
};

int reportError(const std::string &message) {
  std::cerr << "turbine conformance: error: " << message << "\n";
  return 1;
}

/// The outcome of a test from how its child process ended.
ConformanceOutcome outcomeOfJob(const IsolatedJobResult &result,
                                const ConformanceArgs &args) {
  using Ending = IsolatedJobResult::Ending;
  switch (result.ending) {
  case Ending::Finished:
    return ConformanceOutcome::decode(result.output);
  case Ending::TimedOut: {
    std::string seconds = std::to_string(args.timeoutSeconds);
    seconds.erase(seconds.find_last_not_of('0') + 1);
    if (!seconds.empty() && seconds.back() == '.')
      seconds.pop_back();
    return ConformanceOutcome::fail("timed out after " + seconds + " s");
  }
  case Ending::OutOfMemory:
    return ConformanceOutcome::fail("exceeded the memory limit (" +
                                    std::to_string(args.memoryLimitMiB) + " MiB)");
  case Ending::Crashed:
    if (result.signal)
      return ConformanceOutcome::fail("crashed (signal " +
                                      std::to_string(result.signal) + ", " +
                                      std::string(strsignal(result.signal)) + ")");
    return ConformanceOutcome::fail("test process exited with status " +
                                    std::to_string(result.exitStatus) +
                                    " without a result");
  case Ending::NotStarted:
    return ConformanceOutcome::fail("could not start the test process: " +
                                    result.output);
  }
  return ConformanceOutcome::fail("internal error: unknown job ending");
}

void printOutcome(const ConformanceTestCase &test, const ConformanceOutcome &outcome) {
  switch (outcome.verdict) {
  case ConformanceOutcome::Verdict::Pass:
    std::cout << "PASS " << test.name << "\n";
    break;
  case ConformanceOutcome::Verdict::Fail:
    std::cout << "FAIL " << test.name << ": " << outcome.reason << "\n";
    break;
  case ConformanceOutcome::Verdict::Skip:
    std::cout << "SKIP " << test.name << ": " << outcome.reason << "\n";
    break;
  }
  std::cout.flush();
}

int runConformance(const ConformanceArgs &args) {
  std::vector<std::string> suites;
  if (args.suite == "all") {
    suites = conformanceSuiteNames();
  } else {
    for (const std::string &name : conformanceSuiteNames())
      if (name == args.suite)
        suites.push_back(name);
    if (suites.empty())
      return reportError("unknown suite '" + args.suite +
                         "' (expected node, pytorch-converted, pytorch-operator, "
                         "simple or all)");
  }
  std::optional<std::regex> filter;
  try {
    filter.emplace(args.filter, std::regex::ECMAScript);
  } catch (const std::regex_error &e) {
    return reportError("invalid --filter regex '" + args.filter + "': " + e.what());
  }

  ConformanceRunOptions runOptions;
  runOptions.target = args.target;
  runOptions.compileOnly = args.compileOnly;
  if (!compiler::findTarget(args.target))
    return reportError("unknown --target '" + args.target + "'");
  Result<std::vector<std::string>> cudaArchs = compiler::parseCudaArchs(args.cudaArch);
  if (!cudaArchs)
    return reportError("--cuda-arch: " + cudaArchs.message());
  runOptions.cudaArchs = *cudaArchs;
  if (args.target != "cpu" && !args.compileOnly)
    return reportError("--target=" + args.target +
                       " runs nothing yet: the runtime has no device for it; "
                       "add --compile-only to check that every test compiles");
  runOptions.saveArtifactsDir = args.saveArtifactsDir;
  if (!args.saveArtifactsDir.empty() && !args.compileOnly)
    return reportError("--save-artifacts needs --compile-only (it saves what a machine with "
                       "only the runtime runs: tests/conformance/README.md)");
  if (args.compileOnly && !args.coveragePath.empty())
    return reportError("--coverage reports results of runs; it cannot be combined with "
                       "--compile-only");

  std::vector<ConformanceTestCase> tests;
  std::string error;
  if (!discoverConformanceTests(args.dataDir, suites, *filter, tests, error))
    return reportError(error);
  if (tests.empty())
    return reportError("no test matches --filter '" + args.filter + "'");

  IsolatedJobOptions options;
  options.parallelism =
      args.jobs > 0 ? args.jobs
                    : std::max(1u, std::thread::hardware_concurrency());
  options.timeoutSeconds = args.timeoutSeconds;
  options.memoryLimitBytes = static_cast<uint64_t>(args.memoryLimitMiB) << 20;
  options.keepChildOutput = args.keepChildOutput;

  // Results arrive in completion order; print them in test order.
  std::vector<std::optional<ConformanceOutcome>> outcomes(tests.size());
  size_t nextToPrint = 0;
  runIsolatedJobs(
      tests.size(), options,
      [&](size_t i) { return runConformanceTest(tests[i], runOptions).encode(); },
      [&](size_t i, const IsolatedJobResult &result) {
        outcomes[i] = outcomeOfJob(result, args);
        while (nextToPrint < tests.size() && outcomes[nextToPrint]) {
          printOutcome(tests[nextToPrint], *outcomes[nextToPrint]);
          ++nextToPrint;
        }
      });

  std::vector<ConformanceResult> results;
  size_t passed = 0, failed = 0, skipped = 0;
  for (size_t i = 0; i < tests.size(); ++i) {
    const ConformanceOutcome &outcome = *outcomes[i];
    passed += outcome.verdict == ConformanceOutcome::Verdict::Pass;
    failed += outcome.verdict == ConformanceOutcome::Verdict::Fail;
    skipped += outcome.verdict == ConformanceOutcome::Verdict::Skip;
    results.push_back({&tests[i], outcome});
  }
  std::cout << passed << " passed, " << failed << " failed";
  if (skipped)
    std::cout << ", " << skipped << " skipped";
  std::cout << std::endl;

  if (!args.coveragePath.empty()) {
    CoverageReportInfo info;
    info.command = "turbine conformance --suite=" + args.suite +
                   (args.filter.empty() ? "" : " --filter='" + args.filter + "'");
    info.timeoutSeconds = args.timeoutSeconds;
    info.memoryLimitMiB = args.memoryLimitMiB;
    if (!writeCoverageReport(results, info, args.coveragePath, error))
      return reportError(error);
  }
  if (passed < args.minPassed) {
    std::cerr << "turbine conformance: error: " << passed << " passed, fewer than --min-passed="
              << args.minPassed << "\n";
    return 1;
  }
  return args.requireAll && failed ? 1 : 0;
}

} // namespace

void registerConformanceCommand(CLI::App &app, int &exitCode) {
  auto args = std::make_shared<ConformanceArgs>();
  CLI::App *cmd = app.add_subcommand(
      "conformance", "Run the ONNX backend tests (libonnx-testdata) and report");
  cmd->add_option("--suite", args->suite,
                  "node, pytorch-converted, pytorch-operator, simple or all")
      ->capture_default_str();
  cmd->add_option("--filter", args->filter,
                  "Run only tests whose name matches this regex (searched, "
                  "ECMAScript syntax; anchor with ^...$)");
  cmd->add_option("-j,--jobs", args->jobs,
                  "Tests run in parallel (default: number of cores)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--timeout", args->timeoutSeconds,
                  "Seconds one test (compile + run) may take before it is "
                  "killed and fails")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  cmd->add_option("--memory-limit", args->memoryLimitMiB,
                  "MiB of resident memory one test may use before it is killed "
                  "and fails (0: no limit)")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--coverage", args->coveragePath,
                  "Write a markdown coverage report (per suite, per op) here");
  cmd->add_option("--data-dir", args->dataDir,
                  "Root of the ONNX backend test data")
      ->capture_default_str();
  cmd->add_flag("--require-all", args->requireAll,
                "Exit with 1 if any test failed (default: 0 when the run completed)");
  cmd->add_option("--min-passed", args->minPassed,
                  "Exit with 1 if fewer tests than this passed");
  cmd->add_option("--target", args->target,
                  "Compile target (cpu, cuda); cuda needs --compile-only for now")
      ->capture_default_str();
  cmd->add_option("--cuda-arch", args->cudaArch,
                  "cuda target: architectures to assemble cubins for")
      ->capture_default_str();
  cmd->add_flag("--compile-only", args->compileOnly,
                "A test passes when it compiles (cuda: every kernel through ptxas); "
                "nothing runs");
  cmd->add_option("--save-artifacts", args->saveArtifactsDir,
                  "With --compile-only: write each test that compiles to DIR/<test>/ "
                  "(model.tmod, data sets as .npy, test.json) for "
                  "tests/conformance/run_saved_tests.py on a machine with only the runtime");
  cmd->add_flag("--show-test-output", args->keepChildOutput,
                "Let the tests' own stdout/stderr through (debugging)");
  cmd->callback([args, &exitCode] {
    try {
      exitCode = runConformance(*args);
    } catch (const std::exception &e) {
      exitCode = reportError(e.what());
    }
  });
}

} // namespace turbine::tools
