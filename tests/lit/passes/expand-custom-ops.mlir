// expand-custom-ops.mlir - turbine-expand-custom-ops (kernels/): a call of a
// declaration naming a custom op (here the kernel library's softmax) becomes
// a turbine.dispatch of the op's kernel, generated at the vector level into
// the kernel container; the declaration goes. In a compile it runs first in
// the dispatch phase.

// RUN: turbine-opt %s --turbine-expand-custom-ops | FileCheck %s

// CHECK-LABEL: func.func @main
// CHECK-NOT:     func.call
// CHECK:         turbine.dispatch @{{.*}}softmax{{.*}}[%{{.*}}, %{{.*}}, %{{.*}}] (%{{.*}}) : (tensor<4x100xf32>) -> tensor<4x100xf32>
// CHECK-NOT:     turbine.custom_op
// CHECK:       module @kernels attributes {turbine.kernels}
// CHECK:         func.func @{{.*}}softmax{{.*}}(%{{.*}}: !llvm.ptr,
// CHECK-SAME:      turbine.kernel
// CHECK:           vector.transfer_read
func.func private @softmax(tensor<4x100xf32>) -> tensor<4x100xf32> attributes {turbine.custom_op = "turbine.softmax"}
func.func @main(%x: tensor<4x100xf32>) -> tensor<4x100xf32> {
  %y = func.call @softmax(%x) : (tensor<4x100xf32>) -> tensor<4x100xf32>
  return %y : tensor<4x100xf32>
}

