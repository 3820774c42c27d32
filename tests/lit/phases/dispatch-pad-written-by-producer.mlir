// dispatch-pad-written-by-producer.mlir - the zero pad in front of a full
// NHWC convolution is no kernel of its own (PaddedResults.cpp): the
// producer's dispatch (convolution + ReLU) returns the padded tensor, its
// border written by strip fills sized to nothing except in workgroup
// (0, 0, 0), its interior by the ReLU's tiles through an extract_slice of
// the output binding. The residual add of the next block reads the unpadded
// value as a view of that padded tensor, inside its own kernel. Dynamic
// batch: the sizes come in as push constants.

// RUN: %turbine compile %s --compile-to=dispatch | FileCheck %s

// CHECK-LABEL: func.func @main(
// CHECK:         %[[XP:.*]] = turbine.dispatch @pad_Dx10x10x32_f32{{.*}} -> tensor<?x10x10x32xf32>
// CHECK:         %[[YP:.*]] = turbine.dispatch @conv2d_3x3s1_8x8x32x32_f32{{.*}}(%[[XP]], {{.*}}) : (tensor<?x10x10x32xf32>, tensor<3x3x32x32xf32>) -> tensor<?x10x10x32xf32>
// CHECK:         turbine.dispatch @conv2d_3x3s1_8x8x32x32_f32_1{{.*}}(%[[YP]], {{.*}}) : (tensor<?x10x10x32xf32>, tensor<3x3x32x32xf32>) -> tensor<?x8x8x32xf32>
// CHECK-NOT:     turbine.dispatch

// CHECK:       module @kernels
// CHECK-LABEL:   func.func @conv2d_3x3s1_8x8x32x32_f32(
// CHECK-SAME:      %[[STATE:[^:]*]]: !llvm.ptr, %[[WX:[^:]*]]: index, %[[WY:[^:]*]]: index, %[[WZ:[^:]*]]: index)
// CHECK:           %[[OUT:.*]] = turbine.binding %[[STATE]][2] dims(%{{.*}}) : memref<?x10x10x32xf32>
// CHECK:           %[[CONV:.*]] = linalg.conv_2d_nhwc_hwcf
// CHECK-DAG:       arith.cmpi eq, %[[WX]]
// CHECK-DAG:       arith.cmpi eq, %[[WY]]
// CHECK-DAG:       arith.cmpi eq, %[[WZ]]
// CHECK:           %[[BORDER:.*]] = bufferization.to_tensor %[[OUT]] restrict writable
// CHECK-COUNT-4:   linalg.fill
// CHECK:           %[[INTERIOR:.*]] = tensor.extract_slice %{{.*}}[0, 1, 1, 0] [%{{.*}}, 8, 8, 32] [1, 1, 1, 1] : tensor<?x10x10x32xf32> to tensor<?x8x8x32xf32>
// CHECK:           %[[RELU:.*]] = linalg.generic {{.*}} ins(%[[CONV]] : tensor<?x8x8x32xf32>) outs(%[[INTERIOR]] : tensor<?x8x8x32xf32>)
// CHECK:           %[[PADDED:.*]] = tensor.insert_slice %[[RELU]] into %{{.*}}[0, 1, 1, 0] [%{{.*}}, 8, 8, 32] [1, 1, 1, 1] {turbine.padded_result}
// CHECK:           bufferization.materialize_in_destination %[[PADDED]] in restrict writable %[[OUT]]
// CHECK-LABEL:   func.func @conv2d_3x3s1_8x8x32x32_f32_1(
// CHECK-NOT:       tensor.extract %
// CHECK:           %[[IN:.*]] = bufferization.to_tensor %{{.*}} : memref<?x10x10x32xf32> to tensor<?x10x10x32xf32>
// CHECK:           %[[SKIP:.*]] = tensor.extract_slice %[[IN]][0, 1, 1, 0] [%{{.*}}, 8, 8, 32] [1, 1, 1, 1] {turbine.padded_interior}
// CHECK:           linalg.conv_2d_nhwc_hwcf {{.*}} ins(%[[IN]],
// CHECK:           linalg.generic {{.*}} ins(%{{.*}}, %[[SKIP]] : tensor<?x8x8x32xf32>, tensor<?x8x8x32xf32>)
func.func @main(%x: tensor<?x8x8x32xf32>, %w1: tensor<3x3x32x32xf32>, %w2: tensor<3x3x32x32xf32>) -> tensor<?x8x8x32xf32> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x8x8x32xf32>
  %zero = arith.constant 0.0 : f32
  %xp = tensor.pad %x low[0, 1, 1, 0] high[0, 1, 1, 0] {
  ^bb0(%i0: index, %i1: index, %i2: index, %i3: index):
    tensor.yield %zero : f32
  } : tensor<?x8x8x32xf32> to tensor<?x10x10x32xf32>
  %e = tensor.empty(%n) : tensor<?x8x8x32xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<?x8x8x32xf32>) -> tensor<?x8x8x32xf32>
  %c1 = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%xp, %w1 : tensor<?x10x10x32xf32>, tensor<3x3x32x32xf32>) outs(%acc : tensor<?x8x8x32xf32>) -> tensor<?x8x8x32xf32>
  %e1 = tensor.empty(%n) : tensor<?x8x8x32xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(a, b, c, d) -> (a, b, c, d)>, affine_map<(a, b, c, d) -> (a, b, c, d)>],
                       iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%c1 : tensor<?x8x8x32xf32>) outs(%e1 : tensor<?x8x8x32xf32>) {
  ^bb0(%v: f32, %o: f32):
    %r = arith.maximumf %v, %zero : f32
    linalg.yield %r : f32
  } -> tensor<?x8x8x32xf32>
  %yp = tensor.pad %y low[0, 1, 1, 0] high[0, 1, 1, 0] {
  ^bb0(%i0: index, %i1: index, %i2: index, %i3: index):
    tensor.yield %zero : f32
  } : tensor<?x8x8x32xf32> to tensor<?x10x10x32xf32>
  %c2 = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%yp, %w2 : tensor<?x10x10x32xf32>, tensor<3x3x32x32xf32>) outs(%acc : tensor<?x8x8x32xf32>) -> tensor<?x8x8x32xf32>
  %e2 = tensor.empty(%n) : tensor<?x8x8x32xf32>
  %out = linalg.generic {indexing_maps = [affine_map<(a, b, c, d) -> (a, b, c, d)>, affine_map<(a, b, c, d) -> (a, b, c, d)>, affine_map<(a, b, c, d) -> (a, b, c, d)>],
                         iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%c2, %y : tensor<?x8x8x32xf32>, tensor<?x8x8x32xf32>) outs(%e2 : tensor<?x8x8x32xf32>) {
  ^bb0(%v: f32, %s: f32, %o: f32):
    %t = arith.addf %v, %s : f32
    %r = arith.maximumf %t, %zero : f32
    linalg.yield %r : f32
  } -> tensor<?x8x8x32xf32>
  return %out : tensor<?x8x8x32xf32>
}
