// dispatch-pad-fused-into-pooling.mlir - the pad in front of an NHWC max
// pooling (a gathering generic made by LowerPads.cpp) joins the pooling's
// dispatch: one kernel reads the unpadded tensor and computes the padded
// window per workgroup tile. The pad in front of a full convolution is not a
// kernel either: the pooling writes its result into the interior of the
// zero-bordered tensor the convolution reads (PaddedResults.cpp; fused into
// the convolution, each output-channel tile recomputed the padded input of
// all channels: measured slower, DispatchFormation.cpp).

// RUN: %turbine compile %s --compile-to=dispatch | FileCheck %s
// RUN: %turbine compile %s --compile-to=codegen | FileCheck %s --check-prefix=CODEGEN

// The pooling's kernel writes its padded result in place and allocates
// nothing: no padded temporary (a whole 1x10x10x64 tensor) copied into the
// output binding, and no scratch tile for the fused -inf pad either (the
// pooling reads its source at clamped indices, ClampedMaxPooling.cpp).
// CODEGEN-LABEL: llvm.func @maxpool_3x3s2_8x8x64_f32(
// CODEGEN-NOT:     llvm.call @malloc
// CODEGEN-LABEL: llvm.func @conv2d_3x3s1_8x8x64x8_f32(

// CHECK-LABEL: func.func @main(
// CHECK-SAME:    %[[X:[^:]*]]: tensor<1x16x16x64xf32>
// CHECK:         %[[POOL:.*]] = turbine.dispatch @maxpool_3x3s2_8x8x64_f32{{.*}}(%[[X]]) : (tensor<1x16x16x64xf32>) -> tensor<1x10x10x64xf32>
// CHECK:         turbine.dispatch @conv2d_3x3s1_8x8x64x8_f32{{.*}}(%[[POOL]]{{.*}}) : (tensor<1x10x10x64xf32>
// CHECK-NOT:     turbine.dispatch

// CHECK:       module @kernels
// CHECK:         func.func @maxpool_3x3s2_8x8x64_f32(
// CHECK:           %[[IN:.*]] = bufferization.to_tensor {{.*}} : memref<1x16x16x64xf32> to tensor<1x16x16x64xf32>
// CHECK:           %[[PADDED:.*]] = linalg.generic {{.*}} outs({{.*}} : tensor<1x17x17x64xf32>)
// CHECK:             tensor.extract %[[IN]]
// CHECK:             arith.select
// CHECK:           %[[INTERIOR:.*]] = tensor.extract_slice {{.*}}[0, 1, 1, 0] [1, 8, 8, 64] [1, 1, 1, 1] : tensor<1x10x10x64xf32> to tensor<1x8x8x64xf32>
// CHECK:           %[[INIT:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%[[INTERIOR]] : tensor<1x8x8x64xf32>)
// CHECK:           %[[POOLED:.*]] = linalg.pooling_nhwc_max {{.*}} ins(%[[PADDED]], {{.*}} : tensor<1x17x17x64xf32>, tensor<3x3xf32>) outs(%[[INIT]]
// CHECK:           tensor.insert_slice %[[POOLED]] into {{.*}}[0, 1, 1, 0] [1, 8, 8, 64] [1, 1, 1, 1] {turbine.padded_result}
// CHECK:         func.func @conv2d_3x3s1_8x8x64x8_f32(
// CHECK-NOT:       tensor.extract
// CHECK:           linalg.conv_2d_nhwc_hwcf
func.func @main(%x: tensor<1x16x16x64xf32>, %w: tensor<3x3x64x8xf32>) -> tensor<1x8x8x8xf32> {
  %ninf = arith.constant 0xFF800000 : f32
  %zero = arith.constant 0.0 : f32
  // Asymmetric: top/left 1, bottom/right 0.
  %p = tensor.pad %x low[0, 1, 1, 0] high[0, 0, 0, 0] {
  ^bb0(%i0: index, %i1: index, %i2: index, %i3: index):
    tensor.yield %ninf : f32
  } : tensor<1x16x16x64xf32> to tensor<1x17x17x64xf32>
  %win = tensor.empty() : tensor<3x3xf32>
  %e = tensor.empty() : tensor<1x8x8x64xf32>
  %init = linalg.fill ins(%ninf : f32) outs(%e : tensor<1x8x8x64xf32>) -> tensor<1x8x8x64xf32>
  %pool = linalg.pooling_nhwc_max {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
      ins(%p, %win : tensor<1x17x17x64xf32>, tensor<3x3xf32>) outs(%init : tensor<1x8x8x64xf32>) -> tensor<1x8x8x64xf32>
  %q = tensor.pad %pool low[0, 1, 1, 0] high[0, 1, 1, 0] {
  ^bb0(%i0: index, %i1: index, %i2: index, %i3: index):
    tensor.yield %zero : f32
  } : tensor<1x8x8x64xf32> to tensor<1x10x10x64xf32>
  %ce = tensor.empty() : tensor<1x8x8x8xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%ce : tensor<1x8x8x8xf32>) -> tensor<1x8x8x8xf32>
  %conv = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%q, %w : tensor<1x10x10x64xf32>, tensor<3x3x64x8xf32>) outs(%acc : tensor<1x8x8x8xf32>) -> tensor<1x8x8x8xf32>
  return %conv : tensor<1x8x8x8xf32>
}
