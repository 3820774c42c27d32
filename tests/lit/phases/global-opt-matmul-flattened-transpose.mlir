// global-opt-matmul-flattened-transpose.mlir - NCHW pooling runs NHWC
// between transposes (ChannelsLastConvolutions.cpp); its transpose back to
// NCHW, flattened into the rows of a matmul by a constant (Flatten + Linear),
// is dropped: the matmul reads the flattened NHWC result and the constant's
// rows are permuted to match at compile time (TransposeElimination.cpp).
// The result is checked against NumPy.

// RUN: %turbine compile %s --compile-to=global-opt | FileCheck %s
// RUN: %turbine compile %s -o %t.tmod
// RUN: %python -c "import numpy as np; x = (np.arange(96).reshape(2, 3, 4, 4) %% 17 - 8).astype(np.float32) / 2; w = ((np.arange(24).reshape(12, 2) * 5) %% 13 - 6).astype(np.float32) / 4; p = x.reshape(2, 3, 2, 2, 2, 2).max(axis=(3, 5)); np.save('%t.x.npy', x); np.save('%t.out.npy', p.reshape(2, 12) @ w)"
// RUN: %turbine run %t.tmod --input=@%t.x.npy --expected_output=@%t.out.npy --atol=1e-5 --rtol=1e-5 | FileCheck %s --check-prefix=RUN-CHECK

// CHECK-LABEL: func.func @main
// The permuted weight keeps a derived name (ParameterNames.h): W viewed
// (C, H, W, N), permuted to (H, W, C, N), flattened again.
// CHECK:         arith.constant {turbine.param_name = "fc.weight.T.reshape(3,2,2,2).permute(1,2,0,3).reshape(12,2)"}
// CHECK:         %[[POOL:.*]] = linalg.pooling_nhwc_max {{.*}} -> tensor<2x2x2x3xf32>
// CHECK-NOT:     tensor<2x3x2x2xf32>
// CHECK:         %[[ROWS:.*]] = tensor.collapse_shape %[[POOL]] {{\[}}[0], [1, 2, 3]] : tensor<2x2x2x3xf32> into tensor<2x12xf32>
// CHECK:         linalg.matmul ins(%[[ROWS]], %{{.*}} : tensor<2x12xf32>, tensor<12x2xf32>)

// RUN-CHECK: [SUCCESS]
func.func @main(%x: tensor<2x3x4x4xf32>) -> tensor<2x2xf32> {
  %lowest = arith.constant 0xFF800000 : f32
  %zero = arith.constant 0.0 : f32
  %window = tensor.empty() : tensor<2x2xf32>
  %e = tensor.empty() : tensor<2x3x2x2xf32>
  %init = linalg.fill ins(%lowest : f32) outs(%e : tensor<2x3x2x2xf32>) -> tensor<2x3x2x2xf32>
  %pool = linalg.pooling_nchw_max {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
      ins(%x, %window : tensor<2x3x4x4xf32>, tensor<2x2xf32>) outs(%init : tensor<2x3x2x2xf32>) -> tensor<2x3x2x2xf32>
  %rows = tensor.collapse_shape %pool [[0], [1, 2, 3]] : tensor<2x3x2x2xf32> into tensor<2x12xf32>
  %w = arith.constant {turbine.param_name = "fc.weight.T"} dense<[[-1.5 , -0.25], [ 1.  , -1.  ], [ 0.25,  1.5 ], [-0.5 ,  0.75], [-1.25,  0.  ], [ 1.25, -0.75], [ 0.5 , -1.5 ], [-0.25,  1.  ], [-1.  ,  0.25], [ 1.5 , -0.5 ], [ 0.75, -1.25], [ 0.  ,  1.25]]> : tensor<12x2xf32>
  %me = tensor.empty() : tensor<2x2xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%me : tensor<2x2xf32>) -> tensor<2x2xf32>
  %out = linalg.matmul ins(%rows, %w : tensor<2x12xf32>, tensor<12x2xf32>) outs(%acc : tensor<2x2xf32>) -> tensor<2x2xf32>
  return %out : tensor<2x2xf32>
}
