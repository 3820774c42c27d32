// lower-tosa.mlir - turbine-lower-tosa runs upstream's TOSA -> linalg
// pipeline on a module with TOSA ops, and leaves any other module exactly
// as it is (no canonicalization of its own: the foldable addi stays).

// RUN: turbine-opt %s --split-input-file --turbine-lower-tosa | FileCheck %s

// CHECK-LABEL: func.func @tosa_add
// CHECK-NOT:     tosa.
// CHECK:         linalg.generic
// CHECK:           arith.addf
func.func @tosa_add(%a: tensor<4x8xf32>, %b: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = tosa.add %a, %b : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// CHECK-LABEL: func.func @no_tosa
// CHECK:         %[[ONE:.*]] = arith.constant 1 : index
// CHECK:         arith.addi %[[ONE]], %[[ONE]] : index
func.func @no_tosa() -> index {
  %c1 = arith.constant 1 : index
  %0 = arith.addi %c1, %c1 : index
  return %0 : index
}
