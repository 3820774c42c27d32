//===- CompileKernel.cpp - Kernel module text -> verified MLIR -> artifact ===//
//
// Parses the emitted module, lowers its vector ops (contractions as outer
// products, multi-reductions, transposes, broadcasts, shape casts, n-D
// transfers) in stages as the compiler's codegen does, then compiles it in
// a compile session (compiler/Session.h): its phases find the dispatch
// formed and the kernel at the vector level, and lower and link it.
//===----------------------------------------------------------------------===//
#include "turbine/kernels/Compile.h"

#include "turbine/artifact/Module.h"
#include "turbine/compiler/Passes.h"
#include "turbine/compiler/Session.h"

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

  compiler::CompileOptions compileOptions;
  compileOptions.targetCpu = options.targetCpu;
  compileOptions.optLevel = options.optLevel;
  compileOptions.dumpPhasesDir = options.dumpDir;
  compiler::Session session(compileOptions);
  MLIRContext &context = session.context();
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
  if (ModuleOp kernels = compiler::getKernelsModule(*module, /*create=*/false))
    for (auto fn : kernels.getOps<func::FuncOp>())
      fn->setAttr(compiler::kKernelAttr, UnitAttr::get(&context));
  if (failed(lowerVectorOps(*module)))
    return Status::error(where + "vector lowering failed:\n" + diagnostics);
  if (!options.dumpDir.empty()) {
    std::string lowered;
    llvm::raw_string_ostream os(lowered);
    module->print(os);
    writeText(options.dumpDir, "1.vector-lowered.mlir", lowered);
  }
  Result<compiler::CompileOutput> compiled = session.compileModule(*module);
  if (!compiled)
    return Status::error(where + compiled.message());
  out = std::move(*compiled->artifact);
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
