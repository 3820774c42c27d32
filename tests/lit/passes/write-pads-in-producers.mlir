// write-pads-in-producers.mlir - turbine-write-pads-in-producers: the pad
// gather in front of a full convolution is replaced by its producer's
// result inserted into a zero-filled padded tensor (marked
// turbine.padded_result, to join the producer's dispatch); a pad that only
// feeds a max pooling stays (it joins the pooling's kernel).

// RUN: turbine-opt %s --turbine-lower-pads --canonicalize --turbine-write-pads-in-producers | FileCheck %s

#id = affine_map<(n, h, w, c) -> (n, h, w, c)>
// CHECK-LABEL: func.func @main
// CHECK:         %[[RELU:.*]] = linalg.generic
// CHECK:           arith.maximumf
// CHECK:         %[[FILL:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<1x10x10x8xf32>)
// CHECK:         tensor.insert_slice %[[RELU]] into %[[FILL]][0, 1, 1, 0] [1, 8, 8, 8] [1, 1, 1, 1] {turbine.padded_result}
// CHECK:         linalg.conv_2d_nhwc_hwcf
func.func @main(%x: tensor<1x8x8x8xf32>, %w: tensor<3x3x8x8xf32>) -> tensor<1x8x8x8xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x8x8x8xf32>
  %relu = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%x : tensor<1x8x8x8xf32>) outs(%e : tensor<1x8x8x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.maximumf %a, %zero : f32
    linalg.yield %r : f32
  } -> tensor<1x8x8x8xf32>
  %p = tensor.pad %relu low[0, 1, 1, 0] high[0, 1, 1, 0] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %zero : f32
  } : tensor<1x8x8x8xf32> to tensor<1x10x10x8xf32>
  %eo = tensor.empty() : tensor<1x8x8x8xf32>
  %fo = linalg.fill ins(%zero : f32) outs(%eo : tensor<1x8x8x8xf32>) -> tensor<1x8x8x8xf32>
  %c = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%p, %w : tensor<1x10x10x8xf32>, tensor<3x3x8x8xf32>) outs(%fo : tensor<1x8x8x8xf32>) -> tensor<1x8x8x8xf32>
  return %c : tensor<1x8x8x8xf32>
}
