// codegen-elementwise-dynamic-masks.mlir - elementwise kernels on dynamic
// shapes use masked vector loads and stores for partial tiles rather than
// falling back to scalar code.

// RUN: %turbine compile %s --compile-to=codegen | FileCheck %s

// CHECK:       module @kernels
// CHECK:         llvm.func @elementwise_DxD_f32(
// CHECK:           llvm.intr.masked.load %{{.*}}, %{{.*}}, %{{.*}} {{.*}}: (!llvm.ptr, vector<64xi1>, vector<64xf32>) -> vector<64xf32>
// CHECK:           llvm.fneg %{{.*}} : vector<64xf32>
// CHECK:           llvm.intr.masked.store %{{.*}}, %{{.*}}, %{{.*}} {{.*}}: vector<64xf32>, vector<64xi1> into !llvm.ptr
#id = affine_map<(i, j) -> (i, j)>
func.func @main(%x: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %d0 = tensor.dim %x, %c0 : tensor<?x?xf32>
  %d1 = tensor.dim %x, %c1 : tensor<?x?xf32>
  %e = tensor.empty(%d0, %d1) : tensor<?x?xf32>
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<?x?xf32>) outs(%e : tensor<?x?xf32>) {
  ^bb0(%a: f32, %o: f32):
    %n = arith.negf %a : f32
    linalg.yield %n : f32
  } -> tensor<?x?xf32>
  return %r : tensor<?x?xf32>
}
