// global-opt-matmul-unit-dim-transpose.mlir - an attention output [1, H, 1,
// D] transposed to [1, 1, H, D] and flattened into the rows of a matmul by a
// constant (the output projection of a decode step): the transpose only
// moves unit dims, so the matmul reads the flattened source and the weight
// stays the model's constant, unpermuted and under its own name (so that
// `--weights-from=F.gguf` / `--quantize-weights` still match it:
// TransposeElimination.cpp). The result is checked against NumPy.

// RUN: %turbine compile %s --compile-to=global-opt | FileCheck %s
// RUN: %turbine compile %s -o %t.tmod
// RUN: %python -c "import numpy as np; x = (np.arange(6).reshape(1, 3, 1, 2) - 2.5).astype(np.float32); w = ((np.arange(12).reshape(6, 2) * 5) %% 13 - 6).astype(np.float32) / 4; np.save('%t.x.npy', x); np.save('%t.out.npy', x.transpose(0, 2, 1, 3).reshape(1, 6) @ w)"
// RUN: %turbine run %t.tmod --input=@%t.x.npy --expected_output=@%t.out.npy --atol=1e-5 --rtol=1e-5 | FileCheck %s --check-prefix=RUN-CHECK

// CHECK-LABEL: func.func @main
// CHECK:         arith.constant {turbine.param_name = "wo.weight.T"}
// CHECK-NOT:     permute
// CHECK-NOT:     tensor<1x1x3x2xf32>
// CHECK:         %[[ROWS:.*]] = tensor.collapse_shape %{{.*}} : tensor<1x3x1x2xf32> into tensor<1x6xf32>
// CHECK:         linalg.matmul ins(%[[ROWS]], %{{.*}} : tensor<1x6xf32>, tensor<6x2xf32>)

// RUN-CHECK: [SUCCESS]
func.func @main(%x: tensor<1x3x1x2xf32>) -> tensor<1x2xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x1x3x2xf32>
  %t = linalg.transpose ins(%x : tensor<1x3x1x2xf32>) outs(%e : tensor<1x1x3x2xf32>) permutation = [0, 2, 1, 3]
  %rows = tensor.collapse_shape %t [[0], [1, 2, 3]] : tensor<1x1x3x2xf32> into tensor<1x6xf32>
  %w = arith.constant {turbine.param_name = "wo.weight.T"} dense<[[-1.5, -0.25], [1.0, -1.0], [0.25, 1.5], [-0.5, 0.75], [-1.25, 0.0], [1.25, -0.75]]> : tensor<6x2xf32>
  %me = tensor.empty() : tensor<1x2xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%me : tensor<1x2xf32>) -> tensor<1x2xf32>
  %out = linalg.matmul ins(%rows, %w : tensor<1x6xf32>, tensor<6x2xf32>) outs(%acc : tensor<1x2xf32>) -> tensor<1x2xf32>
  return %out : tensor<1x2xf32>
}
