// form-dispatches.mlir - turbine-form-dispatches: each region (a root with
// its elementwise consumers and destination fills) becomes a kernel of the
// kernel container, named after its root op and shapes (D = dynamic), made
// unique with a suffix, with the CPU target's workgroup tiles on it and a
// turbine.dispatch on the host.

// RUN: turbine-opt %s --turbine-form-dispatches | FileCheck %s

#id = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (i)>
#bias = affine_map<(i, j) -> (j)>
// The first matmul's region takes in the bias add and the sum (each the
// only user of its operand), so its dispatch sits where the sum was, after
// the second matmul's; kernels are named in region order.
// CHECK-LABEL: func.func @main
// CHECK:         %[[SECOND:.*]] = turbine.dispatch @matmul_Dx64x16_f32_1[
// CHECK:         turbine.dispatch @matmul_Dx64x16_f32[{{.*}}] ({{.*}}, %[[SECOND]])
// CHECK:         turbine.dispatch @reduce_sum_Dx64_f32[
// CHECK:       module @kernels attributes {turbine.kernels}
// CHECK:         func.func @matmul_Dx64x16_f32(
// CHECK-SAME:      turbine.kernel
// CHECK-SAME:      turbine.workgroup_dims
// CHECK-SAME:      turbine.workgroup_tiles
// CHECK:           linalg.matmul
// CHECK:           linalg.generic
// CHECK:         func.func @matmul_Dx64x16_f32_1(
// CHECK:         func.func @reduce_sum_Dx64_f32(
func.func @main(%a: tensor<?x16xf32>, %b: tensor<16x64xf32>, %bias: tensor<64xf32>) -> tensor<?xf32> {
  %c0 = arith.constant 0 : index
  %m = tensor.dim %a, %c0 : tensor<?x16xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty(%m) : tensor<?x64xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<?x64xf32>) -> tensor<?x64xf32>
  %mm = linalg.matmul ins(%a, %b : tensor<?x16xf32>, tensor<16x64xf32>) outs(%f : tensor<?x64xf32>) -> tensor<?x64xf32>
  %e1 = tensor.empty(%m) : tensor<?x64xf32>
  %biased = linalg.generic {indexing_maps = [#id, #bias, #id], iterator_types = ["parallel", "parallel"]}
      ins(%mm, %bias : tensor<?x64xf32>, tensor<64xf32>) outs(%e1 : tensor<?x64xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %s = arith.addf %x, %y : f32
    linalg.yield %s : f32
  } -> tensor<?x64xf32>
  %mm2 = linalg.matmul ins(%a, %b : tensor<?x16xf32>, tensor<16x64xf32>) outs(%f : tensor<?x64xf32>) -> tensor<?x64xf32>
  %e2 = tensor.empty(%m) : tensor<?x64xf32>
  %sum = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%biased, %mm2 : tensor<?x64xf32>, tensor<?x64xf32>) outs(%e2 : tensor<?x64xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %s = arith.addf %x, %y : f32
    linalg.yield %s : f32
  } -> tensor<?x64xf32>
  %er = tensor.empty(%m) : tensor<?xf32>
  %fr = linalg.fill ins(%zero : f32) outs(%er : tensor<?xf32>) -> tensor<?xf32>
  %red = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%sum : tensor<?x64xf32>) outs(%fr : tensor<?xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %s = arith.addf %x, %acc : f32
    linalg.yield %s : f32
  } -> tensor<?xf32>
  return %red : tensor<?xf32>
}
