//===- CompileCommand.cpp - `turbine compile` -----------------------------===//
//
//   turbine compile model.onnx -o model.tmod
//   turbine compile model.mlir --compile-to=dispatch      (prints that IR)
//   turbine compile model.onnx -o m.tmod --sequence-length=xs=3 --optional-absent=opt
//   turbine compile model.onnx -o m.tmod --sequence-shapes=xs=2x3,4x3
//   turbine compile model.onnx -o m.tmod --dump-phases=phases/ --timings
//   turbine compile model.onnx -o m.tmod --externalize-params=weights.irpa
//   turbine compile model.pt -o m.tmod --input-shape=1x3x224x224xf32 --dynamic-dim=0:0
//   turbine compile llm.pt -o m.tmod --function-shapes=prefill:1x8xi64 \
//       --function-shapes=decode:1x1xi64,i64 --dynamic-dim=prefill:0:1   (stateful)
//
// Turns the flags into compile options and frontend options, compiles in a
// model session (tools/common ModelSession.h: the same session `turbine
// conformance` and the Python extension use) and writes one artifact. Errors
// from the layers below speak of their own terms; this command adds the
// flag that sets what they name (FlagHints.h).
//===----------------------------------------------------------------------===//
#include "Commands.h"
#include "FlagHints.h"
#include "TorchScriptPreflight.h"
#include "turbine/frontends/onnx/OnnxImporter.h"
#include "turbine/frontends/torch/TorchImporter.h"
#include "turbine/tools/ModelSession.h"
#include "turbine/tools/GgufWeightsFrom.h"
#include "turbine/tools/ParameterExternalization.h"

#include "turbine/artifact/Module.h"
#include "turbine/compiler/Target.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"

#include <CLI/CLI.hpp>
#include <fmt/core.h>

#include <unistd.h>

