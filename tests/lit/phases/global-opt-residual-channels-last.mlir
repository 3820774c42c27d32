// global-opt-residual-channels-last.mlir - a residual connection stays in
// NHWC. r1 = relu(conv1(x)) feeds both conv2 and the residual add, so
// elementwise fusion (single-use producers only) cannot move the transpose to
// NHWC before conv2 into it; ChannelsLastConvolutions.cpp makes r1's generic
// produce NHWC itself and the residual add read it through a permuted map.
// Only the graph's input and output change layout: no NCHW intermediate, no
// transpose between the convolutions. The result is checked against NumPy.

// RUN: %turbine compile %s --compile-to=global-opt | FileCheck %s
// RUN: %turbine compile %s -o %t.tmod
// RUN: %python -c "import numpy as np; x = (np.arange(144).reshape(1, 4, 6, 6) %% 7 - 3).astype(np.float32); w2 = np.array([[(f - c) * 0.25 for c in range(4)] for f in range(4)], np.float32); r1 = np.maximum(np.einsum('fc,nchw->nfhw', np.full((4, 4), 0.5, np.float32), x), 0); out = np.maximum(np.einsum('fc,nchw->nfhw', w2, r1) + r1, 0); np.save('%t.x.npy', x); np.save('%t.out.npy', out.astype(np.float32))"
// RUN: %turbine run %t.tmod --input=@%t.x.npy --expected_output=@%t.out.npy --atol=1e-5 --rtol=1e-5 | FileCheck %s --check-prefix=RUN-CHECK
// RUN: %turbine run %t.tmod --device=local-task --task_workers=2 --input=@%t.x.npy --expected_output=@%t.out.npy --atol=1e-5 --rtol=1e-5 | FileCheck %s --check-prefix=RUN-CHECK

// CHECK-LABEL: func.func @main
// CHECK:         %[[XT:.*]] = linalg.generic {{.*}} ins(%{{.*}} : tensor<1x4x6x6xf32>) outs(%{{.*}} : tensor<1x6x6x4xf32>)
// CHECK:         %[[C1:.*]] = linalg.conv_2d_nhwc_hwcf {{.*}} ins(%[[XT]], %{{.*}} : tensor<1x6x6x4xf32>, tensor<1x1x4x4xf32>)
// CHECK:         %[[R1:.*]] = linalg.generic {{.*}} ins(%[[C1]] : tensor<1x6x6x4xf32>) outs(%{{.*}} : tensor<1x6x6x4xf32>)
// CHECK:           arith.maximumf
// CHECK-NOT:     tensor<1x4x6x6xf32>
// CHECK:         %[[C2:.*]] = linalg.conv_2d_nhwc_hwcf {{.*}} ins(%[[R1]], %{{.*}} : tensor<1x6x6x4xf32>, tensor<1x1x4x4xf32>)
// CHECK:         %[[OUT:.*]] = linalg.generic {{.*}} ins(%[[C2]], %[[R1]] : tensor<1x6x6x4xf32>, tensor<1x6x6x4xf32>) outs(%{{.*}} : tensor<1x4x6x6xf32>)
// CHECK:           arith.addf
// CHECK:         return %[[OUT]]

// RUN-CHECK: [SUCCESS]

#id = affine_map<(a, b, c, d) -> (a, b, c, d)>
func.func @main(%x: tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32> {
  %w1 = arith.constant dense<0.5> : tensor<4x4x1x1xf32>
  %w2 = arith.constant dense<[[[[0.0]], [[-0.25]], [[-0.5]], [[-0.75]]],
                              [[[0.25]], [[0.0]], [[-0.25]], [[-0.5]]],
                              [[[0.5]], [[0.25]], [[0.0]], [[-0.25]]],
                              [[[0.75]], [[0.5]], [[0.25]], [[0.0]]]]> : tensor<4x4x1x1xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x4x6x6xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32>
  %c1 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%x, %w1 : tensor<1x4x6x6xf32>, tensor<4x4x1x1xf32>) outs(%acc : tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32>
  %r1 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%c1 : tensor<1x4x6x6xf32>) outs(%e : tensor<1x4x6x6xf32>) {
  ^bb0(%v: f32, %o: f32):
    %m = arith.maximumf %v, %zero : f32
    linalg.yield %m : f32
  } -> tensor<1x4x6x6xf32>
  %c2 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%r1, %w2 : tensor<1x4x6x6xf32>, tensor<4x4x1x1xf32>) outs(%acc : tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32>
  %sum = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%c2, %r1 : tensor<1x4x6x6xf32>, tensor<1x4x6x6xf32>) outs(%e : tensor<1x4x6x6xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.addf %a, %b : f32
    %m = arith.maximumf %s, %zero : f32
    linalg.yield %m : f32
  } -> tensor<1x4x6x6xf32>
  return %sum : tensor<1x4x6x6xf32>
}
