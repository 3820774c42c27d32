// global-opt-depthwise-gather-channels-last.mlir - a depthwise convolution
// in the frontends' grouped-generic form (one channel per group) becomes an
// NHWC linalg.depthwise_conv_2d_nhwc_hwc with its filter as [KH][KW][C]; the
// pad in front of it, already a gather (as the TorchScript frontend emits
// pads), and the ReLU6 before that move to NHWC too: the gather's indices
// are permuted and it reads the ReLU6's NHWC result (into which the input's
// transpose fused), so only the graph's input and output change layout.

// RUN: %turbine compile %s --compile-to=global-opt | FileCheck %s

// CHECK-LABEL: func.func @main
// CHECK-SAME:    (%[[X:.*]]: tensor<1x16x10x10xf32>)
// CHECK:         %[[RELU6:.*]] = linalg.generic {{.*}} ins(%[[X]] : tensor<1x16x10x10xf32>) outs(%{{.*}} : tensor<1x10x10x16xf32>)
// CHECK:           arith.minimumf
// CHECK:         %[[PAD:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<1x12x12x16xf32>)
// CHECK:           tensor.extract %[[RELU6]][{{.*}}] : tensor<1x10x10x16xf32>
// CHECK:         %[[DW:.*]] = linalg.depthwise_conv_2d_nhwc_hwc {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>} ins(%[[PAD]], %{{.*}} : tensor<1x12x12x16xf32>, tensor<3x3x16xf32>) outs(%{{.*}} : tensor<1x5x5x16xf32>)
// CHECK:         %[[OUT:.*]] = linalg.generic {{.*}} ins(%[[DW]] : tensor<1x5x5x16xf32>) outs(%{{.*}} : tensor<1x16x5x5xf32>)
// CHECK:         return %[[OUT]]
#id = affine_map<(n, c, h, w) -> (n, c, h, w)>
func.func @main(%x: tensor<1x16x10x10xf32>) -> tensor<1x16x5x5xf32> {
  %zero = arith.constant 0.0 : f32
  %six = arith.constant 6.0 : f32
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c9 = arith.constant 9 : index
  %c10 = arith.constant 10 : index
  %w = arith.constant dense<[[[[-0.75, -0.5, -0.25], [0.0, 0.25, 0.5], [0.75, -0.75, -0.5]]], [[[0.5, 0.75, -0.75], [-0.5, -0.25, 0.0], [0.25, 0.5, 0.75]]], [[[0.0, 0.25, 0.5], [0.75, -0.75, -0.5], [-0.25, 0.0, 0.25]]], [[[-0.5, -0.25, 0.0], [0.25, 0.5, 0.75], [-0.75, -0.5, -0.25]]], [[[0.75, -0.75, -0.5], [-0.25, 0.0, 0.25], [0.5, 0.75, -0.75]]], [[[0.25, 0.5, 0.75], [-0.75, -0.5, -0.25], [0.0, 0.25, 0.5]]], [[[-0.25, 0.0, 0.25], [0.5, 0.75, -0.75], [-0.5, -0.25, 0.0]]], [[[-0.75, -0.5, -0.25], [0.0, 0.25, 0.5], [0.75, -0.75, -0.5]]], [[[0.5, 0.75, -0.75], [-0.5, -0.25, 0.0], [0.25, 0.5, 0.75]]], [[[0.0, 0.25, 0.5], [0.75, -0.75, -0.5], [-0.25, 0.0, 0.25]]], [[[-0.5, -0.25, 0.0], [0.25, 0.5, 0.75], [-0.75, -0.5, -0.25]]], [[[0.75, -0.75, -0.5], [-0.25, 0.0, 0.25], [0.5, 0.75, -0.75]]], [[[0.25, 0.5, 0.75], [-0.75, -0.5, -0.25], [0.0, 0.25, 0.5]]], [[[-0.25, 0.0, 0.25], [0.5, 0.75, -0.75], [-0.5, -0.25, 0.0]]], [[[-0.75, -0.5, -0.25], [0.0, 0.25, 0.5], [0.75, -0.75, -0.5]]], [[[0.5, 0.75, -0.75], [-0.5, -0.25, 0.0], [0.25, 0.5, 0.75]]]]> : tensor<16x1x3x3xf32>
  %e = tensor.empty() : tensor<1x16x10x10xf32>
  %relu6 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%x : tensor<1x16x10x10xf32>) outs(%e : tensor<1x16x10x10xf32>) {
  ^bb0(%in: f32, %out: f32):
    %a = arith.maximumf %in, %zero : f32
    %b = arith.minimumf %a, %six : f32
    linalg.yield %b : f32
  } -> tensor<1x16x10x10xf32>
  %pe = tensor.empty() : tensor<1x16x12x12xf32>
  %pad = linalg.generic {indexing_maps = [#id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      outs(%pe : tensor<1x16x12x12xf32>) {
  ^bb0(%out: f32):
    %ci = linalg.index 1 : index
    %hi = linalg.index 2 : index
    %h = arith.subi %hi, %c1 : index
    %h0 = arith.cmpi sge, %h, %c0 : index
    %h1 = arith.cmpi slt, %h, %c10 : index
    %hin = arith.andi %h0, %h1 : i1
    %hc0 = arith.maxsi %h, %c0 : index
    %hc = arith.minsi %hc0, %c9 : index
    %wi = linalg.index 3 : index
    %ww = arith.subi %wi, %c1 : index
    %w0 = arith.cmpi sge, %ww, %c0 : index
    %w1 = arith.cmpi slt, %ww, %c10 : index
    %win = arith.andi %w0, %w1 : i1
    %in = arith.andi %hin, %win : i1
    %wc0 = arith.maxsi %ww, %c0 : index
    %wc = arith.minsi %wc0, %c9 : index
    %v = tensor.extract %relu6[%c0, %ci, %hc, %wc] : tensor<1x16x10x10xf32>
    %s = arith.select %in, %v, %zero : f32
    linalg.yield %s : f32
  } -> tensor<1x16x12x12xf32>
  %ae = tensor.empty() : tensor<1x16x5x5xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%ae : tensor<1x16x5x5xf32>) -> tensor<1x16x5x5xf32>
  %dw = linalg.generic {indexing_maps = [affine_map<(n, c, y, x, g, ky, kx) -> (n, c + g, y * 2 + ky, x * 2 + kx)>,
                                         affine_map<(n, c, y, x, g, ky, kx) -> (c, g, ky, kx)>,
                                         affine_map<(n, c, y, x, g, ky, kx) -> (n, c, y, x)>],
                        iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]}
      ins(%pad, %w : tensor<1x16x12x12xf32>, tensor<16x1x3x3xf32>) outs(%acc : tensor<1x16x5x5xf32>) {
  ^bb0(%in: f32, %wv: f32, %out: f32):
    %p = arith.mulf %in, %wv : f32
    %q = arith.addf %out, %p : f32
    linalg.yield %q : f32
  } -> tensor<1x16x5x5xf32>
  return %dw : tensor<1x16x5x5xf32>
}
