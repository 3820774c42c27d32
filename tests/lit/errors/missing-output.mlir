// missing-output.mlir - a full compile needs -o; the message says how to
// provide it (or to stop at a phase instead).

// RUN: not %turbine compile %s 2>&1 | FileCheck %s

// CHECK: turbine compile: error: missing output file: pass -o FILE.tmod (or --compile-to=PHASE)
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}
