// codegen-nchw-image-to-padded-nhwc.mlir - the zero-padded NHWC copy of a
// 3-channel NCHW image in front of the first (channels-last) convolution
// (a pad gather, LowerPads.cpp, reading the image transposed) is built row
// by row (ChannelsLastInputGather.cpp): per 16 interior pixels one
// contiguous 16-float load per channel along the image's width, selected
// against zero where the row is padding, interleaved to pixel-major order by
// shuffles and stored as 16-float vectors; the width's 5 pixels left over
// (37 = 2 * 16 + 5) as one 15-float piece; the padding columns as constant
// vectors. No 3-wide gathers.

// RUN: %turbine compile %s --compile-to=codegen | FileCheck %s

// CHECK:      llvm.func @pad_Dx22x39x3_f32
// CHECK-NOT:    llvm.intr.masked.gather
// CHECK:        llvm.store %{{.*}} : vector<3xf32>, !llvm.ptr
// CHECK:        llvm.store %{{.*}} : vector<3xf32>, !llvm.ptr
// CHECK:        %[[R:.*]] = llvm.load %{{.*}} : !llvm.ptr -> vector<16xf32>
// CHECK:        %[[RS:.*]] = llvm.select %{{.*}}, %[[R]], %{{.*}} : i1, vector<16xf32>
// CHECK:        %[[G:.*]] = llvm.load %{{.*}} : !llvm.ptr -> vector<16xf32>
// CHECK:        %[[GS:.*]] = llvm.select %{{.*}}, %[[G]], %{{.*}} : i1, vector<16xf32>
// CHECK:        %[[B:.*]] = llvm.load %{{.*}} : !llvm.ptr -> vector<16xf32>
// CHECK:        %[[BS:.*]] = llvm.select %{{.*}}, %[[B]], %{{.*}} : i1, vector<16xf32>
// CHECK:        %[[P0:.*]] = llvm.shufflevector %[[RS]], %[[RS]] [0, -1, -1, 1, -1, -1, 2, -1, -1, 3, -1, -1, 4, -1, -1, 5]
// CHECK:        %[[P1:.*]] = llvm.shufflevector %[[P0]], %[[GS]] [0, 16, 2, 3, 17, 5, 6, 18, 8, 9, 19, 11, 12, 20, 14, 15]
// CHECK:        %[[P2:.*]] = llvm.shufflevector %[[P1]], %[[BS]] [0, 1, 16, 3, 4, 17, 6, 7, 18, 9, 10, 19, 12, 13, 20, 15]
// CHECK:        llvm.store %[[P2]], %{{.*}} : vector<16xf32>, !llvm.ptr
// CHECK-COUNT-2: llvm.store %{{.*}} : vector<16xf32>, !llvm.ptr
// CHECK:        llvm.load %{{.*}} : !llvm.ptr -> vector<5xf32>
// CHECK:        llvm.store %{{.*}} : vector<15xf32>, !llvm.ptr
// CHECK-NOT:    llvm.intr.masked.gather
// CHECK:      llvm.func @transpose_3x3x3x16_f32
func.func @main(%x: tensor<?x3x20x37xf32>, %w: tensor<16x3x3x3xf32>) -> tensor<?x16x20x37xf32> {
  %zero = arith.constant 0.0 : f32
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x3x20x37xf32>
  %xp = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i0: index, %i1: index, %i2: index, %i3: index):
    tensor.yield %zero : f32
  } : tensor<?x3x20x37xf32> to tensor<?x3x22x39xf32>
  %e = tensor.empty(%n) : tensor<?x16x20x37xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<?x16x20x37xf32>) -> tensor<?x16x20x37xf32>
  %conv = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%xp, %w : tensor<?x3x22x39xf32>, tensor<16x3x3x3xf32>) outs(%acc : tensor<?x16x20x37xf32>) -> tensor<?x16x20x37xf32>
  return %conv : tensor<?x16x20x37xf32>
}
