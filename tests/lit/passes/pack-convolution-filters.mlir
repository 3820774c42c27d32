// pack-convolution-filters.mlir - turbine-pack-convolution-filters: an NHWC
// convolution by a constant filter with 64 output channels reads the filter
// repacked [F/32][KH][KW][C][32] through a packed-convolution generic.

// RUN: turbine-opt %s --turbine-pack-convolution-filters | FileCheck %s

// CHECK-LABEL: func.func @conv
// CHECK:         arith.constant dense<{{.*}}> : tensor<2x3x3x8x32xf32>
// CHECK-NOT:     linalg.conv_2d_nhwc_hwcf
// CHECK:         linalg.generic
// CHECK-SAME:      ins(%{{.*}}, %{{.*}} : tensor<1x10x10x8xf32>, tensor<2x3x3x8x32xf32>)
func.func @conv(%x: tensor<1x10x10x8xf32>) -> tensor<1x8x8x64xf32> {
  %w = arith.constant dense<0.25> : tensor<3x3x8x64xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x8x8x64xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x8x8x64xf32>) -> tensor<1x8x8x64xf32>
  %c = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%x, %w : tensor<1x10x10x8xf32>, tensor<3x3x8x64xf32>) outs(%f : tensor<1x8x8x64xf32>) -> tensor<1x8x8x64xf32>
  return %c : tensor<1x8x8x64xf32>
}
