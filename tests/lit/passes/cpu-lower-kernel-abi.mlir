// cpu-lower-kernel-abi.mlir - turbine-cpu-lower-kernel-abi: the kernel ABI
// ops become loads from turbine_dispatch_state_t (artifact/KernelABI.h):
// push constants from field 1, bindings' base pointers from field 0 (a
// dense row-major descriptor, dynamic sizes from the push constants), the
// workgroup count from field 2.

// RUN: turbine-opt %s --turbine-cpu-lower-kernel-abi | FileCheck %s

module @kernels attributes {turbine.kernels} {
  // CHECK-LABEL: func.func @k
  // CHECK-NOT:     turbine.
  // CHECK:         llvm.getelementptr %arg0[0, 1]
  // CHECK:         llvm.load
  // CHECK:         llvm.getelementptr %arg0[0, 0]
  // CHECK:         llvm.insertvalue
  // CHECK:         builtin.unrealized_conversion_cast %{{.*}} to memref<?x8xf32>
  // CHECK:         llvm.getelementptr %arg0[0, 2, 0]
  func.func @k(%state: !llvm.ptr, %x: index, %y: index, %z: index) -> index {
    %n = turbine.push_constant %state[0]
    %b = turbine.binding %state[0] dims(%n) : memref<?x8xf32>
    %c0 = arith.constant 0 : index
    %v = memref.load %b[%c0, %c0] : memref<?x8xf32>
    memref.store %v, %b[%x, %c0] : memref<?x8xf32>
    %count = turbine.workgroup_count %state[0]
    return %count : index
  }
}
