// codegen-stem-static-batch.mlir - with a static batch of 1 the batch index
// of the stem's pad gathers folds to the constant 0 (and so does a single
// channel's); the row-wise NHWC input copy (ChannelsLastInputGather.cpp)
// and the clamped max pooling (ClampedMaxPooling.cpp) still apply:
// shuffles instead of 3-wide gathers in the first kernel, no padded
// scratch tile (no select of the padding) in the pooling's kernel.

// RUN: %turbine compile %s --target-cpu=skylake-avx512 --compile-to=codegen | FileCheck %s

// CHECK:      llvm.func @pad_1x22x39x3_f32
// CHECK-NOT:    llvm.intr.masked.gather
// CHECK:        llvm.load %{{.*}} : !llvm.ptr -> vector<16xf32>
// CHECK:        llvm.shufflevector
// CHECK:        llvm.store %{{.*}} : vector<16xf32>, !llvm.ptr
// CHECK-NOT:    llvm.intr.masked.gather
// CHECK:      llvm.func @conv2d_3x3s1_20x37x3x64_f32
// CHECK:        llvm.intr.fmuladd
// CHECK:      llvm.func @maxpool_3x3s2_10x19x64_f32
// CHECK-NOT:    llvm.select
// CHECK-NOT:    llvm.call @malloc
// CHECK-COUNT-9: llvm.load %{{.*}} : !llvm.ptr -> vector<32xf32>
// CHECK-NOT:    llvm.select
// CHECK:        llvm.intr.maximum
// CHECK-NOT:    llvm.select
// CHECK-NOT:    llvm.call @malloc
// CHECK:        llvm.return
func.func @main(%x: tensor<1x3x20x37xf32>, %w: tensor<64x3x3x3xf32>) -> tensor<1x64x10x19xf32> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %xp = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i0: index, %i1: index, %i2: index, %i3: index):
    tensor.yield %zero : f32
  } : tensor<1x3x20x37xf32> to tensor<1x3x22x39xf32>
  %e = tensor.empty() : tensor<1x64x20x37xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<1x64x20x37xf32>) -> tensor<1x64x20x37xf32>
  %conv = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%xp, %w : tensor<1x3x22x39xf32>, tensor<64x3x3x3xf32>) outs(%acc : tensor<1x64x20x37xf32>) -> tensor<1x64x20x37xf32>
  %yp = tensor.pad %conv low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i0: index, %i1: index, %i2: index, %i3: index):
    tensor.yield %ninf : f32
  } : tensor<1x64x20x37xf32> to tensor<1x64x22x39xf32>
  %win = tensor.empty() : tensor<3x3xf32>
  %pe = tensor.empty() : tensor<1x64x10x19xf32>
  %pinit = linalg.fill ins(%ninf : f32) outs(%pe : tensor<1x64x10x19xf32>) -> tensor<1x64x10x19xf32>
  %pool = linalg.pooling_nchw_max {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
      ins(%yp, %win : tensor<1x64x22x39xf32>, tensor<3x3xf32>) outs(%pinit : tensor<1x64x10x19xf32>) -> tensor<1x64x10x19xf32>
  return %pool : tensor<1x64x10x19xf32>
}
