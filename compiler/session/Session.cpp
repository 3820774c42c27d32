//===- Session.cpp - Source -> module -> phases -> artifact ---------------===//
//
// The one driver of the compiler (Session.h). Runs each phase as its own
// pass manager over the module, verifies after it, dumps it, and collects
// MLIR's diagnostics into one error: "phase 'P' failed: <loc>: <reason>".
// Timings use MLIR's timing manager (one scope per phase, passes nested);
// IR printing uses MLIR's instrumentation. A target whose codegen works per
// kernel gets it run on several kernel containers in parallel.
//===----------------------------------------------------------------------===//
#include "turbine/compiler/Session.h"

#include "host/HostProgram.h"

#include "turbine/compiler/Dialect/TurbineDialect.h"
#include "turbine/compiler/Passes.h"
#include "turbine/compiler/Target.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OperationSupport.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/IR/Verifier.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Support/Timing.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <fstream>

using namespace mlir;

namespace turbine::compiler {

void registerCompilerDialects(DialectRegistry &registry) {
  registerAllDialects(registry);
  registerAllExtensions(registry);
  registerAllToLLVMIRTranslations(registry);
  registry.insert<TurbineDialect>();
  // Pipelines given as text (the LLVM lowering) look passes up by name.
  static const bool passesRegistered = [] {
    registerAllPasses();
    registerTurbinePasses();
    return true;
  }();
  (void)passesRegistered;
}

namespace {

/// Collects the error diagnostics of a context while alive.
class DiagnosticCollector {
public:
  explicit DiagnosticCollector(MLIRContext &context)
      : stream_(text_), handler_(&context, [this](Diagnostic &diag) {
          if (diag.getSeverity() != DiagnosticSeverity::Error)
            return success();
          // Errors not tied to a place in the input carry an unknown location.
          if (!isa<UnknownLoc>(diag.getLocation()))
            stream_ << diag.getLocation() << ": ";
          stream_ << diag << "\n";
          for (Diagnostic &note : diag.getNotes())
            stream_ << "  note: " << note.getLocation() << ": " << note << "\n";
          return success();
        }) {}

