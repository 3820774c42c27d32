// expand-custom-ops-errors.mlir - turbine-expand-custom-ops on a call of
// an op nobody registered: an error naming the op and the call's location.

// RUN: not turbine-opt %s --turbine-expand-custom-ops 2>&1 >/dev/null | FileCheck %s

// CHECK: error: custom op 'no.such_op' at {{.*}}: not registered

func.func private @nothing(tensor<4xf32>) -> tensor<4xf32> attributes {turbine.custom_op = "no.such_op"}
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = func.call @nothing(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}
