//===- main.cpp - `turbine-runtime`: run and time artifacts, no compiler --===//
//
// The deployment-side tool, like IREE's iree-run-module and
// iree-benchmark-module beside iree-compile: the `run` and `bench`
// subcommands of `turbine`, the same flags and messages, in a binary that
// links libturbine_runtime only (no LLVM, MLIR, libtorch or ONNX). It is
// what a machine that only runs artifacts needs: copy bin/turbine-runtime
// and lib/libturbine_runtime.so (found through $ORIGIN/../lib).
//===----------------------------------------------------------------------===//
#include "Commands.h"

#include <CLI/CLI.hpp>

int main(int argc, char **argv) {
  CLI::App app{"turbine-runtime: run and time .tmod artifacts (the runtime "
               "alone; `turbine` compiles them)"};
  app.require_subcommand(1);
  int exitCode = 0;
  turbine::tools::registerRunCommand(app, exitCode);
  turbine::tools::registerBenchCommand(app, exitCode);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError &e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  return exitCode;
}
