// dispatch-host-loop.mlir - a loop on tensors in the host function.
//
// An scf.while whose trip count is read from tensor data (as the ONNX
// importer emits for a Loop with a run-time trip count) stays in the host
// function; dispatch formation forms the linalg ops of its body into a
// kernel dispatched inside the loop, and the host program brackets the body
// with loop / break_unless / end_loop, moving the carried buffer between
// registers. The body reads %x, defined before the loop, in every iteration.
// acc = x, then m times acc = acc + x: the result is x * (m + 1).

// RUN: %turbine compile %s --compile-to=dispatch | FileCheck %s
// RUN: %turbine compile %s -o %t.tmod
// RUN: %python -c "import json, struct, sys; b = open(sys.argv[1], 'rb').read(); o, n = struct.unpack_from('<QQ', b, 16); print(' '.join(i['op'] for i in json.loads(b[o:o + n])['functions'][0]['code']))" %t.tmod | FileCheck %s --check-prefix=HOST
// RUN: %turbine run %t.tmod --device=local-sync --input="4xf32=1 2 3 -4" --input="i64=0" \
// RUN:   | FileCheck %s --check-prefix=ZERO
// RUN: %turbine run %t.tmod --device=local-task --task_workers=2 --input="4xf32=1 2 3 -4" \
// RUN:   --input="i64=3" | FileCheck %s --check-prefix=THREE

// CHECK-LABEL: func.func @main(
// CHECK:         %[[N:.*]] = arith.index_cast
// CHECK:         %[[R:.*]]:2 = scf.while
// CHECK:           arith.cmpi slt, %{{.*}}, %[[N]]
// CHECK:           scf.condition
// CHECK:         } do {
// CHECK:           %[[S:.*]] = turbine.dispatch @elementwise_4_f32
// CHECK:           scf.yield %{{.*}}, %[[S]]
// CHECK:         return %[[R]]#1
// CHECK:       module @kernels
// CHECK:         arith.addf

// The body between loop and end_loop: the condition, the move of the
// carried buffer into the result register, the break, the dispatch, the
// moves back into the state registers.
// HOST: load move move_buffer loop binary move move_buffer break_unless {{.*}}dispatch{{.*}} move{{.*}} end_loop return

// ZERO:      result[0]: hal.buffer_view
// ZERO-NEXT: 4xf32=1 2 3 -4{{$}}
// THREE:      result[0]: hal.buffer_view
// THREE-NEXT: 4xf32=4 8 12 -16{{$}}

#id = affine_map<(d0) -> (d0)>
func.func @main(%x: tensor<4xf32>, %m: tensor<i64>) -> tensor<4xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %e = tensor.extract %m[] : tensor<i64>
  %n = arith.index_cast %e : i64 to index
  %r:2 = scf.while (%i = %c0, %acc = %x) : (index, tensor<4xf32>) -> (index, tensor<4xf32>) {
    %go = arith.cmpi slt, %i, %n : index
    scf.condition(%go) %i, %acc : index, tensor<4xf32>
  } do {
  ^bb0(%i: index, %acc: tensor<4xf32>):
    %init = tensor.empty() : tensor<4xf32>
    %s = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
        ins(%acc, %x : tensor<4xf32>, tensor<4xf32>) outs(%init : tensor<4xf32>) {
    ^bb0(%a: f32, %b: f32, %o: f32):
      %sum = arith.addf %a, %b : f32
      linalg.yield %sum : f32
    } -> tensor<4xf32>
    %next = arith.addi %i, %c1 : index
    scf.yield %next, %s : index, tensor<4xf32>
  }
  return %r#1 : tensor<4xf32>
}
