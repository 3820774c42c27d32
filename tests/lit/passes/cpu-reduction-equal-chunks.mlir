// cpu-reduction-equal-chunks.mlir - turbine-cpu-tile-and-vectorize on an SE
// block's global average pool over 56x56x144 (EfficientNet-B0; the kernel
// as the dispatch phase writes it, dynamic batch): the reduction runs over
// channels in equal static chunks (144 = 3 x 48), without masks, not
// 64 + 64 + 16 with the accumulator read and written through masked
// transfers at every pixel (3x slower on AVX2). The fill before it and the
// division after it keep 64-lane tiles, their loops peeled: two full tiles
// and a 16-lane remainder, all unmasked.

// RUN: turbine-opt %s --pass-pipeline='builtin.module(turbine-cpu-tile-and-vectorize{target-cpu=x86-64-v3})' | FileCheck %s

// CHECK-LABEL: func.func @reduce_sum_Dx144x56x56_f32
// CHECK-NOT:     vector.create_mask
// The accumulator's fill: 64 lanes, then the remainder.
// CHECK:         scf.for %{{.*}} = %c0 to %c128 step %c64
// CHECK:           vector.transfer_write {{.*}} vector<1x64xf32>
// CHECK:         vector.transfer_write {{.*}} vector<1x16xf32>
// CHECK:         scf.for %{{.*}} = %c0 to %c144 step %c48
// CHECK:           vector.transfer_read {{.*}} vector<1x1x1x48xf32>
// CHECK:           vector.transfer_read {{.*}} vector<1x48xf32>
// The division (elementwise): likewise.
// CHECK:         scf.for %{{.*}} = %c0 to %c128 step %c64
// CHECK:           arith.divf {{.*}} : vector<1x64xf32>
// CHECK:         arith.divf {{.*}} : vector<1x16xf32>
// CHECK-NOT:     vector.create_mask
#map2 = affine_map<(d0, d1, d2, d3) -> (d0, d2, d3, d1)>
#map3 = affine_map<(d0, d1, d2, d3) -> (d0, d1)>
#map4 = affine_map<(d0, d1) -> (d0, d1)>
module attributes {turbine.kernels} {
  func.func @reduce_sum_Dx144x56x56_f32(%arg0: !llvm.ptr, %arg1: index, %arg2: index, %arg3: index) attributes {turbine.kernel, turbine.workgroup_dims = array<i64: 1, 0, -1>, turbine.workgroup_tiles = array<i64: 14, 144>} {
    %0 = turbine.push_constant %arg0[0]
    %1 = turbine.binding %arg0[0] dims(%0) : memref<?x56x56x144xf32>
    %2 = bufferization.to_tensor %1 restrict : memref<?x56x56x144xf32> to tensor<?x56x56x144xf32>
    %3 = turbine.push_constant %arg0[1]
    %4 = turbine.binding %arg0[1] dims(%3) : memref<?x144xf32>
    %5 = turbine.push_constant %arg0[2]
    %cst = arith.constant 3.136000e+03 : f32
    %cst_0 = arith.constant 0.000000e+00 : f32
    %6 = tensor.empty(%5) : tensor<?x144xf32>
    %7 = linalg.fill ins(%cst_0 : f32) outs(%6 : tensor<?x144xf32>) -> tensor<?x144xf32>
    %8 = linalg.generic {indexing_maps = [#map2, #map3], iterator_types = ["parallel", "parallel", "reduction", "reduction"]} ins(%2 : tensor<?x56x56x144xf32>) outs(%7 : tensor<?x144xf32>) {
    ^bb0(%in: f32, %out: f32):
      %10 = arith.addf %in, %out : f32
      linalg.yield %10 : f32
    } -> tensor<?x144xf32>
    %9 = linalg.generic {indexing_maps = [#map4, #map4], iterator_types = ["parallel", "parallel"]} ins(%8 : tensor<?x144xf32>) outs(%6 : tensor<?x144xf32>) {
    ^bb0(%in: f32, %out: f32):
      %10 = arith.divf %in, %cst : f32
      linalg.yield %10 : f32
    } -> tensor<?x144xf32>
    bufferization.materialize_in_destination %9 in restrict writable %4 : (tensor<?x144xf32>, memref<?x144xf32>) -> ()
    return
  }
}
