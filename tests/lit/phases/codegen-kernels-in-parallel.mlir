// codegen-kernels-in-parallel.mlir - the codegen phase on split kernel containers.
//
// The CPU target's codegen works per kernel (Target::codegenPerKernel), so the
// session deals the kernels round-robin to 16 containers, runs the pipeline on
// them in parallel and merges them back (session/Session.cpp). 17 distinct
// kernels (1x1 convolutions with 8..136 input channels, a dynamic batch): the
// first and the 17th share a container. After the phase there is one kernel
// container again, holding every kernel once, in dispatch order, lowered to
// LLVM; no other module is left.

// RUN: %turbine compile %s --compile-to=codegen | FileCheck %s

// CHECK:     func.func @main(
// CHECK:       turbine.dispatch @conv2d_1x1s1_4x4x8x32_f32[
// CHECK:       turbine.dispatch @conv2d_1x1s1_4x4x16x32_f32[
// CHECK:       turbine.dispatch @conv2d_1x1s1_4x4x24x32_f32[
// CHECK:       turbine.dispatch @conv2d_1x1s1_4x4x32x32_f32[
// CHECK:       turbine.dispatch @conv2d_1x1s1_4x4x40x32_f32[
// CHECK:       turbine.dispatch @conv2d_1x1s1_4x4x48x32_f32[
// CHECK:       turbine.dispatch @conv2d_1x1s1_4x4x56x32_f32[
// CHECK:       turbine.dispatch @conv2d_1x1s1_4x4x64x32_f32[
// CHECK:       turbine.dispatch @conv2d_1x1s1_4x4x72x32_f32[
// CHECK:       turbine.dispatch @conv2d_1x1s1_4x4x80x32_f32[
// CHECK:       turbine.dispatch @conv2d_1x1s1_4x4x88x32_f32[
// CHECK:       turbine.dispatch @conv2d_1x1s1_4x4x96x32_f32[
// CHECK:       turbine.dispatch @conv2d_1x1s1_4x4x104x32_f32[
// CHECK:       turbine.dispatch @conv2d_1x1s1_4x4x112x32_f32[
// CHECK:       turbine.dispatch @conv2d_1x1s1_4x4x120x32_f32[
// CHECK:       turbine.dispatch @conv2d_1x1s1_4x4x128x32_f32[
// CHECK:       turbine.dispatch @conv2d_1x1s1_4x4x136x32_f32[
// CHECK:     module @kernels attributes {turbine.kernels}
// CHECK-NOT: module
// CHECK:       llvm.func @conv2d_1x1s1_4x4x8x32_f32(
// CHECK-NOT:   module
// CHECK:       llvm.func @conv2d_1x1s1_4x4x16x32_f32(
// CHECK-NOT:   module
// CHECK:       llvm.func @conv2d_1x1s1_4x4x24x32_f32(
// CHECK-NOT:   module
// CHECK:       llvm.func @conv2d_1x1s1_4x4x32x32_f32(
// CHECK-NOT:   module
// CHECK:       llvm.func @conv2d_1x1s1_4x4x40x32_f32(
// CHECK-NOT:   module
// CHECK:       llvm.func @conv2d_1x1s1_4x4x48x32_f32(
// CHECK-NOT:   module
// CHECK:       llvm.func @conv2d_1x1s1_4x4x56x32_f32(
// CHECK-NOT:   module
// CHECK:       llvm.func @conv2d_1x1s1_4x4x64x32_f32(
// CHECK-NOT:   module
// CHECK:       llvm.func @conv2d_1x1s1_4x4x72x32_f32(
// CHECK-NOT:   module
// CHECK:       llvm.func @conv2d_1x1s1_4x4x80x32_f32(
// CHECK-NOT:   module
// CHECK:       llvm.func @conv2d_1x1s1_4x4x88x32_f32(
// CHECK-NOT:   module
// CHECK:       llvm.func @conv2d_1x1s1_4x4x96x32_f32(
// CHECK-NOT:   module
// CHECK:       llvm.func @conv2d_1x1s1_4x4x104x32_f32(
// CHECK-NOT:   module
// CHECK:       llvm.func @conv2d_1x1s1_4x4x112x32_f32(
// CHECK-NOT:   module
// CHECK:       llvm.func @conv2d_1x1s1_4x4x120x32_f32(
// CHECK-NOT:   module
// CHECK:       llvm.func @conv2d_1x1s1_4x4x128x32_f32(
// CHECK-NOT:   module
// CHECK:       llvm.func @conv2d_1x1s1_4x4x136x32_f32(
// CHECK-NOT:   module
// CHECK-NOT: llvm.func @conv2d
// CHECK-NOT: module
func.func @main(%x0: tensor<?x4x4x8xf32>, %w0: tensor<1x1x8x32xf32>, %x1: tensor<?x4x4x16xf32>, %w1: tensor<1x1x16x32xf32>, %x2: tensor<?x4x4x24xf32>, %w2: tensor<1x1x24x32xf32>, %x3: tensor<?x4x4x32xf32>, %w3: tensor<1x1x32x32xf32>, %x4: tensor<?x4x4x40xf32>, %w4: tensor<1x1x40x32xf32>, %x5: tensor<?x4x4x48xf32>, %w5: tensor<1x1x48x32xf32>, %x6: tensor<?x4x4x56xf32>, %w6: tensor<1x1x56x32xf32>, %x7: tensor<?x4x4x64xf32>, %w7: tensor<1x1x64x32xf32>, %x8: tensor<?x4x4x72xf32>, %w8: tensor<1x1x72x32xf32>, %x9: tensor<?x4x4x80xf32>, %w9: tensor<1x1x80x32xf32>, %x10: tensor<?x4x4x88xf32>, %w10: tensor<1x1x88x32xf32>, %x11: tensor<?x4x4x96xf32>, %w11: tensor<1x1x96x32xf32>, %x12: tensor<?x4x4x104xf32>, %w12: tensor<1x1x104x32xf32>, %x13: tensor<?x4x4x112xf32>, %w13: tensor<1x1x112x32xf32>, %x14: tensor<?x4x4x120xf32>, %w14: tensor<1x1x120x32xf32>, %x15: tensor<?x4x4x128xf32>, %w15: tensor<1x1x128x32xf32>, %x16: tensor<?x4x4x136xf32>, %w16: tensor<1x1x136x32xf32>) -> (tensor<?x4x4x32xf32>, tensor<?x4x4x32xf32>, tensor<?x4x4x32xf32>, tensor<?x4x4x32xf32>, tensor<?x4x4x32xf32>, tensor<?x4x4x32xf32>, tensor<?x4x4x32xf32>, tensor<?x4x4x32xf32>, tensor<?x4x4x32xf32>, tensor<?x4x4x32xf32>, tensor<?x4x4x32xf32>, tensor<?x4x4x32xf32>, tensor<?x4x4x32xf32>, tensor<?x4x4x32xf32>, tensor<?x4x4x32xf32>, tensor<?x4x4x32xf32>, tensor<?x4x4x32xf32>) {
  %zero = arith.constant 0.0 : f32
  %idx0 = arith.constant 0 : index
  %n = tensor.dim %x0, %idx0 : tensor<?x4x4x8xf32>
  %i0 = tensor.empty(%n) : tensor<?x4x4x32xf32>
  %f0 = linalg.fill ins(%zero : f32) outs(%i0 : tensor<?x4x4x32xf32>) -> tensor<?x4x4x32xf32>
  %c0 = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x0, %w0 : tensor<?x4x4x8xf32>, tensor<1x1x8x32xf32>) outs(%f0 : tensor<?x4x4x32xf32>) -> tensor<?x4x4x32xf32>
  %i1 = tensor.empty(%n) : tensor<?x4x4x32xf32>
  %f1 = linalg.fill ins(%zero : f32) outs(%i1 : tensor<?x4x4x32xf32>) -> tensor<?x4x4x32xf32>
  %c1 = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x1, %w1 : tensor<?x4x4x16xf32>, tensor<1x1x16x32xf32>) outs(%f1 : tensor<?x4x4x32xf32>) -> tensor<?x4x4x32xf32>
  %i2 = tensor.empty(%n) : tensor<?x4x4x32xf32>
  %f2 = linalg.fill ins(%zero : f32) outs(%i2 : tensor<?x4x4x32xf32>) -> tensor<?x4x4x32xf32>
  %c2 = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x2, %w2 : tensor<?x4x4x24xf32>, tensor<1x1x24x32xf32>) outs(%f2 : tensor<?x4x4x32xf32>) -> tensor<?x4x4x32xf32>
  %i3 = tensor.empty(%n) : tensor<?x4x4x32xf32>
  %f3 = linalg.fill ins(%zero : f32) outs(%i3 : tensor<?x4x4x32xf32>) -> tensor<?x4x4x32xf32>
  %c3 = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x3, %w3 : tensor<?x4x4x32xf32>, tensor<1x1x32x32xf32>) outs(%f3 : tensor<?x4x4x32xf32>) -> tensor<?x4x4x32xf32>
  %i4 = tensor.empty(%n) : tensor<?x4x4x32xf32>
  %f4 = linalg.fill ins(%zero : f32) outs(%i4 : tensor<?x4x4x32xf32>) -> tensor<?x4x4x32xf32>
  %c4 = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x4, %w4 : tensor<?x4x4x40xf32>, tensor<1x1x40x32xf32>) outs(%f4 : tensor<?x4x4x32xf32>) -> tensor<?x4x4x32xf32>
  %i5 = tensor.empty(%n) : tensor<?x4x4x32xf32>
  %f5 = linalg.fill ins(%zero : f32) outs(%i5 : tensor<?x4x4x32xf32>) -> tensor<?x4x4x32xf32>
  %c5 = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x5, %w5 : tensor<?x4x4x48xf32>, tensor<1x1x48x32xf32>) outs(%f5 : tensor<?x4x4x32xf32>) -> tensor<?x4x4x32xf32>
  %i6 = tensor.empty(%n) : tensor<?x4x4x32xf32>
  %f6 = linalg.fill ins(%zero : f32) outs(%i6 : tensor<?x4x4x32xf32>) -> tensor<?x4x4x32xf32>
  %c6 = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x6, %w6 : tensor<?x4x4x56xf32>, tensor<1x1x56x32xf32>) outs(%f6 : tensor<?x4x4x32xf32>) -> tensor<?x4x4x32xf32>
  %i7 = tensor.empty(%n) : tensor<?x4x4x32xf32>
  %f7 = linalg.fill ins(%zero : f32) outs(%i7 : tensor<?x4x4x32xf32>) -> tensor<?x4x4x32xf32>
  %c7 = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x7, %w7 : tensor<?x4x4x64xf32>, tensor<1x1x64x32xf32>) outs(%f7 : tensor<?x4x4x32xf32>) -> tensor<?x4x4x32xf32>
  %i8 = tensor.empty(%n) : tensor<?x4x4x32xf32>
  %f8 = linalg.fill ins(%zero : f32) outs(%i8 : tensor<?x4x4x32xf32>) -> tensor<?x4x4x32xf32>
  %c8 = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x8, %w8 : tensor<?x4x4x72xf32>, tensor<1x1x72x32xf32>) outs(%f8 : tensor<?x4x4x32xf32>) -> tensor<?x4x4x32xf32>
  %i9 = tensor.empty(%n) : tensor<?x4x4x32xf32>
  %f9 = linalg.fill ins(%zero : f32) outs(%i9 : tensor<?x4x4x32xf32>) -> tensor<?x4x4x32xf32>
  %c9 = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x9, %w9 : tensor<?x4x4x80xf32>, tensor<1x1x80x32xf32>) outs(%f9 : tensor<?x4x4x32xf32>) -> tensor<?x4x4x32xf32>
  %i10 = tensor.empty(%n) : tensor<?x4x4x32xf32>
  %f10 = linalg.fill ins(%zero : f32) outs(%i10 : tensor<?x4x4x32xf32>) -> tensor<?x4x4x32xf32>
  %c10 = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x10, %w10 : tensor<?x4x4x88xf32>, tensor<1x1x88x32xf32>) outs(%f10 : tensor<?x4x4x32xf32>) -> tensor<?x4x4x32xf32>
  %i11 = tensor.empty(%n) : tensor<?x4x4x32xf32>
  %f11 = linalg.fill ins(%zero : f32) outs(%i11 : tensor<?x4x4x32xf32>) -> tensor<?x4x4x32xf32>
  %c11 = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x11, %w11 : tensor<?x4x4x96xf32>, tensor<1x1x96x32xf32>) outs(%f11 : tensor<?x4x4x32xf32>) -> tensor<?x4x4x32xf32>
  %i12 = tensor.empty(%n) : tensor<?x4x4x32xf32>
  %f12 = linalg.fill ins(%zero : f32) outs(%i12 : tensor<?x4x4x32xf32>) -> tensor<?x4x4x32xf32>
  %c12 = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x12, %w12 : tensor<?x4x4x104xf32>, tensor<1x1x104x32xf32>) outs(%f12 : tensor<?x4x4x32xf32>) -> tensor<?x4x4x32xf32>
  %i13 = tensor.empty(%n) : tensor<?x4x4x32xf32>
  %f13 = linalg.fill ins(%zero : f32) outs(%i13 : tensor<?x4x4x32xf32>) -> tensor<?x4x4x32xf32>
  %c13 = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x13, %w13 : tensor<?x4x4x112xf32>, tensor<1x1x112x32xf32>) outs(%f13 : tensor<?x4x4x32xf32>) -> tensor<?x4x4x32xf32>
  %i14 = tensor.empty(%n) : tensor<?x4x4x32xf32>
  %f14 = linalg.fill ins(%zero : f32) outs(%i14 : tensor<?x4x4x32xf32>) -> tensor<?x4x4x32xf32>
  %c14 = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x14, %w14 : tensor<?x4x4x120xf32>, tensor<1x1x120x32xf32>) outs(%f14 : tensor<?x4x4x32xf32>) -> tensor<?x4x4x32xf32>
  %i15 = tensor.empty(%n) : tensor<?x4x4x32xf32>
  %f15 = linalg.fill ins(%zero : f32) outs(%i15 : tensor<?x4x4x32xf32>) -> tensor<?x4x4x32xf32>
  %c15 = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x15, %w15 : tensor<?x4x4x128xf32>, tensor<1x1x128x32xf32>) outs(%f15 : tensor<?x4x4x32xf32>) -> tensor<?x4x4x32xf32>
  %i16 = tensor.empty(%n) : tensor<?x4x4x32xf32>
  %f16 = linalg.fill ins(%zero : f32) outs(%i16 : tensor<?x4x4x32xf32>) -> tensor<?x4x4x32xf32>
  %c16 = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x16, %w16 : tensor<?x4x4x136xf32>, tensor<1x1x136x32xf32>) outs(%f16 : tensor<?x4x4x32xf32>) -> tensor<?x4x4x32xf32>
  return %c0, %c1, %c2, %c3, %c4, %c5, %c6, %c7, %c8, %c9, %c10, %c11, %c12, %c13, %c14, %c15, %c16 : tensor<?x4x4x32xf32>, tensor<?x4x4x32xf32>, tensor<?x4x4x32xf32>, tensor<?x4x4x32xf32>, tensor<?x4x4x32xf32>, tensor<?x4x4x32xf32>, tensor<?x4x4x32xf32>, tensor<?x4x4x32xf32>, tensor<?x4x4x32xf32>, tensor<?x4x4x32xf32>, tensor<?x4x4x32xf32>, tensor<?x4x4x32xf32>, tensor<?x4x4x32xf32>, tensor<?x4x4x32xf32>, tensor<?x4x4x32xf32>, tensor<?x4x4x32xf32>, tensor<?x4x4x32xf32>
}
