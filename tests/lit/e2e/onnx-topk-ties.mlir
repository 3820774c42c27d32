// onnx-topk-ties.mlir - ONNX TopK against NumPy's stable argsort on data full
// of ties (ONNX orders equal values by smaller index), through both
// strategies of the importer: selection passes (K = 5) and ranking (K = 20,
// 40), for largest=1 and largest=0. The script is Inputs/topk_against_numpy.py.

// RUN: %python %S/Inputs/topk_against_numpy.py %turbine %t | FileCheck %s

// CHECK:      K=5 largest=1: OK
// CHECK-NEXT: K=5 largest=0: OK
// CHECK-NEXT: K=20 largest=1: OK
// CHECK-NEXT: K=20 largest=0: OK
// CHECK-NEXT: K=40 largest=1: OK
