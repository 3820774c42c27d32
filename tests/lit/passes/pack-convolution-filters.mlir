// pack-convolution-filters.mlir - turbine-pack-convolution-filters: an NHWC
// convolution by a constant filter with 64 output channels reads the filter
// repacked [F/32][KH][KW][C][32] through a packed-convolution generic; F a
// multiple of 8 but not of 32 in tiles of its workgroups' channels (40 of
// 120, 16 of 48), F of one such tile (40) or not a multiple of 8 (116)
// stays HWCF.

// RUN: turbine-opt %s --turbine-pack-convolution-filters | FileCheck %s
// RUN: turbine-opt %s --turbine-pack-convolution-filters | FileCheck %s --check-prefix=GROUPED-MAPS

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

// A grouped NHWC convolution (turbine-convert-to-channels-last's form: 3
// groups of 8 input and 16 output channels) reads its filter per group,
// [G][KH][KW][Cg][Fg], through a grouped packed-convolution generic: input
// channel (f floordiv 16) * 8 + c, filter (f floordiv 16, kh, kw, c, f mod 16).
// GROUPED-MAPS:  affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1 + d4, d2 + d5, (d3 floordiv 16) * 8 + d6)>
// GROUPED-MAPS:  affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d3 floordiv 16, d4, d5, d6, d3 mod 16)>
// CHECK-LABEL: func.func @grouped
// CHECK:         %[[W:.*]] = arith.constant dense<{{.*}}> : tensor<3x3x3x8x16xf32>
// CHECK:         linalg.generic {indexing_maps = [#{{.*}}, #{{.*}}, #{{.*}}]
// CHECK-SAME:      ins(%{{.*}}, %[[W]] : tensor<1x10x10x24xf32>, tensor<3x3x3x8x16xf32>)
func.func @grouped(%x: tensor<1x10x10x24xf32>) -> tensor<1x8x8x48xf32> {
  %w = arith.constant dense<0.5> : tensor<3x3x8x48xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x8x8x48xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x8x8x48xf32>) -> tensor<1x8x8x48xf32>
  %c = linalg.generic {indexing_maps = [
      affine_map<(n, y, x, f, ky, kx, c) -> (n, y + ky, x + kx, (f floordiv 16) * 8 + c)>,
      affine_map<(n, y, x, f, ky, kx, c) -> (ky, kx, c, f)>,
      affine_map<(n, y, x, f, ky, kx, c) -> (n, y, x, f)>],
      iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]}
      ins(%x, %w : tensor<1x10x10x24xf32>, tensor<3x3x8x48xf32>) outs(%f : tensor<1x8x8x48xf32>) {
  ^bb0(%in: f32, %wv: f32, %out: f32):
    %p = arith.mulf %in, %wv : f32
    %s = arith.addf %out, %p : f32
    linalg.yield %s : f32
  } -> tensor<1x8x8x48xf32>
  return %c : tensor<1x8x8x48xf32>
}

// CHECK-LABEL: func.func @tiles_of_40
// CHECK:         arith.constant dense<{{.*}}> : tensor<3x1x1x8x40xf32>
// CHECK:         linalg.generic
// CHECK-SAME:      ins(%{{.*}}, %{{.*}} : tensor<1x5x5x8xf32>, tensor<3x1x1x8x40xf32>)
// CHECK-LABEL: func.func @tiles_of_16
// CHECK:         arith.constant dense<{{.*}}> : tensor<3x1x1x8x16xf32>
// CHECK-LABEL: func.func @one_tile
// CHECK:         linalg.conv_2d_nhwc_hwcf
// CHECK-LABEL: func.func @odd_channels
// CHECK:         linalg.conv_2d_nhwc_hwcf
func.func @tiles_of_40(%x: tensor<1x5x5x8xf32>) -> tensor<1x5x5x120xf32> {
  %w = arith.constant dense<0.25> : tensor<1x1x8x120xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x5x5x120xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x5x5x120xf32>) -> tensor<1x5x5x120xf32>
  %c = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%x, %w : tensor<1x5x5x8xf32>, tensor<1x1x8x120xf32>) outs(%f : tensor<1x5x5x120xf32>) -> tensor<1x5x5x120xf32>
  return %c : tensor<1x5x5x120xf32>
}
func.func @tiles_of_16(%x: tensor<1x5x5x8xf32>) -> tensor<1x5x5x48xf32> {
  %w = arith.constant dense<0.25> : tensor<1x1x8x48xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x5x5x48xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x5x5x48xf32>) -> tensor<1x5x5x48xf32>
  %c = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%x, %w : tensor<1x5x5x8xf32>, tensor<1x1x8x48xf32>) outs(%f : tensor<1x5x5x48xf32>) -> tensor<1x5x5x48xf32>
  return %c : tensor<1x5x5x48xf32>
}
func.func @one_tile(%x: tensor<1x5x5x8xf32>) -> tensor<1x5x5x40xf32> {
  %w = arith.constant dense<0.25> : tensor<1x1x8x40xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x5x5x40xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x5x5x40xf32>) -> tensor<1x5x5x40xf32>
  %c = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%x, %w : tensor<1x5x5x8xf32>, tensor<1x1x8x40xf32>) outs(%f : tensor<1x5x5x40xf32>) -> tensor<1x5x5x40xf32>
  return %c : tensor<1x5x5x40xf32>
}
func.func @odd_channels(%x: tensor<1x5x5x8xf32>) -> tensor<1x5x5x116xf32> {
  %w = arith.constant dense<0.25> : tensor<1x1x8x116xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x5x5x116xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x5x5x116xf32>) -> tensor<1x5x5x116xf32>
  %c = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%x, %w : tensor<1x5x5x8xf32>, tensor<1x1x8x116xf32>) outs(%f : tensor<1x5x5x116xf32>) -> tensor<1x5x5x116xf32>
  return %c : tensor<1x5x5x116xf32>
}
