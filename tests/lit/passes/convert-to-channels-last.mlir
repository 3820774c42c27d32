// convert-to-channels-last.mlir - turbine-convert-to-channels-last: an NCHW
// convolution becomes an NHWC one between transposes (its filter HWCF).

// RUN: turbine-opt %s --turbine-convert-to-channels-last | FileCheck %s

// CHECK-LABEL: func.func @conv
// CHECK-NOT:     linalg.conv_2d_nchw_fchw
// CHECK:         linalg.conv_2d_nhwc_hwcf
// CHECK-SAME:      ins(%{{.*}}, %{{.*}} : tensor<1x8x8x3xf32>, tensor<3x3x3x16xf32>)
// CHECK-SAME:      -> tensor<1x6x6x16xf32>
// CHECK:         return %{{.*}} : tensor<1x16x6x6xf32>
func.func @conv(%x: tensor<1x3x8x8xf32>, %w: tensor<16x3x3x3xf32>) -> tensor<1x16x6x6xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x16x6x6xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x16x6x6xf32>) -> tensor<1x16x6x6xf32>
  %c = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%x, %w : tensor<1x3x8x8xf32>, tensor<16x3x3x3xf32>) outs(%f : tensor<1x16x6x6xf32>) -> tensor<1x16x6x6xf32>
  return %c : tensor<1x16x6x6xf32>
}
