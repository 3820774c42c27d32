// dispatch-host-extract.mlir - a shape read from tensor data stays on the host.
//
// tensor.extract of an integer element (here of a kernel's result) is not
// fused into a kernel: dispatch formation leaves it in the host function,
// after the dispatch that produces the tensor, and the host program reads
// it into an index register (opcode `load`) that sizes the reshape.

// RUN: %turbine compile %s --compile-to=dispatch | FileCheck %s
// RUN: %turbine compile %s -o %t.tmod
// RUN: %turbine run %t.tmod --device=local-task --task_workers=2 \
// RUN:   --input="6xf32=1 2 3 4 5 6" --input="2xi32=1 2" | FileCheck %s --check-prefix=RUN23
// RUN: %turbine run %t.tmod --device=local-sync \
// RUN:   --input="6xf32=1 2 3 4 5 6" --input="2xi32=5 0" | FileCheck %s --check-prefix=RUN61
// RUN: not %turbine run %t.tmod --input="6xf32=1 2 3 4 5 6" --input="2xi32=1 1" 2>&1 \
// RUN:   | FileCheck %s --check-prefix=BAD

// CHECK-LABEL: func.func @main(
// CHECK-SAME:    %[[X:[^:]*]]: tensor<?xf32>, %[[S:[^:]*]]: tensor<2xi32>) -> tensor<?x?xf32>
// CHECK:         %[[T:.*]] = turbine.dispatch @elementwise_2_i32[{{.*}}] (%[[S]]) : (tensor<2xi32>) -> tensor<2xi32>
// CHECK:         %[[A:.*]] = tensor.extract %[[T]][%{{.*}}] : tensor<2xi32>
// CHECK:         %[[B:.*]] = tensor.extract %[[T]][%{{.*}}] : tensor<2xi32>
// CHECK-DAG:     %[[AI:.*]] = arith.index_cast %[[A]] : i32 to index
// CHECK-DAG:     %[[BI:.*]] = arith.index_cast %[[B]] : i32 to index
// CHECK:         %[[R:.*]] = tensor.expand_shape %[[X]] {{\[\[}}0, 1]] output_shape [%[[AI]], %[[BI]]]
// CHECK-NEXT:    return %[[R]]
// CHECK:       module @kernels
// CHECK:         arith.addi

// RUN23:      result[0]: hal.buffer_view
// RUN23-NEXT: 2x3xf32=[1 2 3][4 5 6]{{$}}
// RUN61:      result[0]: hal.buffer_view
// RUN61-NEXT: 6x1xf32=[1][2][3][4][5][6]{{$}}
// BAD: turbine run: error: function 'main', instruction {{[0-9]+}} (reshape): cannot reshape 6xf32 (6 elements) to 2x2xf32 (4 elements)

#id = affine_map<(d0) -> (d0)>
func.func @main(%x: tensor<?xf32>, %s: tensor<2xi32>) -> tensor<?x?xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %e = tensor.empty() : tensor<2xi32>
  %t = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%s : tensor<2xi32>) outs(%e : tensor<2xi32>) {
  ^bb0(%in: i32, %o: i32):
    %one = arith.constant 1 : i32
    %v = arith.addi %in, %one : i32
    linalg.yield %v : i32
  } -> tensor<2xi32>
  %a = tensor.extract %t[%c0] : tensor<2xi32>
  %b = tensor.extract %t[%c1] : tensor<2xi32>
  %ai = arith.index_cast %a : i32 to index
  %bi = arith.index_cast %b : i32 to index
  %r = tensor.expand_shape %x [[0, 1]] output_shape [%ai, %bi] : tensor<?xf32> into tensor<?x?xf32>
  return %r : tensor<?x?xf32>
}
