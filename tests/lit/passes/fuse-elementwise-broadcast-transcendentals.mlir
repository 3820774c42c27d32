// fuse-elementwise-broadcast-transcendentals.mlir - turbine-fuse-elementwise
// does not fuse a producer that computes transcendental math (exp, here a
// sigmoid) into a consumer that reads it through a broadcast: fused, the
// sigmoid of an SE block's 4 gate values would run for each of the 8x4
// elements it scales. A producer of plain arithmetic still fuses, and so
// does a transcendental producer read element for element.

// RUN: turbine-opt %s --turbine-fuse-elementwise | FileCheck %s

#row = affine_map<(i, j) -> (0, j)>
#id = affine_map<(i, j) -> (i, j)>

// CHECK-LABEL: func.func @sigmoid_gate
// CHECK:         %[[GATE:.*]] = linalg.generic
// CHECK:           math.exp
// CHECK:         linalg.generic {{.*}} ins(%[[GATE]], %{{.*}} : tensor<1x4xf32>, tensor<8x4xf32>)
// CHECK-NOT:       math.exp
// CHECK:           arith.mulf
// CHECK-NOT:     linalg.generic
func.func @sigmoid_gate(%g: tensor<1x4xf32>, %x: tensor<8x4xf32>) -> tensor<8x4xf32> {
  %one = arith.constant 1.0 : f32
  %e1 = tensor.empty() : tensor<1x4xf32>
  %s = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%g : tensor<1x4xf32>) outs(%e1 : tensor<1x4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %n = arith.negf %a : f32
    %e = math.exp %n : f32
    %d = arith.addf %e, %one : f32
    %r = arith.divf %one, %d : f32
    linalg.yield %r : f32
  } -> tensor<1x4xf32>
  %e8 = tensor.empty() : tensor<8x4xf32>
  %y = linalg.generic {indexing_maps = [#row, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%s, %x : tensor<1x4xf32>, tensor<8x4xf32>) outs(%e8 : tensor<8x4xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    linalg.yield %m : f32
  } -> tensor<8x4xf32>
  return %y : tensor<8x4xf32>
}

// CHECK-LABEL: func.func @plain_bias
// CHECK:         linalg.generic
// CHECK-SAME:      ins(%{{.*}}, %{{.*}} : tensor<1x4xf32>, tensor<8x4xf32>)
// CHECK:           arith.addf
// CHECK:           arith.mulf
// CHECK-NOT:     linalg.generic
func.func @plain_bias(%g: tensor<1x4xf32>, %x: tensor<8x4xf32>) -> tensor<8x4xf32> {
  %one = arith.constant 1.0 : f32
  %e1 = tensor.empty() : tensor<1x4xf32>
  %s = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%g : tensor<1x4xf32>) outs(%e1 : tensor<1x4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %d = arith.addf %a, %one : f32
    linalg.yield %d : f32
  } -> tensor<1x4xf32>
  %e8 = tensor.empty() : tensor<8x4xf32>
  %y = linalg.generic {indexing_maps = [#row, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%s, %x : tensor<1x4xf32>, tensor<8x4xf32>) outs(%e8 : tensor<8x4xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    linalg.yield %m : f32
  } -> tensor<8x4xf32>
  return %y : tensor<8x4xf32>
}

// CHECK-LABEL: func.func @elementwise_sigmoid
// CHECK:         linalg.generic
// CHECK:           math.exp
// CHECK:           arith.mulf
// CHECK-NOT:     linalg.generic
func.func @elementwise_sigmoid(%g: tensor<8x4xf32>, %x: tensor<8x4xf32>) -> tensor<8x4xf32> {
  %one = arith.constant 1.0 : f32
  %e1 = tensor.empty() : tensor<8x4xf32>
  %s = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%g : tensor<8x4xf32>) outs(%e1 : tensor<8x4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %e = math.exp %a : f32
    linalg.yield %e : f32
  } -> tensor<8x4xf32>
  %e8 = tensor.empty() : tensor<8x4xf32>
  %y = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%s, %x : tensor<8x4xf32>, tensor<8x4xf32>) outs(%e8 : tensor<8x4xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    linalg.yield %m : f32
  } -> tensor<8x4xf32>
  return %y : tensor<8x4xf32>
}
