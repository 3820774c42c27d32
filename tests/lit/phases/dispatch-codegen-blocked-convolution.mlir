// dispatch-codegen-blocked-convolution.mlir - a packed convolution with a
// large filter slice per 32 output channels (3x3 x 240 channels x 32 = 270
// KiB) and a small output image (7x7) takes the blocked-reduction path
// (ConvolutionReductionBlocking.h): its workgroup tile is the whole image of
// one 32-channel tile, and codegen tiles the reduction into blocks of 60
// input channels (240's largest divisor up to 64), prefetching the next
// block's 60 x 32 filter values ahead of each filter read (the kernel's
// turbine.filter_prefetch). The FMAs stay 32-wide register tiles. A slice
// under 256 KiB (the second function's 224 channels) keeps the one-row
// workgroup tiles. The filters are splats, so that this file stays small:
// their reads fold into constants, so no prefetch instruction is left here;
// ConvolutionStrategiesTest checks those on real filters.

// RUN: %turbine compile %s --target-cpu=skylake-avx512 --compile-to=dispatch | FileCheck %s --check-prefix=DISPATCH
// RUN: %turbine compile %s --target-cpu=skylake-avx512 --compile-to=codegen | FileCheck %s --check-prefix=CODEGEN

// DISPATCH:     func.func @conv2d_3x3s1_7x7x240x64_f32({{.*}}) attributes {turbine.kernel, turbine.workgroup_dims = array<i64: 2, 1, 3>, turbine.workgroup_tiles = array<i64: 0, 7, 7, 32>}
// DISPATCH:       arith.constant dense<2.500000e-01> : tensor<2x3x3x240x32xf32>
// DISPATCH:       linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]
// DISPATCH:       arith.maximumf
// DISPATCH:     func.func @conv2d_3x3s1_7x7x224x64_f32({{.*}}) attributes {turbine.kernel, turbine.workgroup_dims = array<i64: 2, 1, 3>, turbine.workgroup_tiles = array<i64: 0, 1, 7, 32>}
// DISPATCH:       arith.constant dense<2.500000e-01> : tensor<2x3x3x224x32xf32>

// CODEGEN:      llvm.func @conv2d_3x3s1_7x7x240x64_f32({{.*}}) attributes {turbine.filter_prefetch = 1920 : i64
// CODEGEN:        llvm.intr.fmuladd({{.*}}) : (vector<32xf32>, vector<32xf32>, vector<32xf32>) -> vector<32xf32>
// CODEGEN-NOT:  turbine.filter_prefetch
// CODEGEN:      llvm.func @conv2d_3x3s1_7x7x224x64_f32
// CODEGEN-NOT:    turbine.filter_prefetch
// CODEGEN:        llvm.intr.fmuladd({{.*}}) : (vector<32xf32>, vector<32xf32>, vector<32xf32>) -> vector<32xf32>
func.func @main(%x: tensor<1x9x9x240xf32>) -> tensor<1x7x7x64xf32> {
  %w = arith.constant dense<0.25> : tensor<3x3x240x64xf32>
  %bias = arith.constant dense<0.5> : tensor<64xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x7x7x64xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<1x7x7x64xf32>) -> tensor<1x7x7x64xf32>
  %conv = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%x, %w : tensor<1x9x9x240xf32>, tensor<3x3x240x64xf32>) outs(%acc : tensor<1x7x7x64xf32>) -> tensor<1x7x7x64xf32>
  %e2 = tensor.empty() : tensor<1x7x7x64xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(a, b, c, d) -> (a, b, c, d)>, affine_map<(a, b, c, d) -> (d)>, affine_map<(a, b, c, d) -> (a, b, c, d)>],
                       iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%conv, %bias : tensor<1x7x7x64xf32>, tensor<64xf32>) outs(%e2 : tensor<1x7x7x64xf32>) {
  ^bb0(%v: f32, %b: f32, %o: f32):
    %s = arith.addf %v, %b : f32
    %r = arith.maximumf %s, %zero : f32
    linalg.yield %r : f32
  } -> tensor<1x7x7x64xf32>
  return %y : tensor<1x7x7x64xf32>
}

func.func @small(%x: tensor<1x9x9x224xf32>) -> tensor<1x7x7x64xf32> {
  %w = arith.constant dense<0.25> : tensor<3x3x224x64xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x7x7x64xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<1x7x7x64xf32>) -> tensor<1x7x7x64xf32>
  %conv = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%x, %w : tensor<1x9x9x224xf32>, tensor<3x3x224x64xf32>) outs(%acc : tensor<1x7x7x64xf32>) -> tensor<1x7x7x64xf32>
  return %conv : tensor<1x7x7x64xf32>
}
