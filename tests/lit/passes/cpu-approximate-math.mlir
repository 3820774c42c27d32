// cpu-approximate-math.mlir - turbine-cpu-approximate-math: exp, tanh and
// erf on f32 vectors become polynomials (no math op left); f64 keeps its
// math op (libm later).

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
