// accumulate-in-f32.mlir - turbine-accumulate-in-f32: f16/bf16 contractions
// and convolutions sum in f32 and round once; f32 ones are left alone.

// RUN: turbine-opt %s --turbine-accumulate-in-f32 | FileCheck %s

// CHECK-LABEL: func.func @matmul_bf16
// CHECK:         %[[ZERO:.*]] = arith.extf %{{.*}} : bf16 to f32
// CHECK:         %[[FILL:.*]] = linalg.fill ins(%[[ZERO]] : f32) outs(%{{.*}} : tensor<4x32xf32>)
// CHECK:         %[[MM:.*]] = linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<4x64xbf16>, tensor<64x32xbf16>) outs(%[[FILL]] : tensor<4x32xf32>)
// CHECK:         linalg.generic {{.*}} ins(%[[MM]] : tensor<4x32xf32>) outs(%{{.*}} : tensor<4x32xbf16>)
// CHECK:           arith.truncf %{{.*}} : f32 to bf16
func.func @matmul_bf16(%a: tensor<4x64xbf16>, %b: tensor<64x32xbf16>) -> tensor<4x32xbf16> {
  %zero = arith.constant 0.0 : bf16
  %e = tensor.empty() : tensor<4x32xbf16>
  %f = linalg.fill ins(%zero : bf16) outs(%e : tensor<4x32xbf16>) -> tensor<4x32xbf16>
  %m = linalg.matmul ins(%a, %b : tensor<4x64xbf16>, tensor<64x32xbf16>) outs(%f : tensor<4x32xbf16>) -> tensor<4x32xbf16>
  return %m : tensor<4x32xbf16>
}

// An accumulator that is not a fill is extended element by element.
// CHECK-LABEL: func.func @batch_matmul_f16_accumulating
// CHECK:         %[[WIDE:.*]] = linalg.generic {{.*}} ins(%{{.*}} : tensor<2x4x8xf16>) outs(%{{.*}} : tensor<2x4x8xf32>)
// CHECK:           arith.extf %{{.*}} : f16 to f32
// CHECK:         %[[BMM:.*]] = linalg.batch_matmul {{.*}} outs(%[[WIDE]] : tensor<2x4x8xf32>)
// CHECK:         arith.truncf %{{.*}} : f32 to f16
func.func @batch_matmul_f16_accumulating(%a: tensor<2x4x16xf16>, %b: tensor<2x16x8xf16>,
                                         %c: tensor<2x4x8xf16>) -> tensor<2x4x8xf16> {
  %m = linalg.batch_matmul ins(%a, %b : tensor<2x4x16xf16>, tensor<2x16x8xf16>) outs(%c : tensor<2x4x8xf16>) -> tensor<2x4x8xf16>
  return %m : tensor<2x4x8xf16>
}

// Convolutions keep their strides and dilations.
// CHECK-LABEL: func.func @conv_bf16
// CHECK:         linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>} ins({{.*}} : tensor<1x9x9x3xbf16>, tensor<3x3x3x8xbf16>) outs(%{{.*}} : tensor<1x4x4x8xf32>)
// CHECK:         arith.truncf
func.func @conv_bf16(%x: tensor<1x9x9x3xbf16>, %w: tensor<3x3x3x8xbf16>) -> tensor<1x4x4x8xbf16> {
  %zero = arith.constant 0.0 : bf16
  %e = tensor.empty() : tensor<1x4x4x8xbf16>
  %f = linalg.fill ins(%zero : bf16) outs(%e : tensor<1x4x4x8xbf16>) -> tensor<1x4x4x8xbf16>
  %c = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
         ins(%x, %w : tensor<1x9x9x3xbf16>, tensor<3x3x3x8xbf16>) outs(%f : tensor<1x4x4x8xbf16>) -> tensor<1x4x4x8xbf16>
  return %c : tensor<1x4x4x8xbf16>
}

// f32 (and mixed f32 inputs) stay as they are.
// CHECK-LABEL: func.func @matmul_f32
// CHECK-NOT:     arith.truncf
// CHECK:         linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<4x64xf32>, tensor<64x32xf32>) outs(%{{.*}} : tensor<4x32xf32>)
// CHECK-NOT:     arith.truncf
func.func @matmul_f32(%a: tensor<4x64xf32>, %b: tensor<64x32xf32>, %c: tensor<4x32xf32>) -> tensor<4x32xf32> {
  %m = linalg.matmul ins(%a, %b : tensor<4x64xf32>, tensor<64x32xf32>) outs(%c : tensor<4x32xf32>) -> tensor<4x32xf32>
  return %m : tensor<4x32xf32>
}
