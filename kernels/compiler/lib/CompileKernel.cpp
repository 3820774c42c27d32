//===- CompileKernel.cpp - Kernel module -> verified MLIR -> artifact -----===//
//
// Builds the kernel module (EmitKernel.h; hand-written MLIR custom ops are
// parsed from their text instead), lowers its vector ops (contractions as
// outer products, multi-reductions, transposes, broadcasts, shape casts,
// n-D transfers) in stages as the compiler's codegen does, then compiles it
// in a compile session (compiler/Session.h): its phases find the dispatch
// formed and the kernel at the vector level, and lower and link it. A
// custom op's tensor-level body is compiled by the same session as a model.
//===----------------------------------------------------------------------===//
#include "turbine/kernels/EmitKernel.h"

#include "turbine/artifact/Module.h"
#include "turbine/compiler/Passes.h"
#include "turbine/compiler/Session.h"

#include "mlir/Conversion/VectorToSCF/VectorToSCF.h"
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
      // n-D transfers into 1-D ones, each under its own bounds test, the
      // rows a masked read skips left holding the padding. Done here rather
      // than by the codegen phase: there, dropping a masked read's leading
      // unit dim and lowering the broadcast that restores it first leaves
      // the skipped rows undefined (the read is unrolled into the
      // broadcast's poison).
      [](RewritePatternSet &p) {
        populateVectorToSCFConversionPatterns(
            p, VectorTransferToSCFOptions().enableFullUnroll().setTargetRank(1));
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

std::string printed(ModuleOp module) {
  std::string text;
  llvm::raw_string_ostream os(text);
  module->print(os);
  return text;
}

compiler::CompileOptions sessionOptions(const KernelCompileOptions &options) {
  compiler::CompileOptions compileOptions;
  compileOptions.targetCpu = options.targetCpu;
  compileOptions.optLevel = options.optLevel;
  compileOptions.dumpPhasesDir = options.dumpDir;
  return compileOptions;
}

/// A session whose context collects error diagnostics into `diagnostics`.
struct KernelSession {
  explicit KernelSession(const KernelCompileOptions &options)
      : session(sessionOptions(options)),
        handler(&session.context(), [this](Diagnostic &diag) {
          if (diag.getSeverity() == DiagnosticSeverity::Error)
            stream << diag.getLocation() << ": " << diag << "\n";
          return success();
        }) {
    loadKernelDialects(session.context());
  }
  compiler::Session session;
  std::string diagnostics;
  llvm::raw_string_ostream stream{diagnostics};
  ScopedDiagnosticHandler handler;
};

/// Verifies, lowers the vector ops of and compiles a kernel module.
Status compileVerified(KernelSession &ks, ModuleOp module, const std::string &where,
                       const KernelCompileOptions &options, artifact::Module &out) {
  if (failed(verify(module)))
    return Status::error(where + "the kernel module is invalid:\n" + ks.diagnostics);
  // Every function of the kernel container is a kernel.
  if (ModuleOp kernels = compiler::getKernelsModule(module, /*create=*/false))
    for (auto fn : kernels.getOps<func::FuncOp>())
      fn->setAttr(compiler::kKernelAttr, UnitAttr::get(module.getContext()));
  if (failed(lowerVectorOps(module)))
    return Status::error(where + "vector lowering failed:\n" + ks.diagnostics);
  if (!options.dumpDir.empty())
    writeText(options.dumpDir, "1.vector-lowered.mlir", printed(module));
  Result<compiler::CompileOutput> compiled = ks.session.compileModule(module);
  if (!compiled)
    return Status::error(where + compiled.message());
  out = std::move(*compiled->artifact);
  return Status::success();
}

} // namespace

Status compileKernelModuleText(const std::string &text, const std::string &label,
                               const KernelCompileOptions &options,
                               artifact::Module &out) {
  const std::string where = label + ": ";
  if (!options.dumpDir.empty())
    writeText(options.dumpDir, "0.kernel.mlir", text);
  KernelSession ks(options);
  OwningOpRef<ModuleOp> module =
      parseSourceString<ModuleOp>(text, &ks.session.context(), label);
  if (!module)
    return Status::error(where + "the kernel module is invalid:\n" + ks.diagnostics);
  return compileVerified(ks, *module, where, options, out);
}

Status compileTensorModuleText(const std::string &text, const std::string &label,
                               const KernelCompileOptions &options,
                               artifact::Module &out) {
  const std::string where = label + ": ";
  KernelSession ks(options);
  OwningOpRef<ModuleOp> module =
      parseSourceString<ModuleOp>(text, &ks.session.context(), label);
  if (!module)
    return Status::error(where + "the tensor-level body does not parse:\n" + ks.diagnostics);
  auto functions = module->getOps<func::FuncOp>();
  if (std::distance(functions.begin(), functions.end()) != 1)
    return Status::error(where + "the tensor-level body must be exactly one func.func");
  func::FuncOp fn = *functions.begin();
  if (fn.isDeclaration())
    return Status::error(where + "the tensor-level body has no body");
  fn.setSymName("main");
  fn.setPublic();
  Result<compiler::CompileOutput> compiled = ks.session.compileModule(*module);
  if (!compiled)
    return Status::error(where + compiled.message());
  out = std::move(*compiled->artifact);
  return Status::success();
}

Status compileKernel(const Specialization &spec,
                     const KernelCompileOptions &options,
                     artifact::Module &out) {
  KernelSession ks(options);
  Result<OwningOpRef<ModuleOp>> module = buildKernelModule(ks.session.context(), spec);
  if (!module.ok())
    return module.status();
  if (!options.dumpDir.empty())
    writeText(options.dumpDir, "0.kernel.mlir", printed(**module));
  return compileVerified(ks, **module, "kernel '" + spec.kernel->name + "': ", options, out);
}

} // namespace turbine::kernels
