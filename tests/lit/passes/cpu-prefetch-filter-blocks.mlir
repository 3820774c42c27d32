// cpu-prefetch-filter-blocks.mlir - turbine-cpu-prefetch-filter-blocks: in
// a kernel marked turbine.filter_prefetch, each vector read of a packed
// filter ([F/32][KH][KW][C][32] f32, here through a subview) gets prefetches
// of the filter lines that many elements ahead, clamped to the filter's
// last element; other reads and unmarked kernels get none.

// RUN: turbine-opt %s --turbine-cpu-prefetch-filter-blocks | FileCheck %s

module @kernels attributes {turbine.kernels} {
  // CHECK-LABEL: func.func @marked
  // CHECK:         %[[LAST:.*]] = arith.constant 36863 : index
  // CHECK:         arith.minui %{{.*}}, %[[LAST]] : index
  // CHECK:         memref.prefetch %{{.*}}[%{{.*}}], read, locality<3>, data : memref<36864xf32>
  // CHECK:         vector.transfer_read %{{.*}} : memref<1x1x1x64x32xf32, strided<{{.*}}>>, vector<32xf32>
  func.func @marked(%state: !llvm.ptr, %x: index, %y: index, %z: index) attributes {turbine.filter_prefetch = 4096 : i64} {
    %f = turbine.binding %state[0] : memref<2x3x3x64x32xf32>
    %c0 = arith.constant 0 : index
    %pad = arith.constant 0.0 : f32
    %s = memref.subview %f[%x, 1, 1, 0, 0] [1, 1, 1, 64, 32] [1, 1, 1, 1, 1]
        : memref<2x3x3x64x32xf32> to memref<1x1x1x64x32xf32, strided<[18432, 6144, 2048, 32, 1], offset: ?>>
    %v = vector.transfer_read %s[%c0, %c0, %c0, %y, %c0], %pad {in_bounds = [true]}
        : memref<1x1x1x64x32xf32, strided<[18432, 6144, 2048, 32, 1], offset: ?>>, vector<32xf32>
    vector.transfer_write %v, %f[%c0, %c0, %c0, %c0, %c0] {in_bounds = [true]} : vector<32xf32>, memref<2x3x3x64x32xf32>
    return
  }
  // CHECK-LABEL: func.func @unmarked
  // CHECK-NOT:     memref.prefetch
  func.func @unmarked(%state: !llvm.ptr, %x: index, %y: index, %z: index) {
    %f = turbine.binding %state[0] : memref<2x3x3x64x32xf32>
    %c0 = arith.constant 0 : index
    %pad = arith.constant 0.0 : f32
    %v = vector.transfer_read %f[%c0, %c0, %c0, %c0, %c0], %pad {in_bounds = [true]} : memref<2x3x3x64x32xf32>, vector<32xf32>
    vector.transfer_write %v, %f[%c0, %c0, %c0, %c0, %c0] {in_bounds = [true]} : vector<32xf32>, memref<2x3x3x64x32xf32>
    return
  }
}
