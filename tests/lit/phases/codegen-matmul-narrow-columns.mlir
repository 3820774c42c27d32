// codegen-matmul-narrow-columns.mlir - a matmul with fewer columns than a
// register tile's, not a whole number of vector registers (a classifier's
// 10 outputs): on a 16-register CPU (AVX2) its 6-row tiles take one
// register of columns and the rest, 6 x 8 and 6 x 2 (MatmulCodegen.cpp,
// tileMatmulRows), not one 6 x 10 tile whose 10-lane vectors LLVM splits
// into shuffles; with AVX-512 the 10 columns fit one zmm: 8 x 10.

// RUN: %turbine compile %s --target-cpu=x86-64-v3 --compile-to=codegen --mlir-print-ir-after=turbine-cpu-tile-and-vectorize 2>&1 >/dev/null | FileCheck %s --check-prefix=AVX2
// RUN: %turbine compile %s --target-cpu=skylake-avx512 --compile-to=codegen --mlir-print-ir-after=turbine-cpu-tile-and-vectorize 2>&1 >/dev/null | FileCheck %s --check-prefix=AVX512

// AVX2-LABEL: func.func @matmul_12x10x512_f32(
// AVX2:         vector.contract {{.*}} : vector<6x1xf32>, vector<1x8xf32> into vector<6x8xf32>
// AVX2:         vector.contract {{.*}} : vector<6x1xf32>, vector<1x2xf32> into vector<6x2xf32>
// AVX2-NOT:     xf32> into vector<6x10xf32>
// AVX512-LABEL: func.func @matmul_12x10x512_f32(
// AVX512:       vector.contract {{.*}} : vector<8x1xf32>, vector<1x10xf32> into vector<8x10xf32>
func.func @main(%a: tensor<12x512xf32>) -> tensor<12x10xf32> {
  %b = arith.constant dense<0.5> : tensor<512x10xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<12x10xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<12x10xf32>) -> tensor<12x10xf32>
  %m = linalg.matmul ins(%a, %b : tensor<12x512xf32>, tensor<512x10xf32>) outs(%f : tensor<12x10xf32>) -> tensor<12x10xf32>
  return %m : tensor<12x10xf32>
}