  /// `headline`, then the diagnostics gathered so far.
  Status error(const std::string &headline) {
    std::string message = headline;
    if (!text_.empty())
      message += ":\n" + text_;
    while (!message.empty() && message.back() == '\n')
      message.pop_back();
    return Status::error(message);
  }

private:
  std::string text_;
  llvm::raw_string_ostream stream_;
  ScopedDiagnosticHandler handler_;
};

Status dumpPhase(ModuleOp module, const std::string &dir, int index, Phase phase) {
  if (std::error_code ec = llvm::sys::fs::create_directories(dir))
    return Status::error("cannot create dump directory '" + dir + "': " + ec.message());
  llvm::SmallString<256> path(dir);
  llvm::sys::path::append(path, std::to_string(index) + "." + std::string(phaseName(phase)) +
                                    ".mlir");
  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec);
  if (ec)
    return Status::error("cannot write '" + std::string(path) + "': " + ec.message());
  module->print(os, OpPrintingFlags().elideLargeElementsAttrs(16));
  return Status::success();
}

/// True when `name` (a pass argument) is in `names`.
bool named(Pass *pass, const std::vector<std::string> &names) {
  return std::find(names.begin(), names.end(), pass->getArgument().str()) != names.end();
}

void enableIRPrinting(PassManager &pm, const CompileOptions &options) {
  if (!options.printIRAfterAll && options.printIRAfter.empty() && options.printIRBefore.empty())
    return;
  pm.enableIRPrinting(
      [&options](Pass *pass, Operation *) { return named(pass, options.printIRBefore); },
      [&options](Pass *pass, Operation *) {
        return options.printIRAfterAll || named(pass, options.printIRAfter);
      },
      /*printModuleScope=*/true, /*printAfterOnlyOnChange=*/false);
}

int64_t countKernels(ModuleOp module) {
  ModuleOp kernels = getKernelsModule(module, /*create=*/false);
  return kernels ? llvm::range_size(kernels.getOps<func::FuncOp>()) : 0;
}

/// How many containers the kernels are dealt to for a codegen phase that
/// works per kernel (Target::codegenPerKernel): fixed, so the IR does not
/// depend on the core count, and several per core, so a core that finishes
/// its container early takes the next one (kernels differ in cost by 100x).
constexpr unsigned kCodegenChunks = 16;

/// The kernel container split into sibling containers for the codegen
/// phase: `kernels` keeps the first share, `chunks` (unnamed modules after
/// it) the others; `order` holds the kernels' names in container order.
struct KernelChunks {
  ModuleOp kernels;
  SmallVector<ModuleOp> chunks;
  SmallVector<StringAttr> order;
};

/// Deals the kernels round-robin in container order to up to kCodegenChunks
/// containers, so the codegen pipeline (nested on builtin.module) runs on
/// them in parallel. Declarations (functions without a body) are copied to
/// every container. Nothing is split when the container holds anything else
/// than functions, or fewer than two kernels.
KernelChunks splitKernels(ModuleOp module) {
  KernelChunks split;
  ModuleOp kernels = getKernelsModule(module, /*create=*/false);
  if (!kernels)
    return split;
  SmallVector<func::FuncOp> definitions, declarations;
  for (Operation &op : kernels.getBody()->getOperations()) {
    auto function = dyn_cast<func::FuncOp>(op);
    if (!function)
      return split;
    (function.isDeclaration() ? declarations : definitions).push_back(function);
  }
  unsigned count = std::min<size_t>(kCodegenChunks, definitions.size());
  if (count < 2)
    return split;
  split.kernels = kernels;
  OpBuilder b(module.getContext());
  b.setInsertionPointAfter(kernels);
  for (unsigned i = 1; i < count; ++i) {
    ModuleOp chunk = ModuleOp::create(b, kernels.getLoc());
    for (NamedAttribute attr : kernels->getAttrs())
      if (attr.getName() != SymbolTable::getSymbolAttrName() &&
          attr.getName() != kKernelsModuleAttr)
        chunk->setAttr(attr.getName(), attr.getValue());
    Block *body = chunk.getBody();
    for (func::FuncOp declaration : declarations)
      body->push_back(declaration->clone());
    split.chunks.push_back(chunk);
  }
  for (auto [i, function] : llvm::enumerate(definitions)) {
    split.order.push_back(function.getSymNameAttr());
    if (i % count) {
      Block *body = split.chunks[i % count - 1].getBody();
      function->moveBefore(body, body->end());
    }
  }
  return split;
}

/// Moves the chunks' contents back into the kernel container and erases
/// them: a symbol the container already has is dropped when it is the same
/// op (a declaration every chunk made, a constant two chunks made alike) and
/// renamed within its chunk otherwise; the kernels are put back in their
/// order.
LogicalResult mergeKernels(KernelChunks &split) {
  if (!split.kernels)
    return success();
  Block *body = split.kernels.getBody();
  SymbolTable table(split.kernels);
  for (auto [index, chunk] : llvm::enumerate(split.chunks)) {
    SymbolTable chunkTable(chunk);
    for (Operation &op : llvm::make_early_inc_range(chunk.getBody()->getOperations())) {
      if (auto symbol = dyn_cast<SymbolOpInterface>(op)) {
        if (Operation *existing = table.lookup(symbol.getNameAttr())) {
          if (OperationEquivalence::isEquivalentTo(
                  &op, existing, OperationEquivalence::ignoreValueEquivalence, nullptr,
                  OperationEquivalence::IgnoreLocations)) {
            op.erase();
            continue;
          }
          std::string fresh;
          for (int n = 0;; ++n) {
            fresh = (symbol.getName() + "_chunk" + Twine(index + 1) + "_" + Twine(n)).str();
            if (!table.lookup(fresh) && !chunkTable.lookup(fresh))
              break;
          }
          if (failed(chunkTable.rename(&op, fresh)))
            return failure();
        }
        op.remove();
        table.insert(&op, body->end());
      } else {
        op.moveBefore(body, body->end());
      }
    }
    chunk->erase();
  }
  for (StringAttr name : split.order)
    if (Operation *kernel = table.lookup(name))
      kernel->moveBefore(body, body->end());
  split.chunks.clear();
  return success();
}

/// The format of `source`: given, or by extension / first bytes.
std::string detectFormat(const Source &source,
                         const std::vector<std::unique_ptr<Importer>> &importers) {
  if (!source.format.empty())
    return source.format;
  llvm::StringRef ext = llvm::sys::path::extension(source.path);
  if (ext == ".mlir" || ext == ".mlirbc")
    return "mlir";
  std::string head = source.bytes.substr(0, 64);
  if (!source.path.empty()) {
    std::ifstream in(source.path, std::ios::binary);
    char buffer[64];
    in.read(buffer, sizeof(buffer));
    head.assign(buffer, static_cast<size_t>(std::max<std::streamsize>(in.gcount(), 0)));
  }
  for (const auto &importer : importers)
    if (importer->recognizes(source.path, head))
      return std::string(importer->format());
  // MLIR bytecode starts with "ML\xefR".
  if (head.size() >= 4 && head.compare(0, 4, "ML\xefR") == 0)
    return "mlir";
  return "";
}

} // namespace

