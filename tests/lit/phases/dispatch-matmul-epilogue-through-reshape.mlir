// dispatch-matmul-epilogue-through-reshape.mlir - a bias + residual add after
// a matmul on flattened rows fuses into the matmul's kernel.
//
// ONNX MatMul of a ?x4x8 activation by 8x16 weights imports as collapse to
// ?x8 rows, matmul, expand back to ?x4x16; the bias and the residual add
// then work on ?x4x16. Global-opt collapses them to the matmul's 2-D shape
// (GlobalOptPhase.cpp), so @main holds exactly one dispatch; the row count
// (batch * 4) is left as an affine.apply, which the host program expands.
// Checked against NumPy at batch 3 on both devices.

// RUN: %turbine compile %s --compile-to=dispatch | FileCheck %s
// RUN: %turbine compile %s -o %t.tmod
// RUN: %python -c "import numpy as np; x = (np.arange(96).reshape(3, 4, 8) %% 9 - 4).astype(np.float32) / 4; r = (np.arange(192).reshape(3, 4, 16) %% 5 - 2).astype(np.float32); w = (np.arange(128).reshape(8, 16) %% 7 - 3).astype(np.float32) / 8; b = (np.arange(16) %% 3 - 1).astype(np.float32); np.save('%t.x.npy', x); np.save('%t.r.npy', r); np.save('%t.w.npy', w); np.save('%t.b.npy', b); np.save('%t.out.npy', (x @ w + b + r).astype(np.float32))"
// RUN: %turbine run %t.tmod --input=@%t.x.npy --input=@%t.w.npy --input=@%t.b.npy --input=@%t.r.npy --expected_output=@%t.out.npy --atol=1e-5 --rtol=1e-5 | FileCheck %s --check-prefix=RUN-CHECK
// RUN: %turbine run %t.tmod --device=local-task --task_workers=2 --input=@%t.x.npy --input=@%t.w.npy --input=@%t.b.npy --input=@%t.r.npy --expected_output=@%t.out.npy --atol=1e-5 --rtol=1e-5 | FileCheck %s --check-prefix=RUN-CHECK

// CHECK-LABEL: func.func @main(
// CHECK:         affine.apply
// CHECK:         turbine.dispatch @matmul_Dx16x8_f32
// CHECK-NOT:     turbine.dispatch
// CHECK:         return

// RUN-CHECK: [SUCCESS]

func.func @main(%x: tensor<?x4x8xf32>, %w: tensor<8x16xf32>, %b: tensor<16xf32>,
                %r: tensor<?x4x16xf32>) -> tensor<?x4x16xf32> {
  %c0 = arith.constant 0 : index
  %c4 = arith.constant 4 : index
  %zero = arith.constant 0.0 : f32
  %batch = tensor.dim %x, %c0 : tensor<?x4x8xf32>
  %rows = arith.muli %batch, %c4 : index
  %flat = tensor.collapse_shape %x [[0, 1], [2]] : tensor<?x4x8xf32> into tensor<?x8xf32>
  %e = tensor.empty(%rows) : tensor<?x16xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<?x16xf32>) -> tensor<?x16xf32>
  %mm = linalg.matmul ins(%flat, %w : tensor<?x8xf32>, tensor<8x16xf32>) outs(%acc : tensor<?x16xf32>) -> tensor<?x16xf32>
  %y = tensor.expand_shape %mm [[0, 1], [2]] output_shape [%batch, 4, 16] : tensor<?x16xf32> into tensor<?x4x16xf32>
  %oe = tensor.empty(%batch) : tensor<?x4x16xf32>
  %out = linalg.generic {indexing_maps = [affine_map<(n, s, c) -> (n, s, c)>, affine_map<(n, s, c) -> (c)>,
                                          affine_map<(n, s, c) -> (n, s, c)>, affine_map<(n, s, c) -> (n, s, c)>],
                         iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%y, %b, %r : tensor<?x4x16xf32>, tensor<16xf32>, tensor<?x4x16xf32>) outs(%oe : tensor<?x4x16xf32>) {
  ^bb0(%v: f32, %bias: f32, %res: f32, %o: f32):
    %s = arith.addf %v, %bias : f32
    %t = arith.addf %s, %res : f32
    linalg.yield %t : f32
  } -> tensor<?x4x16xf32>
  return %out : tensor<?x4x16xf32>
}
