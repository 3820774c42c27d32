// codegen-small-matmul.mlir - a matmul with a dynamic batch and N = 1000
// (not a multiple of 32: never packed) is vector code on every path
// (KernelCodegen.cpp tileMatmul): rows left over after the 8-row tiles (all
// of them at batch 1: a GEMV) go one at a time with a 1x128x1 tile
// (llvm.intr.fmuladd on vector<128xf32>, 8 zmm), the columns past the last
// 128 by 32, and the last partial tile (1000 = 7 * 128 + 3 * 32 + 8) and the
// partial rows with masks over a power-of-two tile (masked loads of
// vector<32xf32>, never a 31-wide vector). Not one scalar f32 multiply or
// add is left.

// RUN: %turbine compile %s --target-cpu=skylake-avx512 --compile-to=codegen | FileCheck %s

// CHECK:       module @kernels attributes {turbine.kernels}
// CHECK:         llvm.func @matmul_Dx1000x64_f32(%{{.*}}: !llvm.ptr, %{{.*}}: i64, %{{.*}}: i64, %{{.*}}: i64)
// CHECK-NOT:     llvm.{{fmul|fadd}} {{.*}} : f32
// CHECK-NOT:     vector<31xf32>
// CHECK-DAG:     llvm.intr.fmuladd(%{{.*}}, %{{.*}}, %{{.*}}) : (vector<128xf32>, vector<128xf32>, vector<128xf32>) -> vector<128xf32>
// CHECK-DAG:     llvm.intr.fmuladd(%{{.*}}, %{{.*}}, %{{.*}}) : (vector<32xf32>, vector<32xf32>, vector<32xf32>) -> vector<32xf32>
// CHECK-DAG:     llvm.intr.masked.load %{{.*}}, %{{.*}}, %{{.*}} {alignment = 4 : i32} : (!llvm.ptr, vector<32xi1>, vector<32xf32>) -> vector<32xf32>
// CHECK-NOT:     llvm.{{fmul|fadd}} {{.*}} : f32
// CHECK-NOT:     vector<31xf32>
// CHECK-NOT:     llvm.func @
func.func @main(%x: tensor<?x64xf32>, %w: tensor<64x1000xf32>) -> tensor<?x1000xf32> {
  %c0 = arith.constant 0 : index
  %d0 = tensor.dim %x, %c0 : tensor<?x64xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty(%d0) : tensor<?x1000xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<?x1000xf32>) -> tensor<?x1000xf32>
  %m = linalg.matmul ins(%x, %w : tensor<?x64xf32>, tensor<64x1000xf32>) outs(%f : tensor<?x1000xf32>) -> tensor<?x1000xf32>
  return %m : tensor<?x1000xf32>
}
