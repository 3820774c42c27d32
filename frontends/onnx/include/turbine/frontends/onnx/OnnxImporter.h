//===- OnnxImporter.h - ONNX model -> upstream MLIR on tensors ------------===//
//
// Imports an ONNX ModelProto (libonnx + protobuf) into a builtin.module holding
// one func.func (named `main` unless told otherwise) written in upstream
// dialects on tensors: linalg (named ops and linalg.generic), tensor, arith,
// math. Initializers become arith.constant dense tensors. Graph inputs and
// outputs keep their ONNX names as `turbine.name` argument/result attributes;
// symbolic dims (`dim_param`, unknown dims) become dynamic dims (`?`), their
// names kept in `turbine.dims`.
//===----------------------------------------------------------------------===//
#ifndef TURBINE_FRONTENDS_ONNX_ONNXIMPORTER_H
#define TURBINE_FRONTENDS_ONNX_ONNXIMPORTER_H

#include "turbine/base/Status.h"
#include "turbine/compiler/Importer.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

namespace turbine::onnx_frontend {

struct ImportOptions {
  std::string entryName = "main";
  /// Sequence-typed graph inputs (also optionals holding a sequence): the
  /// entry function takes one tensor argument per element, named "x[0]",
  /// "x[1]", ..., so the number of elements is fixed at compile time. Either
  /// the element shapes (a dim < 0 stays dynamic) ...
  std::map<std::string, std::vector<std::vector<int64_t>>> sequenceInputShapes;
  /// ... or only the length, each element taking the declared element shape.
  std::map<std::string, int64_t> sequenceInputLengths;
  /// Optional-typed graph inputs compiled as "none" (they take no argument);
  /// every other optional input takes its element.
  std::set<std::string> absentOptionalInputs;

  bool operator==(const ImportOptions &other) const {
    return entryName == other.entryName && sequenceInputShapes == other.sequenceInputShapes &&
           sequenceInputLengths == other.sequenceInputLengths &&
           absentOptionalInputs == other.absentOptionalInputs;
  }
};

/// Loads the dialects the importer emits into `context`.
void registerImportedDialects(mlir::MLIRContext &context);

/// Imports the model at `path`. On failure, an error naming the file, and for
/// unsupported ops the op type, node name and opset.
Result<mlir::OwningOpRef<mlir::ModuleOp>> importOnnxFile(mlir::MLIRContext &context,
                                                         const std::string &path,
                                                         const ImportOptions &options);

/// Same, from serialized ModelProto bytes (`origin` names it in messages).
Result<mlir::OwningOpRef<mlir::ModuleOp>> importOnnxBytes(mlir::MLIRContext &context,
                                                          const std::string &bytes,
                                                          const std::string &origin,
                                                          const ImportOptions &options);

/// The ONNX importer as a compile-session frontend (compiler/Importer.h):
/// format "onnx", recognized by the .onnx extension.
std::unique_ptr<compiler::Importer> createOnnxImporter(ImportOptions options = {});

} // namespace turbine::onnx_frontend

#endif // TURBINE_FRONTENDS_ONNX_ONNXIMPORTER_H
