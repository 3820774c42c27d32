//===- turbine-opt.cpp - Run Turbine's passes one at a time ---------------===//
//
// mlir-opt with the turbine dialect, every upstream dialect and pass, the
// compiler's passes (compiler/include/turbine/compiler/Passes.td), the phase
// pipelines (turbine-input, turbine-global-opt, turbine-dispatch,
// turbine-codegen-cpu) and the kernel layer's custom-op expansion. The lit
// tests under tests/lit/passes run single passes through it:
//
//   turbine-opt --turbine-lower-pads in.mlir
//   turbine-opt --pass-pipeline='builtin.module(builtin.module(turbine-cpu-lower-vectors))'
//===----------------------------------------------------------------------===//
#include "turbine/compiler/Session.h"
#include "turbine/kernels/CustomOpCalls.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  turbine::compiler::registerCompilerDialects(registry);
  turbine::kernels::registerCustomOpPasses();
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "Turbine modular optimizer driver\n", registry));
}
