// codegen-matmul-dynamic-batch.mlir - the MLP layer with a dynamic batch is
// still vectorized: its kernel's k loop is llvm.intr.fmuladd on
// vector<32xf32>, and bias + ReLU are vector adds and maximums.
//
// (Rows past the last multiple of 8 go one at a time, vector code as well:
// codegen-small-matmul.mlir checks that path.)

// RUN: %turbine compile %s --target-cpu=skylake-avx512 --compile-to=codegen | FileCheck %s

// CHECK:       module @kernels attributes {turbine.kernels}
// CHECK:         llvm.func @matmul_Dx32x64_f32(%{{.*}}: !llvm.ptr, %{{.*}}: i64, %{{.*}}: i64, %{{.*}}: i64)
// CHECK-SAME:      turbine.kernel
// CHECK:           llvm.intr.fmuladd(%{{.*}}, %{{.*}}, %{{.*}}) : (vector<32xf32>, vector<32xf32>, vector<32xf32>) -> vector<32xf32>
// CHECK:           llvm.fadd %{{.*}}, %{{.*}} : vector<32xf32>
// CHECK:           llvm.intr.maximum(%{{.*}}, %{{.*}}) {fastmathFlags = #llvm.fastmath<nsz>} : (vector<32xf32>, vector<32xf32>) -> vector<32xf32>
// CHECK-NOT:     llvm.func @
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
