// dispatch-codegen-conv-channel-segments.mlir - NHWC convolutions whose
// output channels F are a multiple of 8 but not of 16: each workgroup takes
// several channel tiles (40 of SqueezeNet-like 1000, whose constant filter
// is packed in tiles of 40; 40), which codegen splits into channel
// segments, 32-wide register tiles (zmm pairs) for the multiples of 32 and
// 8-wide for the rest, instead of 8-wide tiles for all of them. The 1x1
// convolution has no epilogue (its accumulator is the result) and 13-pixel
// rows; the 3x3 one a bias + ReLU epilogue on its register tiles and
// 11-pixel rows. With AVX2, a 16-channel tile of such rows would hold one
// pixel (13 and 11 have no divisor from 2 to 6): the segments take 8
// channels by 13 pixels; the 11-pixel rows of the 32-channel segment are
// split into pixel segments of 6 and 5 (16-channel tiles of 12 and 10
// accumulators, ConvolutionCodegen.cpp's pixelSegments), the 8-channel
// segment 11 x 8. Dynamic batch.

// RUN: %turbine compile %s --target-cpu=skylake-avx512 --compile-to=dispatch | FileCheck %s --check-prefix=DISPATCH
// RUN: %turbine compile %s --target-cpu=skylake-avx512 --compile-to=codegen | FileCheck %s --check-prefix=CODEGEN
// RUN: %turbine compile %s --target-cpu=znver3 --compile-to=codegen | FileCheck %s --check-prefix=AVX2

// DISPATCH: func.func @conv2d_1x1s1_13x13x64x1000_f32({{.*}}) attributes {turbine.kernel, turbine.workgroup_dims = array<i64: 2, 1, 3>, turbine.workgroup_tiles = array<i64: 0, 1, 13, 40>}
// DISPATCH: func.func @conv2d_3x3s1_11x11x1000x40_f32({{.*}}) attributes {turbine.kernel, turbine.workgroup_dims = array<i64: 2, 1, 3>, turbine.workgroup_tiles = array<i64: 0, 1, 11, 40>}

// CODEGEN-NOT: @malloc
// CODEGEN:     llvm.func @conv2d_1x1s1_13x13x64x1000_f32(
// CODEGEN:       llvm.intr.fmuladd({{.*}}) : (vector<32xf32>, vector<32xf32>, vector<32xf32>) -> vector<32xf32>
// CODEGEN:       llvm.intr.fmuladd({{.*}}) : (vector<8xf32>, vector<8xf32>, vector<8xf32>) -> vector<8xf32>
// CODEGEN:     llvm.func @conv2d_3x3s1_11x11x1000x40_f32(
// CODEGEN:       llvm.intr.fmuladd({{.*}}) : (vector<32xf32>, vector<32xf32>, vector<32xf32>) -> vector<32xf32>
// CODEGEN:       llvm.intr.fmuladd({{.*}}) : (vector<8xf32>, vector<8xf32>, vector<8xf32>) -> vector<8xf32>
// CODEGEN-NOT: @malloc

// AVX2-NOT: @malloc
// AVX2:     llvm.func @conv2d_1x1s1_13x13x64x1000_f32(
// AVX2-NOT:   vector<16xf32>
// AVX2:       llvm.intr.fmuladd({{.*}}) : (vector<8xf32>, vector<8xf32>, vector<8xf32>) -> vector<8xf32>
// AVX2-NOT:   vector<16xf32>
// AVX2:     llvm.func @conv2d_3x3s1_11x11x1000x40_f32(
// AVX2:       llvm.intr.fmuladd({{.*}}) : (vector<16xf32>, vector<16xf32>, vector<16xf32>) -> vector<16xf32>
// AVX2:       llvm.intr.fmuladd({{.*}}) : (vector<8xf32>, vector<8xf32>, vector<8xf32>) -> vector<8xf32>
// AVX2-NOT: @malloc
func.func @main(%x: tensor<?x13x13x64xf32>) -> tensor<?x11x11x40xf32> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x13x13x64xf32>
  %zero = arith.constant 0.0 : f32
  %w1 = arith.constant dense<0.125> : tensor<1x1x64x1000xf32>
  %e = tensor.empty(%n) : tensor<?x13x13x1000xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<?x13x13x1000xf32>) -> tensor<?x13x13x1000xf32>
  %y = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%x, %w1 : tensor<?x13x13x64xf32>, tensor<1x1x64x1000xf32>) outs(%acc : tensor<?x13x13x1000xf32>) -> tensor<?x13x13x1000xf32>
  %w2 = arith.constant dense<0.25> : tensor<3x3x1000x40xf32>
  %bias = arith.constant dense<0.75> : tensor<40xf32>
  %e2 = tensor.empty(%n) : tensor<?x11x11x40xf32>
  %acc2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<?x11x11x40xf32>) -> tensor<?x11x11x40xf32>
  %c = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%y, %w2 : tensor<?x13x13x1000xf32>, tensor<3x3x1000x40xf32>) outs(%acc2 : tensor<?x11x11x40xf32>) -> tensor<?x11x11x40xf32>
  %e3 = tensor.empty(%n) : tensor<?x11x11x40xf32>
  %z = linalg.generic {indexing_maps = [affine_map<(a, b, c, d) -> (a, b, c, d)>, affine_map<(a, b, c, d) -> (d)>, affine_map<(a, b, c, d) -> (a, b, c, d)>],
                       iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%c, %bias : tensor<?x11x11x40xf32>, tensor<40xf32>) outs(%e3 : tensor<?x11x11x40xf32>) {
  ^bb0(%v: f32, %b: f32, %o: f32):
    %s = arith.addf %v, %b : f32
    %r = arith.maximumf %s, %zero : f32
    linalg.yield %r : f32
  } -> tensor<?x11x11x40xf32>
  return %z : tensor<?x11x11x40xf32>
}
