//===- Session.h - The one front door of the compiler ---------------------===//
//
// Every way into the compiler goes through a Session: the `turbine` CLI, the
// Python extension, the kernel language (kernels/) and the tests.
//
//   Session session(options);                    // CompileOptions (Options.h)
//   session.addImporter(std::make_unique<onnx_frontend::OnnxImporter>());
//   Result<CompileOutput> out = session.compile(Source::file("m.onnx"));
//
// A compile: source -> module (MLIR text/bytecode parsed here, any other
// format through an importer) -> the phases as pass pipelines (the
// target's codegen; extensions' passes, e.g. custom-op expansion, where they
// hook in) -> link -> artifact. With `stopAfter`, the output is the IR that
// phase left instead. Errors are values: an invalid input, an unsupported
// op or a failing pass gives an error naming the phase, op and reason.
//
// A session owns its MLIRContext (every dialect the compiler may see is
// registered). One session compiles one source at a time; it is not shared
// between threads. Includes no MLIR header beyond forward declarations.
//===----------------------------------------------------------------------===//
#ifndef TURBINE_COMPILER_SESSION_H
#define TURBINE_COMPILER_SESSION_H

#include "turbine/artifact/Module.h"
#include "turbine/base/Status.h"
#include "turbine/compiler/Importer.h"
#include "turbine/compiler/Options.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace mlir {
class DialectRegistry;
class MLIRContext;
class ModuleOp;
class OpPassManager;
} // namespace mlir

namespace turbine::compiler {

/// Adds passes to the phase pipelines of every compile of a session: how a
/// layer above the compiler hooks in (kernels/ expands custom-op calls into
/// their kernels at the start of `dispatch`).
class PipelineExtension {
public:
  virtual ~PipelineExtension() = default;
  /// Called as phase `phase`'s pipeline is built, before its own passes.
  virtual void addPassesBefore(Phase phase, mlir::OpPassManager &pm) const = 0;
};

/// What a compile produced.
struct CompileOutput {
  /// The artifact, when the link phase ran.
  std::optional<artifact::Module> artifact;
  /// With CompileOptions::stopAfter: the module as that phase left it,
  /// printed with large constants elided.
  std::string ir;
  /// With CompileOptions::timings: the per-phase / per-pass time report.
  std::string timings;
};

class Session {
public:
  explicit Session(CompileOptions options = {});
  ~Session();
  Session(const Session &) = delete;
  Session &operator=(const Session &) = delete;

  const CompileOptions &options() const { return options_; }
  /// The context every module of this session lives in.
  mlir::MLIRContext &context();

  /// Adds a frontend for its format.
  void addImporter(std::unique_ptr<Importer> importer);
  /// Adds passes to the phase pipelines.
  void addExtension(std::shared_ptr<const PipelineExtension> extension);

  /// The format `source` is read as: its own, or told from the file's
  /// extension or first bytes ("mlir", an importer's format, or "" if none
  /// recognizes it).
  std::string formatOf(const Source &source) const;
  /// Reads `source` into a module of context() without compiling it.
  Result<mlir::OwningOpRef<mlir::ModuleOp>> load(const Source &source);
  /// load() then compileModule().
  Result<CompileOutput> compile(const Source &source);
  /// Runs the phases on `module` (of context()) in place.
  Result<CompileOutput> compileModule(mlir::ModuleOp module);

private:
  CompileOptions options_;
  std::unique_ptr<mlir::MLIRContext> context_;
  std::vector<std::unique_ptr<Importer>> importers_;
  std::vector<std::shared_ptr<const PipelineExtension>> extensions_;
};

/// Registers every dialect and interface the compiler may see or create
/// (for code that builds modules in a context of its own).
void registerCompilerDialects(mlir::DialectRegistry &registry);

} // namespace turbine::compiler

#endif // TURBINE_COMPILER_SESSION_H
