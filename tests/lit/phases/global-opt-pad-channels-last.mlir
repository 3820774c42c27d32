// global-opt-pad-channels-last.mlir - a padded NCHW convolution input is
// padded after its transpose to NHWC (so the transpose can fuse with what
// produced the input), and global-opt lowers every tensor.pad to one
// gathering linalg.generic (clamped tensor.extract, select outside). The
// input here is a function argument, so the gather reads it through the
// transpose (TransposeElimination.cpp): no NHWC copy of it is made. The
// result is checked against NumPy.

// RUN: %turbine compile %s --compile-to=global-opt | FileCheck %s
// RUN: %turbine compile %s -o %t.tmod
// RUN: %python -c "import numpy as np; x = (np.arange(192).reshape(1, 3, 8, 8) %% 11 - 5).astype(np.float32); w = (np.arange(108).reshape(4, 3, 3, 3) %% 7 - 3).astype(np.float32) / 4; xp = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1))); out = np.zeros((1, 4, 8, 8), np.float32); exec('for i in range(8):\n for j in range(8):\n  out[0, :, i, j] = np.einsum(\'fckl,ckl->f\', w, xp[0, :, i:i + 3, j:j + 3])'); np.save('%t.x.npy', x); np.save('%t.w.npy', w); np.save('%t.out.npy', out)"
// RUN: %turbine run %t.tmod --input=@%t.x.npy --input=@%t.w.npy --expected_output=@%t.out.npy --atol=1e-5 --rtol=1e-5 | FileCheck %s --check-prefix=RUN-CHECK

// CHECK-LABEL: func.func @main
// CHECK-SAME:    (%[[X:[^:]*]]: tensor<1x3x8x8xf32>
// CHECK-NOT:     outs(%{{.*}} : tensor<1x8x8x3xf32>)
// CHECK:         %[[PAD:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<1x10x10x3xf32>)
// CHECK:           tensor.extract %[[X]][%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}] : tensor<1x3x8x8xf32>
// CHECK:           arith.select
// CHECK:         linalg.conv_2d_nhwc_hwcf {{.*}} ins(%[[PAD]], %{{.*}} : tensor<1x10x10x3xf32>, tensor<3x3x3x4xf32>)
// CHECK-NOT:     tensor.pad

// RUN-CHECK: [SUCCESS]
func.func @main(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x4x8x8xf32> {
  %zero = arith.constant 0.0 : f32
  %padded = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%a: index, %b: index, %c: index, %d: index):
    tensor.yield %zero : f32
  } : tensor<1x3x8x8xf32> to tensor<1x3x10x10xf32>
  %e = tensor.empty() : tensor<1x4x8x8xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
  %conv = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%padded, %w : tensor<1x3x10x10xf32>, tensor<4x3x3x3xf32>) outs(%acc : tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
  return %conv : tensor<1x4x8x8xf32>
}
