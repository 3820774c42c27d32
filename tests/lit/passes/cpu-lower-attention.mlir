// cpu-lower-attention.mlir - turbine-cpu-lower-attention: a kernel holding a
// turbine.attention (as dispatch formation outlines it: operands are the
// to_tensor of bindings, the result materialized into the output binding)
// becomes loops on the bindings: workgroups walk batch (z), heads (x, the KV
// head h / (H / KH)) and query-row tiles (y); each row carries a running max,
// sum and a vector<16> accumulator through 8-key blocks, then single keys up
// to key_length (a push constant), reading K and V rows with vector.load from
// their bindings (the whole cache, no copy), and stores acc / sum. A block
// whose mask is all -inf (above a causal diagonal) is skipped before its
// keys are read. No tensor op is left.

// RUN: turbine-opt %s --turbine-cpu-lower-attention | FileCheck %s

// CHECK-LABEL: func.func @attention_1x4x1x16_kv2_f32
// CHECK-DAG:     %[[Q:.*]] = turbine.binding %arg0[0] : memref<1x4x1x16xf32>
// CHECK-DAG:     %[[K:.*]] = turbine.binding %arg0[1] : memref<1x2x32x16xf32>
// CHECK-DAG:     %[[V:.*]] = turbine.binding %arg0[2] : memref<1x2x32x16xf32>
// CHECK-DAG:     %[[MASK:.*]] = turbine.binding %arg0[3] dims(%{{.*}}) : memref<1x?xf32>
// CHECK-DAG:     %[[OUT:.*]] = turbine.binding %arg0[4] : memref<1x4x1x16xf32>
// CHECK-DAG:     %[[LEN:.*]] = turbine.push_constant %arg0[1]
// CHECK:         %[[GROUP:.*]] = arith.divui
// CHECK:         scf.for %[[B:.*]] = %arg3 to
// CHECK:           scf.for %[[H:.*]] = %arg1 to
// CHECK:             %[[KVH:.*]] = arith.divui %[[H]], %[[GROUP]] : index
// CHECK:             scf.for
// CHECK:               scf.for %[[T:.*]] =
// CHECK:                 vector.load %[[Q]][%[[B]], %[[H]], %[[T]], %{{.*}}] : memref<1x4x1x16xf32>, vector<16xf32>
// CHECK:                 %[[FULL:.*]]:3 = scf.for %[[J:.*]] = %{{.*}} step %{{.*}} iter_args(%[[M0:.*]] = %{{.*}}, %[[S0:.*]] = %{{.*}}, %[[A0:.*]] = %{{.*}}) -> (f32, f32, vector<16xf32>) {
// CHECK:                   %[[MROW:.*]] = vector.load %[[MASK]][%[[T]], %[[J]]] : memref<1x?xf32>, vector<8xf32>
// CHECK:                   %[[MMAX:.*]] = vector.reduction <maximumf>, %[[MROW]]
// CHECK:                   %[[DROP:.*]] = arith.cmpf oeq, %[[MMAX]]
// CHECK:                   scf.if %[[DROP]] -> (f32, f32, vector<16xf32>) {
// CHECK-NEXT:                scf.yield %[[M0]], %[[S0]], %[[A0]]
// CHECK-NEXT:              } else {
// CHECK:                   vector.load %[[K]][%[[B]], %[[KVH]], %[[J]], %{{.*}}] : memref<1x2x32x16xf32>, vector<16xf32>
// CHECK:                   vector.reduction <add>, %{{.*}} fastmath<reassoc> : vector<16xf32> into f32
// CHECK-COUNT-7:           vector.reduction <add>
// CHECK:                   arith.addf %{{.*}}, %[[MROW]] : vector<8xf32>
// CHECK:                   vector.reduction <maximumf>, %{{.*}} : vector<8xf32> into f32
// CHECK:                   math.exp %{{.*}} : f32
// CHECK:                   math.exp %{{.*}} : vector<8xf32>
// CHECK:                   vector.load %[[V]][%[[B]], %[[KVH]], %[[J]], %{{.*}}]
// CHECK-COUNT-8:           vector.fma
// CHECK:                   scf.yield
// CHECK:                 %[[REST:.*]]:3 = scf.for %{{.*}} = %{{.*}} to %[[LEN]] step %{{.*}} iter_args(%{{.*}} = %[[FULL]]#0, %{{.*}} = %[[FULL]]#1, %{{.*}} = %[[FULL]]#2)
// CHECK:                   math.exp %{{.*}} : vector<1xf32>
// CHECK:                   vector.fma
// CHECK:                 arith.divf %{{.*}}, %[[REST]]#1 : f32
// CHECK:                 vector.store %{{.*}}, %[[OUT]][%[[B]], %[[H]], %[[T]], %{{.*}}] : memref<1x4x1x16xf32>, vector<16xf32>
// CHECK-NOT:     turbine.attention
// CHECK-NOT:     bufferization.
// CHECK:         return

module @kernels attributes {turbine.kernels} {
  func.func @attention_1x4x1x16_kv2_f32(%arg0: !llvm.ptr, %arg1: index, %arg2: index, %arg3: index) attributes {turbine.kernel, turbine.workgroup_dims = array<i64: 1, 2, 0>, turbine.workgroup_tiles = array<i64: 1, 1, 1, 0>} {
    %0 = turbine.binding %arg0[0] : memref<1x4x1x16xf32>
    %1 = bufferization.to_tensor %0 restrict : memref<1x4x1x16xf32> to tensor<1x4x1x16xf32>
    %2 = turbine.binding %arg0[1] : memref<1x2x32x16xf32>
    %3 = bufferization.to_tensor %2 restrict : memref<1x2x32x16xf32> to tensor<1x2x32x16xf32>
    %4 = turbine.binding %arg0[2] : memref<1x2x32x16xf32>
    %5 = bufferization.to_tensor %4 restrict : memref<1x2x32x16xf32> to tensor<1x2x32x16xf32>
    %6 = turbine.push_constant %arg0[0]
    %7 = turbine.binding %arg0[3] dims(%6) : memref<1x?xf32>
    %8 = bufferization.to_tensor %7 restrict : memref<1x?xf32> to tensor<1x?xf32>
    %9 = turbine.binding %arg0[4] : memref<1x4x1x16xf32>
    %10 = turbine.push_constant %arg0[1]
    %11 = tensor.empty() : tensor<1x4x1x16xf32>
    %12 = turbine.attention %1, %3, %5 key_length(%10) mask(%8 : tensor<1x?xf32>) scale(2.500000e-01) outs(%11) : tensor<1x4x1x16xf32>, tensor<1x2x32x16xf32>, tensor<1x2x32x16xf32> -> tensor<1x4x1x16xf32>
    bufferization.materialize_in_destination %12 in restrict writable %9 : (tensor<1x4x1x16xf32>, memref<1x4x1x16xf32>) -> ()
    return
  }
}
