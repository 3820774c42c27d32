// host-integer-casts.mlir - integer casts in the host program follow MLIR's
// semantics: index registers hold values sign-extended to 64 bits, so a
// truncation re-sign-extends, a zero-extension masks, a sign-extension is a
// copy. The results' sizes show the values:
//   s[0] = 259: trunci to i8 -> 3,  extui -> 3          => 3 elements
//   s[1] = 510: trunci to i8 -> -2, extsi -> -2, 0 - x  => 2 elements
//   s[1] = 510 as i8 (-2), extui -> 254                 => a cf.assert checks it

// RUN: %turbine compile %s -o %t.tmod
// RUN: %turbine run %t.tmod --input="2xi64=259 510" | FileCheck %s

// CHECK:      result[0]: hal.buffer_view
// CHECK-NEXT: 3xf32=1 1 1{{$}}
// CHECK-NEXT: result[1]: hal.buffer_view
// CHECK-NEXT: 2xf32=2 2{{$}}

func.func @main(%s: tensor<2xi64>) -> (tensor<?xf32>, tensor<?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0 : i64
  %one = arith.constant 1.0 : f32
  %two = arith.constant 2.0 : f32
  %a = tensor.extract %s[%c0] : tensor<2xi64>
  %a8 = arith.trunci %a : i64 to i8
  %a64 = arith.extui %a8 : i8 to i64
  %n1 = arith.index_cast %a64 : i64 to index
  %b = tensor.extract %s[%c1] : tensor<2xi64>
  %b8 = arith.trunci %b : i64 to i8
  %b64 = arith.extsi %b8 : i8 to i64
  %neg = arith.subi %zero, %b64 : i64
  %n2 = arith.index_cast %neg : i64 to index
  %bu = arith.extui %b8 : i8 to i64
  %c254 = arith.constant 254 : i64
  %ok = arith.cmpi eq, %bu, %c254 : i64
  cf.assert %ok, "extui of i8 -2 must be 254"
  %e1 = tensor.empty(%n1) : tensor<?xf32>
  %r1 = linalg.fill ins(%one : f32) outs(%e1 : tensor<?xf32>) -> tensor<?xf32>
  %e2 = tensor.empty(%n2) : tensor<?xf32>
  %r2 = linalg.fill ins(%two : f32) outs(%e2 : tensor<?xf32>) -> tensor<?xf32>
  return %r1, %r2 : tensor<?xf32>, tensor<?xf32>
}
