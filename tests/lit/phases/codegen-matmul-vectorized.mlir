// codegen-matmul-vectorized.mlir - the matmul kernel is vector FMAs, with no
// scalar fallback, and everything in the kernel container is LLVM dialect.
//
// Static shapes (M = 16, a multiple of the 8-row register tile) leave no
// remainder loop, so not a single scalar f32 multiply or add may appear: the
// 8x32 register tile is 8 llvm.intr.fmuladd on vector<32xf32> per k step.
// The host function is untouched by codegen (still turbine.dispatch).

// RUN: %turbine compile %s --target-cpu=skylake-avx512 --compile-to=codegen | FileCheck %s

// CHECK-LABEL: func.func @main(
// CHECK:         turbine.dispatch @matmul_16x32x64_f32
// CHECK:       module @kernels attributes {turbine.kernels}
// CHECK-NOT:     {{^ *(func|scf|cf|vector|memref|linalg|arith|math|affine|tensor|bufferization|turbine)\.|= (scf|cf|vector|memref|linalg|arith|math|affine|tensor|bufferization|turbine)\.}}
// CHECK-NOT:     llvm.{{fmul|fadd}} {{.*}} : f32
// CHECK:         llvm.func @matmul_16x32x64_f32(%{{.*}}: !llvm.ptr, %{{.*}}: i64, %{{.*}}: i64, %{{.*}}: i64)
// CHECK-NOT:     llvm.{{fmul|fadd}} {{.*}} : f32
// CHECK-COUNT-8: llvm.intr.fmuladd(%{{.*}}, %{{.*}}, %{{.*}}) : (vector<32xf32>, vector<32xf32>, vector<32xf32>) -> vector<32xf32>
// CHECK-NOT:     {{^ *(func|scf|cf|vector|memref|linalg|arith|math|affine|tensor|bufferization|turbine)\.|= (scf|cf|vector|memref|linalg|arith|math|affine|tensor|bufferization|turbine)\.}}
// CHECK-NOT:     llvm.{{fmul|fadd}} {{.*}} : f32
func.func @main(%x: tensor<16x64xf32>, %w: tensor<64x32xf32>, %b: tensor<32xf32>) -> tensor<16x32xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<16x32xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<16x32xf32>) -> tensor<16x32xf32>
  %m = linalg.matmul ins(%x, %w : tensor<16x64xf32>, tensor<64x32xf32>) outs(%f : tensor<16x32xf32>) -> tensor<16x32xf32>
  %e2 = tensor.empty() : tensor<16x32xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i,j)->(i,j)>, affine_map<(i,j)->(j)>, affine_map<(i,j)->(i,j)>], iterator_types = ["parallel","parallel"]} ins(%m, %b : tensor<16x32xf32>, tensor<32xf32>) outs(%e2 : tensor<16x32xf32>) {
  ^bb0(%a: f32, %bb: f32, %o: f32):
    %s = arith.addf %a, %bb : f32
    %z = arith.maximumf %s, %zero : f32
    linalg.yield %z : f32
  } -> tensor<16x32xf32>
  return %r : tensor<16x32xf32>
}
