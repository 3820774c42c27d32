// cpu-tile-and-vectorize-transpose.mlir - a transpose (NCHW -> NHWC, as
// around a channel shuffle) reads its input strided along the innermost
// loop: turbine-cpu-tile-and-vectorize leaves it to scalar loops (a vector
// of 64 strided, masked lanes ran 28x slower), while the elementwise op
// next to it, contiguous in every operand, is still vectorized.

// RUN: turbine-opt %s --pass-pipeline='builtin.module(turbine-form-dispatches, builtin.module(turbine-cpu-tile-and-vectorize))' | FileCheck %s

// CHECK-LABEL: func.func @elementwise_Dx14x14x232_f32(
// CHECK-NOT:     vector.
// CHECK:         linalg.transpose {{.*}} permutation = [0, 2, 3, 1]
// CHECK-NOT:     vector.
// CHECK:         return
// CHECK-LABEL: func.func @elementwise_Dx232x14x14_f32(
// CHECK:         vector.transfer_read
// CHECK:         math.exp {{.*}} : vector<
func.func @main(%x: tensor<?x232x14x14xf32>) -> (tensor<?x14x14x232xf32>, tensor<?x232x14x14xf32>) {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x232x14x14xf32>
  %e = tensor.empty(%n) : tensor<?x14x14x232xf32>
  %t = linalg.transpose ins(%x : tensor<?x232x14x14xf32>) outs(%e : tensor<?x14x14x232xf32>) permutation = [0, 2, 3, 1]
  %e2 = tensor.empty(%n) : tensor<?x232x14x14xf32>
  %exp = linalg.generic {indexing_maps = [affine_map<(a, b, c, d) -> (a, b, c, d)>, affine_map<(a, b, c, d) -> (a, b, c, d)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%x : tensor<?x232x14x14xf32>) outs(%e2 : tensor<?x232x14x14xf32>) {
  ^bb0(%v: f32, %o: f32):
    %s = math.exp %v : f32
    linalg.yield %s : f32
  } -> tensor<?x232x14x14xf32>
  return %t, %exp : tensor<?x14x14x232xf32>, tensor<?x232x14x14xf32>
}
