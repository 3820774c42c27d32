// quantize-weights.mlir - turbine-quantize-weights: a matmul / batch_matmul
// by a constant f32 B [K, N] reads it as int8 [K/G, G, N] with f32 scales
// [K/G, N] (q = round(w / s), s = max|w| / 127 over the group), through a
// dequantizing linalg.generic collapsed back to [K, N]; a K that is not a
// multiple of the group size is padded to whole groups and sliced back; a run-time B and weights=none are left alone;
// int4 and a group size of 0 are errors. The quantized values below were
// worked out by hand: group [2.54, 1.0] has s = 0.02, q = [127, 50]; group
// [-508, 0] has s = 4, q = [-127, 0]; an all-zero group has s = 0, q = 0.

// RUN: turbine-opt %s --split-input-file '--turbine-quantize-weights=weights=int8 group-size=2' | FileCheck %s
// RUN: turbine-opt %s --split-input-file --turbine-quantize-weights | FileCheck %s --check-prefix=NONE
// RUN: not turbine-opt %s --split-input-file '--turbine-quantize-weights=weights=int4' 2>&1 >/dev/null | FileCheck %s --check-prefix=INT4
// RUN: not turbine-opt %s --split-input-file '--turbine-quantize-weights=weights=int8 group-size=0' 2>&1 >/dev/null | FileCheck %s --check-prefix=ZERO

// INT4: error: quantize-weights: 'int4' is not supported (none or int8; int4 is not implemented yet)
// ZERO: error: quantize-weights: group size 0 must be positive

// CHECK-DAG:   #[[ID:.*]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-DAG:   #[[GMAP:.*]] = affine_map<(d0, d1, d2) -> (d0, d2)>
// CHECK-LABEL: func.func @matmul
// CHECK-DAG:     %[[Q:.*]] = arith.constant dense<{{\[}}{{\[}}[127, -127], [50, 0]], {{\[}}[-127, 127], [0, 127]]]> : tensor<2x2x2xi8>
// CHECK-DAG:     %[[S:.*]] = arith.constant dense<{{\[}}[2.000000e-02, 1.000000e+00], [4.000000e+00, 0.00999999977]]> : tensor<2x2xf32>
// CHECK:         %[[E:.*]] = tensor.empty() : tensor<2x2x2xf32>
// CHECK:         %[[DQ:.*]] = linalg.generic {indexing_maps = [#[[ID]], #[[GMAP]], #[[ID]]], iterator_types = ["parallel", "parallel", "parallel"]} ins(%[[Q]], %[[S]] : tensor<2x2x2xi8>, tensor<2x2xf32>) outs(%[[E]] : tensor<2x2x2xf32>)
// CHECK:           arith.sitofp %{{.*}} : i8 to f32
// CHECK:           arith.mulf
// CHECK:         %[[B:.*]] = tensor.collapse_shape %[[DQ]] {{\[}}[0, 1], [2]] : tensor<2x2x2xf32> into tensor<4x2xf32>
// CHECK:         linalg.matmul ins(%{{.*}}, %[[B]] : tensor<?x4xf32>, tensor<4x2xf32>)
// NONE-LABEL:  func.func @matmul
// NONE-NOT:      i8
// NONE:          linalg.matmul
func.func @matmul(%a: tensor<?x4xf32>) -> tensor<?x2xf32> {
  %b = arith.constant dense<[[2.54, -127.0], [1.0, 0.0], [-508.0, 1.27], [0.0, 1.27]]> : tensor<4x2xf32>
  %c0 = arith.constant 0 : index
  %m = tensor.dim %a, %c0 : tensor<?x4xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty(%m) : tensor<?x2xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<?x2xf32>) -> tensor<?x2xf32>
  %r = linalg.matmul ins(%a, %b : tensor<?x4xf32>, tensor<4x2xf32>) outs(%f : tensor<?x2xf32>) -> tensor<?x2xf32>
  return %r : tensor<?x2xf32>
}

// -----

// K = 3, group 2: groups {0, 1} and {2}; K padded to 4, B sliced back to 3.
// CHECK-LABEL: func.func @partial_group
// CHECK-DAG:     arith.constant dense<{{\[}}{{\[}}[127], [-50]], {{\[}}[-127], [0]]]> : tensor<2x2x1xi8>
// CHECK-DAG:     arith.constant dense<{{\[}}[2.000000e-02], [1.000000e+00]]> : tensor<2x1xf32>
// CHECK:         %[[C:.*]] = tensor.collapse_shape %{{.*}} : tensor<2x2x1xf32> into tensor<4x1xf32>
// CHECK:         %[[B:.*]] = tensor.extract_slice %[[C]][0, 0] [3, 1] [1, 1] : tensor<4x1xf32> to tensor<3x1xf32>
// CHECK:         linalg.matmul ins(%{{.*}}, %[[B]] :
func.func @partial_group(%a: tensor<2x3xf32>) -> tensor<2x1xf32> {
  %b = arith.constant dense<[[2.54], [-1.0], [-127.0]]> : tensor<3x1xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x1xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<2x1xf32>) -> tensor<2x1xf32>
  %r = linalg.matmul ins(%a, %b : tensor<2x3xf32>, tensor<3x1xf32>) outs(%f : tensor<2x1xf32>) -> tensor<2x1xf32>
  return %r : tensor<2x1xf32>
}

// -----

// CHECK-DAG:   #[[BGROUP:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>
// CHECK-LABEL: func.func @batch_matmul
// CHECK-DAG:     arith.constant dense<{{\[}}{{\[}}{{\[}}[127], [50]]], {{\[}}{{\[}}[0], [0]]]]> : tensor<2x1x2x1xi8>
// CHECK-DAG:     arith.constant dense<{{\[}}{{\[}}[2.000000e-02]], {{\[}}[0.000000e+00]]]> : tensor<2x1x1xf32>
// CHECK:         linalg.generic {indexing_maps = [#{{.*}}, #[[BGROUP]], #{{.*}}]
// CHECK:         %[[B:.*]] = tensor.collapse_shape %{{.*}} {{\[}}[0], [1, 2], [3]] : tensor<2x1x2x1xf32> into tensor<2x2x1xf32>
// CHECK:         linalg.batch_matmul ins(%{{.*}}, %[[B]] :
func.func @batch_matmul(%a: tensor<2x3x2xf32>) -> tensor<2x3x1xf32> {
  %b = arith.constant dense<[[[2.54], [1.0]], [[0.0], [0.0]]]> : tensor<2x2x1xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x3x1xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<2x3x1xf32>) -> tensor<2x3x1xf32>
  %r = linalg.batch_matmul ins(%a, %b : tensor<2x3x2xf32>, tensor<2x2x1xf32>) outs(%f : tensor<2x3x1xf32>) -> tensor<2x3x1xf32>
  return %r : tensor<2x3x1xf32>
}

// -----

// CHECK-LABEL: func.func @runtime_b
// CHECK-NOT:     i8
// CHECK:         linalg.matmul ins(%arg0, %arg1
func.func @runtime_b(%a: tensor<2x4xf32>, %b: tensor<4x2xf32>) -> tensor<2x2xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x2xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<2x2xf32>) -> tensor<2x2xf32>
  %r = linalg.matmul ins(%a, %b : tensor<2x4xf32>, tensor<4x2xf32>) outs(%f : tensor<2x2xf32>) -> tensor<2x2xf32>
  return %r : tensor<2x2xf32>
}
