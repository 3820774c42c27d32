// quantize-weights.mlir - turbine-quantize-weights: a matmul / batch_matmul
// by a constant f32 B [K, N] becomes one fused linalg.generic that reads
// group-quantized weights and dequantizes them in its body
// (global-opt/WeightQuantization.h): int8 q [N/P, K/G, G, P] (P = min(N,
// 128) columns per block, read with n floordiv P, n mod P) with f32 scales
// [K/G, N] (q = round(w / s), s = max|w| / 127 over the group); int4 packs
// two K rows per byte (low nibble k = 2i, high k = 2i + 1; s = m / -8 for
// the group's value m of largest magnitude, q = clamp(round(w / s), -8, 7)).
// A is expanded to groups ([M, K/G, G]; int4 [M, K/G, G/2, 2]); a K that is
// not a multiple of the group size zero-pads A to whole groups (a pad
// gather); a run-time B, weights=none and a weight whose parameter name
// matches `exclude` are left alone; bad options are errors. The quantized
// values below were worked out by hand: int8 group [2.54, 1.0] has s = 0.02,
// q = [127, 50]; group [-508, 0] has s = 4, q = [-127, 0]; group [0.5, 0.25]
// has s = 0.5 / 127, q = [127, 64] (63.5 rounds away from zero); an
// all-zero group has s = 0, q = 0. int4 (group 4) column [2.54, 1, -508, 0]:
// s = -508 / -8 = 63.5, q = 0, 0 | -8, 0 -> bytes 0x00, 0x08 = 8; column
// [0.5, 0.25, -1, 0]: s = 0.125, q = 4, 2 | -8, 0 -> bytes 0x24 = 36, 0x08.

// RUN: turbine-opt %s --split-input-file '--turbine-quantize-weights=weights=int8 group-size=2' | FileCheck %s
// RUN: turbine-opt %s --split-input-file --turbine-quantize-weights | FileCheck %s --check-prefix=NONE
// RUN: turbine-opt %s --split-input-file '--turbine-quantize-weights=weights=int4 group-size=4' | FileCheck %s --check-prefix=INT4
// RUN: turbine-opt %s --split-input-file '--turbine-quantize-weights=weights=int8 group-size=2 exclude=^skip\.' | FileCheck %s --check-prefix=EXCLUDE
// RUN: not turbine-opt %s --split-input-file '--turbine-quantize-weights=weights=int3' 2>&1 >/dev/null | FileCheck %s --check-prefix=INT3
// RUN: not turbine-opt %s --split-input-file '--turbine-quantize-weights=weights=int4 group-size=3' 2>&1 >/dev/null | FileCheck %s --check-prefix=ODD
// RUN: not turbine-opt %s --split-input-file '--turbine-quantize-weights=weights=int8 group-size=0' 2>&1 >/dev/null | FileCheck %s --check-prefix=ZERO
// RUN: not turbine-opt %s --split-input-file '--turbine-quantize-weights=weights=int8 exclude=(' 2>&1 >/dev/null | FileCheck %s --check-prefix=REGEX

// INT3: error: quantize-weights: 'int3' is not supported (none, int8 or int4)
// ODD: error: quantize-weights: int4 packs two weights of K per byte, so the group size must be even (got 3)
// ZERO: error: quantize-weights: group size 0 must be positive
// REGEX: error: quantize-exclude: '(' is not a valid regular expression

