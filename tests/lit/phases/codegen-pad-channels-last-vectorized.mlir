// codegen-pad-channels-last-vectorized.mlir - the pad in front of an NHWC
// convolution (a gathering generic made by LowerPads.cpp) is vectorized over
// the channels: one contiguous 64-float load of the clamped source row, a
// select against the padding value and one 64-float store per output pixel,
// instead of a scalar loop.

// RUN: %turbine compile %s --compile-to=codegen | FileCheck %s

// CHECK:      llvm.func @pad_1x58x58x64_f32
// CHECK:        %[[ROW:.*]] = llvm.load %{{.*}} : !llvm.ptr -> vector<64xf32>
// CHECK:        %[[SEL:.*]] = llvm.select %{{.*}}, %[[ROW]], %{{.*}} : vector<64xi1>, vector<64xf32>
// CHECK:        llvm.store %[[SEL]], %{{.*}} : vector<64xf32>, !llvm.ptr
func.func @main(%x: tensor<1x56x56x64xf32>) -> tensor<1x58x58x64xf32> {
  %zero = arith.constant 0.0 : f32
  %p = tensor.pad %x low[0, 1, 1, 0] high[0, 1, 1, 0] {
  ^bb0(%i0: index, %i1: index, %i2: index, %i3: index):
    tensor.yield %zero : f32
  } : tensor<1x56x56x64xf32> to tensor<1x58x58x64xf32>
  return %p : tensor<1x58x58x64xf32>
}
