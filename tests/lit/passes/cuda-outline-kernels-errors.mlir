// cuda-outline-kernels-errors.mlir - turbine-cuda-outline-kernels rejects
// what it cannot turn into a GPU kernel with an error naming it: a kernel
// that calls a function (there is no GPU version of the callee).

// RUN: not turbine-opt %s --turbine-cuda-outline-kernels 2>&1 | FileCheck %s

// CHECK: error: codegen (cuda): kernel calls 'helper', which has no GPU version
module @kernels attributes {turbine.kernels} {
  func.func private @helper(f32) -> f32
  func.func @k(%state: !llvm.ptr, %x: index, %y: index, %z: index) attributes {turbine.kernel} {
    %b = turbine.binding %state[0] : memref<8xf32>
    %v = memref.load %b[%x] : memref<8xf32>
    %r = func.call @helper(%v) : (f32) -> f32
    memref.store %r, %b[%x] : memref<8xf32>
    return
  }
}
