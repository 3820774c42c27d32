//===- Commands.h - Subcommands of the `turbine` CLI ----------------------===//
//
// Each subcommand registers itself on the CLI11 app. The callback stores the
// process exit code in `exitCode` (0 success, non-zero failure); commands print
// their errors to stderr as "turbine <command>: error: ...".
//===----------------------------------------------------------------------===//
#ifndef TURBINE_TOOLS_COMMANDS_H
#define TURBINE_TOOLS_COMMANDS_H

namespace CLI {
class App;
}

namespace turbine::tools {

void registerCompileCommand(CLI::App &app, int &exitCode);
void registerRunCommand(CLI::App &app, int &exitCode);
void registerBenchCommand(CLI::App &app, int &exitCode);
void registerBisectCommand(CLI::App &app, int &exitCode);
void registerConformanceCommand(CLI::App &app, int &exitCode);
void registerParamsCommand(CLI::App &app, int &exitCode);

} // namespace turbine::tools

#endif // TURBINE_TOOLS_COMMANDS_H
