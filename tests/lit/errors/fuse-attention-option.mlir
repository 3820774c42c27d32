// fuse-attention-option.mlir - --fuse-attention takes on or off; anything
// else is an error naming the flag and the values it takes.

// RUN: not %turbine compile %s --fuse-attention=maybe 2>&1 | FileCheck %s

// CHECK: turbine compile: error: --fuse-attention: option 'fuse-attention' expects on or off, got 'maybe'
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}
