// cpu-bf16-matmul.mlir - bf16 matmul register tiles by CPU features
// (targets/cpu/Bf16MatmulCodegen.cpp, CpuFeatures.h): compiled for a CPU
// with AVX512-BF16 (znver4, cooperlake) a matmul of bf16 operands into an
// f32 accumulator gets 8 x 32 tiles over the whole K tile written with
// x86vector.avx512.dot (vdpbf16ps): B rows interleaved in pairs by 16-bit
// shuffles, A pairs broadcast as i32; an odd K gets one step paired with
// zeros; a static remainder of rows (M = 13: 8 + 5) a 5-row tile; a static
// single row (GEMV) keeps the f32 tiles. For a CPU without it
// (skylake-avx512, x86-64-v3, no target-cpu) the f32 strategy's register
// tiles (RegisterTiles: 8x32x1 for AVX-512's 32 zmm, 6x16x1 for AVX2's 16
// ymm, 6x8x1 for SSE's 16 xmm) as vector.contract on bf16 operands
// (extended to f32 when lowered) and no x86vector op appear.

// RUN: turbine-opt %s --split-input-file --pass-pipeline='builtin.module(turbine-data-tile-matmuls, turbine-form-dispatches, builtin.module(turbine-cpu-tile-and-vectorize{target-cpu=znver4}))' | FileCheck %s --check-prefix=BF16
// RUN: turbine-opt %s --split-input-file --pass-pipeline='builtin.module(turbine-data-tile-matmuls, turbine-form-dispatches, builtin.module(turbine-cpu-tile-and-vectorize{target-cpu=cooperlake}))' | FileCheck %s --check-prefix=BF16
// RUN: turbine-opt %s --split-input-file --pass-pipeline='builtin.module(turbine-data-tile-matmuls, turbine-form-dispatches, builtin.module(turbine-cpu-tile-and-vectorize{target-cpu=skylake-avx512}))' | FileCheck %s --check-prefixes=F32,F32-AVX512
// RUN: turbine-opt %s --split-input-file --pass-pipeline='builtin.module(turbine-data-tile-matmuls, turbine-form-dispatches, builtin.module(turbine-cpu-tile-and-vectorize{target-cpu=x86-64-v3}))' | FileCheck %s --check-prefixes=F32,F32-AVX2
// RUN: turbine-opt %s --split-input-file --pass-pipeline='builtin.module(turbine-data-tile-matmuls, turbine-form-dispatches, builtin.module(turbine-cpu-tile-and-vectorize))' | FileCheck %s --check-prefixes=F32,F32-SSE

// BF16-LABEL: func.func @matmul_13x64x65
// BF16:         scf.for
// BF16:           vector.shuffle {{.*}} : vector<32xi16>, vector<32xi16>
// BF16:           vector.broadcast {{.*}} : vector<1xi32> to vector<16xi32>
// BF16:           x86vector.avx512.dot {{.*}} : vector<32xbf16> -> vector<16xf32>
// BF16:         tensor.extract {{.*}}[%c0, %c64] : tensor<8x65xbf16>
// BF16:           vector.from_elements
// BF16:           x86vector.avx512.dot
// BF16-NOT:     vector.contract
// F32-LABEL:   func.func @matmul_13x64x65
// F32-NOT:       x86vector
// F32-AVX512:    vector.contract {{.*}} : vector<8x1xbf16>, vector<1x1x32xbf16> into vector<8x1x32xf32>
// F32-AVX2:      vector.contract {{.*}} : vector<6x1xbf16>, vector<1x1x16xbf16> into vector<6x1x16xf32>
// F32-SSE:       vector.contract {{.*}} : vector<6x1xbf16>, vector<1x1x8xbf16> into vector<6x1x8xf32>
// F32-NOT:       x86vector
func.func @prefill(%a: tensor<13x65xbf16>) -> tensor<13x64xf32> {
  %b = arith.constant dense<0.375> : tensor<65x64xbf16>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<13x64xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<13x64xf32>) -> tensor<13x64xf32>
  %mm = linalg.matmul ins(%a, %b : tensor<13x65xbf16>, tensor<65x64xbf16>) outs(%f : tensor<13x64xf32>) -> tensor<13x64xf32>
  return %mm : tensor<13x64xf32>
}

// -----

// A single row: the f32 tiles on every CPU.
// BF16-LABEL: func.func @matmul_1x64x64
// BF16-NOT:     x86vector
// BF16:         vector.contract {{.*}} : vector<1x1xbf16>, vector<1x1x32xbf16> into vector<1x1x32xf32>
// BF16-NOT:     x86vector
// F32-LABEL:  func.func @matmul_1x64x64
// F32-NOT:      x86vector
func.func @gemv(%a: tensor<1x64xbf16>) -> tensor<1x64xf32> {
  %b = arith.constant dense<0.375> : tensor<64x64xbf16>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x64xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x64xf32>) -> tensor<1x64xf32>
  %mm = linalg.matmul ins(%a, %b : tensor<1x64xbf16>, tensor<64x64xbf16>) outs(%f : tensor<1x64xf32>) -> tensor<1x64xf32>
  return %mm : tensor<1x64xf32>
}
