// form-dispatches-attention.mlir - turbine-form-dispatches on a fused
// attention (turbine.attention, from turbine-fuse-attention): one dispatch of
// its own named attention_<query shape>_kv<KV heads>_<type>, over a grid of
// heads (x) x query-row tiles (y) x batch (z); the K / V caches are plain
// input bindings (read in place, the whole [1, 2, 32, 16] tensor), the
// run-time key length a push constant, and the kernel keeps the op on
// bindings for the target's codegen (turbine-cpu-lower-attention).

// RUN: turbine-opt %s --turbine-form-dispatches | FileCheck %s

// CHECK-LABEL: func.func @cache_gqa(
// CHECK-SAME:      %[[Q:.*]]: tensor<1x4x1x16xf32>, %[[K:.*]]: tensor<1x2x32x16xf32>, %[[V:.*]]: tensor<1x2x32x16xf32>, %[[M:.*]]: tensor<1x?xf32>, %[[LEN:.*]]: index)
// CHECK:         %[[HEADS:.*]] = arith.ceildivsi %c4
// CHECK:         turbine.dispatch @attention_1x4x1x16_kv2_f32[%[[HEADS]], %{{.*}}, %{{.*}}] (%[[Q]], %[[K]], %[[V]], %[[M]]) constants(%{{.*}}, %[[LEN]])
// CHECK-SAME:      -> tensor<1x4x1x16xf32>
// CHECK:       module @kernels
// CHECK:         func.func @attention_1x4x1x16_kv2_f32(
// CHECK-SAME:      turbine.workgroup_dims = array<i64: 1, 2, 0>, turbine.workgroup_tiles = array<i64: 1, 1, 1, 0>
// CHECK:           turbine.attention
// CHECK-SAME:        key_length(%{{.*}}) mask(%{{.*}} : tensor<1x?xf32>) scale(2.500000e-01)
// CHECK-NEXT:      bufferization.materialize_in_destination

func.func @cache_gqa(%arg0: tensor<1x4x1x16xf32>, %arg1: tensor<1x2x32x16xf32>, %arg2: tensor<1x2x32x16xf32>, %arg3: tensor<1x?xf32>, %arg4: index) -> tensor<4x1x16xf32> {
  %0 = tensor.empty() : tensor<1x4x1x16xf32>
  %1 = turbine.attention %arg0, %arg1, %arg2 key_length(%arg4) mask(%arg3 : tensor<1x?xf32>) scale(2.500000e-01) outs(%0) : tensor<1x4x1x16xf32>, tensor<1x2x32x16xf32>, tensor<1x2x32x16xf32> -> tensor<1x4x1x16xf32>
  %collapsed = tensor.collapse_shape %1 [[0, 1], [2], [3]] : tensor<1x4x1x16xf32> into tensor<4x1x16xf32>
  return %collapsed : tensor<4x1x16xf32>
}
