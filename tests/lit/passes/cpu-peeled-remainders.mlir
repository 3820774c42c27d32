// cpu-peeled-remainders.mlir - turbine-cpu-tile-and-vectorize on the row
// maximum of ViT-B/16's attention scores (12 heads x 197 x 197 keys, as the
// dispatch phase writes ONNX Softmax's first kernel; dynamic batch): 64 does
// not divide the 197 keys, so the reduction loop is peeled into three full
// 64-lane tiles and a static 5-lane remainder, neither masked (a masked
// maximumf reduction became a branch per lane on AVX2: 7 ns per element).

// RUN: turbine-opt %s --pass-pipeline='builtin.module(turbine-cpu-tile-and-vectorize{target-cpu=x86-64-v3})' | FileCheck %s

// CHECK-LABEL: func.func @reduce_max_Dx197x197_f32
// CHECK:         scf.for %{{.*}} = %c0 to %c192 step %c64
// CHECK-NOT:       vector.mask
// CHECK:           vector.transfer_read {{.*}} : tensor<1x1x64xf32>, vector<1x1x64xf32>
// CHECK-NEXT:      vector.multi_reduction <maximumf>, {{.*}} : vector<1x1x64xf32> to vector<1x1xf32>
// CHECK:         vector.transfer_read {{.*}} : tensor<1x1x5xf32>, vector<1x1x5xf32>
// CHECK-NOT:     vector.mask
// CHECK:         vector.multi_reduction <maximumf>, {{.*}} : vector<1x1x5xf32> to vector<1x1xf32>
#map = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#map1 = affine_map<(d0, d1, d2) -> (d0, d1)>
module attributes {turbine.kernels} {
  func.func @reduce_max_Dx197x197_f32(%arg0: !llvm.ptr, %arg1: index, %arg2: index, %arg3: index) attributes {turbine.kernel, turbine.workgroup_dims = array<i64: 1, 0, -1>, turbine.workgroup_tiles = array<i64: 1, 16>} {
    %0 = turbine.push_constant %arg0[0]
    %1 = turbine.binding %arg0[0] dims(%0) : memref<?x197x197xf32>
    %2 = bufferization.to_tensor %1 restrict : memref<?x197x197xf32> to tensor<?x197x197xf32>
    %3 = turbine.push_constant %arg0[1]
    %4 = turbine.binding %arg0[1] dims(%3) : memref<?x197xf32>
    %5 = turbine.push_constant %arg0[2]
    %cst = arith.constant 0xFF800000 : f32
    %6 = tensor.empty(%5) : tensor<?x197xf32>
    %7 = linalg.fill ins(%cst : f32) outs(%6 : tensor<?x197xf32>) -> tensor<?x197xf32>
    %8 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "parallel", "reduction"]} ins(%2 : tensor<?x197x197xf32>) outs(%7 : tensor<?x197xf32>) {
    ^bb0(%in: f32, %out: f32):
      %9 = arith.maximumf %out, %in : f32
      linalg.yield %9 : f32
    } -> tensor<?x197xf32>
    bufferization.materialize_in_destination %8 in restrict writable %4 : (tensor<?x197xf32>, memref<?x197xf32>) -> ()
    return
  }
}
