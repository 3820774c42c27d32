// inline-constant-globals.mlir - turbine-inline-constant-globals: loads of
// an immutable global with a dense value become arith.constant named
// turbine.param_name (the global's own name for it, else its symbol), and
// the global goes; external parameters and mutable globals stay.

// RUN: turbine-opt %s --turbine-inline-constant-globals | FileCheck %s

// CHECK-NOT:   ml_program.global private @"layers.0.wq"
// CHECK-NOT:   ml_program.global private @bias
// CHECK:       ml_program.global private @embed(#extern) : tensor<16x4xf32>
// CHECK:       ml_program.global private mutable @cache(dense<0.000000e+00>
ml_program.global private @"layers.0.wq"(dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>) : tensor<2x2xf32>
ml_program.global private @bias(dense<0.5> : tensor<2xf32>) : tensor<2xf32> {turbine.param_name = "layers.0.bias"}
ml_program.global private @embed(#ml_program.extern<tensor<16x4xf32>>) : tensor<16x4xf32>
ml_program.global private mutable @cache(dense<0.0> : tensor<2x2xf32>) : tensor<2x2xf32>

// CHECK-LABEL: func.func @f
// CHECK-DAG:     arith.constant {turbine.param_name = "layers.0.wq"} dense<{{\[}}[1.000000e+00, 2.000000e+00], [3.000000e+00, 4.000000e+00]]> : tensor<2x2xf32>
// CHECK-DAG:     arith.constant {turbine.param_name = "layers.0.bias"} dense<5.000000e-01> : tensor<2xf32>
// CHECK-DAG:     ml_program.global_load_const @embed
// CHECK-DAG:     ml_program.global_load @cache
func.func @f() -> (tensor<2x2xf32>, tensor<2xf32>, tensor<16x4xf32>, tensor<2x2xf32>) {
  %w = ml_program.global_load_const @"layers.0.wq" : tensor<2x2xf32>
  %b = ml_program.global_load_const @bias : tensor<2xf32>
  %e = ml_program.global_load_const @embed : tensor<16x4xf32>
  %c = ml_program.global_load @cache : tensor<2x2xf32>
  return %w, %b, %e, %c : tensor<2x2xf32>, tensor<2xf32>, tensor<16x4xf32>, tensor<2x2xf32>
}
