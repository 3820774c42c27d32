// input-tosa-to-linalg.mlir - the input phase lowers TOSA to linalg on tensors.
//
// tosa.matmul becomes a zero-filled linalg.batch_matmul and tosa.add an
// elementwise linalg.generic; no tosa op survives the phase.

// RUN: %turbine compile %s --compile-to=input | FileCheck %s

// CHECK-LABEL: func.func @main(
// CHECK-SAME:    %[[A:.*]]: tensor<1x4x8xf32>, %[[B:.*]]: tensor<1x8x16xf32>, %[[C:.*]]: tensor<1x4x16xf32>)
// CHECK-DAG:     %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-DAG:     %[[EMPTY:.*]] = tensor.empty() : tensor<1x4x16xf32>
// CHECK:         %[[FILL:.*]] = linalg.fill ins(%[[ZERO]] : f32) outs(%[[EMPTY]] : tensor<1x4x16xf32>)
// CHECK:         %[[MM:.*]] = linalg.batch_matmul ins(%[[A]], %[[B]] : tensor<1x4x8xf32>, tensor<1x8x16xf32>) outs(%[[FILL]] : tensor<1x4x16xf32>)
// CHECK:         %[[SUM:.*]] = linalg.generic
// CHECK-SAME:      iterator_types = ["parallel", "parallel", "parallel"]
// CHECK-SAME:      ins(%[[MM]], %[[C]] : tensor<1x4x16xf32>, tensor<1x4x16xf32>)
// CHECK:           arith.addf
// CHECK:         return %[[SUM]] : tensor<1x4x16xf32>
// CHECK-NOT:     tosa.
func.func @main(%a: tensor<1x4x8xf32>, %b: tensor<1x8x16xf32>, %c: tensor<1x4x16xf32>) -> tensor<1x4x16xf32> {
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %m = tosa.matmul %a, %b, %zp, %zp : (tensor<1x4x8xf32>, tensor<1x8x16xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x4x16xf32>
  %s = tosa.add %m, %c : (tensor<1x4x16xf32>, tensor<1x4x16xf32>) -> tensor<1x4x16xf32>
  return %s : tensor<1x4x16xf32>
}
