// global-opt-matmul-data-tiling.mlir - matmul B operands packed into panels
// of 32 columns (MatmulDataTiling.cpp).
//
// * A constant B is packed at compile time: a new constant of type
//   (N/32, K, 32), no run-time transpose; the matmul becomes a linalg.contract
//   writing (M, N/32, 32), and the bias + ReLU consumer iterates over that
//   view too (so dispatch formation still fuses it), the collapse back to
//   (M, N) coming last.
// * A large run-time B (M >= 512, N >= 1024) is transposed at run time from
//   its (K, N/32, 32) view.
// * A small run-time B, and N not a multiple of 32, stay plain matmuls.

// RUN: %turbine compile %s --compile-to=global-opt | FileCheck %s

// The contract's maps: loops (nb, m, n0, k); A (m, k), Bp (nb, k, n0),
// C (m, nb, n0).
// CHECK-DAG: #[[MA:.*]] = affine_map<(d0, d1, d2, d3) -> (d1, d3)>
// CHECK-DAG: #[[MB:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d3, d2)>
// CHECK-DAG: #[[MC:.*]] = affine_map<(d0, d1, d2, d3) -> (d1, d0, d2)>

// CHECK-LABEL: func.func @constant_b(
// CHECK-SAME:    %[[X:[^:]*]]: tensor<?x1xf32>, %[[BIAS:[^:]*]]: tensor<64xf32>)
// CHECK:         %[[PACKED:.*]] = arith.constant dense{{.*}} : tensor<2x1x32xf32>
// CHECK-NOT:     linalg.matmul
// CHECK-NOT:     linalg.generic
// CHECK:         %[[C:.*]] = linalg.contract indexing_maps = [#[[MA]], #[[MB]], #[[MC]]] ins(%[[X]], %[[PACKED]] : tensor<?x1xf32>, tensor<2x1x32xf32>) outs(%{{.*}} : tensor<?x2x32xf32>) -> tensor<?x2x32xf32>
// CHECK:         %[[BIAS2:.*]] = tensor.expand_shape %[[BIAS]] {{\[\[}}0, 1]] output_shape [2, 32] : tensor<64xf32> into tensor<2x32xf32>
// CHECK:         %[[Y:.*]] = linalg.generic {{.*}} ins(%[[C]], %[[BIAS2]] : tensor<?x2x32xf32>, tensor<2x32xf32>)
// CHECK:           arith.addf
// CHECK:           arith.maximumf
// CHECK:         %[[R:.*]] = tensor.collapse_shape %[[Y]] {{\[\[}}0], [1, 2]] : tensor<?x2x32xf32> into tensor<?x64xf32>
// CHECK:         return %[[R]]
func.func @constant_b(%x: tensor<?x1xf32>, %b: tensor<64xf32>) -> tensor<?x64xf32> {
  %w = arith.constant dense<[[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0, 13.0, 14.0, 15.0, 16.0, 17.0, 18.0, 19.0, 20.0, 21.0, 22.0, 23.0, 24.0, 25.0, 26.0, 27.0, 28.0, 29.0, 30.0, 31.0, 32.0, 33.0, 34.0, 35.0, 36.0, 37.0, 38.0, 39.0, 40.0, 41.0, 42.0, 43.0, 44.0, 45.0, 46.0, 47.0, 48.0, 49.0, 50.0, 51.0, 52.0, 53.0, 54.0, 55.0, 56.0, 57.0, 58.0, 59.0, 60.0, 61.0, 62.0, 63.0, 64.0]]> : tensor<1x64xf32>
  %c0 = arith.constant 0 : index
  %d0 = tensor.dim %x, %c0 : tensor<?x1xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty(%d0) : tensor<?x64xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<?x64xf32>) -> tensor<?x64xf32>
  %m = linalg.matmul ins(%x, %w : tensor<?x1xf32>, tensor<1x64xf32>) outs(%f : tensor<?x64xf32>) -> tensor<?x64xf32>
  %e2 = tensor.empty(%d0) : tensor<?x64xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i,j)->(i,j)>, affine_map<(i,j)->(j)>, affine_map<(i,j)->(i,j)>], iterator_types = ["parallel","parallel"]} ins(%m, %b : tensor<?x64xf32>, tensor<64xf32>) outs(%e2 : tensor<?x64xf32>) {
  ^bb0(%a: f32, %bb: f32, %o: f32):
    %s = arith.addf %a, %bb : f32
    %z = arith.maximumf %s, %zero : f32
    linalg.yield %z : f32
  } -> tensor<?x64xf32>
  return %r : tensor<?x64xf32>
}

// CHECK-LABEL: func.func @runtime_b_large(
// CHECK-SAME:    %[[A:[^:]*]]: tensor<512x64xf32>, %[[B:[^:]*]]: tensor<64x1024xf32>)
// CHECK:         %[[VIEW:.*]] = tensor.expand_shape %[[B]] {{\[\[}}0], [1, 2]] output_shape [64, 32, 32] : tensor<64x1024xf32> into tensor<64x32x32xf32>
// CHECK:         %[[BP:.*]] = linalg.generic {{.*}} ins(%[[VIEW]] : tensor<64x32x32xf32>) outs(%{{.*}} : tensor<32x64x32xf32>)
// CHECK-NEXT:    ^bb0(%[[IN:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT:      linalg.yield %[[IN]] : f32
// CHECK:         %[[C:.*]] = linalg.contract {{.*}} ins(%[[A]], %[[BP]] : tensor<512x64xf32>, tensor<32x64x32xf32>) outs(%{{.*}} : tensor<512x32x32xf32>)
// CHECK:         tensor.collapse_shape %[[C]] {{\[\[}}0], [1, 2]] : tensor<512x32x32xf32> into tensor<512x1024xf32>
func.func @runtime_b_large(%a: tensor<512x64xf32>, %b: tensor<64x1024xf32>) -> tensor<512x1024xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<512x1024xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<512x1024xf32>) -> tensor<512x1024xf32>
  %m = linalg.matmul ins(%a, %b : tensor<512x64xf32>, tensor<64x1024xf32>) outs(%f : tensor<512x1024xf32>) -> tensor<512x1024xf32>
  return %m : tensor<512x1024xf32>
}

// CHECK-LABEL: func.func @runtime_b_small(
// CHECK-NOT:     linalg.contract
// CHECK:         linalg.matmul
func.func @runtime_b_small(%a: tensor<128x64xf32>, %b: tensor<64x256xf32>) -> tensor<128x256xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<128x256xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<128x256xf32>) -> tensor<128x256xf32>
  %m = linalg.matmul ins(%a, %b : tensor<128x64xf32>, tensor<64x256xf32>) outs(%f : tensor<128x256xf32>) -> tensor<128x256xf32>
  return %m : tensor<128x256xf32>
}

// CHECK-LABEL: func.func @n_not_a_panel_multiple(
// CHECK-NOT:     linalg.contract
// CHECK:         linalg.matmul
// CHECK-NOT:     linalg.contract
func.func @n_not_a_panel_multiple(%a: tensor<8x2xf32>) -> tensor<8x3xf32> {
  %w = arith.constant dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x3xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<8x3xf32>) -> tensor<8x3xf32>
  %m = linalg.matmul ins(%a, %w : tensor<8x2xf32>, tensor<2x3xf32>) outs(%f : tensor<8x3xf32>) -> tensor<8x3xf32>
  return %m : tensor<8x3xf32>
}
