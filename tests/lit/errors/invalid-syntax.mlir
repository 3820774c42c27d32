// invalid-syntax.mlir - malformed MLIR is a parse error, not a crash.
//
// `not` (not `not --crash`) requires a clean non-zero exit; the message names
// the file and the parser's complaint with its line and column.

// RUN: not %turbine compile %s -o %t.tmod 2>&1 | FileCheck %s
// RUN: not %turbine compile %s --compile-to=input 2>&1 | FileCheck %s

// CHECK: turbine compile: error: failed to parse MLIR file '{{.*}}invalid-syntax.mlir'
// CHECK: invalid-syntax.mlir:[[@LINE+1]]:{{[0-9]+}}: error:
func.func @main(%x: tensor<4xf32> -> tensor<4xf32> {
  return %x : tensor<4xf32>
}
