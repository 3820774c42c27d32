// fuse-elementwise.mlir - turbine-fuse-elementwise: a chain of elementwise
// generics whose producers have one use becomes one generic; tensor.dim of
// an intermediate resolves to a dim of the argument.

// RUN: turbine-opt %s --turbine-fuse-elementwise | FileCheck %s

#id = affine_map<(i, j) -> (i, j)>
// CHECK-LABEL: func.func @chain
// CHECK-SAME:    (%[[X:.*]]: tensor<?x8xf32>)
// CHECK:         %[[DIM:.*]] = tensor.dim %[[X]], %{{.*}} : tensor<?x8xf32>
// CHECK:         linalg.generic
// CHECK:           arith.addf
// CHECK:           math.exp
// CHECK-NOT:     linalg.generic
// CHECK:         return %{{.*}}, %[[DIM]]
func.func @chain(%x: tensor<?x8xf32>) -> (tensor<?x8xf32>, index) {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x8xf32>
  %e0 = tensor.empty(%n) : tensor<?x8xf32>
  %add = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<?x8xf32>) outs(%e0 : tensor<?x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.addf %a, %a : f32
    linalg.yield %s : f32
  } -> tensor<?x8xf32>
  %e1 = tensor.empty(%n) : tensor<?x8xf32>
  %exp = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%add : tensor<?x8xf32>) outs(%e1 : tensor<?x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = math.exp %a : f32
    linalg.yield %s : f32
  } -> tensor<?x8xf32>
  %m = tensor.dim %exp, %c0 : tensor<?x8xf32>
  return %exp, %m : tensor<?x8xf32>, index
}
