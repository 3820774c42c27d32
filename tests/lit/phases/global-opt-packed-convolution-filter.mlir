// global-opt-packed-convolution-filter.mlir - constant NHWC convolution
// filters with more than 32 output channels (a multiple of 32) are repacked
// at compile time as [F/32][KH][KW][C][32] (ConvolutionFilterPacking.cpp):
// the convolution becomes a linalg.generic that reads the packed constant
// with (f floordiv 32, kh, kw, c, f mod 32); strides and dilations stay in
// the input map. The filter values themselves are checked by
// tests/unit/conv/ConvolutionStrategiesTest.cpp (large constants print
// elided). 32 output channels (already contiguous per tile) and run-time
// filters keep the named convolution.

// RUN: %turbine compile %s --compile-to=global-opt | FileCheck %s

// CHECK-DAG: #[[IN:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1 * 2 + d4 * 3, d2 * 2 + d5 * 3, d6)>
// CHECK-DAG: #[[FILTER:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d3 floordiv 32, d4, d5, d6, d3 mod 32)>
// CHECK-DAG: #[[OUT:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d3)>

// CHECK-LABEL: func.func @packed
// CHECK:         %[[P:.*]] = arith.constant dense{{.*}} : tensor<2x2x1x1x32xf32>
// CHECK:         linalg.generic {indexing_maps = [#[[IN]], #[[FILTER]], #[[OUT]]], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]}
// CHECK-SAME:      ins(%{{.*}}, %[[P]] : tensor<1x13x13x1xf32>, tensor<2x2x1x1x32xf32>) outs(%{{.*}} : tensor<1x4x4x64xf32>)
// CHECK:           arith.mulf
// CHECK:           arith.addf
// CHECK-NOT:     tensor<2x1x1x64xf32>
// CHECK-NOT:     linalg.conv_2d
func.func @packed(%x: tensor<1x1x13x13xf32>) -> tensor<1x64x4x4xf32> {
  %w = arith.constant dense<[[[[0.0], [100.0]]], [[[1.0], [101.0]]], [[[2.0], [102.0]]], [[[3.0], [103.0]]], [[[4.0], [104.0]]], [[[5.0], [105.0]]], [[[6.0], [106.0]]], [[[7.0], [107.0]]], [[[8.0], [108.0]]], [[[9.0], [109.0]]], [[[10.0], [110.0]]], [[[11.0], [111.0]]], [[[12.0], [112.0]]], [[[13.0], [113.0]]], [[[14.0], [114.0]]], [[[15.0], [115.0]]], [[[16.0], [116.0]]], [[[17.0], [117.0]]], [[[18.0], [118.0]]], [[[19.0], [119.0]]], [[[20.0], [120.0]]], [[[21.0], [121.0]]], [[[22.0], [122.0]]], [[[23.0], [123.0]]], [[[24.0], [124.0]]], [[[25.0], [125.0]]], [[[26.0], [126.0]]], [[[27.0], [127.0]]], [[[28.0], [128.0]]], [[[29.0], [129.0]]], [[[30.0], [130.0]]], [[[31.0], [131.0]]], [[[32.0], [132.0]]], [[[33.0], [133.0]]], [[[34.0], [134.0]]], [[[35.0], [135.0]]], [[[36.0], [136.0]]], [[[37.0], [137.0]]], [[[38.0], [138.0]]], [[[39.0], [139.0]]], [[[40.0], [140.0]]], [[[41.0], [141.0]]], [[[42.0], [142.0]]], [[[43.0], [143.0]]], [[[44.0], [144.0]]], [[[45.0], [145.0]]], [[[46.0], [146.0]]], [[[47.0], [147.0]]], [[[48.0], [148.0]]], [[[49.0], [149.0]]], [[[50.0], [150.0]]], [[[51.0], [151.0]]], [[[52.0], [152.0]]], [[[53.0], [153.0]]], [[[54.0], [154.0]]], [[[55.0], [155.0]]], [[[56.0], [156.0]]], [[[57.0], [157.0]]], [[[58.0], [158.0]]], [[[59.0], [159.0]]], [[[60.0], [160.0]]], [[[61.0], [161.0]]], [[[62.0], [162.0]]], [[[63.0], [163.0]]]]> : tensor<64x1x2x1xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x64x4x4xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<1x64x4x4xf32>) -> tensor<1x64x4x4xf32>
  %conv = linalg.conv_2d_nchw_fchw {dilations = dense<3> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
      ins(%x, %w : tensor<1x1x13x13xf32>, tensor<64x1x2x1xf32>) outs(%acc : tensor<1x64x4x4xf32>) -> tensor<1x64x4x4xf32>
  return %conv : tensor<1x64x4x4xf32>
}

// CHECK-LABEL: func.func @thirty_two_channels
// CHECK:         linalg.conv_2d_nhwc_hwcf {{.*}} ins(%{{.*}}, %{{.*}} : tensor<1x6x6x5xf32>, tensor<3x3x5x32xf32>)
func.func @thirty_two_channels(%x: tensor<1x5x6x6xf32>) -> tensor<1x32x4x4xf32> {
  %w = arith.constant dense<0.25> : tensor<32x5x3x3xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x32x4x4xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<1x32x4x4xf32>) -> tensor<1x32x4x4xf32>
  %conv = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%x, %w : tensor<1x5x6x6xf32>, tensor<32x5x3x3xf32>) outs(%acc : tensor<1x32x4x4xf32>) -> tensor<1x32x4x4xf32>
  return %conv : tensor<1x32x4x4xf32>
}

// CHECK-LABEL: func.func @runtime_filter
// CHECK:         linalg.conv_2d_nhwc_hwcf {{.*}} -> tensor<1x4x4x64xf32>
func.func @runtime_filter(%x: tensor<1x5x6x6xf32>, %w: tensor<64x5x3x3xf32>) -> tensor<1x64x4x4xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x64x4x4xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<1x64x4x4xf32>) -> tensor<1x64x4x4xf32>
  %conv = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%x, %w : tensor<1x5x6x6xf32>, tensor<64x5x3x3xf32>) outs(%acc : tensor<1x64x4x4xf32>) -> tensor<1x64x4x4xf32>
  return %conv : tensor<1x64x4x4xf32>
}
