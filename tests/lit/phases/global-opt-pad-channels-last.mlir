// global-opt-pad-channels-last.mlir - a padded NCHW convolution input is
// padded after its transpose to NHWC (so the transpose can fuse with what
// produced the input), and global-opt lowers every tensor.pad to one
// gathering linalg.generic (clamped tensor.extract, select outside).

// RUN: %turbine compile %s --compile-to=global-opt | FileCheck %s

// CHECK-LABEL: func.func @main
// CHECK:         %[[XT:.*]] = linalg.generic {{.*}} ins(%{{.*}} : tensor<1x3x8x8xf32>) outs(%{{.*}} : tensor<1x8x8x3xf32>)
// CHECK:         %[[PAD:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<1x10x10x3xf32>)
// CHECK:           tensor.extract %[[XT]]
// CHECK:           arith.select
// CHECK:         linalg.conv_2d_nhwc_hwcf {{.*}} ins(%[[PAD]], %{{.*}} : tensor<1x10x10x3xf32>, tensor<3x3x3x4xf32>)
// CHECK-NOT:     tensor.pad
func.func @main(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x4x8x8xf32> {
  %zero = arith.constant 0.0 : f32
  %padded = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%a: index, %b: index, %c: index, %d: index):
    tensor.yield %zero : f32
  } : tensor<1x3x8x8xf32> to tensor<1x3x10x10xf32>
  %e = tensor.empty() : tensor<1x4x8x8xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
  %conv = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%padded, %w : tensor<1x3x10x10xf32>, tensor<4x3x3x3xf32>) outs(%acc : tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
  return %conv : tensor<1x4x8x8xf32>
}
