// cpu-tile-and-vectorize-reference.mlir - turbine-cpu-tile-and-vectorize
// with `reference` (the plain reference kernels `turbine bisect` compares
// against, CompileOptions::referenceKernels): the same workgroup tile loops
// as cpu-tile-and-vectorize.mlir, and inside them the ops left whole for
// scalar loops: no register tile, no vector op.

// RUN: turbine-opt %s --pass-pipeline='builtin.module(turbine-form-dispatches, builtin.module(turbine-cpu-tile-and-vectorize{reference=true}))' | FileCheck %s

#id = affine_map<(i, j) -> (i, j)>
// CHECK-NOT:     vector.
// CHECK-LABEL: func.func @matmul_Dx64x16_f32(
// CHECK-SAME:      turbine.workgroup_tiles = array<i64: 64, 64>
// CHECK:         scf.for
// CHECK:           scf.for
// CHECK:             linalg.matmul {{.*}} -> tensor<?x64xf32>
// CHECK-NOT:     vector.
// CHECK-LABEL: func.func @elementwise_DxD_f32(
// CHECK:         scf.for
// CHECK:           scf.for
// CHECK:             linalg.generic
// CHECK:               math.exp {{.*}} : f32
// CHECK-NOT:     vector.
func.func @main(%a: tensor<?x16xf32>, %b: tensor<16x64xf32>, %x: tensor<?x?xf32>) -> (tensor<?x64xf32>, tensor<?x?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %m = tensor.dim %a, %c0 : tensor<?x16xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty(%m) : tensor<?x64xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<?x64xf32>) -> tensor<?x64xf32>
  %mm = linalg.matmul ins(%a, %b : tensor<?x16xf32>, tensor<16x64xf32>) outs(%f : tensor<?x64xf32>) -> tensor<?x64xf32>
  %r = tensor.dim %x, %c0 : tensor<?x?xf32>
  %c = tensor.dim %x, %c1 : tensor<?x?xf32>
  %ex = tensor.empty(%r, %c) : tensor<?x?xf32>
  %exp = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<?x?xf32>) outs(%ex : tensor<?x?xf32>) {
  ^bb0(%v: f32, %o: f32):
    %s = math.exp %v : f32
    linalg.yield %s : f32
  } -> tensor<?x?xf32>
  return %mm, %exp : tensor<?x64xf32>, tensor<?x?xf32>
}
