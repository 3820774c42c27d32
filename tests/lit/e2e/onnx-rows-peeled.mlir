// onnx-rows-peeled.mlir - ONNX Softmax, ReduceMax and ReduceSum over rows of
// 197, 144, 1000 and 7 floats against NumPy, dynamic batch, both local
// devices. 64-lane tiles do not divide the first three: the CPU target
// peels the remainder so that every tile has a static size and no masks
// (tileAndVectorizeGeneric); the largest value of some rows lies in the
// remainder. The script is Inputs/rows_against_numpy.py.

// RUN: %python %S/Inputs/rows_against_numpy.py %turbine %t | FileCheck %s

// CHECK:      Softmax 197 local-sync: OK
// CHECK-NEXT: Softmax 197 local-task: OK
// CHECK-NEXT: ReduceMax 197 local-sync: OK
// CHECK-NEXT: ReduceMax 197 local-task: OK
// CHECK-NEXT: ReduceSum 197 local-sync: OK
// CHECK-NEXT: ReduceSum 197 local-task: OK
// CHECK-NEXT: Softmax 144 local-sync: OK
// CHECK-NEXT: Softmax 144 local-task: OK
// CHECK-NEXT: ReduceMax 144 local-sync: OK
// CHECK-NEXT: ReduceMax 144 local-task: OK
// CHECK-NEXT: ReduceSum 144 local-sync: OK
// CHECK-NEXT: ReduceSum 144 local-task: OK
// CHECK-NEXT: Softmax 1000 local-sync: OK
// CHECK-NEXT: Softmax 1000 local-task: OK
// CHECK-NEXT: ReduceMax 1000 local-sync: OK
// CHECK-NEXT: ReduceMax 1000 local-task: OK
// CHECK-NEXT: ReduceSum 1000 local-sync: OK
// CHECK-NEXT: ReduceSum 1000 local-task: OK
// CHECK-NEXT: Softmax 7 local-sync: OK
// CHECK-NEXT: Softmax 7 local-task: OK
// CHECK-NEXT: ReduceMax 7 local-sync: OK
// CHECK-NEXT: ReduceMax 7 local-task: OK
// CHECK-NEXT: ReduceSum 7 local-sync: OK
// CHECK-NEXT: ReduceSum 7 local-task: OK
