//===- main.cpp - The `turbine` command-line tool -------------------------===//
//
// One binary, IREE-style subcommands: `compile` (model -> .tmod artifact),
// `run` (invoke a function of an artifact), `bench` (time its calls),
// `conformance` (the ONNX backend tests) and `params` (parameter files). The
// driver only dispatches; each subcommand lives in its own file.
//===----------------------------------------------------------------------===//
#include "Commands.h"

#include <CLI/CLI.hpp>

int main(int argc, char **argv) {
  CLI::App app{"turbine: compile ONNX/MLIR models to native code and run them"};
  app.require_subcommand(1);
  app.set_help_all_flag("--help-all", "Show help for all subcommands");
  int exitCode = 0;
  turbine::tools::registerCompileCommand(app, exitCode);
  turbine::tools::registerRunCommand(app, exitCode);
  turbine::tools::registerBenchCommand(app, exitCode);
  turbine::tools::registerBisectCommand(app, exitCode);
  turbine::tools::registerConformanceCommand(app, exitCode);
  turbine::tools::registerParamsCommand(app, exitCode);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError &e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  return exitCode;
}