Session::Session(CompileOptions options) : options_(std::move(options)) {
  DialectRegistry registry;
  registerCompilerDialects(registry);
  context_ = std::make_unique<MLIRContext>(registry);
  context_->loadAllAvailableDialects();
  // Kernels are compiled one after another (the link phase parallelizes
  // LLVM's code generation itself); `turbine conformance` compiles in forked
  // children, where a thread-free process is the safe one.
  context_->disableMultithreading();
}

Session::~Session() = default;

MLIRContext &Session::context() { return *context_; }

void Session::addImporter(std::unique_ptr<Importer> importer) {
  importers_.push_back(std::move(importer));
}

void Session::addExtension(std::shared_ptr<const PipelineExtension> extension) {
  extensions_.push_back(std::move(extension));
}

std::string Session::formatOf(const Source &source) const {
  return detectFormat(source, importers_);
}

Result<OwningOpRef<ModuleOp>> Session::load(const Source &source) {
  if (!source.path.empty() && !llvm::sys::fs::exists(source.path))
    return Status::error("input file '" + source.path + "' does not exist");
  std::string format = formatOf(source);
  if (format == "mlir") {
    llvm::SourceMgr sourceMgr;
    std::string diagnostics;
    llvm::raw_string_ostream os(diagnostics);
    SourceMgrDiagnosticHandler handler(sourceMgr, context_.get(), os);
    OwningOpRef<ModuleOp> module;
    if (!source.path.empty()) {
      module = parseSourceFile<ModuleOp>(source.path, sourceMgr, ParserConfig(context_.get()));
    } else {
      sourceMgr.AddNewSourceBuffer(
          llvm::MemoryBuffer::getMemBufferCopy(source.bytes, source.origin), llvm::SMLoc());
      module = parseSourceFile<ModuleOp>(sourceMgr, ParserConfig(context_.get()));
    }
    if (!module)
      return Status::error("failed to parse MLIR file '" + source.origin + "'" +
                           (diagnostics.empty() ? std::string() : ":\n" + diagnostics));
    return module;
  }
  for (const auto &importer : importers_)
    if (importer->format() == format)
      return importer->import(*context_, source);
  std::string kinds;
  for (const auto &importer : importers_)
    kinds += std::string(importer->fileKinds()) + ", ";
  if (format.empty())
    return Status::error("cannot tell the format of '" + source.origin + "': expected a " +
                         kinds + ".mlir or .mlirbc file");
  std::string formats = "mlir";
  for (const auto &importer : importers_)
    formats += ", " + std::string(importer->format());
  return Status::error("no importer for format '" + format + "' of '" + source.origin +
                       "' (formats: " + formats + ")");
}

Result<CompileOutput> Session::compile(const Source &source) {
  Result<OwningOpRef<ModuleOp>> module = load(source);
  if (!module)
    return module.status();
  Result<CompileOutput> output = compileModule(**module);
  if (!output)
    return output.status().withContext(source.origin);
  return output;
}

