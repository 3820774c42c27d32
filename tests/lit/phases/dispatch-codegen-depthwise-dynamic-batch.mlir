// dispatch-codegen-depthwise-dynamic-batch.mlir - NHWC depthwise and 1x1
// convolutions with a bias + ReLU epilogue and a dynamic batch, as every
// zoo model has. The depthwise convolution (channel-local) takes all 48
// channels per workgroup and walks channel tiles first (grid x = channels,
// y = width, z = height); the 1x1 convolution keeps grid x = width, channel
// tiles last (filter reuse). In both kernels the register tiles' fill and
// accumulator are tile-sized temporaries: stack allocations hoisted out of
// the tile loops (LLVM keeps them in registers), not a malloc per
// workgroup or per register tile.

// RUN: %turbine compile %s --compile-to=dispatch | FileCheck %s --check-prefix=DISPATCH
// RUN: %turbine compile %s --compile-to=codegen | FileCheck %s --check-prefix=CODEGEN

// DISPATCH: func.func @depthwise_conv2d_3x3s1_16x16x48_f32({{.*}}) attributes {turbine.kernel, turbine.workgroup_dims = array<i64: 3, 2, 1>, turbine.workgroup_tiles = array<i64: 0, 2, 16, 48>}
// DISPATCH: func.func @conv2d_1x1s1_16x16x48x40_f32({{.*}}) attributes {turbine.kernel, turbine.workgroup_dims = array<i64: 2, 1, 3>

// CODEGEN-NOT: @malloc
// CODEGEN:     llvm.func @depthwise_conv2d_3x3s1_16x16x48_f32(
// CODEGEN:       llvm.alloca
// CODEGEN:       llvm.intr.fmuladd
// CODEGEN:     llvm.func @conv2d_1x1s1_16x16x48x40_f32(
// CODEGEN:       llvm.alloca
// CODEGEN:       llvm.intr.fmuladd
// CODEGEN-NOT: @malloc
func.func @main(%x: tensor<?x18x18x48xf32>) -> tensor<?x16x16x40xf32> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x18x18x48xf32>
  %zero = arith.constant 0.0 : f32
  %wd = arith.constant dense<0.125> : tensor<3x3x48xf32>
  %bias = arith.constant dense<0.5> : tensor<48xf32>
  %e = tensor.empty(%n) : tensor<?x16x16x48xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<?x16x16x48xf32>) -> tensor<?x16x16x48xf32>
  %dw = linalg.depthwise_conv_2d_nhwc_hwc {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%x, %wd : tensor<?x18x18x48xf32>, tensor<3x3x48xf32>) outs(%acc : tensor<?x16x16x48xf32>) -> tensor<?x16x16x48xf32>
  %e2 = tensor.empty(%n) : tensor<?x16x16x48xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(a, b, c, d) -> (a, b, c, d)>, affine_map<(a, b, c, d) -> (d)>, affine_map<(a, b, c, d) -> (a, b, c, d)>],
                       iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%dw, %bias : tensor<?x16x16x48xf32>, tensor<48xf32>) outs(%e2 : tensor<?x16x16x48xf32>) {
  ^bb0(%v: f32, %b: f32, %o: f32):
    %s = arith.addf %v, %b : f32
    %r = arith.maximumf %s, %zero : f32
    linalg.yield %r : f32
  } -> tensor<?x16x16x48xf32>
  %wp = arith.constant dense<0.25> : tensor<1x1x48x40xf32>
  %bias2 = arith.constant dense<0.75> : tensor<40xf32>
  %e3 = tensor.empty(%n) : tensor<?x16x16x40xf32>
  %acc3 = linalg.fill ins(%zero : f32) outs(%e3 : tensor<?x16x16x40xf32>) -> tensor<?x16x16x40xf32>
  %pw = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%y, %wp : tensor<?x16x16x48xf32>, tensor<1x1x48x40xf32>) outs(%acc3 : tensor<?x16x16x40xf32>) -> tensor<?x16x16x40xf32>
  %e4 = tensor.empty(%n) : tensor<?x16x16x40xf32>
  %z = linalg.generic {indexing_maps = [affine_map<(a, b, c, d) -> (a, b, c, d)>, affine_map<(a, b, c, d) -> (d)>, affine_map<(a, b, c, d) -> (a, b, c, d)>],
                       iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%pw, %bias2 : tensor<?x16x16x40xf32>, tensor<40xf32>) outs(%e4 : tensor<?x16x16x40xf32>) {
  ^bb0(%v: f32, %b: f32, %o: f32):
    %s = arith.addf %v, %b : f32
    %r = arith.maximumf %s, %zero : f32
    linalg.yield %r : f32
  } -> tensor<?x16x16x40xf32>
  return %z : tensor<?x16x16x40xf32>
}
