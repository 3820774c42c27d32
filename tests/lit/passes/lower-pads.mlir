// lower-pads.mlir - turbine-lower-pads: tensor.pad becomes a gathering
// linalg.generic (clamped extract, select of the pad value outside).

// RUN: turbine-opt %s --turbine-lower-pads | FileCheck %s

// CHECK-LABEL: func.func @pad
// CHECK-NOT:     tensor.pad
// CHECK:         linalg.generic
// CHECK-SAME:      outs(%{{.*}} : tensor<6x10xf32>)
// CHECK:           tensor.extract %{{.*}} : tensor<4x8xf32>
// CHECK:           arith.select
func.func @pad(%x: tensor<4x8xf32>) -> tensor<6x10xf32> {
  %zero = arith.constant 0.0 : f32
  %p = tensor.pad %x low[1, 1] high[1, 1] {
  ^bb0(%i: index, %j: index):
    tensor.yield %zero : f32
  } : tensor<4x8xf32> to tensor<6x10xf32>
  return %p : tensor<6x10xf32>
}
