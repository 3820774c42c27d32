//===- ConstantGlobals.cpp - Immutable globals with a value become constants ===//
//
// The pass turbine-inline-constant-globals (input phase). A parameter given
// as `ml_program.global private @"fc.weight"(dense<...>)` is, for the rest
// of the pipeline, exactly what the frontends emit for a frozen weight: an
// `arith.constant` named `turbine.param_name`, which global-opt folds and
// packs and the link phase stores as a parameter of that name (or moves to
// a parameter file with --externalize-params). Globals that stay globals:
// immutable ones whose value is `#ml_program.extern` (bound by name from a
// parameter file when the artifact loads) and mutable ones (module state).
//===----------------------------------------------------------------------===//
#include "global-opt/ParameterNames.h"

#include "turbine/compiler/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MLProgram/IR/MLProgram.h"

using namespace mlir;

namespace turbine::compiler {

#define GEN_PASS_DEF_INLINECONSTANTGLOBALS
#include "turbine/compiler/Passes.h.inc"

namespace {

/// The value of an immutable global that can become a constant, or null.
TypedAttr constantValue(ml_program::GlobalOp global) {
  if (global.getIsMutable())
    return nullptr;
  auto value = dyn_cast_or_null<TypedAttr>(global.getValueAttr());
  if (!value || !isa<ElementsAttr>(value))
    return nullptr;
  return value;
}

struct InlineConstantGlobalsPass
    : impl::InlineConstantGlobalsBase<InlineConstantGlobalsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTable symbols(module);
    SmallVector<Operation *> loads;
    module.walk([&](Operation *op) {
      if (isa<ml_program::GlobalLoadOp, ml_program::GlobalLoadConstOp>(op))
        loads.push_back(op);
    });
    for (Operation *load : loads) {
      auto symbol = load->getAttrOfType<SymbolRefAttr>("global");
      auto global = symbol ? symbols.lookup<ml_program::GlobalOp>(symbol.getRootReference())
                           : nullptr;
      if (!global)
        continue;
      TypedAttr value = constantValue(global);
      if (!value)
        continue;
      if (value.getType() != load->getResult(0).getType()) {
        load->emitError("load of global '")
            << global.getSymName() << "' as " << load->getResult(0).getType()
            << " but its value is a " << value.getType();
        return signalPassFailure();
      }
      OpBuilder b(load);
      auto constant = arith::ConstantOp::create(b, load->getLoc(), value);
      StringAttr name = global->getAttrOfType<StringAttr>(kParamNameAttr);
      constant->setAttr(kParamNameAttr, name ? name : global.getSymNameAttr());
      load->getResult(0).replaceAllUsesWith(constant.getResult());
      load->erase();
    }
    for (auto global : llvm::make_early_inc_range(module.getOps<ml_program::GlobalOp>()))
      if (constantValue(global) && SymbolTable::symbolKnownUseEmpty(global, module))
        global.erase();
  }
};

} // namespace

} // namespace turbine::compiler
