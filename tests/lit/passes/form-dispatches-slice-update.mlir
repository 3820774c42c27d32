// form-dispatches-slice-update.mlir - turbine-form-dispatches on a slice
// update (after turbine-update-slices-in-place): one kernel, named after the
// global, whose output binding is the global's storage: the dispatch takes
// the global's load as its `in_place` operand (not as an input binding, and
// no tensor of the cache's size is allocated), the position is a push
// constant, and the kernel computes the slice straight into a view of the
// output binding. A reader of the stored cache (attention) gets it as an
// ordinary read-only input binding.

// RUN: turbine-opt %s --turbine-update-slices-in-place --turbine-form-dispatches | FileCheck %s

ml_program.global private mutable @k_cache(dense<0.0> : tensor<1x2x8x4xf32>) : tensor<1x2x8x4xf32>

// CHECK-LABEL: func.func @decode
// CHECK:         %[[LOAD:.*]] = ml_program.global_load @k_cache : tensor<1x2x8x4xf32> {turbine.update_only}
// CHECK:         cf.assert
// CHECK:         %[[UPD:.*]] = turbine.dispatch @update_k_cache_1x2x1x4_f32[{{.*}}] (%arg0) constants(%{{.*}}) in_place(%[[LOAD]] : tensor<1x2x8x4xf32>) : (tensor<1x2x1x4xf32>) -> tensor<1x2x8x4xf32>
// CHECK:         ml_program.global_store @k_cache = %[[UPD]]
// CHECK:         %[[READ:.*]] = ml_program.global_load @k_cache : tensor<1x2x8x4xf32>
// CHECK:         turbine.dispatch @reduce_sum_1x2x8x4_f32[{{.*}}] (%[[READ]]) : (tensor<1x2x8x4xf32>) -> tensor<1x2x4xf32>
// CHECK:       module @kernels
// CHECK:         func.func @update_k_cache_1x2x1x4_f32(
// CHECK:           turbine.binding %arg0[0] : memref<1x2x1x4xf32>
// CHECK:           %[[OUT:.*]] = turbine.binding %arg0[1] : memref<1x2x8x4xf32>
// CHECK:           %[[CACHE:.*]] = bufferization.to_tensor %[[OUT]] restrict writable
// CHECK:           %[[POS:.*]] = turbine.push_constant %arg0[0]
// CHECK:           %[[SLICE:.*]] = tensor.extract_slice %[[CACHE]][0, 0, %[[POS]], 0] [1, 2, 1, 4] [1, 1, 1, 1]
// CHECK:           %[[NEW:.*]] = linalg.generic {{.*}} outs(%[[SLICE]] : tensor<1x2x1x4xf32>)
// CHECK:           %[[INS:.*]] = tensor.insert_slice %[[NEW]] into %[[CACHE]][0, 0, %[[POS]], 0] [1, 2, 1, 4] [1, 1, 1, 1] {turbine.slice_update}
// CHECK:           bufferization.materialize_in_destination %[[INS]] in restrict writable %[[OUT]]
func.func @decode(%k: tensor<1x2x1x4xf32>, %p: i64) -> tensor<1x2x4xf32> {
  %pos = arith.index_cast %p : i64 to index
  %c = ml_program.global_load @k_cache : tensor<1x2x8x4xf32>
  %u = tensor.insert_slice %k into %c[0, 0, %pos, 0] [1, 2, 1, 4] [1, 1, 1, 1] : tensor<1x2x1x4xf32> into tensor<1x2x8x4xf32>
  ml_program.global_store @k_cache = %u : tensor<1x2x8x4xf32>
  %r = ml_program.global_load @k_cache : tensor<1x2x8x4xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x2x4xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x2x4xf32>) -> tensor<1x2x4xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(a, b, s, d) -> (a, b, s, d)>, affine_map<(a, b, s, d) -> (a, b, d)>],
                       iterator_types = ["parallel", "parallel", "reduction", "parallel"]}
      ins(%r : tensor<1x2x8x4xf32>) outs(%f : tensor<1x2x4xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %y = arith.addf %x, %acc : f32
    linalg.yield %y : f32
  } -> tensor<1x2x4xf32>
  return %s : tensor<1x2x4xf32>
}
