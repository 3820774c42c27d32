//===- BenchCommand.cpp - `turbine bench`: time a function of an artifact -===//
//
// The iree-benchmark-module of Turbine: loads a .tmod artifact, parses the
// `--input` values once (same syntax as `turbine run`), invokes one function
// `--warmup` times untimed, then `--repetitions` times (and on until
// `--min_time` seconds have been measured, if given), timing each call with a
// monotonic clock. Prints one block: min/median/mean/max milliseconds per call
// and calls per second. A call is Function::invoke as an embedder sees it:
// input validation, result allocation and every dispatch. Every failure is a
// message on stderr ("turbine bench: error: ...") and a non-zero exit code.
//===----------------------------------------------------------------------===//
#include "Commands.h"
#include "FlagHints.h"
#include "InvocationSetup.h"

#include "turbine/runtime/Runtime.h"

#include <CLI/CLI.hpp>
#include <fmt/core.h>

#include <algorithm>
#include <chrono>
#include <exception>
#include <iostream>
#include <memory>
#include <numeric>
#include <string>
#include <vector>

namespace turbine::tools {
namespace {

using namespace turbine::runtime;
using BenchClock = std::chrono::steady_clock;

/// Options of one `turbine bench` invocation.
struct BenchOptions {
  InvocationOptions invocation;
  int repetitions = 20;
  int warmup = 3;
  bool profile = false;
  /// Seconds; 0 = stop after --repetitions calls.
  double minTimeSeconds = 0;
};

/// Prints the error the way all turbine commands do and returns exit code 1.
int reportError(const std::string &message) {
  std::cerr << "turbine bench: error: " << withFlagHints(message) << "\n";
  return 1;
}

/// Summary of the measured per-call times, in milliseconds.
struct CallTimeSummary {
  double minMs = 0, medianMs = 0, meanMs = 0, maxMs = 0, totalMs = 0;
};

CallTimeSummary summarize(std::vector<double> callTimesMs) {
  CallTimeSummary summary;
  std::sort(callTimesMs.begin(), callTimesMs.end());
  size_t count = callTimesMs.size();
  summary.minMs = callTimesMs.front();
  summary.maxMs = callTimesMs.back();
  summary.medianMs = count % 2 == 1 ? callTimesMs[count / 2]
                                    : (callTimesMs[count / 2 - 1] +
                                       callTimesMs[count / 2]) / 2;
  summary.totalMs = std::accumulate(callTimesMs.begin(), callTimesMs.end(), 0.0);
  summary.meanMs = summary.totalMs / static_cast<double>(count);
  return summary;
}

int benchCommand(const BenchOptions &options) {
  if (options.repetitions < 1)
    return reportError("--repetitions must be at least 1, got " +
                       std::to_string(options.repetitions));
  if (options.warmup < 0)
    return reportError("--warmup must not be negative, got " +
                       std::to_string(options.warmup));
  if (!(options.minTimeSeconds >= 0))
    return reportError("--min_time must not be negative");

  const InvocationOptions &invocation = options.invocation;
  Result<std::shared_ptr<Module>> module = loadModule(invocation);
  if (!module)
    return reportError(module.message());
  Result<Function> function = selectFunction(**module, invocation.functionName);
  if (!function)
    return reportError(function.message());
  Result<std::vector<Tensor>> inputs = parseTensorSpecs(invocation.inputs, "--input");
  if (!inputs)
    return reportError(inputs.message());
  if (Status valid = function->validateInputs(*inputs); !valid)
    return reportError(valid.message());
  Result<std::unique_ptr<Device>> device = createDevice(invocation);
  if (!device)
    return reportError(device.message());

  // A function that uses module state (a stateful program's decode step)
  // runs through one Instance: every call sees the state the previous one
  // left (the same inputs thus overwrite the same state each call).
  std::unique_ptr<Instance> instance;
  if (function->usesState()) {
    Result<std::unique_ptr<Instance>> created = (*module)->createInstance();
    if (!created)
      return reportError(created.message());
    instance = std::move(*created);
  }
  auto invoke = [&]() -> Result<std::vector<Tensor>> {
    return instance ? instance->invoke(*function, **device, *inputs)
                    : function->invoke(**device, *inputs);
  };
  for (int call = 0; call < options.warmup; ++call) {
    Result<std::vector<Tensor>> results = invoke();
    if (!results)
      return reportError("warmup call " + std::to_string(call) + ": " +
                         results.message());
  }

  if (options.profile) {
    setDispatchProfiling(true);
    resetDispatchProfile();
  }
  const double minTimeMs = options.minTimeSeconds * 1e3;
  std::vector<double> callTimesMs;
  callTimesMs.reserve(static_cast<size_t>(options.repetitions));
  double measuredMs = 0;
  while (static_cast<int64_t>(callTimesMs.size()) < options.repetitions ||
         measuredMs < minTimeMs) {
    BenchClock::time_point start = BenchClock::now();
    Result<std::vector<Tensor>> results = invoke();
    BenchClock::time_point end = BenchClock::now();
    if (!results)
      return reportError("call " + std::to_string(callTimesMs.size()) + ": " +
                         results.message());
    double callMs = std::chrono::duration<double, std::milli>(end - start).count();
    callTimesMs.push_back(callMs);
    measuredMs += callMs;
  }

  CallTimeSummary summary = summarize(callTimesMs);
  fmt::print("BENCHMARK @{} on {} ({} worker{})\n", function->name(),
             (*device)->name(), (*device)->workerCount(),
             (*device)->workerCount() == 1 ? "" : "s");
  fmt::print("  warmup calls:    {}\n", options.warmup);
  fmt::print("  measured calls:  {} in {:.3f} ms\n", callTimesMs.size(),
             summary.totalMs);
  fmt::print("  min ms/call:     {:.4f}\n", summary.minMs);
  fmt::print("  median ms/call:  {:.4f}\n", summary.medianMs);
  fmt::print("  mean ms/call:    {:.4f}\n", summary.meanMs);
  fmt::print("  max ms/call:     {:.4f}\n", summary.maxMs);
  fmt::print("  calls/s:         {:.1f}\n",
             summary.totalMs > 0 ? 1e3 * static_cast<double>(callTimesMs.size()) /
                                       summary.totalMs
                                 : 0.0);
  if (options.profile)
    fmt::print("\nKERNELS over the measured calls (dispatch launch to completion):\n{}",
               formatDispatchProfile());
  return 0;
}

} // namespace

void registerBenchCommand(CLI::App &app, int &exitCode) {
  auto options = std::make_shared<BenchOptions>();
  CLI::App *bench = app.add_subcommand(
      "bench",
      "Time repeated calls of a function of a .tmod artifact (like "
      "iree-benchmark-module)");
  addInvocationOptions(*bench, options->invocation);
  bench->add_option("--repetitions", options->repetitions,
                    "Timed calls (at least this many)")
      ->capture_default_str();
  bench->add_option("--warmup", options->warmup,
                    "Untimed calls before the timed ones")
      ->capture_default_str();
  bench->add_flag("--profile", options->profile,
                  "Also print the time per kernel over the measured calls");
  bench->add_option("--min_time", options->minTimeSeconds,
                    "Keep timing calls past --repetitions until they add up "
                    "to this many seconds (0: off)")
      ->capture_default_str();
  bench->callback([options, &exitCode] {
    try {
      exitCode = benchCommand(*options);
    } catch (const std::exception &e) { // e.g. out of memory; never crash
      exitCode = reportError(e.what());
    }
  });
}

} // namespace turbine::tools
