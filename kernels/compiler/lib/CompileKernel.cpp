//===- CompileKernel.cpp - Kernel module text -> verified MLIR -> artifact ===//
//
// Parses the emitted module, lowers its vector ops (contractions as outer
// products, multi-reductions, transposes, broadcasts, shape casts, n-D
// transfers) in stages as the compiler's codegen does, then hands it to the
// compiler's codegen tail and link (LinkKernels.h).
//===----------------------------------------------------------------------===//
#include "turbine/kernels/Compile.h"

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

Status compileKernelModuleText(const std::string &text, const std::string &label,
                               const KernelCompileOptions &options,
                               artifact::Module &out) {
  const std::string where = label + ": ";
  if (!options.dumpDir.empty())
    writeText(options.dumpDir, "0.kernel.mlir", text);

  DialectRegistry registry;
  compiler::registerCompilerDialects(registry);
  MLIRContext context(registry);
  context.loadAllAvailableDialects();
  context.disableMultithreading();
  std::string diagnostics;
  llvm::raw_string_ostream diagStream(diagnostics);
  ScopedDiagnosticHandler handler(&context, [&](Diagnostic &diag) {
    if (diag.getSeverity() == DiagnosticSeverity::Error)
      diagStream << diag.getLocation() << ": " << diag << "\n";
    return success();
  });
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(text, &context, label);
  if (!module || failed(verify(*module)))
    return Status::error(where + "the kernel module is invalid:\n" + diagnostics);
  // Every function of the kernel container is a kernel.
  for (auto nested : module->getOps<ModuleOp>())
    if (nested->hasAttr("turbine.kernels"))
      for (auto fn : nested.getOps<func::FuncOp>())
        fn->setAttr("turbine.kernel", UnitAttr::get(&context));
  if (failed(lowerVectorOps(*module)))
    return Status::error(where + "vector lowering failed:\n" + diagnostics);
  if (!options.dumpDir.empty()) {
    std::string lowered;
    llvm::raw_string_ostream os(lowered);
    module->print(os);
    writeText(options.dumpDir, "1.vector-lowered.mlir", lowered);
  }
  compiler::CompileOptions compileOptions;
  compileOptions.targetCpu = options.targetCpu;
  compileOptions.optLevel = options.optLevel;
  std::string error;
  if (!compiler::linkVectorKernels(*module, compileOptions, out, error))
    return Status::error(where + error);
  return Status::success();
}

Status compileKernel(const Specialization &spec,
                     const KernelCompileOptions &options,
                     artifact::Module &out) {
  Result<std::string> text = emitKernelModule(spec);
  if (!text.ok())
    return text.status();
  return compileKernelModuleText(*text, "kernel '" + spec.kernel->name + "'",
                                 options, out);
}

} // namespace turbine::kernels
