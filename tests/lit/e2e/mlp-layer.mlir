// mlp-layer.mlir - compile the MLP layer (Gemm + bias + ReLU, dynamic batch)
// and run it on both local devices; the printed result must equal values
// computed independently with NumPy.
//
// Inputs (all exactly representable, and every partial sum is a multiple of
// 1/32, so f32 arithmetic is exact in any summation order):
//   x[i,k] = ((13*i + 5*k) % 9 - 4) / 4      2x64, given as text below
//   w[k,j] = ((7*k + 3*j) % 11 - 5) / 8      64x32, written to .npy by %python
//   b[j]   = (j % 5 - 2) / 2                 32, given as text below
// Expected: max(x @ w + b, 0), from NumPy 1.24 (see the CHECK lines); about
// half the outputs are clamped by the ReLU.

// RUN: %turbine compile %s -o %t.tmod
// RUN: %python -c "import numpy as np; k = np.arange(64)[:, None]; j = np.arange(32)[None, :]; np.save('%t.w.npy', ((((7 * k + 3 * j) %% 11) - 5) / 8).astype(np.float32))"
// RUN: %turbine run %t.tmod --device=local-sync \
// RUN:   --input="2x64xf32=-1 0.25 -0.75 0.5 -0.5 0.75 -0.25 1 0 -1 0.25 -0.75 0.5 -0.5 0.75 -0.25 1 0 -1 0.25 -0.75 0.5 -0.5 0.75 -0.25 1 0 -1 0.25 -0.75 0.5 -0.5 0.75 -0.25 1 0 -1 0.25 -0.75 0.5 -0.5 0.75 -0.25 1 0 -1 0.25 -0.75 0.5 -0.5 0.75 -0.25 1 0 -1 0.25 -0.75 0.5 -0.5 0.75 -0.25 1 0 -1 \
// RUN:                    0 -1 0.25 -0.75 0.5 -0.5 0.75 -0.25 1 0 -1 0.25 -0.75 0.5 -0.5 0.75 -0.25 1 0 -1 0.25 -0.75 0.5 -0.5 0.75 -0.25 1 0 -1 0.25 -0.75 0.5 -0.5 0.75 -0.25 1 0 -1 0.25 -0.75 0.5 -0.5 0.75 -0.25 1 0 -1 0.25 -0.75 0.5 -0.5 0.75 -0.25 1 0 -1 0.25 -0.75 0.5 -0.5 0.75 -0.25 1 0" \
// RUN:   --input=@%t.w.npy \
// RUN:   --input="32xf32=-1 -0.5 0 0.5 1 -1 -0.5 0 0.5 1 -1 -0.5 0 0.5 1 -1 -0.5 0 0.5 1 -1 -0.5 0 0.5 1 -1 -0.5 0 0.5 1 -1 -0.5" \
// RUN:   | FileCheck %s
// RUN: %turbine run %t.tmod --device=local-task --task_workers=2 \
// RUN:   --input="2x64xf32=-1 0.25 -0.75 0.5 -0.5 0.75 -0.25 1 0 -1 0.25 -0.75 0.5 -0.5 0.75 -0.25 1 0 -1 0.25 -0.75 0.5 -0.5 0.75 -0.25 1 0 -1 0.25 -0.75 0.5 -0.5 0.75 -0.25 1 0 -1 0.25 -0.75 0.5 -0.5 0.75 -0.25 1 0 -1 0.25 -0.75 0.5 -0.5 0.75 -0.25 1 0 -1 0.25 -0.75 0.5 -0.5 0.75 -0.25 1 0 -1 \
// RUN:                    0 -1 0.25 -0.75 0.5 -0.5 0.75 -0.25 1 0 -1 0.25 -0.75 0.5 -0.5 0.75 -0.25 1 0 -1 0.25 -0.75 0.5 -0.5 0.75 -0.25 1 0 -1 0.25 -0.75 0.5 -0.5 0.75 -0.25 1 0 -1 0.25 -0.75 0.5 -0.5 0.75 -0.25 1 0 -1 0.25 -0.75 0.5 -0.5 0.75 -0.25 1 0 -1 0.25 -0.75 0.5 -0.5 0.75 -0.25 1 0" \
// RUN:   --input=@%t.w.npy \
// RUN:   --input="32xf32=-1 -0.5 0 0.5 1 -1 -0.5 0 0.5 1 -1 -0.5 0 0.5 1 -1 -0.5 0 0.5 1 -1 -0.5 0 0.5 1 -1 -0.5 0 0.5 1 -1 -0.5" \
// RUN:   | FileCheck %s

// CHECK:      EXEC @main
// CHECK-NEXT: result[0]: hal.buffer_view
// CHECK-NEXT: 2x32xf32=[0.40625 0.875 1 1.125 2.28125 0 0 0 0 0.0625 0 0.90625 1.375 1.5 1.625 0.28125 0 0 0 0 0 0 1.40625 1.875 2 0 0.78125 0.21875 0 0 0 0][0 0 0 0 1.21875 0 0.75 1.25 1.75 1.90625 0 0 0 0 0.1875 0 0.40625 1.25 1.75 2.25 0 0 0 0 0 0 0 0.90625 1.75 2.25 0.25 0.40625]{{$}}
func.func @main(%x: tensor<?x64xf32>, %w: tensor<64x32xf32>, %b: tensor<32xf32>) -> tensor<?x32xf32> {
  %c0 = arith.constant 0 : index
  %d0 = tensor.dim %x, %c0 : tensor<?x64xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty(%d0) : tensor<?x32xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<?x32xf32>) -> tensor<?x32xf32>
  %m = linalg.matmul ins(%x, %w : tensor<?x64xf32>, tensor<64x32xf32>) outs(%f : tensor<?x32xf32>) -> tensor<?x32xf32>
  %e2 = tensor.empty(%d0) : tensor<?x32xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i,j)->(i,j)>, affine_map<(i,j)->(j)>, affine_map<(i,j)->(i,j)>], iterator_types = ["parallel","parallel"]} ins(%m, %b : tensor<?x32xf32>, tensor<32xf32>) outs(%e2 : tensor<?x32xf32>) {
  ^bb0(%a: f32, %bb: f32, %o: f32):
    %s = arith.addf %a, %bb : f32
    %z = arith.maximumf %s, %zero : f32
    linalg.yield %z : f32
  } -> tensor<?x32xf32>
  return %r : tensor<?x32xf32>
}
