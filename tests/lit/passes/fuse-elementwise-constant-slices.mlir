// fuse-elementwise-constant-slices.mlir - turbine-fuse-elementwise: a
// transpose that reads one slice of a constant through a map with a
// constant result (a bidirectional RNN's per-direction weights) is folded
// into a constant at compile time; a slice of a constant that has other,
// non-slice users is not folded (nothing is stored twice), and neither is a
// generic reading an argument that way.

// RUN: turbine-opt %s --turbine-fuse-elementwise | FileCheck %s

#dir0 = affine_map<(i, j) -> (0, j, i)>
#dir1 = affine_map<(i, j) -> (1, j, i)>
#id = affine_map<(i, j) -> (i, j)>

// CHECK-LABEL: func.func @both_directions
// CHECK-DAG:     %[[D0:.*]] = arith.constant dense<{{\[}}[1.000000e+00, 4.000000e+00], [2.000000e+00, 5.000000e+00], [3.000000e+00, 6.000000e+00]]> : tensor<3x2xf32>
// CHECK-DAG:     %[[D1:.*]] = arith.constant dense<{{\[}}[7.000000e+00, 1.000000e+01], [8.000000e+00, 1.100000e+01], [9.000000e+00, 1.200000e+01]]> : tensor<3x2xf32>
// CHECK-NOT:     linalg.generic
// CHECK:         return %[[D0]], %[[D1]]
func.func @both_directions() -> (tensor<3x2xf32>, tensor<3x2xf32>) {
  %w = arith.constant dense<[[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]],
                             [[7.0, 8.0, 9.0], [10.0, 11.0, 12.0]]]> : tensor<2x2x3xf32>
  %e = tensor.empty() : tensor<3x2xf32>
  %t0 = linalg.generic {indexing_maps = [#dir0, #id], iterator_types = ["parallel", "parallel"]}
      ins(%w : tensor<2x2x3xf32>) outs(%e : tensor<3x2xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<3x2xf32>
  %t1 = linalg.generic {indexing_maps = [#dir1, #id], iterator_types = ["parallel", "parallel"]}
      ins(%w : tensor<2x2x3xf32>) outs(%e : tensor<3x2xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<3x2xf32>
  return %t0, %t1 : tensor<3x2xf32>, tensor<3x2xf32>
}

// The constant is also returned whole: its slice stays a slice.
// CHECK-LABEL: func.func @constant_used_whole
// CHECK:         %[[W:.*]] = arith.constant dense
// CHECK:         %[[S:.*]] = tensor.extract_slice %[[W]][1, 0, 0] [1, 2, 3] [1, 1, 1] : tensor<2x2x3xf32> to tensor<2x3xf32>
// CHECK:         linalg.generic {{.*}} ins(%[[S]] : tensor<2x3xf32>)
func.func @constant_used_whole() -> (tensor<3x2xf32>, tensor<2x2x3xf32>) {
  %w = arith.constant dense<[[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]],
                             [[7.0, 8.0, 9.0], [10.0, 11.0, 12.0]]]> : tensor<2x2x3xf32>
  %e = tensor.empty() : tensor<3x2xf32>
  %t1 = linalg.generic {indexing_maps = [#dir1, #id], iterator_types = ["parallel", "parallel"]}
      ins(%w : tensor<2x2x3xf32>) outs(%e : tensor<3x2xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<3x2xf32>
  return %t1, %w : tensor<3x2xf32>, tensor<2x2x3xf32>
}

// An argument read at a constant index is left as it is.
// CHECK-LABEL: func.func @argument
// CHECK-NOT:     tensor.extract_slice
// CHECK:         linalg.generic {indexing_maps = [#{{.*}}, #{{.*}}]
func.func @argument(%w: tensor<2x2x3xf32>) -> tensor<3x2xf32> {
  %e = tensor.empty() : tensor<3x2xf32>
  %t1 = linalg.generic {indexing_maps = [#dir1, #id], iterator_types = ["parallel", "parallel"]}
      ins(%w : tensor<2x2x3xf32>) outs(%e : tensor<3x2xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<3x2xf32>
  return %t1 : tensor<3x2xf32>
}
