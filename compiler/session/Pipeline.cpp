//===- Pipeline.cpp - The named phases as pass pipelines ------------------===//
//
// Which passes make each phase, in order (the passes themselves live with
// their phase: input/, global-opt/, dispatch/, targets/<name>/), the phase
// and strategy names, and the registration turbine-opt uses.
//===----------------------------------------------------------------------===//
#include "turbine/compiler/Passes.h"
#include "turbine/compiler/Session.h"
#include "turbine/compiler/Target.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <algorithm>
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

namespace turbine::compiler {

#define GEN_PASS_REGISTRATION
#include "turbine/compiler/Passes.h.inc"

const std::vector<Phase> &allPhases() {
  static const std::vector<Phase> phases = {Phase::Input, Phase::GlobalOpt, Phase::Dispatch,
                                            Phase::Codegen, Phase::Link};
  return phases;
}

std::string_view phaseName(Phase phase) {
  switch (phase) {
  case Phase::Input:
    return "input";
  case Phase::GlobalOpt:
    return "global-opt";
  case Phase::Dispatch:
    return "dispatch";
  case Phase::Codegen:
    return "codegen";
  case Phase::Link:
    return "link";
  }
  return "?";
}

std::optional<Phase> parsePhase(std::string_view name) {
  for (Phase p : allPhases())
    if (phaseName(p) == name)
      return p;
  return std::nullopt;
}

std::string phaseNameList() {
  std::string names;
  for (Phase p : allPhases())
    names += (names.empty() ? "" : ", ") + std::string(phaseName(p));
  return names;
}

std::optional<StrategyMode> parseStrategyMode(std::string_view text) {
  if (text == "auto")
    return StrategyMode::Auto;
  if (text == "off" || text == "0")
    return StrategyMode::Off;
  if (text == "all")
    return StrategyMode::All;
  return std::nullopt;
}

std::string_view strategyModeName(StrategyMode mode) {
  switch (mode) {
  case StrategyMode::Auto:
    return "auto";
  case StrategyMode::Off:
    return "off";
  case StrategyMode::All:
    return "all";
  }
  return "?";
}

Result<std::vector<std::string>> parseCudaArchs(std::string_view text) {
  std::vector<std::pair<int, std::string>> archs;
  size_t start = 0;
  while (start <= text.size()) {
    size_t comma = text.find(',', start);
    std::string_view entry =
        text.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start);
    std::string_view digits;
    bool ok = entry.size() >= 5 && entry.size() <= 7 && entry.substr(0, 3) == "sm_";
    int number = 0;
    if (ok) {
      digits = entry.substr(3);
      for (char c : digits)
        ok = ok && c >= '0' && c <= '9';
      if (ok)
        number = std::stoi(std::string(digits));
    }
    if (!ok || number < 75)
      return Status::error("bad CUDA architecture '" + std::string(entry) +
                           "' in '" + std::string(text) +
                           "' (expected sm_NN with NN >= 75, e.g. sm_80,sm_90)");
    for (const auto &seen : archs)
      if (seen.first == number)
        return Status::error("CUDA architecture '" + std::string(entry) + "' given twice in '" +
                             std::string(text) + "'");
    archs.emplace_back(number, std::string(entry));
    if (comma == std::string_view::npos)
      break;
    start = comma + 1;
  }
  std::sort(archs.begin(), archs.end());
  std::vector<std::string> names;
  for (auto &arch : archs)
    names.push_back(std::move(arch.second));
  return names;
}

Status setCompileOption(CompileOptions &options, std::string_view name, std::string_view value) {
  std::string key(name);
  std::replace(key.begin(), key.end(), '_', '-');
  auto mode = [&](StrategyMode &out) {
    std::optional<StrategyMode> parsed = parseStrategyMode(value);
    if (!parsed)
      return Status::error("option '" + key + "' expects auto, off or all, got '" +
                           std::string(value) + "'");
    out = *parsed;
    return Status::success();
  };
  if (key == "target") {
    options.target = std::string(value);
  } else if (key == "target-cpu") {
    options.targetCpu = std::string(value);
  } else if (key == "cuda-arch") {
    Result<std::vector<std::string>> archs = parseCudaArchs(value);
    if (!archs)
      return archs.status();
    options.cudaArchs = *archs;
  } else if (key == "opt-level") {
    if (value.size() != 1 || value[0] < '0' || value[0] > '3')
      return Status::error("option 'opt-level' expects 0-3, got '" + std::string(value) + "'");
    options.optLevel = value[0] - '0';
  } else if (key == "matmul-data-tiling") {
    return mode(options.matmulDataTiling);
  } else if (key == "matmul-kernel-pack") {
    return mode(options.matmulKernelPack);
  } else if (key == "reference-kernels") {
    if (value != "true" && value != "false")
      return Status::error("option 'reference-kernels' expects true or false, got '" +
                           std::string(value) + "'");
    options.referenceKernels = value == "true";
  } else if (key == "deduplicate-kernels") {
    if (value != "true" && value != "false")
      return Status::error("option 'deduplicate-kernels' expects true or false, got '" +
                           std::string(value) + "'");
    options.deduplicateKernels = value == "true";
  } else if (key == "fuse-attention") {
    if (value != "on" && value != "off")
      return Status::error("option 'fuse-attention' expects on or off, got '" +
                           std::string(value) + "'");
    options.fuseAttention = value == "on";
  } else if (key == "quantize-weights") {
    if (value != "none" && value != "int8" && value != "int4")
      return Status::error("option 'quantize-weights' expects none, int8 or int4, got '" +
                           std::string(value) + "'");
    options.quantizeWeights = std::string(value);
  } else if (key == "quantized-matmul-activations") {
    if (value != "int8" && value != "f32")
      return Status::error("option 'quantized-matmul-activations' expects int8 or f32, got '" +
                           std::string(value) + "'");
    options.quantizedMatmulActivations = std::string(value);
  } else if (key == "quantize-exclude") {
    options.quantizeExclude = std::string(value);
  } else if (key == "group-size") {
    int64_t size = 0;
    bool digits = !value.empty() && value.size() <= 9 &&
                  std::all_of(value.begin(), value.end(), [](char c) { return c >= '0' && c <= '9'; });
    if (digits)
      size = std::stoll(std::string(value));
    if (size <= 0)
      return Status::error("option 'group-size' expects a positive integer, got '" +
                           std::string(value) + "'");
    options.quantizeGroupSize = size;
  } else if (key == "dump-phases") {
    options.dumpPhasesDir = std::string(value);
  } else {
    return Status::error("unknown compile option '" + std::string(name) +
                         "' (target, target-cpu, cuda-arch, opt-level, matmul-data-tiling, "
                         "matmul-kernel-pack, reference-kernels, fuse-attention, quantize-weights, "
                         "group-size, quantize-exclude, quantized-matmul-activations, "
                         "dump-phases)");
  }
  return Status::success();
}

