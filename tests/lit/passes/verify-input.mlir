// verify-input.mlir - turbine-verify-input rejects what the pipeline cannot
// take, naming the op; accepted input passes through unchanged.

// RUN: turbine-opt %s --split-input-file --verify-diagnostics --turbine-verify-input

// expected-error @+1 {{entry function 'takes_memref' takes 'memref<4xf32>': only ranked tensors are supported at the boundary}}
func.func @takes_memref(%m: memref<4xf32>) {
  return
}

// -----

// expected-error @+1 {{module has no function to compile}}
module {
}

// -----

func.func @string_into_linalg(%s: tensor<2x!turbine.string>) -> tensor<2x!turbine.string> {
  %e = tensor.empty() : tensor<2x!turbine.string>
  // expected-error @+1 {{uses a string tensor}}
  %c = linalg.copy ins(%s : tensor<2x!turbine.string>) outs(%e : tensor<2x!turbine.string>) -> tensor<2x!turbine.string>
  return %c : tensor<2x!turbine.string>
}

// -----

func.func @fine(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
  return %x : tensor<?x4xf32>
}

// -----

// Module state: globals are static tensors of numbers.
// expected-error @+1 {{global 'dyn' has type 'tensor<?x4xf32>': globals are tensors of numbers with a static shape}}
ml_program.global private mutable @dyn(dense<0.0> : tensor<1x4xf32>) : tensor<?x4xf32>
func.func @uses_dyn() {
  return
}

// -----

// expected-error @+1 {{'ml_program.func' is not supported: module state is read with ml_program.global_load and written with global_store}}
ml_program.func @ml_func(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'ml_program.return' is not supported}}
  ml_program.return %a : tensor<4xf32>
}
func.func @plain() {
  return
}

// -----

ml_program.global private mutable @cache(dense<0.0> : tensor<4xf32>) : tensor<4xf32>
func.func @reads_cache() -> tensor<4xf32> {
  %c = ml_program.global_load @cache : tensor<4xf32>
  return %c : tensor<4xf32>
}
