// codegen-elementwise-vector-memory.mlir - an elementwise kernel reads and
// writes whole vectors.
//
// 8x128 f32 with a 64-wide inner vector tile: both inputs are read with
// llvm.load of vector<64xf32>, the result written with llvm.store of
// vector<64xf32>, and no scalar f32 load or store is left.

// RUN: %turbine compile %s --compile-to=codegen | FileCheck %s

// CHECK:       module @kernels
// CHECK:         llvm.func @elementwise_8x128_f32(
// CHECK-NOT:       llvm.load {{.*}} -> f32
// CHECK:           llvm.load %{{.*}} : !llvm.ptr -> vector<64xf32>
// CHECK:           llvm.load %{{.*}} : !llvm.ptr -> vector<64xf32>
// CHECK-NOT:       llvm.store {{.*}} : f32, !llvm.ptr
// CHECK:           llvm.store %{{.*}}, %{{.*}} {{.*}}: vector<64xf32>, !llvm.ptr
// CHECK-NOT:       llvm.store {{.*}} : f32, !llvm.ptr
#id = affine_map<(i, j) -> (i, j)>
func.func @main(%x: tensor<8x128xf32>, %y: tensor<8x128xf32>) -> tensor<8x128xf32> {
  %e = tensor.empty() : tensor<8x128xf32>
  %r = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %y : tensor<8x128xf32>, tensor<8x128xf32>) outs(%e : tensor<8x128xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.addf %a, %b : f32
    %p = arith.mulf %s, %a : f32
    linalg.yield %p : f32
  } -> tensor<8x128xf32>
  return %r : tensor<8x128xf32>
}
