// codegen-conv-avx2-register-tiles.mlir - register tiles of convolutions
// on a 16-register CPU (ConvolutionCodegen.cpp, pixelSegments): on AVX2 a
// row of 14 output pixels has no divisor from 3 to 6, and its tiles of
// 7 x 8 or 2 x 7 x 8 spend a broadcast per FMA (Zen 3: broadcasts take FP
// pipes, ~0.67 of the FMA bound). The row is split: pixels [0, 12) in
// 6 x 16 tiles (12 accumulators, a broadcast per 2 FMAs), [12, 14) in
// tiles of 2 rows x 2 x 16, the two rows' 1-D convolutions in the same
// innermost reduction loop (splitRegisterTileRows). Input pixels a
// multiple of 4 KiB apart (1024 channels) fall in one L1 set, whose 8 ways
// hold no tile of more than 7 pixels: the same split (6 and 2 x 2). Only
// with 64 input channels or more (fewer keep the tiles whose pixels divide
// the row). With AVX-512's 32 registers one row holds 7 x 32 (14 zmm) and
// is not split.

// RUN: %turbine compile %s --target-cpu=x86-64-v3 --compile-to=codegen --mlir-print-ir-after=turbine-cpu-tile-and-vectorize 2>&1 >/dev/null | FileCheck %s --check-prefix=AVX2
// RUN: %turbine compile %s --target-cpu=skylake-avx512 --compile-to=codegen --mlir-print-ir-after=turbine-cpu-tile-and-vectorize 2>&1 >/dev/null | FileCheck %s --check-prefix=AVX512

// AVX2-LABEL: func.func @conv2d_3x3s1_14x14x64x64_f32(
// AVX2:         scf.for %{{.*}} = %c0 to %c12 step %c6
// AVX2:           vector.contract {{.*}} : vector<1x6x1xf32>, vector<1x16xf32> into vector<1x6x16xf32>
// AVX2-NOT:       vector.contract
// AVX2:         scf.for {{.*}} -> (tensor<1x2x2x16xf32>, {{.*}}, vector<1x2x16xf32>, vector<1x2x16xf32>)
// AVX2:           %[[ROW0:.*]] = vector.contract {{.*}} : vector<1x2x1xf32>, vector<1x16xf32> into vector<1x2x16xf32>
// AVX2:           %[[ROW1:.*]] = vector.contract {{.*}} : vector<1x2x1xf32>, vector<1x16xf32> into vector<1x2x16xf32>
// AVX2-NEXT:      scf.yield {{.*}}, %[[ROW0]], %[[ROW1]] :
// AVX2-NOT:     vector.contract
// AVX2:         return
// AVX512-LABEL: func.func @conv2d_3x3s1_14x14x64x64_f32(
// AVX512-NOT:     vector<1x6x16xf32>
// AVX512:         vector.contract {{.*}} : vector<1x7x1xf32>, vector<1x32xf32> into vector<1x7x32xf32>
// AVX512-NOT:     vector.contract
// AVX512:         return
// AVX512-LABEL: func.func @conv2d_1x1s1_14x14x1024x32_f32(
func.func @main(%x: tensor<1x16x16x64xf32>) -> tensor<1x14x14x64xf32> {
  %w = arith.constant dense<0.5> : tensor<3x3x64x64xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x14x14x64xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x14x14x64xf32>) -> tensor<1x14x14x64xf32>
  %c = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<1x16x16x64xf32>, tensor<3x3x64x64xf32>) outs(%f : tensor<1x14x14x64xf32>) -> tensor<1x14x14x64xf32>
  %e2 = tensor.empty() : tensor<1x14x14x64xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(n, h, w, c) -> (n, h, w, c)>, affine_map<(n, h, w, c) -> (n, h, w, c)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%c : tensor<1x14x14x64xf32>) outs(%e2 : tensor<1x14x14x64xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.maximumf %a, %zero : f32
    linalg.yield %m : f32
  } -> tensor<1x14x14x64xf32>
  return %r : tensor<1x14x14x64xf32>
}

// Input pixels 4 KiB apart (1024 channels) fall in one L1 set: tiles of at
// most 7 pixels.
// AVX2-LABEL: func.func @conv2d_1x1s1_14x14x1024x32_f32(
// AVX2:         vector.contract {{.*}} into vector<1x6x16xf32>
// AVX2-NOT:     vector.contract
// AVX2:         vector.contract {{.*}} into vector<1x2x16xf32>
// AVX2:         vector.contract {{.*}} into vector<1x2x16xf32>
// AVX2-NOT:     vector.contract
// AVX2:         return
func.func @wide(%x: tensor<1x14x14x1024xf32>) -> tensor<1x14x14x32xf32> {
  %w = arith.constant dense<0.5> : tensor<1x1x1024x32xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x14x14x32xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x14x14x32xf32>) -> tensor<1x14x14x32xf32>
  %c = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<1x14x14x1024xf32>, tensor<1x1x1024x32xf32>) outs(%f : tensor<1x14x14x32xf32>) -> tensor<1x14x14x32xf32>
  %e2 = tensor.empty() : tensor<1x14x14x32xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(n, h, w, c) -> (n, h, w, c)>, affine_map<(n, h, w, c) -> (n, h, w, c)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%c : tensor<1x14x14x32xf32>) outs(%e2 : tensor<1x14x14x32xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.maximumf %a, %zero : f32
    linalg.yield %m : f32
  } -> tensor<1x14x14x32xf32>
  return %r : tensor<1x14x14x32xf32>
}
