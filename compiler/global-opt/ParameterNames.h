//===- ParameterNames.h - Keep frontend parameter names through rewrites --===//
//
// A frontend names a constant for the artifact's parameter table with the
// `turbine.param_name` attribute (the TorchScript importer: the state_dict
// key, or a torch expression computing the stored tensor from it, such as
// `fc.weight.T`). Compiler rewrites that replace a named constant by a
// rearranged copy (packing, reshape folds) keep the name as a derived torch
// expression, so an externalized parameter still says which state_dict entry
// it holds and how to recompute it.
//===----------------------------------------------------------------------===//
#ifndef TURBINE_COMPILER_PARAMETERNAMES_H
#define TURBINE_COMPILER_PARAMETERNAMES_H

#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringRef.h"

#include <string>

namespace turbine::compiler {

inline constexpr llvm::StringLiteral kParamNameAttr = "turbine.param_name";

/// Names `derived` `<name of source><suffix>` if `source` is named.
void deriveParameterName(mlir::Operation *source, mlir::Operation *derived,
                         llvm::StringRef suffix);

/// Remembers the named dense constants of a module so that, after rewrites
/// whose folds reshape them (new unnamed constants with the same bytes),
/// `restore` names those `<name>.reshape(d0,d1,...)` (names have no spaces:
/// they are single words on the command line).
class ReshapedConstantNames {
public:
  explicit ReshapedConstantNames(mlir::ModuleOp module);
  void restore(mlir::ModuleOp module) const;

private:
  llvm::DenseMap<llvm::hash_code, std::string> namesByContent_;
};

} // namespace turbine::compiler

#endif // TURBINE_COMPILER_PARAMETERNAMES_H
