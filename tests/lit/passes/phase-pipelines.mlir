// phase-pipelines.mlir - the phases are registered pass pipelines too:
// turbine-opt runs `turbine compile`'s phases by name, and their output is
// what --compile-to prints.

// RUN: turbine-opt %s --turbine-input --turbine-global-opt --turbine-dispatch | FileCheck %s
// RUN: %turbine compile %s --compile-to=dispatch | FileCheck %s
// RUN: turbine-opt %s --pass-pipeline='builtin.module(turbine-input, turbine-global-opt, turbine-dispatch, turbine-codegen-cpu)' | FileCheck %s --check-prefix=CODEGEN

// CHECK-LABEL: func.func @main
// CHECK:         turbine.dispatch @matmul_4x32x16_f32[
// CHECK:       module @kernels
// CHECK:         func.func @matmul_4x32x16_f32(
// CODEGEN:       llvm.func @matmul_4x32x16_f32(
// CODEGEN:         llvm.intr.fmuladd
func.func @main(%a: tensor<4x16xf32>, %b: tensor<16x32xf32>) -> tensor<4x32xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x32xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<4x32xf32>) -> tensor<4x32xf32>
  %m = linalg.matmul ins(%a, %b : tensor<4x16xf32>, tensor<16x32xf32>) outs(%f : tensor<4x32xf32>) -> tensor<4x32xf32>
  return %m : tensor<4x32xf32>
}
