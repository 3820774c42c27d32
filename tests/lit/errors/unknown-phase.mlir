// unknown-phase.mlir - --compile-to with a name that is not a phase fails
// and lists the valid phases in order.

// RUN: not %turbine compile %s --compile-to=bufferize 2>&1 | FileCheck %s

// CHECK: turbine compile: error: unknown phase 'bufferize' (phases: input, global-opt, dispatch, codegen, link)
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}
