//===- Importer.h - How a frontend plugs into a compile session -----------===//
//
// A compile session (Session.h) reads MLIR text and bytecode itself; every
// other input format comes from an importer a front door adds to it: the
// ONNX importer (frontends/onnx), the TorchScript importer (frontends/torch).
// An importer carries its own options (input shapes, sequence lengths), so
// the compiler knows nothing of any frontend. Includes no MLIR header beyond
// the owning-reference template.
//===----------------------------------------------------------------------===//
#ifndef TURBINE_COMPILER_IMPORTER_H
#define TURBINE_COMPILER_IMPORTER_H

#include "turbine/base/Status.h"

#include "mlir/IR/OwningOpRef.h"

#include <string>
#include <string_view>

namespace mlir {
class MLIRContext;
class ModuleOp;
} // namespace mlir

namespace turbine::compiler {

/// What a session compiles: a file, or bytes in memory.
struct Source {
  /// A file on disk; empty when `bytes` holds the source.
  std::string path;
  /// The source itself when not read from `path`.
  std::string bytes;
  /// Names the source in messages ("<torch.jit module>"); defaults to `path`.
  std::string origin;
  /// "mlir", or an importer's format ("onnx", "torchscript"); empty: told
  /// from the file's extension or first bytes.
  std::string format;

  static Source file(std::string path) {
    Source s;
    s.path = std::move(path);
    s.origin = s.path;
    return s;
  }
  static Source inMemory(std::string bytes, std::string origin, std::string format) {
    Source s;
    s.bytes = std::move(bytes);
    s.origin = std::move(origin);
    s.format = std::move(format);
    return s;
  }
};

/// A frontend: one input format to upstream MLIR on tensors (the contract in
/// frontends/README.md).
class Importer {
public:
  virtual ~Importer() = default;
  /// The format name a Source may give ("onnx", "torchscript").
  virtual std::string_view format() const = 0;
  /// The files it reads, for messages: ".onnx", ".pt (TorchScript)".
  virtual std::string_view fileKinds() const = 0;
  /// True when `path` (its extension, or `head`, the file's first bytes)
  /// looks like this format.
  virtual bool recognizes(const std::string &path, std::string_view head) const = 0;
  /// Imports `source` into `context`; an error names the source and what
  /// in it could not be imported.
  virtual Result<mlir::OwningOpRef<mlir::ModuleOp>> import(mlir::MLIRContext &context,
                                                           const Source &source) const = 0;
};

} // namespace turbine::compiler

#endif // TURBINE_COMPILER_IMPORTER_H
