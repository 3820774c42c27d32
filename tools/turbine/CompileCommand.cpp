//===- CompileCommand.cpp - `turbine compile` -----------------------------===//
//
//   turbine compile model.onnx -o model.tmod
//   turbine compile model.mlir --compile-to=dispatch      (prints that IR)
//   turbine compile model.onnx -o m.tmod --sequence-length=xs=3 --optional-absent=opt
//   turbine compile model.onnx -o m.tmod --sequence-shapes=xs=2x3,4x3
//   turbine compile model.onnx -o m.tmod --dump-phases=phases/
//   turbine compile model.onnx -o m.tmod --externalize-params=weights.irpa

//   turbine compile model.pt -o m.tmod --input-shape=1x3x224x224xf32 --dynamic-dim=0:0
//
// Loads the input (ONNX through the ONNX frontend; TorchScript through the
// TorchScript frontend, which needs the input shapes; MLIR text or bytecode
// in upstream dialects), runs the compiler's phases and writes one artifact. The
// file -> artifact step is compileModelFile (ModelCompiler.h), shared with
// `turbine conformance`.
//===----------------------------------------------------------------------===//
#include "Commands.h"
#include "ModelCompiler.h"
#include "turbine/tools/ParameterExternalization.h"

#include "turbine/artifact/Module.h"
#include "turbine/compiler/Pipeline.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"

#include <CLI/CLI.hpp>
#include <fmt/core.h>

namespace turbine::tools {
namespace {

struct CompileArgs {
  std::vector<std::string> sequenceLengths; ///< NAME=N (ONNX sequence inputs)
  std::vector<std::string> sequenceShapes;  ///< NAME=SHAPE,SHAPE,...
  std::vector<std::string> absentOptionals;
  std::string input;
  std::string output;
  std::string compileTo;
  std::string dumpPhases;
  std::string targetCpu = "host";
  int optLevel = 3;
  std::string externalizeParams;
  uint64_t externalizeMinBytes = 256;

