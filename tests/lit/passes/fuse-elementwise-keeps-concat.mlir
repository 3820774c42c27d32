// fuse-elementwise-keeps-concat.mlir - turbine-fuse-elementwise does not
// fuse the ReLU that reads a concatenation into the concatenation's gather
// (DenseNet's BN + ReLU after every concat): the gather stays recognizable,
// and dispatch formation writes it in place (ConcatSlices.h). The ReLU of
// an ordinary gather (a slice here) still fuses into it.

// RUN: turbine-opt %s --turbine-fuse-elementwise | FileCheck %s

#id = affine_map<(i, j) -> (i, j)>
// CHECK-LABEL: func.func @concat_then_relu(
// CHECK:         %[[CAT:.*]] = linalg.generic
// CHECK-NOT:       arith.maximumf
// CHECK:           arith.select
// CHECK-NOT:       arith.maximumf
// CHECK:         } -> tensor<2x6xf32>
// CHECK:         linalg.generic {{.*}} ins(%[[CAT]] : tensor<2x6xf32>)
// CHECK:           arith.maximumf
func.func @concat_then_relu(%a: tensor<2x4xf32>, %b: tensor<2x2xf32>) -> tensor<2x6xf32> {
  %c4 = arith.constant 4 : index
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x6xf32>
  %cat = linalg.generic {indexing_maps = [#id], iterator_types = ["parallel", "parallel"]}
      outs(%e : tensor<2x6xf32>) {
  ^bb0(%o: f32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %v0 = tensor.extract %a[%i, %j] : tensor<2x4xf32>
    %k = arith.subi %j, %c4 : index
    %v1 = tensor.extract %b[%i, %k] : tensor<2x2xf32>
    %p = arith.cmpi slt, %j, %c4 : index
    %s = arith.select %p, %v0, %v1 : f32
    linalg.yield %s : f32
  } -> tensor<2x6xf32>
  %e2 = tensor.empty() : tensor<2x6xf32>
  %relu = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%cat : tensor<2x6xf32>) outs(%e2 : tensor<2x6xf32>) {
  ^bb0(%x: f32, %o: f32):
    %r = arith.maximumf %x, %zero : f32
    linalg.yield %r : f32
  } -> tensor<2x6xf32>
  return %relu : tensor<2x6xf32>
}

// CHECK-LABEL: func.func @slice_then_relu(
// CHECK:         linalg.generic
// CHECK:           tensor.extract
// CHECK:           arith.maximumf
// CHECK-NOT:     linalg.generic
func.func @slice_then_relu(%a: tensor<2x8xf32>) -> tensor<2x4xf32> {
  %c2 = arith.constant 2 : index
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x4xf32>
  %s = linalg.generic {indexing_maps = [#id], iterator_types = ["parallel", "parallel"]}
      outs(%e : tensor<2x4xf32>) {
  ^bb0(%o: f32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %k = arith.addi %j, %c2 : index
    %v = tensor.extract %a[%i, %k] : tensor<2x8xf32>
    linalg.yield %v : f32
  } -> tensor<2x4xf32>
  %e2 = tensor.empty() : tensor<2x4xf32>
  %relu = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%s : tensor<2x4xf32>) outs(%e2 : tensor<2x4xf32>) {
  ^bb0(%x: f32, %o: f32):
    %r = arith.maximumf %x, %zero : f32
    linalg.yield %r : f32
  } -> tensor<2x4xf32>
  return %relu : tensor<2x4xf32>
}
