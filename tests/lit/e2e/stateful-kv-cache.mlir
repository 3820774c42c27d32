// stateful-kv-cache.mlir - module state through the CLI: a mutable global
// (a 1x4x2 cache, zero-initialized) that `append` updates in place at a
// run-time position, and an immutable parameter given as an ml_program
// global. `turbine run --list` shows the functions and globals; `--call`
// runs a sequence of calls in one instance (state persists between them);
// a position past the cache is the host-side bounds assert's error.
// Expected values by hand: append(k, p) writes k * [2, -1] at row p.

// RUN: %turbine compile %s -o %t.tmod
// RUN: %turbine run %t.tmod --list | FileCheck %s --check-prefix=LIST
// RUN: %turbine run %t.tmod --device=local-sync \
// RUN:   --call=append --input="1x1x2xf32=1 2" --input=i64=0 \
// RUN:   --call=append --input="1x1x2xf32=3 4" --input=i64=2 \
// RUN:   --call=append --input="1x1x2xf32=0.5 -1" --input=i64=3 | FileCheck %s
// RUN: not %turbine run %t.tmod --call=append --input="1x1x2xf32=1 2" --input=i64=4 2>&1 \
// RUN:   | FileCheck %s --check-prefix=RANGE
// RUN: not %turbine run %t.tmod --input="1x1x2xf32=1 2" --call=append --input=i64=0 2>&1 \
// RUN:   | FileCheck %s --check-prefix=ORDER
// RUN: not %turbine run %t.tmod --call=append --input="1x1x2xf32=1 2" --input=i64=0 --call=prepend 2>&1 \
// RUN:   | FileCheck %s --check-prefix=UNKNOWN

// LIST:      functions:
// LIST-NEXT:   append(input0: 1x1x2xf32, input1: i64) -> (output0: 1x4x2xf32)  [uses module state]
// LIST-NEXT: globals:
// LIST-NEXT:   cache : 1x4x2xf32  mutable, initial value zero

// CHECK:      EXEC @append
// CHECK-NEXT: result[0]: hal.buffer_view
// CHECK-NEXT: 1x4x2xf32={{\[\[}}2 -2][0 0][0 0][0 0]]
// CHECK-NEXT: EXEC @append
// CHECK-NEXT: result[0]: hal.buffer_view
// CHECK-NEXT: 1x4x2xf32={{\[\[}}2 -2][0 0][6 -4][0 0]]
// CHECK-NEXT: EXEC @append
// CHECK-NEXT: result[0]: hal.buffer_view
// CHECK-NEXT: 1x4x2xf32={{\[\[}}2 -2][0 0][6 -4][1 1]]

// RANGE: error: {{.*}}slice update of global 'cache' out of bounds: dim 1 needs 0 <= offset and offset + size <= 4
// ORDER: error: --input '1x1x2xf32=1 2' comes before the first --call
// UNKNOWN: error: function 'prepend' not found in {{.*}} (available: 'append')

ml_program.global private mutable @cache(dense<0.0> : tensor<1x4x2xf32>) : tensor<1x4x2xf32>
ml_program.global private @scale(dense<[2.0, -1.0]> : tensor<2xf32>) : tensor<2xf32>

func.func @append(%k: tensor<1x1x2xf32>, %position: tensor<i64>) -> tensor<1x4x2xf32> {
  %p64 = tensor.extract %position[] : tensor<i64>
  %pos = arith.index_cast %p64 : i64 to index
  %scale = ml_program.global_load_const @scale : tensor<2xf32>
  %e = tensor.empty() : tensor<1x1x2xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(a, s, d) -> (a, s, d)>, affine_map<(a, s, d) -> (d)>, affine_map<(a, s, d) -> (a, s, d)>],
                       iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%k, %scale : tensor<1x1x2xf32>, tensor<2xf32>) outs(%e : tensor<1x1x2xf32>) {
  ^bb0(%x: f32, %w: f32, %o: f32):
    %m = arith.mulf %x, %w : f32
    linalg.yield %m : f32
  } -> tensor<1x1x2xf32>
  %c = ml_program.global_load @cache : tensor<1x4x2xf32>
  %u = tensor.insert_slice %s into %c[0, %pos, 0] [1, 1, 2] [1, 1, 1] : tensor<1x1x2xf32> into tensor<1x4x2xf32>
  ml_program.global_store @cache = %u : tensor<1x4x2xf32>
  %r = ml_program.global_load @cache : tensor<1x4x2xf32>
  return %r : tensor<1x4x2xf32>
}
