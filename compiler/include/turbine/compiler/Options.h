//===- Options.h - What a compile does: phases, target, strategy switches -===//
//
// A module in upstream dialects on tensors goes through named phases, each of
// which can be stopped after and dumped (like IREE's compilation phases):
//
//   input       tosa -> linalg, input checks; the canonical input form
//   global-opt  whole-program simplification, layouts, elementwise fusion
//   dispatch    dispatch regions outlined into kernels + turbine.dispatch
//   codegen     per kernel (the target's pipeline): tiling, vectorization,
//               bufferization, lowering (to the LLVM dialect on CPU)
//   link        kernels -> the target's native code; host programs
//               serialized; together they make the artifact
//
// Every strategy switch of the compiler is an option here, passed down to
// the pass that reads it (Passes.td); nothing in the compiler reads the
// environment. Includes no MLIR header.
//===----------------------------------------------------------------------===//
#ifndef TURBINE_COMPILER_OPTIONS_H
#define TURBINE_COMPILER_OPTIONS_H

#include "turbine/base/Status.h"

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace turbine::compiler {

enum class Phase { Input, GlobalOpt, Dispatch, Codegen, Link };

/// All phases in order.
const std::vector<Phase> &allPhases();
/// "input", "global-opt", "dispatch", "codegen", "link".
std::string_view phaseName(Phase phase);
std::optional<Phase> parsePhase(std::string_view name);
/// The phase names joined with ", " (for messages and --help).
std::string phaseNameList();

/// A strategy switch: `Auto` applies the strategy where its heuristic says
/// it pays, `Off` never, `All` wherever it is correct (for tests and
/// benchmarking).
enum class StrategyMode { Auto, Off, All };
/// "auto", "off" (also "0"), "all".
std::optional<StrategyMode> parseStrategyMode(std::string_view text);
std::string_view strategyModeName(StrategyMode mode);

struct CompileOptions {
  //===--- What runs -------------------------------------------------------===//
  /// Stop after this phase: the output is the module as that phase left it
  /// (no artifact).
  std::optional<Phase> stopAfter;

  //===--- Target ----------------------------------------------------------===//
  /// Name of a registered target (Target.h): "cpu".
  std::string target = "cpu";
  /// CPU target: LLVM CPU name for kernels ("host" = the compiling machine).
  std::string targetCpu = "host";
  /// CPU target: LLVM optimization level for kernels (0-3).
  int optLevel = 3;
  /// CUDA target: the GPU architectures to assemble cubins for ("sm_80",
  /// "sm_90", ...; sm_75 or newer). The PTX, stored beside the cubins, is
  /// generated for the first (oldest) one, so a newer GPU can JIT it.
  std::vector<std::string> cudaArchs = {"sm_80", "sm_90"};

  //===--- Strategy switches (CPU target) ----------------------------------===//
  /// Matmul B packed into 32-column panels in global-opt.
  StrategyMode matmulDataTiling = StrategyMode::Auto;
  /// Matmul B packed per workgroup inside the kernel.
  StrategyMode matmulKernelPack = StrategyMode::Auto;
  /// Plain reference kernels: each kernel keeps its workgroup tiling (same
  /// dispatches, grids and bindings as a normal compile) and every op in it
  /// becomes scalar loops: no register tiles, vectorization or specialized
  /// strategies. What `turbine bisect` compares a normal build against.
  bool referenceKernels = false;
  /// Kernels with identical bodies compiled once (turbine-deduplicate-kernels).
  bool deduplicateKernels = true;

  //===--- Attention (global-opt, every target) ----------------------------===//
  /// Scaled-dot-product attention becomes one turbine.attention dispatch
  /// (turbine-fuse-attention); off keeps the importer's matmuls and softmax.
  bool fuseAttention = true;

  //===--- Low precision (global-opt, every target) ------------------------===//
  /// Weight quantization of matmuls by constant f32 weights
  /// (turbine-quantize-weights): "none", "int8" or "int4" (group-quantized,
  /// one f32 scale per `quantizeGroupSize` elements of K, multiplied by a
  /// fused dequantize-and-multiply kernel). Weights whose parameter name
  /// matches the regular expression `quantizeExclude` stay f32.
  std::string quantizeWeights = "none";
  int64_t quantizeGroupSize = 32;
  std::string quantizeExclude;
  /// Activations of quantized-weight GEMVs (int4 `quantizeWeights`, GGUF
  /// Q8_0 / Q4_0): "int8" rounds each group / block of activations to int8
  /// with one scale (as llama.cpp does) and multiplies with AVX512-VNNI's
  /// vpdpbusd where `targetCpu` has it; "f32" never rounds activations
  /// (the weights are dequantized in registers). Accuracy: docs/performance.md.
  std::string quantizedMatmulActivations = "f32";
  /// Weights bound from a GGUF file in its own block layout
  /// (turbine-bind-gguf-weights, `turbine compile --weights-from`): the
  /// file's tensors as `MODULE_NAME:GGUF_NAME:TYPE:D0xD1...`, MODULE_NAME
  /// after the parameter name map. Empty: weights stay the model's constants.
  std::vector<std::string> ggufTensors;

  //===--- Observability ---------------------------------------------------===//
  /// If set, write `N.<phase>.mlir` here after every phase that runs (and
  /// the kernels' LLVM IR as kernels.ll at link on cpu, their PTX as
  /// kernels.ptx on cuda).
  std::string dumpPhasesDir;
  /// Collect per-phase and per-pass wall times into CompileOutput::timings
  /// (the report of MLIR's -mlir-timing).
  bool timings = false;
  /// Verify the IR after every pass of every phase (MLIR's default). Off,
  /// the codegen phase's passes (~45 on every kernel, mostly upstream
  /// lowerings) are not verified one by one: the module is still verified
  /// after every phase, and the verifier after each codegen pass was about
  /// a seventh of a model's compile time (docs/performance.md).
  bool verifyEachPass = false;
  /// Print the IR after every pass / after the named passes (pass arguments
  /// such as "turbine-cpu-tile-and-vectorize"), and before, to stderr.
  bool printIRAfterAll = false;
  std::vector<std::string> printIRAfter;
  std::vector<std::string> printIRBefore;
  /// Called with a one-line status as phases start and as codegen and link
  /// work through the kernels ("codegen: 37/120 kernels"); the CLI shows it
  /// on a terminal. Null: silent.
  std::function<void(const std::string &)> progress;
};

/// Sets one option of `options` by name, for APIs that pass options as text
/// (the Python extension): "target", "target-cpu", "opt-level",
/// "cuda-arch" (comma-separated sm_NN list), "matmul-data-tiling",
/// "matmul-kernel-pack", "reference-kernels" and "deduplicate-kernels" (true
/// or false), "quantize-weights" (none, int8, int4), "group-size" (a positive
/// integer), "quantized-matmul-activations" (int8, f32), "dump-phases" ('_' may stand for '-'). An error names an
/// unknown option or a bad value.
Status setCompileOption(CompileOptions &options, std::string_view name, std::string_view value);

/// Parses a comma-separated list of CUDA architectures ("sm_80,sm_90"):
/// each sm_NN with NN >= 75 (what CUDA 13's ptxas assembles), no
/// duplicates, sorted oldest first. An error names a bad entry.
Result<std::vector<std::string>> parseCudaArchs(std::string_view text);

} // namespace turbine::compiler

#endif // TURBINE_COMPILER_OPTIONS_H