Result<CompileOutput> Session::compileModule(ModuleOp module) {
  const Target *target = findTarget(options_.target);
  if (!target) {
    std::string names;
    for (const std::string &name : targetNames())
      names += (names.empty() ? "" : ", ") + name;
    return Status::error("unknown target '" + options_.target + "' (targets: " + names + ")");
  }
  std::vector<const PipelineExtension *> extensions;
  for (const auto &extension : extensions_)
    extensions.push_back(extension.get());

  DiagnosticCollector diagnostics(*module.getContext());
  if (failed(verify(module)))
    return diagnostics.error("input module is invalid");

  std::string timingReport;
  llvm::raw_string_ostream timingStream(timingReport);
  DefaultTimingManager timing;
  timing.setEnabled(options_.timings);
  timing.setOutput(createOutputStrategy(DefaultTimingManager::OutputFormat::Text, timingStream));
  TimingScope root = timing.getRootScope();

  CompileOutput output;
  int index = 0;
  for (Phase phase : allPhases()) {
    ++index;
    std::string name(phaseName(phase));
    if (options_.progress)
      options_.progress("phase " + std::to_string(index) + "/" +
                        std::to_string(allPhases().size()) + " " + name +
                        (phase >= Phase::Codegen
                             ? " (" + std::to_string(countKernels(module)) + " kernels)"
                             : std::string()));
    TimingScope phaseScope = root.nest(name);
    if (phase == Phase::Link) {
      artifact::Module artifact;
      artifact.target = std::string(target->name());
      {
        TimingScope hostScope = phaseScope.nest("host programs");
        if (failed(buildHostPrograms(module, artifact)))
          return diagnostics.error("phase 'link' failed");
      }
      {
        TimingScope kernelScope = phaseScope.nest("kernels");
        Status emitted =
            target->emitKernels(getKernelsModule(module, /*create=*/true), options_, artifact);
        if (!emitted)
          return diagnostics.error("phase 'link' failed: " + emitted.message());
      }
      output.artifact = std::move(artifact);
    } else {
      PassManager pm(module.getContext(), ModuleOp::getOperationName(),
                     OpPassManager::Nesting::Explicit);
      if (Status built = buildPhasePipeline(phase, pm, options_, *target, extensions); !built)
        return built;
      enableIRPrinting(pm, options_);
      if (phase == Phase::Codegen && !options_.verifyEachPass)
        pm.enableVerifier(false);
      if (options_.timings)
        pm.enableTiming(phaseScope);
      // A per-kernel codegen runs on the kernels dealt to sibling containers,
      // in parallel on the context's thread pool, which lives only as long
      // as the phase: no thread outlives it (`turbine conformance` forks).
      KernelChunks split;
      MLIRContext *context = module.getContext();
      bool threaded = context->isMultithreadingEnabled();
      // Not when IR is printed: the printout is the whole, unsplit module.
      bool printing = options_.printIRAfterAll || !options_.printIRAfter.empty() ||
                      !options_.printIRBefore.empty();
      // Nor when an extension adds passes before codegen: they see the
      // whole kernel container (`turbine bisect` records and corrupts kernels).
      bool extended = false;
      if (phase == Phase::Codegen)
        for (const PipelineExtension *extension : extensions) {
          OpPassManager probe(ModuleOp::getOperationName(), OpPassManager::Nesting::Explicit);
          extension->addPassesBefore(phase, probe);
          extended = extended || probe.size() != 0;
        }
      if (phase == Phase::Codegen && target->codegenPerKernel() && !printing && !extended) {
        split = splitKernels(module);
        if (split.kernels && !threaded)
          context->enableMultithreading();
      }
      LogicalResult ran = pm.run(module);
      if (split.kernels && !threaded)
        context->disableMultithreading();
      if (failed(ran) || failed(mergeKernels(split)))
        return diagnostics.error("phase '" + name + "' failed");
    }
    if (failed(verify(module)))
      return diagnostics.error("phase '" + name + "' failed");
    if (!options_.dumpPhasesDir.empty())
      if (Status dumped = dumpPhase(module, options_.dumpPhasesDir, index, phase); !dumped)
        return dumped;
    if (options_.stopAfter && *options_.stopAfter == phase) {
      llvm::raw_string_ostream os(output.ir);
      module->print(os, OpPrintingFlags().elideLargeElementsAttrs(16));
      break;
    }
  }
  root.stop();
  if (options_.timings) {
    timing.print();
    timing.setEnabled(false);
    output.timings = std::move(timingReport);
  }
  return output;
}

} // namespace turbine::compiler