ModuleOp getKernelsModule(ModuleOp module, bool create) {
  for (auto nested : module.getOps<ModuleOp>())
    if (nested->hasAttr(kKernelsModuleAttr))
      return nested;
  if (!create)
    return nullptr;
  OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
  auto kernels = ModuleOp::create(b, module.getLoc(), kKernelsModuleName);
  kernels->setAttr(kKernelsModuleAttr, b.getUnitAttr());
  return kernels;
}

Status buildPhasePipeline(Phase phase, OpPassManager &pm, const CompileOptions &options,
                          const Target &target,
                          llvm::ArrayRef<const PipelineExtension *> extensions) {
  for (const PipelineExtension *extension : extensions)
    extension->addPassesBefore(phase, pm);
  switch (phase) {
  case Phase::Input:
    pm.addPass(createVerifyInput());
    pm.addPass(createInlineConstantGlobals());
    pm.addPass(createLowerTosa());
    pm.addPass(createCanonicalizerPass());
    return Status::success();
  case Phase::GlobalOpt:
    // First, on the importers' form (before transposes become generics;
    // f32 attention only, so before the f16/bf16 accumulators change).
    if (options.fuseAttention)
      pm.addPass(createFuseAttention());
    pm.addPass(createAccumulateInF32());
    pm.addPass(createConvertToChannelsLast());
    pm.addPass(createLowerPads());
    pm.addPass(createGeneralizeElementwise());
    pm.addPass(createFuseElementwise());
    // After fusion folded constant transposes into the weights, before the
    // target packs them.
    if (!options.ggufTensors.empty()) {
      BindGgufWeightsOptions gguf;
      gguf.tensors.assign(options.ggufTensors.begin(), options.ggufTensors.end());
      pm.addPass(createBindGgufWeights(gguf));
    }
    if (options.quantizeWeights != "none") {
      QuantizeWeightsOptions quantize;
      quantize.weights = options.quantizeWeights;
      quantize.groupSize = options.quantizeGroupSize;
      quantize.exclude = options.quantizeExclude;
      quantize.columnBlock = target.quantizedWeightColumns(options);
      pm.addPass(createQuantizeWeights(quantize));
    }
    target.buildGlobalOptPasses(pm, options);
    return Status::success();
  case Phase::Dispatch: {
    // Before the pads: a concatenation is a chain of slice updates then, and
    // a pad of it stays a pad kernel.
    pm.addPass(createWriteConcatsInProducers());
    pm.addPass(createWritePadsInProducers());
    pm.addPass(createUpdateSlicesInPlace());
    FormDispatchesOptions formOptions;
    formOptions.target = std::string(target.name());
    formOptions.targetCpu = options.targetCpu;
    pm.addPass(createFormDispatches(formOptions));
    OpPassManager &hostFunctions = pm.nest<func::FuncOp>();
    hostFunctions.addPass(createCanonicalizerPass());
    hostFunctions.addPass(createCSEPass());
    if (options.deduplicateKernels)
      pm.addPass(createDeduplicateKernels());
    return Status::success();
  }
  case Phase::Codegen:
    return target.buildCodegenPasses(pm.nest<ModuleOp>(), options);
  case Phase::Link:
    return Status::success();
  }
  return Status::success();
}

void registerTurbinePasses() {
  registerTurbineCompilerPasses();
  static const bool pipelinesRegistered = [] {
    auto registerPhase = [](Phase phase, const std::string &argument, const Target &target) {
      PassPipelineRegistration<>(
          argument, "The " + std::string(phaseName(phase)) + " phase of `turbine compile`",
          [phase, &target](OpPassManager &pm) {
            // Only the CPU LLVM lowering's text could fail to parse, and the
            // registration of every upstream pass precedes this.
            (void)buildPhasePipeline(phase, pm, CompileOptions(), target);
          });
    };
    const Target *cpu = findTarget("cpu");
    registerPhase(Phase::Input, "turbine-input", *cpu);
    registerPhase(Phase::GlobalOpt, "turbine-global-opt", *cpu);
    registerPhase(Phase::Dispatch, "turbine-dispatch", *cpu);
    for (const std::string &name : targetNames())
      registerPhase(Phase::Codegen, "turbine-codegen-" + name, *findTarget(name));
    return true;
  }();
  (void)pipelinesRegistered;
}

} // namespace turbine::compiler
