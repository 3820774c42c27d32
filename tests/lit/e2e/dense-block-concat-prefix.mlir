// dense-block-concat-prefix.mlir - a DenseNet-style block: cat1 = [x0, x1],
// cat2 = [x0, x1, x2] with x2 computed from cat1 (ReLU, then a matmul).
// turbine-write-concats-in-producers writes cat2's tensor once (x1 and x2 by
// their matmuls, x0 copied since x1's matmul reads it too) and cat1 is a
// view of its first 8 columns, read by the ReLU's kernel while x2's matmul
// later writes columns 8..11 of the same storage. Run on both local devices
// with a dynamic batch of 2; the values are exact, computed by hand:
//   a = [[1 -2 3 -4], [-5 6 -7 8]], w0 = I, w1 = 2I, w2 = [I; I]
//   x0 = a, x1 = 2a, x2 = relu(a) + relu(2a) = 3 relu(a)
// RUN: %turbine compile %s -o %t.tmod --dump-phases=%t.phases
// RUN: FileCheck %s --check-prefix=DISPATCH < %t.phases/3.dispatch.mlir
// RUN: %turbine run %t.tmod --device=local-sync --input="2x4xf32=1 -2 3 -4 -5 6 -7 8" \
// RUN:   --input="4x4xf32=1 0 0 0 0 1 0 0 0 0 1 0 0 0 0 1" --input="4x4xf32=2 0 0 0 0 2 0 0 0 0 2 0 0 0 0 2" \
// RUN:   --input="8x4xf32=1 0 0 0 0 1 0 0 0 0 1 0 0 0 0 1 1 0 0 0 0 1 0 0 0 0 1 0 0 0 0 1" | FileCheck %s
// RUN: %turbine run %t.tmod --device=local-task --task_workers=2 --input="2x4xf32=1 -2 3 -4 -5 6 -7 8" \
// RUN:   --input="4x4xf32=1 0 0 0 0 1 0 0 0 0 1 0 0 0 0 1" --input="4x4xf32=2 0 0 0 0 2 0 0 0 0 2 0 0 0 0 2" \
// RUN:   --input="8x4xf32=1 0 0 0 0 1 0 0 0 0 1 0 0 0 0 1 1 0 0 0 0 1 0 0 0 0 1 0 0 0 0 1" | FileCheck %s

// The ReLU reads cat2's storage (12 columns) between the two updates of it.
// DISPATCH:      %[[X1:.*]] = turbine.dispatch @matmul_Dx4x4_f32_1{{.*}} in_place(%{{.*}} : tensor<?x12xf32>)
// DISPATCH:      %[[RELU:.*]] = turbine.dispatch @elementwise_Dx8_f32{{.*}} (%[[X1]]) {{.*}} : (tensor<?x12xf32>) -> tensor<?x8xf32>
// DISPATCH:      turbine.dispatch @matmul_Dx4x8_f32{{.*}} (%[[RELU]], %{{.*}}) {{.*}} in_place(%[[X1]] : tensor<?x12xf32>)
// CHECK:      EXEC @main
// CHECK-NEXT: result[0]: hal.buffer_view
// CHECK-NEXT: 2x12xf32=[1 -2 3 -4 2 -4 6 -8 3 0 9 0][-5 6 -7 8 -10 12 -14 16 0 18 0 24]{{$}}

#id = affine_map<(n, c) -> (n, c)>
func.func @main(%a: tensor<?x4xf32>, %w0: tensor<4x4xf32>, %w1: tensor<4x4xf32>, %w2: tensor<8x4xf32>) -> tensor<?x12xf32> {
  %c0 = arith.constant 0 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %zero = arith.constant 0.0 : f32
  %n = tensor.dim %a, %c0 : tensor<?x4xf32>
  %e4 = tensor.empty(%n) : tensor<?x4xf32>
  %f4 = linalg.fill ins(%zero : f32) outs(%e4 : tensor<?x4xf32>) -> tensor<?x4xf32>
  %x0 = linalg.matmul ins(%a, %w0 : tensor<?x4xf32>, tensor<4x4xf32>) outs(%f4 : tensor<?x4xf32>) -> tensor<?x4xf32>
  %x1 = linalg.matmul ins(%x0, %w1 : tensor<?x4xf32>, tensor<4x4xf32>) outs(%f4 : tensor<?x4xf32>) -> tensor<?x4xf32>
  %e8 = tensor.empty(%n) : tensor<?x8xf32>
  %cat1 = linalg.generic {indexing_maps = [#id], iterator_types = ["parallel", "parallel"]} outs(%e8 : tensor<?x8xf32>) {
  ^bb0(%o: f32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %v0 = tensor.extract %x0[%i, %j] : tensor<?x4xf32>
    %k = arith.subi %j, %c4 : index
    %v1 = tensor.extract %x1[%i, %k] : tensor<?x4xf32>
    %p = arith.cmpi slt, %j, %c4 : index
    %s = arith.select %p, %v0, %v1 : f32
    linalg.yield %s : f32
  } -> tensor<?x8xf32>
  %r8 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%cat1 : tensor<?x8xf32>) outs(%e8 : tensor<?x8xf32>) {
  ^bb0(%in: f32, %o: f32):
    %m = arith.maximumf %in, %zero : f32
    linalg.yield %m : f32
  } -> tensor<?x8xf32>
  %x2 = linalg.matmul ins(%r8, %w2 : tensor<?x8xf32>, tensor<8x4xf32>) outs(%f4 : tensor<?x4xf32>) -> tensor<?x4xf32>
  %e12 = tensor.empty(%n) : tensor<?x12xf32>
  %cat2 = linalg.generic {indexing_maps = [#id], iterator_types = ["parallel", "parallel"]} outs(%e12 : tensor<?x12xf32>) {
  ^bb0(%o: f32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %v0 = tensor.extract %x0[%i, %j] : tensor<?x4xf32>
    %k = arith.subi %j, %c4 : index
    %v1 = tensor.extract %x1[%i, %k] : tensor<?x4xf32>
    %l = arith.subi %j, %c8 : index
    %v2 = tensor.extract %x2[%i, %l] : tensor<?x4xf32>
    %q = arith.cmpi slt, %j, %c8 : index
    %t = arith.select %q, %v1, %v2 : f32
    %p = arith.cmpi slt, %j, %c4 : index
    %s = arith.select %p, %v0, %t : f32
    linalg.yield %s : f32
  } -> tensor<?x12xf32>
  return %cat2 : tensor<?x12xf32>
}
