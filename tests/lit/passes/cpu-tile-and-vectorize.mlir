// cpu-tile-and-vectorize.mlir - turbine-cpu-tile-and-vectorize on the
// kernels dispatch formation made: the matmul kernel gets its workgroup
// tile loops (striding over the workgroups) and a register tile sized for
// the target CPU's vector registers (8x32 with AVX-512's 32 zmm, 6x16 with
// AVX2's 16 ymm; the rows left over 1x128 / 1x64) as a vector.contract whose
// accumulator is carried in registers across K; the elementwise kernel is
// vectorized with masks over 64 lanes.

// RUN: turbine-opt %s --pass-pipeline='builtin.module(turbine-form-dispatches, builtin.module(turbine-cpu-tile-and-vectorize{target-cpu=skylake-avx512}))' | FileCheck %s
// RUN: turbine-opt %s --pass-pipeline='builtin.module(turbine-form-dispatches, builtin.module(turbine-cpu-tile-and-vectorize{target-cpu=x86-64-v3}))' | FileCheck %s --check-prefix=AVX2

// AVX2-LABEL: func.func @matmul_Dx64x16_f32(
// AVX2:         vector.contract {{.*}} : vector<6x1xf32>, vector<1x16xf32> into vector<6x16xf32>
// AVX2:         vector.contract {{.*}} : vector<1x1xf32>, vector<1x64xf32> into vector<1x64xf32>
// AVX2-NOT:     vector<8x32xf32>
// AVX2-LABEL: func.func @elementwise_DxD_f32(

#id = affine_map<(i, j) -> (i, j)>
// CHECK-LABEL: func.func @matmul_Dx64x16_f32(
// CHECK:         scf.for
// CHECK:           vector.contract {{.*}} : vector<8x1xf32>, vector<1x32xf32> into vector<8x32xf32>
// CHECK-NOT:     linalg.matmul
// CHECK-LABEL: func.func @elementwise_DxD_f32(
// CHECK:         vector.create_mask
// CHECK:         vector.mask {{.*}} vector.transfer_read {{.*}} vector<1x64xf32>
// CHECK:         math.exp {{.*}} : vector<1x64xf32>
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
