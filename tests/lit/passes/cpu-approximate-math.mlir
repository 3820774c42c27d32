// cpu-approximate-math.mlir - turbine-cpu-approximate-math: exp, tanh and
// erf on f32 vectors become polynomials (no math op left); f64 keeps its
// math op (libm later). exp on f32, vector or scalar, takes the target's
// own form (ExpApproximation.cpp): 2^n from the bits of a magic-biased FMA
// (no floor, no float-to-int conversion), a two-constant reduction, a
// degree-5 polynomial, and selects for overflow and underflow.

// RUN: turbine-opt %s --turbine-cpu-approximate-math | FileCheck %s

// CHECK-LABEL: func.func @f
// CHECK-NOT:     math.exp
// CHECK-NOT:     math.tanh
// CHECK-NOT:     math.erf {{.*}} : vector<16xf32>
// CHECK:         math.exp %{{.*}} : f64
func.func @f(%v: vector<16xf32>, %d: f64) -> (vector<16xf32>, vector<16xf32>, vector<16xf32>, f64) {
  %e = math.exp %v : vector<16xf32>
  %t = math.tanh %v : vector<16xf32>
  %r = math.erf %v : vector<16xf32>
  %x = math.exp %d : f64
  return %e, %t, %r, %x : vector<16xf32>, vector<16xf32>, vector<16xf32>, f64
}

// CHECK-LABEL: func.func @exp_f32
// CHECK-DAG:     %[[MAGIC:.*]] = arith.constant dense<0x4B40007F> : vector<8xf32>
// CHECK-DAG:     %[[LOG2E:.*]] = arith.constant dense<1.44269502> : vector<8xf32>
// CHECK-NOT:     math.floor
// CHECK:         %[[B:.*]] = math.fma %[[X:.*]], %[[LOG2E]], %[[MAGIC]] : vector<8xf32>
// CHECK:         %[[N:.*]] = arith.minimumf %[[B]]
// CHECK:         %[[BITS:.*]] = arith.bitcast %[[N]] : vector<8xf32> to vector<8xi32>
// CHECK:         %[[SHIFTED:.*]] = arith.shli %[[BITS]]
// CHECK:         %[[SCALE:.*]] = arith.bitcast %[[SHIFTED]] : vector<8xi32> to vector<8xf32>
// CHECK-COUNT-7: math.fma
// CHECK:         arith.cmpf ogt, %[[X]]
// CHECK:         arith.select
// CHECK:         arith.cmpf olt, %[[X]]
// CHECK:         %[[R:.*]] = arith.select
// CHECK:         math.fma %{{.*}}, %{{.*}}, %[[MAGIC2:.*]] : f32
// CHECK-NOT:     math.floor
// CHECK:         return %[[R]]
func.func @exp_f32(%v: vector<8xf32>, %s: f32) -> (vector<8xf32>, f32) {
  %e = math.exp %v : vector<8xf32>
  %x = math.exp %s : f32
  return %e, %x : vector<8xf32>, f32
}
