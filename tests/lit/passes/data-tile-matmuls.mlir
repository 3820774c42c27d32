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

// -----

// A constant B whose N (260) is not a multiple of 32 but at least 256: packed
// with zero columns into 9 whole panels (the last 4 columns wide), the
// padded result C [M, 288] read back by a gather of its first 260 columns,
// fused into the bias epilogue (no slice op left for the host). Below 256
// (N = 100, next function) the zero columns would be too large a part: not
// packed.
// AUTO-LABEL: func.func @constant_b_padded
// AUTO:         %[[B:.*]] = arith.constant dense<{{.*}}> : tensor<9x16x32xf32>
// AUTO:         linalg.fill {{.*}} -> tensor<?x288xf32>
// AUTO:         %[[C:.*]] = linalg.contract {{.*}} ins(%{{.*}}, %[[B]] : tensor<?x16xf32>, tensor<9x16x32xf32>)
// AUTO:         %[[P:.*]] = tensor.collapse_shape %[[C]] {{.*}} into tensor<?x288xf32>
// AUTO:         linalg.generic {{.*}} ins(%{{.*}} : tensor<260xf32>) outs(%{{.*}} : tensor<?x260xf32>)
// AUTO:           linalg.index 0
// AUTO:           linalg.index 1
// AUTO:           tensor.extract %[[P]]
// AUTO:           arith.addf
// AUTO-NOT:     tensor.extract_slice
// AUTO-NOT:     linalg.matmul
// OFF-LABEL:  func.func @constant_b_padded
// OFF:          linalg.matmul
func.func @constant_b_padded(%a: tensor<?x16xf32>, %bias: tensor<260xf32>) -> tensor<?x260xf32> {
  %b = arith.constant dense<0.5> : tensor<16x260xf32>
  %c0 = arith.constant 0 : index
  %m = tensor.dim %a, %c0 : tensor<?x16xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty(%m) : tensor<?x260xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<?x260xf32>) -> tensor<?x260xf32>
  %r = linalg.matmul ins(%a, %b : tensor<?x16xf32>, tensor<16x260xf32>) outs(%f : tensor<?x260xf32>) -> tensor<?x260xf32>
  %e2 = tensor.empty(%m) : tensor<?x260xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%r, %bias : tensor<?x260xf32>, tensor<260xf32>) outs(%e2 : tensor<?x260xf32>) {
  ^bb0(%x: f32, %bv: f32, %o: f32):
    %s = arith.addf %x, %bv : f32
    linalg.yield %s : f32
  } -> tensor<?x260xf32>
  return %y : tensor<?x260xf32>
}

// -----

// AUTO-LABEL: func.func @constant_b_narrow
// AUTO:         linalg.matmul
// AUTO-NOT:     linalg.contract
func.func @constant_b_narrow(%a: tensor<?x16xf32>) -> tensor<?x100xf32> {
  %b = arith.constant dense<0.5> : tensor<16x100xf32>
  %c0 = arith.constant 0 : index
  %m = tensor.dim %a, %c0 : tensor<?x16xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty(%m) : tensor<?x100xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<?x100xf32>) -> tensor<?x100xf32>
  %r = linalg.matmul ins(%a, %b : tensor<?x16xf32>, tensor<16x100xf32>) outs(%f : tensor<?x100xf32>) -> tensor<?x100xf32>
  return %r : tensor<?x100xf32>
}
