// unknown-extension.mlir - the input format is chosen by extension; anything
// other than .onnx / .pt / .mlir / .mlirbc (or a TorchScript zip) is refused
// with the accepted list.

// RUN: cp %s %t.txt
// RUN: not %turbine compile %t.txt -o %t.tmod 2>&1 | FileCheck %s

// CHECK: turbine compile: error: cannot tell the format of '{{.*}}.txt': expected a .onnx, .pt (TorchScript), .mlir or .mlirbc file
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}
