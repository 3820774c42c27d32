//===- CompileKernel.cpp - Kernel module -> verified MLIR -> artifact -----===//
//
// Builds the kernel module (EmitKernel.h; hand-written MLIR custom ops are
// parsed from their text instead), lowers its vector ops (contractions as outer
// products, multi-reductions, transposes, broadcasts, shape casts, n-D
// transfers) in stages as the compiler's codegen does, then hands it to the
// compiler's codegen tail and link (LinkKernels.h).
//===----------------------------------------------------------------------===//
#include "turbine/kernels/EmitKernel.h"

#include "turbine/artifact/Module.h"
#include "turbine/compiler/LinkKernels.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Vector/Transforms/LoweringPatterns.h"
#include "mlir/Dialect/Vector/Transforms/VectorRewritePatterns.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"

#include <functional>
#include <iterator>
#include <memory>

using namespace mlir;

namespace turbine::kernels {
namespace {

LogicalResult lowerVectorOps(ModuleOp module) {
  using Populate = std::function<void(RewritePatternSet &)>;
  const Populate stages[] = {
      [](RewritePatternSet &p) {
        vector::populateVectorContractLoweringPatterns(
            p, vector::VectorContractLowering::OuterProduct);
        vector::populateVectorMultiReductionLoweringPatterns(
            p, vector::VectorMultiReductionLowering::InnerReduction);
      },
      [](RewritePatternSet &p) {
        vector::populateVectorTransferPermutationMapLoweringPatterns(p);
        vector::populateVectorBroadcastLoweringPatterns(p);
        vector::populateVectorShapeCastLoweringPatterns(p);
        vector::populateVectorTransposeLoweringPatterns(
            p, vector::VectorTransposeLowering::EltWise);
        vector::populateVectorTransferLoweringPatterns(p, /*maxRank=*/1);
      },
  };
  GreedyRewriteConfig config;
  config.setMaxNumRewrites(1 << 20);
  for (const Populate &populate : stages) {
    RewritePatternSet patterns(module.getContext());
    populate(patterns);
    if (failed(applyPatternsGreedily(module, std::move(patterns), config)))
      return module.emitError("vector lowering did not converge");
  }
  auto pm = PassManager::on<ModuleOp>(module.getContext());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  return pm.run(module);
}

bool writeText(const std::string &dir, const std::string &name,
               const std::string &text) {
  if (llvm::sys::fs::create_directories(dir))
    return false;
  std::error_code ec;
  llvm::raw_fd_ostream os(dir + "/" + name, ec);
  if (ec)
    return false;
  os << text;
  return true;
}

} // namespace

namespace {

/// A context with every dialect the compiler and the kernel emitter use;
/// errors are collected into `diagnostics`.
struct KernelContext {
  KernelContext() {
    DialectRegistry registry;
    compiler::registerCompilerDialects(registry);
    context.appendDialectRegistry(registry);
    context.loadAllAvailableDialects();
    loadKernelDialects(context);
    context.disableMultithreading();
    handler = std::make_unique<ScopedDiagnosticHandler>(&context, [this](Diagnostic &diag) {
      if (diag.getSeverity() == DiagnosticSeverity::Error)
        stream << diag.getLocation() << ": " << diag << "\n";
      return success();
    });
  }
  MLIRContext context;
  std::string diagnostics;
  llvm::raw_string_ostream stream{diagnostics};
  std::unique_ptr<ScopedDiagnosticHandler> handler;
};

std::string printed(ModuleOp module) {
  std::string text;
  llvm::raw_string_ostream os(text);
  module->print(os);
  return text;
}

/// Verifies, lowers the vector ops of and links a kernel module.
Status compileVerified(ModuleOp module, const std::string &where,
                       const std::string &diagnostics,
                       const KernelCompileOptions &options, artifact::Module &out) {
  if (failed(verify(module)))
    return Status::error(where + "the kernel module is invalid:\n" + diagnostics);
  // Every function of the kernel container is a kernel.
  for (auto nested : module.getOps<ModuleOp>())
    if (nested->hasAttr("turbine.kernels"))
      for (auto fn : nested.getOps<func::FuncOp>())
        fn->setAttr("turbine.kernel", UnitAttr::get(module.getContext()));
  if (failed(lowerVectorOps(module)))
    return Status::error(where + "vector lowering failed:\n" + diagnostics);
  if (!options.dumpDir.empty())
    writeText(options.dumpDir, "1.vector-lowered.mlir", printed(module));
  compiler::CompileOptions compileOptions;
  compileOptions.targetCpu = options.targetCpu;
  compileOptions.optLevel = options.optLevel;
  std::string error;
  if (!compiler::linkVectorKernels(module, compileOptions, out, error))
    return Status::error(where + error);
  return Status::success();
}

} // namespace

Status compileKernelModuleText(const std::string &text, const std::string &label,
                               const KernelCompileOptions &options,
                               artifact::Module &out) {
  const std::string where = label + ": ";
  if (!options.dumpDir.empty())
    writeText(options.dumpDir, "0.kernel.mlir", text);
  KernelContext kc;
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(text, &kc.context, label);
  if (!module)
    return Status::error(where + "the kernel module is invalid:\n" + kc.diagnostics);
  return compileVerified(*module, where, kc.diagnostics, options, out);
}

Status compileTensorModuleText(const std::string &text, const std::string &label,
                               const KernelCompileOptions &options,
                               artifact::Module &out) {
  const std::string where = label + ": ";
  KernelContext kc;
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(text, &kc.context, label);
  if (!module)
    return Status::error(where + "the tensor-level body does not parse:\n" + kc.diagnostics);
  auto functions = module->getOps<func::FuncOp>();
  if (std::distance(functions.begin(), functions.end()) != 1)
    return Status::error(where + "the tensor-level body must be exactly one func.func");
  func::FuncOp fn = *functions.begin();
  if (fn.isDeclaration())
    return Status::error(where + "the tensor-level body has no body");
  fn.setSymName("main");
  fn.setPublic();
  compiler::CompileOptions compileOptions;
  compileOptions.targetCpu = options.targetCpu;
  compileOptions.optLevel = options.optLevel;
  compileOptions.dumpPhasesDir = options.dumpDir;
  std::string error;
  if (!compiler::compileModule(*module, compileOptions, &out, error))
    return Status::error(where + error + (kc.diagnostics.empty() ? "" : "\n" + kc.diagnostics));
  return Status::success();
}

Status compileKernel(const Specialization &spec,
                     const KernelCompileOptions &options,
                     artifact::Module &out) {
  KernelContext kc;
  Result<OwningOpRef<ModuleOp>> module = buildKernelModule(kc.context, spec);
  if (!module.ok())
    return module.status();
  if (!options.dumpDir.empty())
    writeText(options.dumpDir, "0.kernel.mlir", printed(**module));
  return compileVerified(**module, "kernel '" + spec.kernel->name + "': ",
                         kc.diagnostics, options, out);
}

} // namespace turbine::kernels
