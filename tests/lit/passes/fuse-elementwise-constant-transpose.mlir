// fuse-elementwise-constant-transpose.mlir - turbine-fuse-elementwise folds a
// generic that only permutes the dims of a dense constant into the permuted
// constant, moving bytes (ConstantTransposes.cpp; upstream's folder would
// compute the same through an APFloat per element, and lose the parameter
// name, which here becomes the torch expression of the permuted tensor).
// Element types of any byte width; the output map may itself be a permutation.

// RUN: turbine-opt %s --turbine-fuse-elementwise | FileCheck %s

// CHECK-LABEL: func.func @matrix
// CHECK:         %[[C:.*]] = arith.constant {turbine.param_name = "fc.weight.permute(1,0)"} dense<{{\[}}[0.000000e+00, 3.000000e+00], [1.000000e+00, 4.000000e+00], [2.000000e+00, 5.000000e+00]]> : tensor<3x2xf32>
// CHECK-NEXT:    return %[[C]]
func.func @matrix() -> tensor<3x2xf32> {
  %w = arith.constant {turbine.param_name = "fc.weight"} dense<[[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]> : tensor<2x3xf32>
  %e = tensor.empty() : tensor<3x2xf32>
  %t = linalg.generic {indexing_maps = [affine_map<(i, j) -> (j, i)>, affine_map<(i, j) -> (i, j)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%w : tensor<2x3xf32>) outs(%e : tensor<3x2xf32>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  } -> tensor<3x2xf32>
  return %t : tensor<3x2xf32>
}

// out[c][a][b] = in[a][b][c] (loops (a, b, c), the output map permuted):
// in = [[[0, 1], [2, 3], [4, 5]]] (1x3x2) -> out (2x1x3).
// CHECK-LABEL: func.func @rank3_i16
// CHECK:         %[[C:.*]] = arith.constant {turbine.param_name = "w.permute(2,0,1)"} dense<{{\[}}{{\[}}[0, 2, 4]], {{\[}}[1, 3, 5]]]> : tensor<2x1x3xi16>
// CHECK-NEXT:    return %[[C]]
func.func @rank3_i16() -> tensor<2x1x3xi16> {
  %w = arith.constant {turbine.param_name = "w"} dense<[[[0, 1], [2, 3], [4, 5]]]> : tensor<1x3x2xi16>
  %e = tensor.empty() : tensor<2x1x3xi16>
  %t = linalg.generic {indexing_maps = [affine_map<(a, b, c) -> (a, b, c)>, affine_map<(a, b, c) -> (c, a, b)>],
                       iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%w : tensor<1x3x2xi16>) outs(%e : tensor<2x1x3xi16>) {
  ^bb0(%x: i16, %o: i16):
    linalg.yield %x : i16
  } -> tensor<2x1x3xi16>
  return %t : tensor<2x1x3xi16>
}
