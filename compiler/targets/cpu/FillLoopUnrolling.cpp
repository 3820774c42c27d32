//===- FillLoopUnrolling.cpp - Fill loops kept rolled in LLVM --------------===//
//
// The pass turbine-cpu-keep-fill-loops-rolled: scf.for loops that only store
// values defined outside them are annotated so that LLVM does not unroll
// them (see Passes.td for why: compile time, no run-time gain).
//===----------------------------------------------------------------------===//
#include "turbine/compiler/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

using namespace mlir;

namespace turbine::compiler {

#define GEN_PASS_DEF_CPUKEEPFILLLOOPSROLLED
#include "turbine/compiler/Passes.h.inc"

namespace {

/// The value a store writes, for the stores a lowered fill is made of.
Value storedValue(Operation *op) {
  if (auto store = dyn_cast<memref::StoreOp>(op))
    return store.getValueToStore();
  if (auto store = dyn_cast<vector::StoreOp>(op))
    return store.getValueToStore();
  if (auto store = dyn_cast<vector::MaskedStoreOp>(op))
    return store.getValueToStore();
  if (auto write = dyn_cast<vector::TransferWriteOp>(op))
    return write.getVector();
  return nullptr;
}

/// True when `loop` reads no memory and every store in it (nested loops
/// included) writes a constant or a value defined outside `loop`.
bool onlyStoresInvariantValues(scf::ForOp loop) {
  WalkResult result = loop.getBody()->walk([&](Operation *op) {
    if (isa<scf::ForOp, scf::YieldOp>(op))
      return WalkResult::advance();
    if (Value value = storedValue(op))
      return loop.getRegion().isAncestor(value.getParentRegion()) &&
                     !matchPattern(value, m_Constant())
                 ? WalkResult::interrupt()
                 : WalkResult::advance();
    return isPure(op) && op->getNumRegions() == 0 ? WalkResult::advance()
                                                  : WalkResult::interrupt();
  });
  return !result.wasInterrupted() && loop.getNumResults() == 0;
}

struct CpuKeepFillLoopsRolledPass
    : impl::CpuKeepFillLoopsRolledBase<CpuKeepFillLoopsRolledPass> {
  void runOnOperation() override {
    MLIRContext *context = &getContext();
    auto rolled = LLVM::LoopAnnotationAttr::get(
        context, /*disableNonforced=*/{}, /*vectorize=*/{}, /*interleave=*/{},
        LLVM::LoopUnrollAttr::get(context, /*disable=*/BoolAttr::get(context, true),
                                  /*count=*/{}, /*runtimeDisable=*/{}, /*full=*/{},
                                  /*followupUnrolled=*/{}, /*followupRemainder=*/{},
                                  /*followupAll=*/{}),
        /*unrollAndJam=*/{}, /*licm=*/{}, /*distribute=*/{}, /*pipeline=*/{},
        /*peeled=*/{}, /*unswitch=*/{}, /*mustProgress=*/{}, /*isVectorized=*/{},
        /*startLoc=*/{}, /*endLoc=*/{}, /*parallelAccesses=*/{});
    getOperation().walk([&](scf::ForOp loop) {
      if (onlyStoresInvariantValues(loop))
        loop->setAttr("loop_annotation", rolled);
    });
  }
};

} // namespace
} // namespace turbine::compiler
