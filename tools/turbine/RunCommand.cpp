//===- RunCommand.cpp - `turbine run`: invoke a function of an artifact --===//
//
// The iree-run-module of Turbine: loads a .tmod artifact with the runtime
// library, parses `--input` values (IREE text, raw bytes or .npy), invokes one
// function on a local device, then prints results, writes them to .npy files,
// and/or compares them with `--expected_output` values within atol/rtol.
// Every failure is a message on stderr ("turbine run: error: ...") and a
// non-zero exit code.
//===----------------------------------------------------------------------===//
#include "Commands.h"
#include "FlagHints.h"
#include "InvocationSetup.h"

#include "turbine/runtime/Runtime.h"

#include <CLI/CLI.hpp>

#include <exception>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

namespace turbine::tools {
namespace {

using namespace turbine::runtime;

/// Options of one `turbine run` invocation.
struct RunOptions {
  InvocationOptions invocation;
  std::vector<std::string> outputs;
  std::vector<std::string> expectedOutputs;
  double atol = 1e-4;
  double rtol = 1e-4;
  size_t printMaxElements = 1024;
};

/// Prints the error the way all turbine commands do and returns exit code 1.
int reportError(const std::string &message) {
  std::cerr << "turbine run: error: " << withFlagHints(message) << "\n";
  return 1;
}

/// Writes or prints result `i` as `spec` says ("-" or "@file.npy").
Status emitResult(const Tensor &result, size_t i, const std::string &spec,
                  size_t printMaxElements) {
  if (spec == "-") {
    std::cout << "result[" << i << "]: hal.buffer_view\n"
              << formatTensor(result, printMaxElements) << "\n";
    return Status::success();
  }
  if (spec.size() > 1 && spec[0] == '@') {
    Status s = writeNpyFile(result, spec.substr(1));
    if (!s)
      return Status::error("--output " + std::to_string(i) + ": " + s.message());
    return Status::success();
  }
  return Status::error("--output " + std::to_string(i) + ": invalid value '" +
                       spec + "' (expected '-' for stdout or '@file.npy')");
}

int runCommand(const RunOptions &options) {
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
  Result<std::vector<Tensor>> expectedValues =
      parseTensorSpecs(options.expectedOutputs, "--expected_output");
  if (!expectedValues)
    return reportError(expectedValues.message());
  const std::vector<Tensor> &expected = *expectedValues;

  Result<std::unique_ptr<Device>> device = createDevice(invocation);
  if (!device)
    return reportError(device.message());

  std::cout << "EXEC @" << function->name() << "\n";
  Result<std::vector<Tensor>> results = function->invoke(**device, *inputs);
  if (!results)
    return reportError(results.message());

  if (options.outputs.size() > results->size())
    return reportError(std::to_string(options.outputs.size()) +
                       " --output values given but '" + function->name() +
                       "' returns " + std::to_string(results->size()) + " results");
  for (size_t i = 0; i < results->size(); ++i) {
    if (!options.outputs.empty() && i >= options.outputs.size())
      break;
    std::string spec = options.outputs.empty() ? "-" : options.outputs[i];
    if (Status s = emitResult((*results)[i], i, spec, options.printMaxElements); !s)
      return reportError(s.message());
  }

  if (expected.empty())
    return 0;
  if (expected.size() != results->size())
    return reportError(std::to_string(expected.size()) +
                       " --expected_output values given but '" + function->name() +
                       "' returns " + std::to_string(results->size()) + " results");
  for (size_t i = 0; i < results->size(); ++i) {
    std::string mismatch =
        compareTensors(expected[i], (*results)[i], options.atol, options.rtol);
    if (!mismatch.empty())
      return reportError("result[" + std::to_string(i) +
                         "] does not match the expected output: " + mismatch);
  }
  std::cout << "[SUCCESS] all " << results->size()
            << " results matched their expected values\n";
  return 0;
}

} // namespace

void registerRunCommand(CLI::App &app, int &exitCode) {
  auto options = std::make_shared<RunOptions>();
  CLI::App *run = app.add_subcommand(
      "run", "Invoke a function of a .tmod artifact (like iree-run-module)");
  addInvocationOptions(*run, options->invocation);
  run->add_option("--output", options->outputs,
                  "Where result i goes: '-' (print) or '@file.npy' (repeat per "
                  "result; default prints all)")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  run->add_option("--expected_output", options->expectedOutputs,
                  "Expected value of result i (same syntax as --input)")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  run->add_option("--atol", options->atol,
                  "Absolute tolerance for --expected_output")
      ->capture_default_str();
  run->add_option("--rtol", options->rtol,
                  "Relative tolerance for --expected_output")
      ->capture_default_str();
  run->add_option("--print_max_element_count", options->printMaxElements,
                  "Elements printed per result before eliding")
      ->capture_default_str();
  run->callback([options, &exitCode] {
    try {
      exitCode = runCommand(*options);
    } catch (const std::exception &e) { // e.g. out of memory; never crash
      exitCode = reportError(e.what());
    }
  });
}

} // namespace turbine::tools
