// dispatch-elementwise-chain.mlir - a chain of elementwise ops is one dispatch.
//
// Four TOSA elementwise ops (add, mul, exp, tanh) on static shapes become a
// single kernel: one turbine.dispatch with a 1x1x1 grid (the whole tensor is
// one workgroup tile), two input bindings and one output binding.

// RUN: %turbine compile %s --compile-to=dispatch | FileCheck %s

// CHECK-LABEL: func.func @main(
// CHECK-SAME:    %[[X:[^:]*]]: tensor<8x128xf32>, %[[Y:[^:]*]]: tensor<8x128xf32>)
// CHECK:         %[[C1:.*]] = arith.constant 1 : index
// CHECK-NOT:     linalg.
// CHECK:         %[[R:.*]] = turbine.dispatch @elementwise_8x128_f32[%[[C1]], %[[C1]], %[[C1]]] (%[[X]], %[[Y]]) : (tensor<8x128xf32>, tensor<8x128xf32>) -> tensor<8x128xf32>
// CHECK-NOT:     turbine.dispatch
// CHECK:         return %[[R]]

// CHECK:       module @kernels
// CHECK:         func.func @elementwise_8x128_f32(%[[STATE:[^:]*]]: !llvm.ptr
// CHECK:           turbine.binding %[[STATE]][0] : memref<8x128xf32>
// CHECK:           turbine.binding %[[STATE]][1] : memref<8x128xf32>
// CHECK:           %[[OUT:.*]] = turbine.binding %[[STATE]][2] : memref<8x128xf32>
// CHECK:           %[[G:.*]] = linalg.generic
// CHECK:             arith.addf
// CHECK-NEXT:        arith.mulf
// CHECK-NEXT:        math.exp
// CHECK-NEXT:        math.tanh
// CHECK-NOT:       linalg.generic
// CHECK:           bufferization.materialize_in_destination %[[G]] in restrict writable %[[OUT]]
// CHECK-NOT:     func.func
func.func @main(%x: tensor<8x128xf32>, %y: tensor<8x128xf32>) -> tensor<8x128xf32> {
  %s = tosa.add %x, %y : (tensor<8x128xf32>, tensor<8x128xf32>) -> tensor<8x128xf32>
  %shift = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %m = tosa.mul %s, %x, %shift : (tensor<8x128xf32>, tensor<8x128xf32>, tensor<1xi8>) -> tensor<8x128xf32>
  %e = tosa.exp %m : (tensor<8x128xf32>) -> tensor<8x128xf32>
  %t = tosa.tanh %e : (tensor<8x128xf32>) -> tensor<8x128xf32>
  return %t : tensor<8x128xf32>
}
