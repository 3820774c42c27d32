// cuda-outline-kernels.mlir - turbine-cuda-outline-kernels: a bufferized
// kernel function becomes a gpu.func kernel whose parameters are the
// bindings' base pointers, the push constants and the three workgroup
// counts; the workgroup ids become global thread ids (z: the block id), the
// body is guarded by ids < counts, a binding becomes a dense row-major
// descriptor over its pointer parameter, and a body-less private
// declaration with the parameter counts stays in the container.

// RUN: turbine-opt %s --turbine-cuda-outline-kernels | FileCheck %s

// CHECK-LABEL: module @kernels
// CHECK:         func.func private @k(!llvm.ptr, index, index, index)
// CHECK-SAME:      turbine.cuda.bindings = 2 : i64
// CHECK-SAME:      turbine.cuda.constants = 1 : i64
// CHECK-SAME:      turbine.kernel
// CHECK:         gpu.module @turbine_cuda_kernels
// CHECK:           gpu.func @k(%[[B0:.*]]: !llvm.ptr, %[[B1:.*]]: !llvm.ptr, %[[C0:.*]]: i64, %[[NX:.*]]: i64, %[[NY:.*]]: i64, %[[NZ:.*]]: i64) kernel
// CHECK:             %[[BX:.*]] = gpu.block_id  x
// CHECK:             %[[DX:.*]] = gpu.block_dim  x
// CHECK:             %[[TX:.*]] = gpu.thread_id  x
// CHECK:             %[[M:.*]] = arith.muli %[[BX]], %[[DX]]
// CHECK:             %[[IX:.*]] = arith.addi %[[M]], %[[TX]]
// CHECK:             gpu.block_id  z
// CHECK:             %[[CX:.*]] = arith.index_cast %[[NX]] : i64 to index
// CHECK:             arith.cmpi ult, %[[IX]], %[[CX]]
// CHECK:             scf.if
// CHECK:               %[[N:.*]] = arith.index_cast %[[C0]] : i64 to index
// CHECK:               llvm.insertvalue %[[B0]]
// CHECK:               builtin.unrealized_conversion_cast %{{.*}} to memref<?x8xf32>
// CHECK:               llvm.insertvalue %[[B1]]
// CHECK:               memref.load
// CHECK:               memref.store %{{.*}}, %{{.*}}[%[[IX]], %{{.*}}]
// CHECK:             gpu.return
// CHECK-NOT:     turbine.binding
module @kernels attributes {turbine.kernels} {
  func.func @k(%state: !llvm.ptr, %x: index, %y: index, %z: index) attributes {turbine.kernel} {
    %n = turbine.push_constant %state[0]
    %in = turbine.binding %state[0] dims(%n) : memref<?x8xf32>
    %out = turbine.binding %state[1] dims(%n) : memref<?x8xf32>
    %c0 = arith.constant 0 : index
    %count = turbine.workgroup_count %state[0]
    %v = memref.load %in[%x, %c0] : memref<?x8xf32>
    memref.store %v, %out[%x, %c0] : memref<?x8xf32>
    return
  }
}
