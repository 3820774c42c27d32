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
