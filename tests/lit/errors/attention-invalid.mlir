// attention-invalid.mlir - turbine.attention's verifier: query heads must be a
// multiple of the key / value heads, key and value must agree in shape,
// query and key in head_dim, the result must have the query's shape; each is
// a clear error, not a crash.

// RUN: not turbine-opt %s --split-input-file 2>&1 | FileCheck %s

// CHECK: query heads (3) are not a multiple of key heads (2)
func.func @heads(%q: tensor<1x3x1x16xf32>, %k: tensor<1x2x8x16xf32>, %v: tensor<1x2x8x16xf32>, %l: index) -> tensor<1x3x1x16xf32> {
  %e = tensor.empty() : tensor<1x3x1x16xf32>
  %o = turbine.attention %q, %k, %v key_length(%l) scale(1.0) outs(%e) : tensor<1x3x1x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32> -> tensor<1x3x1x16xf32>
  return %o : tensor<1x3x1x16xf32>
}

// -----

// CHECK: key 'tensor<1x2x8x16xf32>' and value 'tensor<1x2x9x16xf32>' differ in shape
func.func @kv(%q: tensor<1x4x1x16xf32>, %k: tensor<1x2x8x16xf32>, %v: tensor<1x2x9x16xf32>, %l: index) -> tensor<1x4x1x16xf32> {
  %e = tensor.empty() : tensor<1x4x1x16xf32>
  %o = turbine.attention %q, %k, %v key_length(%l) scale(1.0) outs(%e) : tensor<1x4x1x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x9x16xf32> -> tensor<1x4x1x16xf32>
  return %o : tensor<1x4x1x16xf32>
}

// -----

// CHECK: query and key differ in head_dim
func.func @dim(%q: tensor<1x4x1x32xf32>, %k: tensor<1x2x8x16xf32>, %v: tensor<1x2x8x16xf32>, %l: index) -> tensor<1x4x1x32xf32> {
  %e = tensor.empty() : tensor<1x4x1x32xf32>
  %o = turbine.attention %q, %k, %v key_length(%l) scale(1.0) outs(%e) : tensor<1x4x1x32xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32> -> tensor<1x4x1x32xf32>
  return %o : tensor<1x4x1x32xf32>
}

// -----

// CHECK: result 'tensor<1x4x2x16xf32>' does not have the query's shape 'tensor<1x4x1x16xf32>'
func.func @result(%q: tensor<1x4x1x16xf32>, %k: tensor<1x2x8x16xf32>, %v: tensor<1x2x8x16xf32>, %l: index) -> tensor<1x4x2x16xf32> {
  %e = tensor.empty() : tensor<1x4x2x16xf32>
  %o = turbine.attention %q, %k, %v key_length(%l) scale(1.0) outs(%e) : tensor<1x4x1x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32> -> tensor<1x4x2x16xf32>
  return %o : tensor<1x4x2x16xf32>
}
