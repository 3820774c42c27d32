// global-opt-elementwise-fusion.mlir - global-opt fuses a chain of
// elementwise generics into one.
//
// add -> mul -> exp, each a linalg.generic whose result has a single use,
// become a single linalg.generic whose body computes all three in order.

// RUN: %turbine compile %s --compile-to=global-opt | FileCheck %s

// CHECK-LABEL: func.func @main(
// CHECK-SAME:    %[[X:.*]]: tensor<4x8xf32>, %[[Y:.*]]: tensor<4x8xf32>)
// CHECK:         %[[FUSED:.*]] = linalg.generic
// CHECK-SAME:      ins(%[[X]], %[[Y]] : tensor<4x8xf32>, tensor<4x8xf32>)
// CHECK-NEXT:    ^bb0(%[[IX:.*]]: f32, %[[IY:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT:      %[[ADD:.*]] = arith.addf %[[IX]], %[[IY]] : f32
// CHECK-NEXT:      %[[MUL:.*]] = arith.mulf %[[ADD]], %[[IX]] : f32
// CHECK-NEXT:      %[[EXP:.*]] = math.exp %[[MUL]] : f32
// CHECK-NEXT:      linalg.yield %[[EXP]] : f32
// CHECK-NOT:     linalg.generic
// CHECK:         return %[[FUSED]] : tensor<4x8xf32>
#id = affine_map<(i, j) -> (i, j)>
func.func @main(%x: tensor<4x8xf32>, %y: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %e0 = tensor.empty() : tensor<4x8xf32>
  %add = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %y : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e0 : tensor<4x8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.addf %a, %b : f32
    linalg.yield %s : f32
  } -> tensor<4x8xf32>
  %e1 = tensor.empty() : tensor<4x8xf32>
  %mul = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%add, %x : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e1 : tensor<4x8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %p = arith.mulf %a, %b : f32
    linalg.yield %p : f32
  } -> tensor<4x8xf32>
  %e2 = tensor.empty() : tensor<4x8xf32>
  %exp = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%mul : tensor<4x8xf32>) outs(%e2 : tensor<4x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = math.exp %a : f32
    linalg.yield %r : f32
  } -> tensor<4x8xf32>
  return %exp : tensor<4x8xf32>
}
