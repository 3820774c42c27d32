// convert-to-channels-last.mlir - turbine-convert-to-channels-last: an NCHW
// convolution becomes an NHWC one between transposes (its filter HWCF).

// RUN: turbine-opt %s --turbine-convert-to-channels-last | FileCheck %s
// RUN: turbine-opt %s --turbine-convert-to-channels-last | FileCheck %s --check-prefix=GROUPED-MAPS

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

// A grouped convolution in the frontends' generic form (3 groups of 8 input
// and 16 output channels, stride 2) becomes a grouped NHWC generic that reads
// input channel (f floordiv 16) * 8 + c and the filter as [KH][KW][Cg][F],
// between transposes.
// GROUPED-MAPS:  affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1 * 2 + d4, d2 * 2 + d5, (d3 floordiv 16) * 8 + d6)>
// GROUPED-MAPS:  affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d4, d5, d6, d3)>
// CHECK-LABEL: func.func @grouped
// CHECK:         linalg.transpose ins(%{{.*}} : tensor<1x24x9x9xf32>) {{.*}} permutation = [0, 2, 3, 1]
// CHECK:         linalg.transpose ins(%{{.*}} : tensor<48x8x3x3xf32>) {{.*}} permutation = [2, 3, 1, 0]
// CHECK:         linalg.generic {indexing_maps = [#{{.*}}, #{{.*}}, #{{.*}}], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]}
// CHECK-SAME:      outs(%{{.*}} : tensor<1x4x4x48xf32>)
// CHECK:         linalg.transpose {{.*}} permutation = [0, 3, 1, 2]
func.func @grouped(%x: tensor<1x24x9x9xf32>, %w: tensor<48x8x3x3xf32>) -> tensor<1x48x4x4xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x48x4x4xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<1x48x4x4xf32>) -> tensor<1x48x4x4xf32>
  %c = linalg.generic {indexing_maps = [
      affine_map<(n, f, y, x, c, ky, kx) -> (n, (f floordiv 16) * 8 + c, y * 2 + ky, x * 2 + kx)>,
      affine_map<(n, f, y, x, c, ky, kx) -> (f, c, ky, kx)>,
      affine_map<(n, f, y, x, c, ky, kx) -> (n, f, y, x)>],
      iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]}
      ins(%x, %w : tensor<1x24x9x9xf32>, tensor<48x8x3x3xf32>) outs(%acc : tensor<1x48x4x4xf32>) {
  ^bb0(%in: f32, %wv: f32, %out: f32):
    %p = arith.mulf %in, %wv : f32
    %s = arith.addf %out, %p : f32
    linalg.yield %s : f32
  } -> tensor<1x48x4x4xf32>
  return %c : tensor<1x48x4x4xf32>
}
