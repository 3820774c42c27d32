// memref-argument.mlir - entry functions take tensors; a memref argument is
// rejected in the input phase with a message naming the function and type.

// RUN: not %turbine compile %s -o %t.tmod 2>&1 | FileCheck %s

// CHECK: turbine compile: error: {{.*}}memref-argument.mlir: phase 'input' failed:
// CHECK: entry function 'main' takes 'memref<4xf32>': only ranked tensors are supported at the boundary
func.func @main(%m: memref<4xf32>) {
  return
}
