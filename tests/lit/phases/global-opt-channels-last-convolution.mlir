// global-opt-channels-last-convolution.mlir - NCHW convolutions and pooling
// become NHWC ones: the constant filter is transposed at compile time (FCHW
// -> HWCF; a splat here), a fill accumulator is rebuilt in NHWC, and the transposes back to
// NCHW after the convolution and to NHWC before the pooling, with the ReLU
// between them, fuse into one identity-map NHWC generic: only the input and
// the final result change layout.

// RUN: %turbine compile %s --compile-to=global-opt | FileCheck %s

// CHECK-LABEL: func.func @main
// CHECK-SAME:    (%[[X:.*]]: tensor<1x3x8x8xf32>) -> tensor<1x4x3x3xf32>
// CHECK:         %[[XT:.*]] = linalg.generic {{.*}} ins(%[[X]] : tensor<1x3x8x8xf32>) outs(%{{.*}} : tensor<1x8x8x3xf32>)
// CHECK:         %[[ACC:.*]] = linalg.fill {{.*}} -> tensor<1x6x6x4xf32>
// CHECK:         %[[CONV:.*]] = linalg.conv_2d_nhwc_hwcf {{.*}} ins(%[[XT]], %{{.*}} : tensor<1x8x8x3xf32>, tensor<3x3x3x4xf32>) outs(%[[ACC]] : tensor<1x6x6x4xf32>)
// CHECK:         %[[RELU:.*]] = linalg.generic {{.*}} ins(%[[CONV]] : tensor<1x6x6x4xf32>) outs(%{{.*}} : tensor<1x6x6x4xf32>)
// CHECK:           arith.maximumf
// CHECK:         %[[POOL:.*]] = linalg.pooling_nhwc_max {{.*}} ins(%[[RELU]], %{{.*}} : tensor<1x6x6x4xf32>, tensor<2x2xf32>) outs(%{{.*}} : tensor<1x3x3x4xf32>)
// CHECK:         %[[OUT:.*]] = linalg.generic {{.*}} ins(%[[POOL]] : tensor<1x3x3x4xf32>) outs(%{{.*}} : tensor<1x4x3x3xf32>)
// CHECK:         return %[[OUT]]
// CHECK-NOT:     linalg.conv_2d_nchw_fchw
// CHECK-NOT:     linalg.pooling_nchw_max
func.func @main(%x: tensor<1x3x8x8xf32>) -> tensor<1x4x3x3xf32> {
  %w = arith.constant dense<0.5> : tensor<4x3x3x3xf32>
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %e = tensor.empty() : tensor<1x4x6x6xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32>
  %conv = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%x, %w : tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) outs(%acc : tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32>
  %re = tensor.empty() : tensor<1x4x6x6xf32>
  %relu = linalg.generic {indexing_maps = [affine_map<(a, b, c, d) -> (a, b, c, d)>, affine_map<(a, b, c, d) -> (a, b, c, d)>],
                          iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%conv : tensor<1x4x6x6xf32>) outs(%re : tensor<1x4x6x6xf32>) {
  ^bb0(%v: f32, %o: f32):
    %m = arith.maximumf %v, %zero : f32
    linalg.yield %m : f32
  } -> tensor<1x4x6x6xf32>
  %win = tensor.empty() : tensor<2x2xf32>
  %pe = tensor.empty() : tensor<1x4x3x3xf32>
  %pinit = linalg.fill ins(%ninf : f32) outs(%pe : tensor<1x4x3x3xf32>) -> tensor<1x4x3x3xf32>
  %pool = linalg.pooling_nchw_max {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
      ins(%relu, %win : tensor<1x4x6x6xf32>, tensor<2x2xf32>) outs(%pinit : tensor<1x4x3x3xf32>) -> tensor<1x4x3x3xf32>
  return %pool : tensor<1x4x3x3xf32>
}
