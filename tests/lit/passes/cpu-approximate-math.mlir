// cpu-approximate-math.mlir - turbine-cpu-approximate-math: exp, tanh and
// erf on f32 vectors become polynomials (no math op left); f64 keeps its
// math op (libm later). exp on f32, vector or scalar, takes the target's
// own form (MathApproximations.cpp): 2^n from the bits of a magic-biased FMA
// (no floor, no float-to-int conversion), a two-constant reduction, a
// degree-5 polynomial, and selects for overflow and underflow; erf on f32
// a rational function of x^2 (below).

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

// erf on f32: x clamped to [-4, 4], then x * P(x^2) / Q(x^2) (degrees 6 and
// 4): one division, no selects (upstream chooses coefficients by interval).
// CHECK-LABEL: func.func @erf_f32
// CHECK-NOT:     arith.select
// CHECK:         %[[HI:.*]] = arith.minimumf %{{.*}}, %{{.*}} : vector<8xf32>
// CHECK:         %[[X:.*]] = arith.maximumf %[[HI]], %{{.*}} : vector<8xf32>
// CHECK:         %[[X2:.*]] = arith.mulf %[[X]], %[[X]] : vector<8xf32>
// CHECK-COUNT-6: math.fma %{{.*}}, %[[X2]]
// CHECK:         %[[P:.*]] = arith.mulf %[[X]], %{{.*}} : vector<8xf32>
// CHECK-COUNT-4: math.fma %{{.*}}, %[[X2]]
// CHECK:         %[[R:.*]] = arith.divf %[[P]], %{{.*}} : vector<8xf32>
// CHECK-NOT:     arith.select
// CHECK:         return %[[R]]
func.func @erf_f32(%v: vector<8xf32>) -> vector<8xf32> {
  %e = math.erf %v : vector<8xf32>
  return %e : vector<8xf32>
}

// Float max / min (IEEE-754 2019 maximum / minimum: NaN propagates, -0 < +0)
// get `nsz`: LLVM lowers them in 3 x86 instructions instead of 6, and a max
// with a constant (ReLU) in 1; NaN still propagates, only the sign of a zero
// result is left open. maxnumf (NaN as missing data) is left as it is.
// CHECK-LABEL: func.func @min_max
// CHECK:         arith.maximumf %{{.*}}, %{{.*}} fastmath<nsz> : vector<16xf32>
// CHECK:         arith.minimumf %{{.*}}, %{{.*}} fastmath<nsz> : f32
// CHECK:         arith.maxnumf %{{.*}}, %{{.*}} : vector<16xf32>
func.func @min_max(%a: vector<16xf32>, %b: vector<16xf32>, %x: f32, %y: f32) -> (vector<16xf32>, f32, vector<16xf32>) {
  %m = arith.maximumf %a, %b : vector<16xf32>
  %n = arith.minimumf %x, %y : f32
  %k = arith.maxnumf %a, %b : vector<16xf32>
  return %m, %n, %k : vector<16xf32>, f32, vector<16xf32>
}
