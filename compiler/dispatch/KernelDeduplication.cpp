//===- KernelDeduplication.cpp - One kernel per distinct body --------------===//
//
// The pass turbine-deduplicate-kernels (like IREE's
// iree-flow-deduplicate-executables): kernels of the kernel container whose
// bodies and attributes are identical (the same ops on the same binding
// types, a repeated block of a network: DenseNet's 3x3 convolutions, a
// transformer's layers) become the first of them, and every
// turbine.dispatch of the others calls it. Each dispatch keeps its own
// operands, push constants and workgroup counts, so sharing code changes
// nothing it computes; codegen and LLVM then compile each distinct kernel
// once. Bodies are compared by their printed form without locations
// (source locations differ between copies of a block and do not change the
// code).
//===----------------------------------------------------------------------===//
#include "turbine/compiler/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;

namespace turbine::compiler {

#define GEN_PASS_DEF_DEDUPLICATEKERNELS
#include "turbine/compiler/Passes.h.inc"

namespace {

/// `kernel` printed without its name and locations: equal texts, equal
/// kernels. Printed in local scope: the kernel is isolated from above, so
/// nothing outside it (the host program's constants) is visited.
std::string bodyKey(func::FuncOp kernel) {
  std::string text;
  llvm::raw_string_ostream os(text);
  OpPrintingFlags flags;
  flags.enableDebugInfo(false).useLocalScope();
  kernel->print(os, flags);
  std::string name = "@" + kernel.getSymName().str() + "(";
  if (size_t at = text.find(name); at != std::string::npos)
    text.replace(at, name.size(), "@(");
  return text;
}

struct DeduplicateKernelsPass : impl::DeduplicateKernelsBase<DeduplicateKernelsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    ModuleOp kernels = getKernelsModule(module, /*create=*/false);
    if (!kernels)
      return;
    llvm::StringMap<StringAttr> firstWithBody;
    SmallVector<func::FuncOp> duplicates;
    for (auto kernel : kernels.getOps<func::FuncOp>()) {
      if (kernel.isExternal())
        continue;
      auto [it, inserted] = firstWithBody.try_emplace(bodyKey(kernel), kernel.getSymNameAttr());
      if (inserted)
        continue;
      if (failed(SymbolTable::replaceAllSymbolUses(kernel.getSymNameAttr(), it->second, module))) {
        kernel.emitError("cannot redirect the dispatches of a duplicate kernel");
        return signalPassFailure();
      }
      duplicates.push_back(kernel);
    }
    for (func::FuncOp kernel : duplicates)
      kernel.erase();
  }
};

} // namespace
} // namespace turbine::compiler
