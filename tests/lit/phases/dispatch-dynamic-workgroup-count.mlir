// dispatch-dynamic-workgroup-count.mlir - grids of dynamic shapes are computed
// on the host at run time.
//
// For a fully dynamic 2-D elementwise op, each workgroup axis used gets
// ceildiv(tensor.dim, tile) (x walks the inner dim, y the outer one), and the
// dims travel to the kernel as push constants and as the result's dims.

// RUN: %turbine compile %s --compile-to=dispatch | FileCheck %s

// CHECK-LABEL: func.func @main(
// CHECK-SAME:    %[[X:[^:]*]]: tensor<?x?xf32>) -> tensor<?x?xf32>
// CHECK-DAG:     %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG:     %[[C1:.*]] = arith.constant 1 : index
// CHECK-DAG:     %[[ROWS:.*]] = tensor.dim %[[X]], %[[C0]] : tensor<?x?xf32>
// CHECK-DAG:     %[[COLS:.*]] = tensor.dim %[[X]], %[[C1]] : tensor<?x?xf32>
// CHECK-DAG:     %[[GX:.*]] = arith.ceildivsi %[[COLS]], %{{.*}} : index
// CHECK-DAG:     %[[GY:.*]] = arith.ceildivsi %[[ROWS]], %{{.*}} : index
// CHECK:         %[[R:.*]] = turbine.dispatch @elementwise_DxD_f32[%[[GX]], %[[GY]], %[[C1]]] (%[[X]]) constants(%[[ROWS]], %[[COLS]]
// CHECK-SAME:      : (tensor<?x?xf32>) -> tensor<?x?xf32> dims(%[[ROWS]], %[[COLS]])
// CHECK-NEXT:    return %[[R]]

// CHECK:         func.func @elementwise_DxD_f32(%[[STATE:[^:]*]]: !llvm.ptr
// CHECK-DAG:       %[[D0:.*]] = turbine.push_constant %[[STATE]][0]
// CHECK-DAG:       %[[D1:.*]] = turbine.push_constant %[[STATE]][1]
// CHECK:           turbine.binding %[[STATE]][0] dims(%[[D0]], %[[D1]]) : memref<?x?xf32>
// CHECK:           turbine.binding %[[STATE]][1] dims(%{{.*}}, %{{.*}}) : memref<?x?xf32>
#id = affine_map<(i, j) -> (i, j)>
func.func @main(%x: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %d0 = tensor.dim %x, %c0 : tensor<?x?xf32>
  %d1 = tensor.dim %x, %c1 : tensor<?x?xf32>
  %e = tensor.empty(%d0, %d1) : tensor<?x?xf32>
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<?x?xf32>) outs(%e : tensor<?x?xf32>) {
  ^bb0(%a: f32, %o: f32):
    %n = arith.negf %a : f32
    linalg.yield %n : f32
  } -> tensor<?x?xf32>
  return %r : tensor<?x?xf32>
}