// CHECK-DAG:   #[[AMAP:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d2, d3)>
// CHECK-DAG:   #[[QMAP:.*]] = affine_map<(d0, d1, d2, d3) -> (d1 floordiv 2, d2, d3, d1 mod 2)>
// CHECK-DAG:   #[[SMAP:.*]] = affine_map<(d0, d1, d2, d3) -> (d2, d1)>
// CHECK-DAG:   #[[CMAP:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1)>
// CHECK-LABEL: func.func @matmul
// CHECK-DAG:     %[[Q:.*]] = arith.constant dense<{{\[}}{{\[}}{{\[}}[127, 127], [50, 64]], {{\[}}[-127, -127], [0, 0]]]]> : tensor<1x2x2x2xi8>
// CHECK-DAG:     %[[S:.*]] = arith.constant dense<{{\[}}[2.000000e-02, 0.00393700786], [4.000000e+00, 0.00787401571]]> : tensor<2x2xf32>
// CHECK-DAG:     %[[A:.*]] = tensor.expand_shape %arg0 {{\[}}[0], [1, 2]] output_shape [%{{.*}}, 2, 2] : tensor<?x4xf32> into tensor<?x2x2xf32>
// CHECK:         %[[R:.*]] = linalg.generic {indexing_maps = [#[[AMAP]], #[[QMAP]], #[[SMAP]], #[[CMAP]]], iterator_types = ["parallel", "parallel", "reduction", "reduction"]} ins(%[[A]], %[[Q]], %[[S]] : tensor<?x2x2xf32>, tensor<1x2x2x2xi8>, tensor<2x2xf32>) outs(%{{.*}} : tensor<?x2xf32>)
// CHECK:         ^bb0(%[[a:.*]]: f32, %[[q:.*]]: i8, %[[s:.*]]: f32, %[[c:.*]]: f32):
// CHECK:           %[[x:.*]] = arith.sitofp %[[q]] : i8 to f32
// CHECK:           %[[w:.*]] = arith.mulf %[[x]], %[[s]] : f32
// CHECK:           %[[p:.*]] = arith.mulf %[[a]], %[[w]] : f32
// CHECK:           %[[y:.*]] = arith.addf %[[c]], %[[p]] : f32
// CHECK:           linalg.yield %[[y]] : f32
// CHECK-NOT:     linalg.matmul
// CHECK:         return %[[R]]
// NONE-LABEL:  func.func @matmul
// NONE-NOT:      i8
// NONE:          linalg.matmul
// INT4-DAG:    #[[AMAP4:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d2, d3, d4)>
// INT4-DAG:    #[[QMAP4:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d1 floordiv 2, d2, d3, d1 mod 2)>
// INT4-LABEL:  func.func @matmul
// INT4-DAG:      %[[Q4:.*]] = arith.constant dense<{{\[}}{{\[}}{{\[}}[0, 36], [8, 8]]]]> : tensor<1x1x2x2xi8>
// INT4-DAG:      %[[S4:.*]] = arith.constant dense<{{\[}}[6.350000e+01, 1.250000e-01]]> : tensor<1x2xf32>
// INT4-DAG:      %[[A4:.*]] = tensor.expand_shape %arg0 {{\[}}[0], [1, 2, 3]] output_shape [%{{.*}}, 1, 2, 2] : tensor<?x4xf32> into tensor<?x1x2x2xf32>
// INT4:          linalg.generic {indexing_maps = [#[[AMAP4]], #[[QMAP4]], #{{.*}}, #{{.*}}], iterator_types = ["parallel", "parallel", "reduction", "reduction", "reduction"]} ins(%[[A4]], %[[Q4]], %[[S4]] :
// INT4:            arith.shli
// INT4:            arith.shrsi
// INT4:            arith.shrsi
// INT4:            linalg.index 4 : index
// INT4:            arith.select
// INT4:            arith.sitofp %{{.*}} : i8 to f32
func.func @matmul(%a: tensor<?x4xf32>) -> tensor<?x2xf32> {
  %b = arith.constant dense<[[2.54, 0.5], [1.0, 0.25], [-508.0, -1.0], [0.0, 0.0]]> : tensor<4x2xf32>
  %c0 = arith.constant 0 : index
  %m = tensor.dim %a, %c0 : tensor<?x4xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty(%m) : tensor<?x2xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<?x2xf32>) -> tensor<?x2xf32>
  %r = linalg.matmul ins(%a, %b : tensor<?x4xf32>, tensor<4x2xf32>) outs(%f : tensor<?x2xf32>) -> tensor<?x2xf32>
  return %r : tensor<?x2xf32>
}

// -----

