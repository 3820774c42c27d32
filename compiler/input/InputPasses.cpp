//===- InputPasses.cpp - Bring any accepted input into linalg on tensors --===//
//
// The passes of the input phase. Accepted input: func + tosa / linalg /
// tensor / arith / math on ranked tensors (turbine-verify-input). TOSA is
// lowered with upstream's TOSA->linalg pipeline (turbine-lower-tosa); then
// the phase canonicalizes. What follows expects linalg on tensors only.
// String tensors (!turbine.string) may only meet the host string ops,
// reshapes, tensor.dim/empty and return: anything else (a linalg op, which
// would become a kernel) is rejected here, naming the op.
//===----------------------------------------------------------------------===//
#include "turbine/compiler/Dialect/TurbineDialect.h"
#include "turbine/compiler/Passes.h"

#include "mlir/Conversion/TosaToLinalg/TosaToLinalg.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

namespace turbine::compiler {

#define GEN_PASS_DEF_VERIFYINPUT
#define GEN_PASS_DEF_LOWERTOSA
#include "turbine/compiler/Passes.h.inc"

/// True for a tensor of !turbine.string.
static bool isStringTensor(Type t) {
  auto tensor = dyn_cast<TensorType>(t);
  return tensor && isa<StringType>(tensor.getElementType());
}

/// Ops that may take or produce string tensors: they run on the host.
static bool takesStrings(Operation *op) {
  return isa<StringNormalizeOp, ToStringOp, FromStringOp, tensor::ExpandShapeOp,
             tensor::CollapseShapeOp, tensor::CastOp, tensor::DimOp, tensor::EmptyOp,
             func::ReturnOp>(op);
}

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
  module.walk([&](Operation *op) {
    if (takesStrings(op))
      return;
    for (Type t : llvm::concat<const Type>(op->getOperandTypes(), op->getResultTypes()))
      if (isStringTensor(t)) {
        result = op->emitError("'")
                 << op->getName() << "' uses a string tensor (" << t
                 << "): strings only run in the host string ops (turbine.string_normalize, "
                    "turbine.to_string, turbine.from_string), reshapes, tensor.dim and return";
        return;
      }
  });
  return result;
}

namespace {

struct VerifyInputPass : impl::VerifyInputBase<VerifyInputPass> {
  void runOnOperation() override {
    if (failed(checkInput(getOperation())))
      signalPassFailure();
  }
};

struct LowerTosaPass : impl::LowerTosaBase<LowerTosaPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    bool hasTosa = false;
    module.walk([&](Operation *op) {
      if (isa<tosa::TosaDialect>(op->getDialect())) {
        hasTosa = true;
        return WalkResult::interrupt();
      }
      return WalkResult::advance();
    });
    if (!hasTosa)
      return;
    OpPassManager pm(ModuleOp::getOperationName());
    tosa::addTosaToLinalgPasses(pm, TosaToLinalgOptions());
    if (failed(runPipeline(pm, module)))
      signalPassFailure();
  }
};

} // namespace

} // namespace turbine::compiler
