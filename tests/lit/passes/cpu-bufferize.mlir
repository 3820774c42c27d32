// cpu-bufferize.mlir - turbine-cpu-bufferize: a tiled, vectorized kernel on
// tensors writes its result in place into its output binding: no tensors
// and no heap allocation left.

// RUN: turbine-opt %s --pass-pipeline='builtin.module(turbine-form-dispatches, builtin.module(turbine-cpu-tile-and-vectorize, turbine-cpu-lower-vector-masks, turbine-cpu-bufferize))' | FileCheck %s

#id = affine_map<(i, j) -> (i, j)>
// CHECK-LABEL: func.func @elementwise_8x128_f32(
// CHECK:         %[[IN:.*]] = turbine.binding %{{.*}}[0] : memref<8x128xf32>
// CHECK:         %[[OUT:.*]] = turbine.binding %{{.*}}[1] : memref<8x128xf32>
// CHECK-NOT:     tensor<
// CHECK-NOT:     memref.alloc
// CHECK:         scf.for {{.*}} iter_args(%{{.*}} = %[[OUT]]) -> (memref<8x128xf32>)
// CHECK:         %[[TILE:.*]] = memref.subview %[[IN]]
// CHECK:         %[[ROW:.*]] = memref.subview %[[TILE]]
// CHECK:         %[[V:.*]] = vector.transfer_read %[[ROW]]
// CHECK:         %[[E:.*]] = math.exp %[[V]] : vector<1x64xf32>
// CHECK:         vector.transfer_write %[[E]], %{{.*}} : vector<1x64xf32>, memref<1x64xf32, strided<[128, 1], offset: ?>>
func.func @main(%x: tensor<8x128xf32>) -> tensor<8x128xf32> {
  %e = tensor.empty() : tensor<8x128xf32>
  %exp = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<8x128xf32>) outs(%e : tensor<8x128xf32>) {
  ^bb0(%v: f32, %o: f32):
    %s = math.exp %v : f32
    linalg.yield %s : f32
  } -> tensor<8x128xf32>
  return %exp : tensor<8x128xf32>
}
