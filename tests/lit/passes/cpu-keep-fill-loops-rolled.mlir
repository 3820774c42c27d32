// cpu-keep-fill-loops-rolled.mlir - turbine-cpu-keep-fill-loops-rolled marks
// the loops that only store constants or values defined outside them (the
// fills of a padded result's border) so that LLVM does not unroll them, and
// leaves every loop that reads memory, stores what it computes or carries
// values alone. The mark reaches LLVM IR as llvm.loop.unroll.disable.
// RUN: turbine-opt %s --pass-pipeline='builtin.module(func.func(turbine-cpu-keep-fill-loops-rolled))' | FileCheck %s
// RUN: turbine-opt %s --pass-pipeline='builtin.module(func.func(turbine-cpu-keep-fill-loops-rolled,convert-scf-to-cf),convert-to-llvm)' | mlir-translate --mlir-to-llvmir | FileCheck %s --check-prefix=LLVM

// CHECK-LABEL: func.func @border_strip
// The rows loop and the batch loop around it: both marked.
// CHECK: scf.for
// CHECK: scf.for
// CHECK: vector.store
// CHECK: } {loop_annotation = #[[ROLLED:.+]]}
// CHECK: } {loop_annotation = #[[ROLLED]]}
// LLVM-LABEL: define void @border_strip
// LLVM: !llvm.loop ![[LOOP:[0-9]+]]
// LLVM: ![[LOOP]] = distinct !{![[LOOP]], ![[DISABLE:[0-9]+]]}
// LLVM: ![[DISABLE]] = !{!"llvm.loop.unroll.disable"}
func.func @border_strip(%out: memref<?x58x58x128xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c57 = arith.constant 57 : index
  %c58 = arith.constant 58 : index
  %zero = arith.constant dense<0.0> : vector<128xf32>
  scf.for %b = %c0 to %n step %c1 {
    scf.for %h = %c0 to %c58 step %c1 {
      vector.store %zero, %out[%b, %h, %c57, %c0] : memref<?x58x58x128xf32>, vector<128xf32>
    }
  }
  return
}

// A value computed before the loop (an accumulator's initial value).
// CHECK-LABEL: func.func @invariant_value
// CHECK: memref.store
// CHECK-NEXT: } {loop_annotation =
func.func @invariant_value(%out: memref<?xf32>, %n: index, %x: f32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %v = arith.mulf %x, %x : f32
  scf.for %i = %c0 to %n step %c1 {
    memref.store %v, %out[%i] : memref<?xf32>
  }
  return
}

// Loads, values computed in the loop, loop-carried values: not marked.
// CHECK-LABEL: func.func @not_fills
// CHECK-NOT: loop_annotation
// CHECK: return
func.func @not_fills(%in: memref<?xf32>, %out: memref<?xf32>, %n: index) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  scf.for %i = %c0 to %n step %c1 {
    %x = memref.load %in[%i] : memref<?xf32>
    memref.store %x, %out[%i] : memref<?xf32>
  }
  scf.for %i = %c0 to %n step %c1 {
    %f = arith.index_cast %i : index to i64
    %x = arith.sitofp %f : i64 to f32
    memref.store %x, %out[%i] : memref<?xf32>
  }
  %sum = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero) -> f32 {
    memref.store %zero, %out[%i] : memref<?xf32>
    %next = arith.addf %acc, %acc : f32
    scf.yield %next : f32
  }
  return %sum : f32
}
