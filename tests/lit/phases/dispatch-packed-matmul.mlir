// dispatch-packed-matmul.mlir - kernels of a packed-B matmul
// (MatmulDataTiling.cpp).
//
// A large run-time B (M = 512, N = 1024) is packed by a dispatch of its own
// (a transpose of B's (K, N/32, 32) view, reshaped on the host; each
// workgroup copies 8 whole rows of B: all 32 panels); the matmul
// on the packed panels and its bias + ReLU are one kernel writing C viewed as
// (M, N/32, 32), tiled 256 rows x 4 panels per workgroup (grid x = panels,
// y = rows); the host collapses the result back to (M, N), a reshape.
// Codegen then turns the contract into the 8x32 register tile: 8 fmuladd on
// vector<32xf32> per k step, no scalar multiply-add.

// RUN: %turbine compile %s --target-cpu=skylake-avx512 --compile-to=dispatch | FileCheck %s --check-prefix=DISPATCH
// RUN: %turbine compile %s --target-cpu=skylake-avx512 --compile-to=codegen | FileCheck %s --check-prefix=CODEGEN

// DISPATCH-LABEL: func.func @main(
// DISPATCH-SAME:    %[[A:[^:]*]]: tensor<512x64xf32>, %[[B:[^:]*]]: tensor<64x1024xf32>, %[[BIAS:[^:]*]]: tensor<1024xf32>)
// DISPATCH-DAG:     %[[C1:.*]] = arith.constant 1 : index
// DISPATCH-DAG:     %[[C2:.*]] = arith.constant 2 : index
// DISPATCH-DAG:     %[[C8:.*]] = arith.constant 8 : index
// DISPATCH:         %[[VIEW:.*]] = tensor.expand_shape %[[B]] {{\[\[}}0], [1, 2]] output_shape [64, 32, 32]
// DISPATCH:         %[[BP:.*]] = turbine.dispatch @pack_matmul_b_32x64x32_f32[%[[C8]], %[[C1]], %[[C1]]] (%[[VIEW]]) : (tensor<64x32x32xf32>) -> tensor<32x64x32xf32>
// DISPATCH:         %[[BIAS2:.*]] = tensor.expand_shape %[[BIAS]] {{\[\[}}0, 1]] output_shape [32, 32]
// DISPATCH:         %[[C:.*]] = turbine.dispatch @matmul_512x1024x64_f32[%[[C8]], %[[C2]], %[[C1]]] (%[[A]], %[[BP]], %[[BIAS2]]) : (tensor<512x64xf32>, tensor<32x64x32xf32>, tensor<32x32xf32>) -> tensor<512x32x32xf32>
// DISPATCH-NOT:     turbine.dispatch
// DISPATCH:         %[[R:.*]] = tensor.collapse_shape %[[C]] {{\[\[}}0], [1, 2]] : tensor<512x32x32xf32> into tensor<512x1024xf32>
// DISPATCH:         return %[[R]]
// DISPATCH:       func.func @pack_matmul_b_32x64x32_f32(
// DISPATCH-SAME:    turbine.workgroup_dims = array<i64: 1, 0, -1>, turbine.workgroup_tiles = array<i64: 32, 8, 0>
// DISPATCH:         linalg.generic
// DISPATCH-NOT:     linalg.contract
// DISPATCH:       func.func @matmul_512x1024x64_f32(
// DISPATCH-SAME:    turbine.workgroup_dims = array<i64: 1, 0, -1>, turbine.workgroup_tiles = array<i64: 256, 4, 0>
// DISPATCH:         linalg.fill
// DISPATCH:         linalg.contract
// DISPATCH:         linalg.generic
// DISPATCH:           arith.addf
// DISPATCH:           arith.maximumf

// CODEGEN:         llvm.func @matmul_512x1024x64_f32(
// CODEGEN-NOT:     llvm.{{fmul|fadd}} {{.*}} : f32
// CODEGEN-COUNT-8: llvm.intr.fmuladd(%{{.*}}, %{{.*}}, %{{.*}}) : (vector<32xf32>, vector<32xf32>, vector<32xf32>) -> vector<32xf32>
// CODEGEN-NOT:     llvm.{{fmul|fadd}} {{.*}} : f32
func.func @main(%a: tensor<512x64xf32>, %b: tensor<64x1024xf32>, %bias: tensor<1024xf32>) -> tensor<512x1024xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<512x1024xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<512x1024xf32>) -> tensor<512x1024xf32>
  %m = linalg.matmul ins(%a, %b : tensor<512x64xf32>, tensor<64x1024xf32>) outs(%f : tensor<512x1024xf32>) -> tensor<512x1024xf32>
  %e2 = tensor.empty() : tensor<512x1024xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i,j)->(i,j)>, affine_map<(i,j)->(j)>, affine_map<(i,j)->(i,j)>], iterator_types = ["parallel","parallel"]} ins(%m, %bias : tensor<512x1024xf32>, tensor<1024xf32>) outs(%e2 : tensor<512x1024xf32>) {
  ^bb0(%x: f32, %bb: f32, %o: f32):
    %s = arith.addf %x, %bb : f32
    %z = arith.maximumf %s, %zero : f32
    linalg.yield %z : f32
  } -> tensor<512x1024xf32>
  return %r : tensor<512x1024xf32>
}
