// codegen-matmul-epilogue-in-place.mlir - a matmul's elementwise epilogue
// (attention's Q.K^T / 8 here) updates the matmul's result in place
// (MatmulEpilogueInPlace.h): the batch matmul accumulates into the output
// binding's tile and the scale reads and writes that same tile, so the
// kernel allocates no temporary tile (before: a malloc and free per
// workgroup tile). Where one register-tile pass covers the matmul (static
// 8 x 32 tiles, K within one 256-deep K tile), the scale runs on the
// accumulators before the one store of each tile.

// RUN: %turbine compile %s --target-cpu=skylake-avx512 --compile-to=codegen | FileCheck %s
// RUN: %turbine compile %s --target-cpu=skylake-avx512 --compile-to=codegen --mlir-print-ir-after=turbine-cpu-tile-and-vectorize 2>&1 >/dev/null | FileCheck %s --check-prefix=VECTOR

// CHECK:       llvm.func @batch_matmul_4x128x128x64_f32(
// CHECK-NOT:     llvm.call @malloc
// CHECK:         llvm.intr.fmuladd(%{{.*}}, %{{.*}}, %{{.*}}) : (vector<32xf32>, vector<32xf32>, vector<32xf32>) -> vector<32xf32>
// CHECK-NOT:     llvm.call @malloc
// CHECK:         llvm.fdiv %{{.*}}, %{{.*}} : vector<32xf32>
// CHECK-NOT:     llvm.call @malloc
// CHECK:       llvm.return

// The workgroup loop's destination is the output (one tensor.empty that
// bufferizes to the binding). Static 8 x 32 register tiles with K in one K
// tile: the fill, the k loop (accumulators carried as a vector) and the
// scale on the accumulators, one write of the tile (LLVM forwards the
// tile's write/read pair around the k loop; the CHECK lines of the LLVM
// dialect above see one fdiv per tile, after the fmuladds).
// VECTOR:      func.func @batch_matmul_4x128x128x64_f32(
// VECTOR-NOT:    tensor.empty
// VECTOR:        %[[OUT:.*]] = tensor.empty(
// VECTOR-NOT:    tensor.empty
// VECTOR:        scf.for {{.*}} iter_args(%{{.*}} = %[[OUT]])
// VECTOR-NOT:    tensor.empty
// VECTOR:        %[[ACC:.*]]:2 = scf.for {{.*}} -> (tensor<1x8x32xf32>, vector<1x8x32xf32>)
// VECTOR:          vector.contract
// VECTOR:        %[[W:.*]] = vector.transfer_write %[[ACC]]#1, %[[ACC]]#0
// VECTOR-NEXT:   %[[X:.*]] = vector.transfer_read %[[W]]
// VECTOR-NEXT:   %[[Y:.*]] = arith.divf %[[X]], %{{.*}} : vector<1x8x32xf32>
// VECTOR-NEXT:   vector.transfer_write %[[Y]], %[[W]]
// VECTOR-NOT:    tensor.empty
// VECTOR:        return
func.func @main(%q: tensor<4x128x64xf32>, %kt: tensor<4x64x128xf32>) -> tensor<4x128x128xf32> {
  %zero = arith.constant 0.0 : f32
  %eight = arith.constant 8.0 : f32
  %e = tensor.empty() : tensor<4x128x128xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<4x128x128xf32>) -> tensor<4x128x128xf32>
  %s = linalg.batch_matmul ins(%q, %kt : tensor<4x128x64xf32>, tensor<4x64x128xf32>) outs(%f : tensor<4x128x128xf32>) -> tensor<4x128x128xf32>
  %e2 = tensor.empty() : tensor<4x128x128xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(b, i, j) -> (b, i, j)>, affine_map<(b, i, j) -> (b, i, j)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%s : tensor<4x128x128xf32>) outs(%e2 : tensor<4x128x128xf32>) {
  ^bb0(%x: f32, %o: f32):
    %y = arith.divf %x, %eight : f32
    linalg.yield %y : f32
  } -> tensor<4x128x128xf32>
  return %r : tensor<4x128x128xf32>
}
