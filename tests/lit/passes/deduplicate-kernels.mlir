// deduplicate-kernels.mlir - turbine-deduplicate-kernels: dispatches of
// kernels with identical bodies call the first of them and the copies are
// erased; a kernel that differs (an epilogue) stays its own. Each dispatch
// keeps its own operands.

// RUN: turbine-opt %s --turbine-form-dispatches --turbine-deduplicate-kernels | FileCheck %s

// CHECK-LABEL: func.func @main
// CHECK-SAME:    (%[[X:.*]]: tensor<8x16xf32>, %[[W:.*]]: tensor<16x16xf32>, %[[V:.*]]: tensor<16x16xf32>)
// CHECK:         %[[A:.*]] = turbine.dispatch @matmul_8x16x16_f32[{{.*}}] (%[[X]], %[[W]])
// CHECK:         %[[B:.*]] = turbine.dispatch @matmul_8x16x16_f32[{{.*}}] (%[[A]], %[[V]])
// CHECK:         %[[C:.*]] = turbine.dispatch @matmul_8x16x16_f32[{{.*}}] (%[[B]], %[[W]])
// CHECK:         turbine.dispatch @[[RELU:matmul_8x16x16_f32_[0-9]+]][{{.*}}] (%[[C]], %[[V]])
// CHECK:       module @kernels
// CHECK-COUNT-1: func.func @matmul_8x16x16_f32(
// CHECK-NOT:     func.func @matmul_8x16x16_f32_1(
// CHECK:         func.func @[[RELU]](
// CHECK:           arith.maximumf
// CHECK-NOT:     func.func @matmul_8x16x16_f32_2(
#id = affine_map<(i, j) -> (i, j)>
func.func @main(%x: tensor<8x16xf32>, %w: tensor<16x16xf32>, %v: tensor<16x16xf32>) -> tensor<8x16xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x16xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<8x16xf32>) -> tensor<8x16xf32>
  %a = linalg.matmul ins(%x, %w : tensor<8x16xf32>, tensor<16x16xf32>) outs(%f : tensor<8x16xf32>) -> tensor<8x16xf32>
  %b = linalg.matmul ins(%a, %v : tensor<8x16xf32>, tensor<16x16xf32>) outs(%f : tensor<8x16xf32>) -> tensor<8x16xf32>
  %c = linalg.matmul ins(%b, %w : tensor<8x16xf32>, tensor<16x16xf32>) outs(%f : tensor<8x16xf32>) -> tensor<8x16xf32>
  %d = linalg.matmul ins(%c, %v : tensor<8x16xf32>, tensor<16x16xf32>) outs(%f : tensor<8x16xf32>) -> tensor<8x16xf32>
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%d : tensor<8x16xf32>) outs(%e : tensor<8x16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.maximumf %in, %z : f32
    linalg.yield %m : f32
  } -> tensor<8x16xf32>
  return %r : tensor<8x16xf32>
}
