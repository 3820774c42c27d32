// data-tile-matmuls.mlir - turbine-data-tile-matmuls and its options: a
// matmul by a constant B reads B packed into (N/32, K, 32) panels through a
// linalg.contract (folded at compile time); data-tiling=off leaves it; a
// run-time B is marked for the in-kernel pack with kernel-pack=all and left
// unmarked with kernel-pack=off.

// RUN: turbine-opt %s --split-input-file --turbine-data-tile-matmuls | FileCheck %s --check-prefix=AUTO
// RUN: turbine-opt %s --split-input-file --turbine-data-tile-matmuls=data-tiling=off | FileCheck %s --check-prefix=OFF
// RUN: turbine-opt %s --split-input-file '--turbine-data-tile-matmuls=kernel-pack=all' | FileCheck %s --check-prefix=KPACK
// RUN: turbine-opt %s --split-input-file '--turbine-data-tile-matmuls=kernel-pack=off' | FileCheck %s --check-prefix=NOKPACK

// AUTO-LABEL: func.func @constant_b
// AUTO:         arith.constant dense<{{.*}}> : tensor<2x16x32xf32>
// AUTO:         linalg.contract
// AUTO-NOT:     linalg.matmul
// OFF-LABEL:  func.func @constant_b
// OFF:          linalg.matmul
// OFF-NOT:      linalg.contract
func.func @constant_b(%a: tensor<?x16xf32>) -> tensor<?x64xf32> {
  %b = arith.constant dense<0.5> : tensor<16x64xf32>
  %c0 = arith.constant 0 : index
  %m = tensor.dim %a, %c0 : tensor<?x16xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty(%m) : tensor<?x64xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<?x64xf32>) -> tensor<?x64xf32>
  %r = linalg.matmul ins(%a, %b : tensor<?x16xf32>, tensor<16x64xf32>) outs(%f : tensor<?x64xf32>) -> tensor<?x64xf32>
  return %r : tensor<?x64xf32>
}

// -----

// AUTO-LABEL:    func.func @runtime_b
// OFF-LABEL:     func.func @runtime_b
// KPACK-LABEL:   func.func @runtime_b
// KPACK:           linalg.matmul {turbine.pack_b_in_kernel}
// NOKPACK-LABEL: func.func @runtime_b
// NOKPACK-NOT:     turbine.pack_b_in_kernel
func.func @runtime_b(%a: tensor<?x16xf32>, %b: tensor<16x64xf32>) -> tensor<?x64xf32> {
  %c0 = arith.constant 0 : index
  %m = tensor.dim %a, %c0 : tensor<?x16xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty(%m) : tensor<?x64xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<?x64xf32>) -> tensor<?x64xf32>
  %r = linalg.matmul ins(%a, %b : tensor<?x16xf32>, tensor<16x64xf32>) outs(%f : tensor<?x64xf32>) -> tensor<?x64xf32>
  return %r : tensor<?x64xf32>
}
