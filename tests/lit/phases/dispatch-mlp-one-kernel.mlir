// dispatch-mlp-one-kernel.mlir - Gemm + bias + ReLU form one dispatch.
//
// The MLP layer below (dynamic batch) must leave exactly one turbine.dispatch
// in @main, whose workgroup count along y is ceildiv(batch, tile) computed on
// the host from tensor.dim, and exactly one kernel that reads its buffers
// through turbine.binding and holds fill + matmul + the fused bias/ReLU.

// RUN: %turbine compile %s --compile-to=dispatch | FileCheck %s

// Host side: shape arithmetic and one dispatch, nothing else.
// CHECK-LABEL: func.func @main(
// CHECK-SAME:    %[[X:[^:]*]]: tensor<?x64xf32>, %[[W:[^:]*]]: tensor<64x32xf32>, %[[B:[^:]*]]: tensor<32xf32>) -> tensor<?x32xf32>
// CHECK-DAG:     %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG:     %[[C1:.*]] = arith.constant 1 : index
// CHECK-DAG:     %[[TILE:.*]] = arith.constant {{[0-9]+}} : index
// CHECK:         %[[BATCH:.*]] = tensor.dim %[[X]], %[[C0]] : tensor<?x64xf32>
// CHECK:         %[[GROUPS:.*]] = arith.ceildivsi %[[BATCH]], %[[TILE]] : index
// CHECK-NOT:     linalg.
// CHECK:         %[[R:.*]] = turbine.dispatch @matmul_Dx32x64_f32[%[[C1]], %[[GROUPS]], %[[C1]]] (%[[X]], %[[W]], %[[B]])
// CHECK-SAME:      : (tensor<?x64xf32>, tensor<64x32xf32>, tensor<32xf32>) -> tensor<?x32xf32> dims(%[[BATCH]])
// CHECK-NOT:     turbine.dispatch
// CHECK-NOT:     linalg.
// CHECK:         return %[[R]] : tensor<?x32xf32>

// Kernel side: the ABI signature, four bindings (3 inputs, 1 output), and the
// whole layer in one function.
// CHECK:       module @kernels attributes {turbine.kernels}
// CHECK:         func.func @matmul_Dx32x64_f32(%[[STATE:.*]]: !llvm.ptr, %{{.*}}: index, %{{.*}}: index, %{{.*}}: index)
// CHECK-SAME:      turbine.kernel
// CHECK-DAG:       turbine.binding %[[STATE]][0] dims(%{{.*}}) : memref<?x64xf32>
// CHECK-DAG:       turbine.binding %[[STATE]][1] : memref<64x32xf32>
// CHECK-DAG:       turbine.binding %[[STATE]][2] : memref<32xf32>
// CHECK-DAG:       %[[OUT:.*]] = turbine.binding %[[STATE]][3] dims(%{{.*}}) : memref<?x32xf32>
// CHECK:           linalg.fill
// CHECK:           linalg.matmul
// CHECK:           %[[ACT:.*]] = linalg.generic
// CHECK:             arith.addf
// CHECK:             arith.maximumf
// CHECK:           bufferization.materialize_in_destination %[[ACT]] in restrict writable %[[OUT]]
// CHECK:           return
// CHECK-NOT:     func.func
func.func @main(%x: tensor<?x64xf32>, %w: tensor<64x32xf32>, %b: tensor<32xf32>) -> tensor<?x32xf32> {
  %c0 = arith.constant 0 : index
  %d0 = tensor.dim %x, %c0 : tensor<?x64xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty(%d0) : tensor<?x32xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<?x32xf32>) -> tensor<?x32xf32>
  %m = linalg.matmul ins(%x, %w : tensor<?x64xf32>, tensor<64x32xf32>) outs(%f : tensor<?x32xf32>) -> tensor<?x32xf32>
  %e2 = tensor.empty(%d0) : tensor<?x32xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i,j)->(i,j)>, affine_map<(i,j)->(j)>, affine_map<(i,j)->(i,j)>], iterator_types = ["parallel","parallel"]} ins(%m, %b : tensor<?x32xf32>, tensor<32xf32>) outs(%e2 : tensor<?x32xf32>) {
  ^bb0(%a: f32, %bb: f32, %o: f32):
    %s = arith.addf %a, %bb : f32
    %z = arith.maximumf %s, %zero : f32
    linalg.yield %z : f32
  } -> tensor<?x32xf32>
  return %r : tensor<?x32xf32>
}