namespace turbine::tools {
namespace {

struct CompileArgs {
  std::vector<std::string> sequenceLengths; ///< NAME=N (ONNX sequence inputs)
  std::vector<std::string> sequenceShapes;  ///< NAME=SHAPE,SHAPE,...
  std::vector<std::string> absentOptionals;
  std::vector<std::string> inputShapes; ///< TorchScript forward inputs
  std::vector<std::string> functionShapes; ///< TorchScript METHOD:SHAPE,... (stateful)
  std::vector<std::string> dynamicDims; ///< TorchScript `<input>:<dim>`
  std::string input;
  std::string output;
  std::string compileTo;
  std::string dumpPhases;
  std::string target = "cpu";
  std::string targetCpu = "host";
  std::string cudaArch = "sm_80,sm_90";
  int optLevel = 3;
  std::string matmulDataTiling = "auto";
  std::string matmulKernelPack = "auto";
  bool referenceKernels = false;
  std::string fuseAttention = "on";
  std::string quantizeWeights = "none";
  std::string quantizeExclude;
  std::string quantizedMatmulActivations = "f32";
  std::string weightsFrom;
  std::string parameterNameMap;
  std::string groupSize = "32";
  bool timings = false;
  bool printIRAfterAll = false;
  bool verifyEachPass = false;
  std::vector<std::string> printIRAfter;
  std::vector<std::string> printIRBefore;
  std::string externalizeParams;
  uint64_t externalizeMinBytes = 256;
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

/// The ONNX frontend's options from --sequence-length / --sequence-shapes /
/// --optional-absent.
Result<onnx_frontend::ImportOptions> onnxOptions(const CompileArgs &args) {
  onnx_frontend::ImportOptions options;
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
      return Status::error("--sequence-length expects NAME=N with N >= 0, got '" + spec + "'");
    options.sequenceInputLengths[spec.substr(0, eq)] = length;
  }
  const std::string shapesUsage =
      "--sequence-shapes expects NAME=SHAPE,SHAPE,... (SHAPE like 2x3, ?x4 or scalar), got '";
  for (const std::string &spec : args.sequenceShapes) {
    size_t eq = spec.find('=');
    if (eq == std::string::npos || eq == 0)
      return Status::error(shapesUsage + spec + "'");
    std::vector<std::vector<int64_t>> &shapes = options.sequenceInputShapes[spec.substr(0, eq)];
    std::string list = spec.substr(eq + 1);
    size_t start = 0;
    while (!list.empty()) {
      size_t comma = list.find(',', start);
      std::vector<int64_t> dims;
      if (!parseShape(list.substr(start, comma == std::string::npos ? std::string::npos
                                                                      : comma - start),
                      dims))
        return Status::error(shapesUsage + spec + "'");
      shapes.push_back(dims);
      if (comma == std::string::npos)
        break;
      start = comma + 1;
    }
  }
  options.absentOptionalInputs.insert(args.absentOptionals.begin(), args.absentOptionals.end());
  return options;
}

/// The TorchScript frontend's options from --input-shape / --function-shapes
/// / --dynamic-dim.
Result<torch_frontend::ImportOptions> torchOptions(const CompileArgs &args) {
  return torch_frontend::parseImportOptions(args.inputShapes, args.functionShapes,
                                            args.dynamicDims);
}

Result<compiler::CompileOptions> compileOptions(const CompileArgs &args) {
  compiler::CompileOptions options;
  options.dumpPhasesDir = args.dumpPhases;
  options.target = args.target;
  options.targetCpu = args.targetCpu;
  Result<std::vector<std::string>> cudaArchs = compiler::parseCudaArchs(args.cudaArch);
  if (!cudaArchs)
    return Status::error("--cuda-arch: " + cudaArchs.message());
  options.cudaArchs = *cudaArchs;
  options.optLevel = args.optLevel;
  options.timings = args.timings;
  options.printIRAfterAll = args.printIRAfterAll;
  options.verifyEachPass = args.verifyEachPass;
  options.printIRAfter = args.printIRAfter;
  options.printIRBefore = args.printIRBefore;
  if (!args.compileTo.empty()) {
    options.stopAfter = compiler::parsePhase(args.compileTo);
    if (!options.stopAfter)
      return Status::error("unknown phase '" + args.compileTo +
                           "' (phases: " + compiler::phaseNameList() + ")");
  }
  std::optional<compiler::StrategyMode> dataTiling =
      compiler::parseStrategyMode(args.matmulDataTiling);
  std::optional<compiler::StrategyMode> kernelPack =
      compiler::parseStrategyMode(args.matmulKernelPack);
  if (!dataTiling)
    return Status::error("--matmul-data-tiling expects auto, off or all, got '" +
                         args.matmulDataTiling + "'");
  if (!kernelPack)
    return Status::error("--matmul-kernel-pack expects auto, off or all, got '" +
                         args.matmulKernelPack + "'");
  options.matmulDataTiling = *dataTiling;
  options.matmulKernelPack = *kernelPack;
  options.referenceKernels = args.referenceKernels;
  if (Status s = compiler::setCompileOption(options, "fuse-attention", args.fuseAttention); !s)
    return Status::error("--fuse-attention: " + s.message());
  if (Status s = compiler::setCompileOption(options, "quantize-weights", args.quantizeWeights); !s)
    return Status::error("--quantize-weights: " + s.message());
  if (Status s = compiler::setCompileOption(options, "group-size", args.groupSize); !s)
    return Status::error("--group-size: " + s.message());
  options.quantizeExclude = args.quantizeExclude;
  if (Status s = compiler::setCompileOption(options, "quantized-matmul-activations",
                                            args.quantizedMatmulActivations);
      !s)
    return Status::error("--quantized-matmul-activations: " + s.message());
  if (!args.weightsFrom.empty()) {
    auto tensors = ggufTensorList(args.weightsFrom, args.parameterNameMap);
    if (!tensors)
      return tensors.status();
    options.ggufTensors = std::move(*tensors);
  } else if (!args.parameterNameMap.empty()) {
    return Status::error("--parameter-name-map renames the tensors of --weights-from, which "
                         "is not given");
  }
  // On a terminal, one status line that the next one overwrites.
  if (::isatty(STDERR_FILENO))
    options.progress = [](const std::string &status) {
      fmt::print(stderr, "\r\033[Kturbine compile: {}", status);
      std::fflush(stderr);
    };
  return options;
}

/// Writes `text` to `path` ("" or "-": stdout).
int writeText(const std::string &text, const std::string &path) {
  if (path.empty() || path == "-") {
    llvm::outs() << text << "\n";
    return 0;
  }
  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec);
  if (ec)
    return fail("cannot write '" + path + "': " + ec.message());
  os << text;
  return 0;
}

int runCompile(const CompileArgs &args) {
  Result<compiler::CompileOptions> options = compileOptions(args);
  if (!options)
    return fail(options.message());
  if (!options->stopAfter && args.output.empty())
    return fail("missing output file: pass -o FILE.tmod (or --compile-to=PHASE)");
  if (!llvm::sys::fs::exists(args.input))
    return fail("input file '" + args.input + "' does not exist");
  if (!args.output.empty() && llvm::sys::fs::equivalent(args.input, args.output))
    return fail("output file '" + args.output + "' is the input file");
  if (!args.externalizeParams.empty()) {
    if (options->stopAfter)
      return fail("--externalize-params needs an artifact to write (not --compile-to)");
    for (const std::string &other : {args.input, args.output})
      if (llvm::sys::fs::equivalent(other, args.externalizeParams))
        return fail("parameter file '" + args.externalizeParams + "' is also '" + other + "'");
  }
  Result<onnx_frontend::ImportOptions> onnx = onnxOptions(args);
  if (!onnx)
    return fail(onnx.message());
  Result<torch_frontend::ImportOptions> torch = torchOptions(args);
  if (!torch)
    return fail(withFlagHints(torch.message()));
  // libtorch's load of a malformed archive can crash: tried first in a child
  // process, while this one is single-threaded (the session starts threads).
  if (torch_frontend::looksLikeTorchScriptFile(args.input))
    if (Status loads = checkTorchScriptLoads(args.input); !loads)
      return fail(loads.message());
  std::vector<std::unique_ptr<compiler::Importer>> importers;
  importers.push_back(onnx_frontend::createOnnxImporter(std::move(*onnx)));
  importers.push_back(torch_frontend::createTorchScriptImporter(std::move(*torch)));
  bool showsProgress = static_cast<bool>(options->progress);

  Result<std::unique_ptr<compiler::Session>> session =
      createModelSession(std::move(*options), std::move(importers));
  if (!session)
    return fail(session.message());
  compiler::Source source = compiler::Source::file(args.input);
  if ((!args.inputShapes.empty() || !args.dynamicDims.empty() || !args.functionShapes.empty()) &&
      (*session)->formatOf(source) != "torchscript")
    return fail("--input-shape/--function-shapes/--dynamic-dim apply to TorchScript models "
                "only, not '" +
                args.input + "'");
  Result<compiler::CompileOutput> output = (*session)->compile(source);
  if (showsProgress)
    fmt::print(stderr, "\r\033[K");
  if (!output)
    return fail(withFlagHints(output.message()));
  if (!output->timings.empty())
    fmt::print(stderr, "{}", output->timings);
  if (!output->artifact)
    return writeText(output->ir, args.output);
  if (!args.externalizeParams.empty()) {
    auto moved = externalizeParameters(*output->artifact, args.externalizeParams,
                                       args.externalizeMinBytes);
    if (!moved)
      return fail(moved.message());
  }
  if (Status written = artifact::writeFile(*output->artifact, args.output); !written)
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
                  "Stop after this phase and print its IR (" + compiler::phaseNameList() + ")");
  cmd->add_option("--dump-phases", args->dumpPhases,
                  "Write N.PHASE.mlir for every phase into this directory");
  cmd->add_flag("--timings", args->timings,
                "Print the time of every phase and pass (like -mlir-timing)");
  std::string targets;
  for (const std::string &name : compiler::targetNames())
    targets += (targets.empty() ? "" : ", ") + name;
  cmd->add_option("--target", args->target, "Code-generation target (" + targets + ")")
      ->capture_default_str();
  cmd->add_option("--target-cpu", args->targetCpu,
                  "cpu target: LLVM CPU name for kernels ('host' = this machine); sizes the "
                  "register tiles for its vector registers (AVX-512, AVX2, SSE) and picks the "
                  "optional instructions kernels use: AVX512-VNNI vpdpbusd for int4 GEMV "
                  "(int8-rounded activations), AVX512-BF16 vdpbf16ps for bf16 matmuls of 2+ "
                  "rows (and vcvtneps2bf16 rounding), else f32 FMAs (docs/performance.md). "
                  "The artifact records the CPU: a machine without its extensions refuses "
                  "to load it");
  cmd->add_option("--cuda-arch", args->cudaArch,
                  "cuda target: GPU architectures to assemble cubins for (sm_NN list, NN >= 75; "
                  "the PTX is made for the oldest)")
      ->capture_default_str();
  cmd->add_option("--opt-level", args->optLevel, "cpu target: LLVM optimization level 0-3")
      ->check(CLI::Range(0, 3));
  cmd->add_option("--matmul-data-tiling", args->matmulDataTiling,
                  "cpu target: pack matmul B into 32-column panels: auto (by size), off, all")
      ->capture_default_str();
  cmd->add_option("--matmul-kernel-pack", args->matmulKernelPack,
                  "cpu target: pack matmul B per workgroup in the kernel: auto, off, all")
      ->capture_default_str();
  cmd->add_flag("--reference-kernels", args->referenceKernels,
                "cpu target: plain scalar kernels (workgroup tiling only; what `turbine "
                "bisect` compares against)");
  cmd->add_option("--fuse-attention", args->fuseAttention,
                  "q.k^T.scale (+mask) -> softmax -> .v as one fused attention dispatch "
                  "(online softmax, reads a KV cache in place): on, off")
      ->capture_default_str();
  cmd->add_option("--quantize-weights", args->quantizeWeights,
                  "Matmuls by constant f32 weights multiply by group-quantized weights, "
                  "dequantized in the kernel: none, int8, int4 (symmetric, one f32 scale per "
                  "--group-size elements of K)")
      ->capture_default_str();
  cmd->add_option("--quantized-matmul-activations", args->quantizedMatmulActivations,
                  "GEMVs by int4 (--quantize-weights) or GGUF Q8_0/Q4_0 weights: int8 = round "
                  "each group/block of activations to int8 (one scale, like llama.cpp) and use "
                  "AVX512-VNNI vpdpbusd where --target-cpu has it, else AVX2 vpmaddubsw + vpmaddwd; "
                  "f32 = never round "
                  "activations (weights dequantized in registers, FMA). Accuracy and speed: "
                  "docs/performance.md")
      ->capture_default_str();
  cmd->add_option("--quantize-exclude", args->quantizeExclude,
                  "Regular expression: weights whose parameter name (state_dict key, or "
                  "`turbine params list`) matches anywhere stay f32 with --quantize-weights");
  cmd->add_option("--weights-from", args->weightsFrom,
                  "GGUF file whose tensors the model's weights become, bound by their GGUF "
                  "names and read in place in the file's own types (F32, F16, BF16, Q8_0, "
                  "Q4_0): matmul weights, the token embedding's gather, norm weights "
                  "(run with --parameters=FILE)");
  cmd->add_option("--parameter-name-map", args->parameterNameMap,
                  "With --weights-from: rules `GGUF_NAME = STATE_DICT_KEY` (a '*' copies "
                  "across), e.g. examples/llm/llama.names");
  cmd->add_option("--group-size", args->groupSize,
                  "Elements of K per scale for --quantize-weights")
      ->capture_default_str();
  cmd->add_flag("--verify-each-pass", args->verifyEachPass,
                "Verify the IR after every pass (default: after every pass of the phases "
                "before codegen, and after every phase)");
  cmd->add_flag("--mlir-print-ir-after-all", args->printIRAfterAll,
                "Print the IR after every pass (to stderr)");
  cmd->add_option("--mlir-print-ir-after", args->printIRAfter,
                  "Print the IR after the pass with this argument, e.g. "
                  "turbine-cpu-tile-and-vectorize (repeatable)")
      ->allow_extra_args(false);
  cmd->add_option("--mlir-print-ir-before", args->printIRBefore,
                  "Print the IR before the pass with this argument (repeatable)")
      ->allow_extra_args(false);
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
  cmd->add_option("--input-shape", args->inputShapes,
                  "TorchScript only: shape and dtype of a forward input, one per "
                  "input in order (e.g. 1x3x224x224xf32)");
  cmd->add_option("--function-shapes", args->functionShapes,
                  "TorchScript only: import the method METHOD (an @torch.jit.export "
                  "method, or forward) with these argument shapes, METHOD:SHAPE,SHAPE,... "
                  "(an int argument: i64); repeat per method: a stateful module whose "
                  "mutated buffers become module state (e.g. prefill:1x8xi64 "
                  "decode:1x1xi64,i64)");
  cmd->add_option("--dynamic-dim", args->dynamicDims,
                  "TorchScript only: leave a dim symbolic, <input index or name>:<dim> "
                  "(e.g. 0:0 for a dynamic batch); with --function-shapes "
                  "METHOD:<input>:<dim>; repeatable");
  cmd->callback([args, &exitCode] { exitCode = runCompile(*args); });
}

} // namespace turbine::tools
