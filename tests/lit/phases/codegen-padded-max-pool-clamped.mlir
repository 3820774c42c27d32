// codegen-padded-max-pool-clamped.mlir - a max pooling whose -inf pad joined
// its kernel (dispatch-pad-fused-into-pooling.mlir) reads the unpadded input
// at clamped indices (ClampedMaxPooling.cpp): no padded scratch tile
// (allocated per workgroup tile: the batch is dynamic), no select of the
// padding value; per output pixel and 32 channels, one contiguous load per
// window position (9), max-ed as a balanced tree (the -inf initial value
// folds away: maximum(x, -inf) = x) and stored once.

// RUN: %turbine compile %s --target-cpu=skylake-avx512 --compile-to=codegen | FileCheck %s

// CHECK:      llvm.func @maxpool_3x3s2_8x8x64_f32
// CHECK-NOT:    llvm.call @malloc
// CHECK-NOT:    llvm.select
// CHECK-COUNT-9: llvm.load %{{.*}} : !llvm.ptr -> vector<32xf32>
// CHECK-NOT:    llvm.select
// CHECK:        %[[A:.*]] = llvm.intr.maximum(%{{.*}}, %{{.*}}) {fastmathFlags = #llvm.fastmath<nsz>} : (vector<32xf32>, vector<32xf32>) -> vector<32xf32>
// CHECK:        %[[B:.*]] = llvm.intr.maximum(%{{.*}}, %{{.*}}) {fastmathFlags = #llvm.fastmath<nsz>} : (vector<32xf32>, vector<32xf32>) -> vector<32xf32>
// CHECK:        %[[C:.*]] = llvm.intr.maximum(%{{.*}}, %{{.*}}) {fastmathFlags = #llvm.fastmath<nsz>} : (vector<32xf32>, vector<32xf32>) -> vector<32xf32>
// CHECK:        %[[D:.*]] = llvm.intr.maximum(%{{.*}}, %{{.*}}) {fastmathFlags = #llvm.fastmath<nsz>} : (vector<32xf32>, vector<32xf32>) -> vector<32xf32>
// CHECK:        %[[E:.*]] = llvm.intr.maximum(%{{.*}}, %[[A]]) {fastmathFlags = #llvm.fastmath<nsz>} : (vector<32xf32>, vector<32xf32>) -> vector<32xf32>
// CHECK:        %[[F:.*]] = llvm.intr.maximum(%[[B]], %[[C]]) {fastmathFlags = #llvm.fastmath<nsz>} : (vector<32xf32>, vector<32xf32>) -> vector<32xf32>
// CHECK:        %[[G:.*]] = llvm.intr.maximum(%[[E]], %[[F]]) {fastmathFlags = #llvm.fastmath<nsz>} : (vector<32xf32>, vector<32xf32>) -> vector<32xf32>
// CHECK:        %[[H:.*]] = llvm.intr.maximum(%[[G]], %[[D]]) {fastmathFlags = #llvm.fastmath<nsz>} : (vector<32xf32>, vector<32xf32>) -> vector<32xf32>
// CHECK-NOT:    llvm.select
// CHECK:        llvm.store %[[H]], %{{.*}} : vector<32xf32>, !llvm.ptr
// CHECK-NOT:    llvm.select
// CHECK-NOT:    llvm.call @malloc
// CHECK:        llvm.return
func.func @main(%x: tensor<?x16x15x64xf32>) -> tensor<?x8x8x64xf32> {
  %ninf = arith.constant 0xFF800000 : f32
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x16x15x64xf32>
  // Top/left 1; the odd width's last window reads one padding column.
  %p = tensor.pad %x low[0, 1, 1, 0] high[0, 0, 1, 0] {
  ^bb0(%i0: index, %i1: index, %i2: index, %i3: index):
    tensor.yield %ninf : f32
  } : tensor<?x16x15x64xf32> to tensor<?x17x17x64xf32>
  %win = tensor.empty() : tensor<3x3xf32>
  %e = tensor.empty(%n) : tensor<?x8x8x64xf32>
  %init = linalg.fill ins(%ninf : f32) outs(%e : tensor<?x8x8x64xf32>) -> tensor<?x8x8x64xf32>
  %pool = linalg.pooling_nhwc_max {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
      ins(%p, %win : tensor<?x17x17x64xf32>, tensor<3x3xf32>) outs(%init : tensor<?x8x8x64xf32>) -> tensor<?x8x8x64xf32>
  return %pool : tensor<?x8x8x64xf32>
}
