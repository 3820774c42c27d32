// output-is-input.mlir - `-o` naming the input file is refused before
// anything is written, so the input survives unchanged.
//
// Works on a copy so that a regression cannot overwrite this test.

// RUN: cp %s %t.mlir
// RUN: not %turbine compile %t.mlir -o %t.mlir 2>&1 | FileCheck %s
// RUN: diff %s %t.mlir

// CHECK: turbine compile: error: output file '{{.*}}.mlir' is the input file
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}