// K = 3, group 2: groups {0, 1} and {2}; q gets a zero row, A is padded to
// K = 4 by a pad gather and expanded to [2, 2, 2].
// CHECK-LABEL: func.func @partial_group
// CHECK:         %[[P:[0-9]+]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<2x4xf32>)
// CHECK:           tensor.extract %arg0
// CHECK:         tensor.expand_shape %[[P]] {{\[}}[0], [1, 2]] output_shape [2, 2, 2] : tensor<2x4xf32> into tensor<2x2x2xf32>
// CHECK-DAG:     arith.constant dense<{{\[}}{{\[}}{{\[}}[127], [-50]], {{\[}}[-127], [0]]]]> : tensor<1x2x2x1xi8>
// CHECK-DAG:     arith.constant dense<{{\[}}[2.000000e-02], [1.000000e+00]]> : tensor<2x1xf32>
// CHECK:         linalg.generic
// CHECK-NOT:     linalg.matmul
func.func @partial_group(%a: tensor<2x3xf32>) -> tensor<2x1xf32> {
  %b = arith.constant dense<[[2.54], [-1.0], [-127.0]]> : tensor<3x1xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x1xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<2x1xf32>) -> tensor<2x1xf32>
  %r = linalg.matmul ins(%a, %b : tensor<2x3xf32>, tensor<3x1xf32>) outs(%f : tensor<2x1xf32>) -> tensor<2x1xf32>
  return %r : tensor<2x1xf32>
}

// -----

// CHECK-DAG:   #[[BAMAP:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d3, d4)>
// CHECK-DAG:   #[[BQMAP:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d2, d3, d4, 0)>
// CHECK-LABEL: func.func @batch_matmul
// CHECK-DAG:     arith.constant dense<{{\[}}{{\[}}{{\[}}{{\[}}[127], [50]]]], {{\[}}{{\[}}{{\[}}[0], [0]]]]]> : tensor<2x1x1x2x1xi8>
// CHECK-DAG:     arith.constant dense<{{\[}}{{\[}}[2.000000e-02]], {{\[}}[0.000000e+00]]]> : tensor<2x1x1xf32>
// CHECK-DAG:       tensor.expand_shape %arg0 {{\[}}[0], [1], [2, 3]] output_shape [2, 3, 1, 2] : tensor<2x3x2xf32> into tensor<2x3x1x2xf32>
// CHECK:         linalg.generic {indexing_maps = [#[[BAMAP]], #[[BQMAP]], #{{.*}}, #{{.*}}], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction"]}
// CHECK-NOT:     linalg.batch_matmul
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

// -----

// Weights named skip.* stay f32 with exclude=^skip\. (keep.weight is
// quantized either way).
// EXCLUDE-LABEL: func.func @excluded
// EXCLUDE-DAG:     arith.constant {{.*}} : tensor<1x1x2x2xi8>
// EXCLUDE-DAG:     %[[SKIP:.*]] = arith.constant {turbine.param_name = "skip.weight"} {{.*}} : tensor<2x2xf32>
// EXCLUDE:         linalg.generic
// EXCLUDE:         linalg.matmul ins(%{{.*}}, %[[SKIP]] :
func.func @excluded(%a: tensor<2x2xf32>) -> (tensor<2x2xf32>, tensor<2x2xf32>) {
  %keep = arith.constant {turbine.param_name = "keep.weight"} dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>
  %skip = arith.constant {turbine.param_name = "skip.weight"} dense<[[5.0, 6.0], [7.0, 8.0]]> : tensor<2x2xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x2xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<2x2xf32>) -> tensor<2x2xf32>
  %r0 = linalg.matmul ins(%a, %keep : tensor<2x2xf32>, tensor<2x2xf32>) outs(%f : tensor<2x2xf32>) -> tensor<2x2xf32>
  %r1 = linalg.matmul ins(%a, %skip : tensor<2x2xf32>, tensor<2x2xf32>) outs(%f : tensor<2x2xf32>) -> tensor<2x2xf32>
  return %r0, %r1 : tensor<2x2xf32>, tensor<2x2xf32>
}
