// codegen-matmul-epilogue-register-tile.mlir - a matmul with K within one
// 256-deep K tile, a dynamic row count and bias + ReLU: the epilogue runs on
// the register tile's accumulators (KernelCodegen.cpp,
// tileMatmulWithEpilogue). Full tiles are 8 x 32, the rows past the last
// multiple of 8 go one at a time (1 x 32); no masks, no temporary tile.

// RUN: %turbine compile %s --target-cpu=skylake-avx512 --compile-to=codegen | FileCheck %s
// RUN: %turbine compile %s --target-cpu=skylake-avx512 --compile-to=codegen --mlir-print-ir-after=turbine-cpu-tile-and-vectorize 2>&1 >/dev/null | FileCheck %s --check-prefix=VECTOR

// CHECK:       llvm.func @matmul_Dx64x100_f32(
// CHECK-NOT:     llvm.call @malloc
// CHECK:       llvm.return

// VECTOR:      func.func @matmul_Dx64x100_f32(
// VECTOR-NOT:    vector.create_mask
// VECTOR:        %[[ACC:.*]]:2 = scf.for {{.*}} -> (tensor<8x32xf32>, vector<8x32xf32>)
// VECTOR:          vector.contract
// VECTOR:        vector.transfer_write %[[ACC]]#1, %[[ACC]]#0
// VECTOR-NOT:    vector.create_mask
// VECTOR:        arith.addf %{{.*}}, %{{.*}} : vector<8x32xf32>
// VECTOR-NEXT:   arith.maximumf %{{.*}}, %{{.*}} : vector<8x32xf32>
// VECTOR-NOT:    vector.create_mask
// VECTOR:        %[[ROW:.*]]:2 = scf.for {{.*}} -> (tensor<1x32xf32>, vector<1x32xf32>)
// VECTOR:          vector.contract
// VECTOR:        vector.transfer_write %[[ROW]]#1, %[[ROW]]#0
// VECTOR-NOT:    vector.create_mask
// VECTOR:        arith.addf %{{.*}}, %{{.*}} : vector<1x32xf32>
// VECTOR-NEXT:   arith.maximumf %{{.*}}, %{{.*}} : vector<1x32xf32>
// VECTOR-NOT:    vector.create_mask
// VECTOR:        return
func.func @main(%x: tensor<?x100xf32>, %w: tensor<100x64xf32>, %b: tensor<64xf32>) -> tensor<?x64xf32> {
  %c0 = arith.constant 0 : index
  %d0 = tensor.dim %x, %c0 : tensor<?x100xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty(%d0) : tensor<?x64xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<?x64xf32>) -> tensor<?x64xf32>
  %m = linalg.matmul ins(%x, %w : tensor<?x100xf32>, tensor<100x64xf32>) outs(%f : tensor<?x64xf32>) -> tensor<?x64xf32>
  %e2 = tensor.empty(%d0) : tensor<?x64xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i,j)->(i,j)>, affine_map<(i,j)->(j)>, affine_map<(i,j)->(i,j)>], iterator_types = ["parallel","parallel"]} ins(%m, %b : tensor<?x64xf32>, tensor<64xf32>) outs(%e2 : tensor<?x64xf32>) {
  ^bb0(%a: f32, %bb: f32, %o: f32):
    %s = arith.addf %a, %bb : f32
    %z = arith.maximumf %s, %zero : f32
    linalg.yield %z : f32
  } -> tensor<?x64xf32>
  return %r : tensor<?x64xf32>
}