  TorchScriptInputs torchInputs;
};

int fail(const std::string &message) {
  fmt::print(stderr, "turbine compile: error: {}\n", message);
  return 1;
}

/// Parses "2x3" / "?x4" / "scalar" into dims (-1 = dynamic); false if malformed.
bool parseShape(const std::string &text, std::vector<int64_t> &dims) {
  dims.clear();
  if (text == "scalar")
    return true;
  size_t start = 0;
  while (true) {
    size_t end = text.find('x', start);
    std::string item = text.substr(start, end == std::string::npos ? std::string::npos
                                                                     : end - start);
    if (item == "?") {
      dims.push_back(-1);
    } else {
      if (item.empty() || item.find_first_not_of("0123456789") != std::string::npos ||
          item.size() > 18)
        return false;
      dims.push_back(std::stoll(item));
    }
    if (end == std::string::npos)
      return true;
    start = end + 1;
  }
}

int runCompile(const CompileArgs &args) {
  compiler::CompileOptions options;
  options.dumpPhasesDir = args.dumpPhases;
  options.targetCpu = args.targetCpu;
  options.optLevel = args.optLevel;
  if (!args.compileTo.empty()) {
    options.stopAfter = compiler::parsePhase(args.compileTo);
    if (!options.stopAfter) {
      std::string names;
      for (compiler::Phase p : compiler::allPhases())
        names += (names.empty() ? "" : ", ") + std::string(compiler::phaseName(p));
      return fail("unknown phase '" + args.compileTo + "' (phases: " + names + ")");
    }
  } else if (args.output.empty()) {
    return fail("missing output file: pass -o FILE.tmod (or --compile-to=PHASE)");
  }
  if (!llvm::sys::fs::exists(args.input))
    return fail("input file '" + args.input + "' does not exist");
  if (!args.output.empty() && llvm::sys::fs::equivalent(args.input, args.output))
    return fail("output file '" + args.output + "' is the input file");
  if (!args.externalizeParams.empty()) {
    if (options.stopAfter)
      return fail("--externalize-params needs an artifact to write (not --compile-to)");
    for (const std::string &other : {args.input, args.output})
      if (llvm::sys::fs::equivalent(other, args.externalizeParams))
        return fail("parameter file '" + args.externalizeParams + "' is also '" + other + "'");
  }

  InputSpecialization specialization;
  for (const std::string &spec : args.sequenceLengths) {
    size_t eq = spec.rfind('=');
    long long length = -1;
    if (eq != std::string::npos && eq > 0) {
      try {
        size_t used = 0;
        length = std::stoll(spec.substr(eq + 1), &used);
        if (used != spec.size() - eq - 1)
          length = -1;
      } catch (const std::exception &) {
        length = -1;
      }
    }
    if (length < 0)
      return fail("--sequence-length expects NAME=N with N >= 0, got '" + spec + "'");
    specialization.sequenceLengths[spec.substr(0, eq)] = length;
  }
  for (const std::string &spec : args.sequenceShapes) {
    size_t eq = spec.find('=');
    if (eq == std::string::npos || eq == 0)
      return fail("--sequence-shapes expects NAME=SHAPE,SHAPE,... (SHAPE like 2x3, ?x4 or "
                  "scalar), got '" + spec + "'");
    std::vector<std::vector<int64_t>> &shapes = specialization.sequenceShapes[spec.substr(0, eq)];
    std::string list = spec.substr(eq + 1);
    size_t start = 0;
    while (!list.empty()) {
      size_t comma = list.find(',', start);
      std::vector<int64_t> dims;
      if (!parseShape(list.substr(start, comma == std::string::npos ? std::string::npos
                                                                      : comma - start),
                      dims))
        return fail("--sequence-shapes expects NAME=SHAPE,SHAPE,... (SHAPE like 2x3, ?x4 or "
                    "scalar), got '" + spec + "'");
      shapes.push_back(dims);
      if (comma == std::string::npos)
        break;
      start = comma + 1;
    }
  }
  specialization.absentOptionals.insert(args.absentOptionals.begin(), args.absentOptionals.end());

  std::string error;
  std::string stoppedModuleText;
  artifact::Module artifact;
  if (!compileModelFile(args.input, options, artifact, error, &stoppedModuleText,
                        &args.torchInputs, specialization))
    return fail(error);

  if (options.stopAfter) {
    if (args.output.empty() || args.output == "-") {
      llvm::outs() << stoppedModuleText << "\n";
      return 0;
    }
    std::error_code ec;
    llvm::raw_fd_ostream os(args.output, ec);
    if (ec)
      return fail("cannot write '" + args.output + "': " + ec.message());
    os << stoppedModuleText;
    return 0;
  }
  if (!args.externalizeParams.empty()) {
    auto moved = externalizeParameters(artifact, args.externalizeParams,
                                       args.externalizeMinBytes);
    if (!moved)
      return fail(moved.message());
  }
  if (Status written = artifact::writeFile(artifact, args.output); !written)
    return fail(written.message());
  return 0;
}

} // namespace

void registerCompileCommand(CLI::App &app, int &exitCode) {
  auto args = std::make_shared<CompileArgs>();
  CLI::App *cmd = app.add_subcommand(
      "compile", "Compile an ONNX, TorchScript or MLIR model into a .tmod artifact");
  cmd->add_option("input", args->input, "Model file (.onnx, .pt, .mlir, .mlirbc)")
      ->required();
  cmd->add_option("-o,--output", args->output,
                  "Artifact to write (with --compile-to: IR file, '-' = stdout)");
  cmd->add_option("--compile-to", args->compileTo,
                  "Stop after this phase and print its IR "
                  "(input, global-opt, dispatch, codegen, link)");
  cmd->add_option("--dump-phases", args->dumpPhases,
                  "Write N.PHASE.mlir for every phase into this directory");
  cmd->add_option("--target-cpu", args->targetCpu,
                  "LLVM CPU name for kernels ('host' = this machine)");
  cmd->add_option("--opt-level", args->optLevel, "LLVM optimization level 0-3")
      ->check(CLI::Range(0, 3));
  cmd->add_option("--sequence-length", args->sequenceLengths,
                  "NAME=N: compile the ONNX sequence input NAME for N elements (the artifact "
                  "takes them as N tensor inputs NAME[0]..NAME[N-1]); repeatable")
      ->allow_extra_args(false);
  cmd->add_option("--sequence-shapes", args->sequenceShapes,
                  "NAME=SHAPE,SHAPE,...: compile the ONNX sequence input NAME for elements of "
                  "these shapes (2x3, ?x4 for a dynamic dim, scalar; NAME= for none); "
                  "repeatable")
      ->allow_extra_args(false);
  cmd->add_option("--optional-absent", args->absentOptionals,
                  "Compile the ONNX optional input NAME as empty (it takes no input); "
                  "repeatable")
      ->allow_extra_args(false);
  cmd->add_option("--externalize-params", args->externalizeParams,
                  "Write the weights to this parameter file (.irpa, or .safetensors) "
                  "instead of the artifact; bind it with `turbine run --parameters`");
  cmd->add_option("--externalize-min-bytes", args->externalizeMinBytes,
                  "Only parameters at least this large are externalized")
      ->capture_default_str();

  cmd->add_option("--input-shape", args->torchInputs.inputShapes,
                  "TorchScript only: shape and dtype of a forward input, one per "
                  "input in order (e.g. 1x3x224x224xf32)");
  cmd->add_option("--dynamic-dim", args->torchInputs.dynamicDims,
                  "TorchScript only: leave a dim symbolic, <input index or name>:<dim> "
                  "(e.g. 0:0 for a dynamic batch); repeatable");
  cmd->callback([args, &exitCode] { exitCode = runCompile(*args); });
}

} // namespace turbine::tools
