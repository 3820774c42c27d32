//===- InputPhase.cpp - Bring any accepted input into linalg on tensors ---===//
//
// Accepted input: func + tosa / linalg / tensor / arith / math on ranked
// tensors. TOSA is lowered with upstream's TOSA->linalg pipeline; then the
// module is canonicalized. What follows expects linalg on tensors only.
//===----------------------------------------------------------------------===//
#include "Phases.h"

#include "mlir/Conversion/TosaToLinalg/TosaToLinalg.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

namespace turbine::compiler {

/// Rejects what the rest of the pipeline cannot take, with a clear message.
static LogicalResult checkInput(ModuleOp module) {
  LogicalResult result = success();
  bool sawFunction = false;
  for (auto func : module.getOps<func::FuncOp>()) {
    if (func.isDeclaration())
      continue;
    sawFunction = true;
    for (Type t : func.getFunctionType().getInputs())
      if (isa<UnrankedTensorType>(t) || isa<BaseMemRefType>(t)) {
        result = func.emitError("entry function '")
                 << func.getSymName() << "' takes " << t
                 << ": only ranked tensors are supported at the boundary";
      }
  }
  if (!sawFunction)
    return module.emitError("module has no function to compile");
  return result;
}

LogicalResult runInputPhase(ModuleOp module) {
  if (failed(checkInput(module)))
    return failure();
  bool hasTosa = false;
  module.walk([&](Operation *op) {
    if (isa<tosa::TosaDialect>(op->getDialect()))
      hasTosa = true;
  });
  auto pm = PassManager::on<ModuleOp>(module.getContext());
  if (hasTosa)
    tosa::addTosaToLinalgPasses(pm, TosaToLinalgOptions());
  pm.addPass(createCanonicalizerPass());
  return pm.run(module);
}

} // namespace turbine::compiler
