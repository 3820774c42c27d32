// write-concats-in-producers.mlir - turbine-write-concats-in-producers: the
// frontends' concatenation gather (a select per element between clamped
// extracts of the operands, here along the channels of NHWC tensors with a
// dynamic batch) becomes a chain of slice updates into one tensor, in
// operand order. The convolution's result, used only by the concatenation,
// is inserted as it is (its producer writes the slice); the function
// argument and the value used twice are copied by identity generics. Then
// dispatch formation: the convolution's kernel creates the concatenated
// tensor (its destination is the output binding, not an in_place operand),
// every later slice is a `concat_copy` kernel updating it in place, its
// offset a push constant (copies of equal shapes into equal concatenations
// are one kernel after deduplication: DEDUP).

// RUN: turbine-opt %s --turbine-write-concats-in-producers | FileCheck %s
// RUN: turbine-opt %s --turbine-write-concats-in-producers --turbine-form-dispatches | FileCheck %s --check-prefix=DISPATCH
// RUN: turbine-opt %s --turbine-write-concats-in-producers --turbine-form-dispatches --turbine-deduplicate-kernels | FileCheck %s --check-prefix=DEDUP
// RUN: turbine-opt %s --turbine-write-concats-in-producers --turbine-form-dispatches | FileCheck %s --check-prefix=FAMILY

#id = affine_map<(n, h, w, c) -> (n, h, w, c)>
#id2 = affine_map<(n, c) -> (n, c)>
// CHECK-LABEL: func.func @main(
// CHECK-SAME:    %[[X:[^:]*]]: tensor<?x4x4x8xf32>, %[[W:[^:]*]]: tensor<1x1x8x16xf32>, %[[Y:[^:]*]]: tensor<?x4x4x4xf32>)
// CHECK:         %[[DIM:.*]] = tensor.dim %[[X]], %c0
// CHECK:         %[[CONV:.*]] = linalg.conv_2d_nhwc_hwcf
// CHECK:         %[[RELU:.*]] = linalg.generic
// CHECK:         %[[E:.*]] = tensor.empty(%[[DIM]]) : tensor<?x4x4x36xf32>
// CHECK-NEXT:    %[[S0:.*]] = tensor.insert_slice %[[CONV]] into %[[E]][0, 0, 0, 0] [%[[DIM]], 4, 4, 16] [1, 1, 1, 1] {turbine.concat, turbine.slice_update}
// CHECK:         %[[C1:.*]] = linalg.generic {{.*}} ins(%[[Y]] : tensor<?x4x4x4xf32>)
// CHECK-NEXT:      ^bb0(%[[IN:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT:      linalg.yield %[[IN]]
// CHECK:         %[[O1:.*]] = arith.constant {turbine.kernel_operand} 16 : index
// CHECK:         %[[S1:.*]] = tensor.insert_slice %[[C1]] into %[[S0]][0, 0, 0, %[[O1]]] [%[[DIM]], 4, 4, 4] [1, 1, 1, 1] {turbine.concat, turbine.slice_update}
// CHECK:         %[[C2:.*]] = linalg.generic {{.*}} ins(%[[RELU]] : tensor<?x4x4x8xf32>)
// CHECK:         %[[O2:.*]] = arith.constant {turbine.kernel_operand} 20 : index
// CHECK:         %[[S2:.*]] = tensor.insert_slice %[[C2]] into %[[S1]][0, 0, 0, %[[O2]]] [%[[DIM]], 4, 4, 8] [1, 1, 1, 1] {turbine.concat, turbine.slice_update}
// CHECK:         %[[C3:.*]] = linalg.generic {{.*}} ins(%[[RELU]] : tensor<?x4x4x8xf32>)
// CHECK:         %[[O3:.*]] = arith.constant {turbine.kernel_operand} 28 : index
// CHECK:         %[[S3:.*]] = tensor.insert_slice %[[C3]] into %[[S2]][0, 0, 0, %[[O3]]] [%[[DIM]], 4, 4, 8] [1, 1, 1, 1] {turbine.concat, turbine.slice_update}
// CHECK-NOT:     arith.select
// CHECK:         return %[[S3]], %[[RELU]]

// DISPATCH-LABEL: func.func @main(
// DISPATCH:         %[[RELU:.*]] = turbine.dispatch @elementwise_Dx4x4x8_f32
// DISPATCH:         %[[S0:.*]] = turbine.dispatch @conv2d_1x1s1_4x4x8x16_f32[{{.*}}] (%arg0, %arg1) {{.*}} -> tensor<?x4x4x36xf32>
// DISPATCH:         %[[S1:.*]] = turbine.dispatch @concat_copy_Dx4x4x4_f32[{{.*}}] (%arg2) {{.*}} in_place(%[[S0]] : tensor<?x4x4x36xf32>)
// DISPATCH:         %[[S2:.*]] = turbine.dispatch @concat_copy_Dx4x4x8_f32[{{.*}}] (%[[RELU]]) constants({{.*}}%c20{{.*}}) in_place(%[[S1]] : tensor<?x4x4x36xf32>)
// DISPATCH:         %[[S3:.*]] = turbine.dispatch @concat_copy_Dx4x4x8_f32_1[{{.*}}] (%[[RELU]]) constants({{.*}}%c28{{.*}}) in_place(%[[S2]] : tensor<?x4x4x36xf32>)
// DISPATCH:         return %[[S3]], %[[RELU]]
// DISPATCH:       module @kernels
// DISPATCH-LABEL:   func.func @conv2d_1x1s1_4x4x8x16_f32(
// DISPATCH:           %[[OUT:.*]] = turbine.binding %arg0[2] dims(%{{.*}}) : memref<?x4x4x36xf32>
// DISPATCH:           %[[CAT:.*]] = bufferization.to_tensor %[[OUT]] restrict writable
// DISPATCH:           %[[SLICE:.*]] = tensor.extract_slice %[[CAT]][0, 0, 0, 0] [%{{.*}}, 4, 4, 16] [1, 1, 1, 1]
// DISPATCH:           %[[FILL:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%[[SLICE]] : tensor<?x4x4x16xf32>)
// DISPATCH:           %[[CONV:.*]] = linalg.conv_2d_nhwc_hwcf {{.*}} outs(%[[FILL]] : tensor<?x4x4x16xf32>)
// DISPATCH:           %[[INS:.*]] = tensor.insert_slice %[[CONV]] into %[[CAT]]
// DISPATCH:           bufferization.materialize_in_destination %[[INS]] in restrict writable %[[OUT]]
// DEDUP-LABEL: func.func @main(
// DEDUP:         turbine.dispatch @concat_copy_Dx4x4x4_f32[
// DEDUP-COUNT-2: turbine.dispatch @concat_copy_Dx4x4x8_f32[
// DEDUP-NOT:     concat_copy_Dx4x4x8_f32_1
func.func @main(%x: tensor<?x4x4x8xf32>, %w: tensor<1x1x8x16xf32>, %y: tensor<?x4x4x4xf32>) -> (tensor<?x4x4x36xf32>, tensor<?x4x4x8xf32>) {
  %c0 = arith.constant 0 : index
  %c15 = arith.constant 15 : index
  %c16 = arith.constant 16 : index
  %c3 = arith.constant 3 : index
  %c20 = arith.constant 20 : index
  %c7 = arith.constant 7 : index
  %c28 = arith.constant 28 : index
  %zero = arith.constant 0.0 : f32
  %n = tensor.dim %x, %c0 : tensor<?x4x4x8xf32>
  %e16 = tensor.empty(%n) : tensor<?x4x4x16xf32>
  %f16 = linalg.fill ins(%zero : f32) outs(%e16 : tensor<?x4x4x16xf32>) -> tensor<?x4x4x16xf32>
  %conv = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%x, %w : tensor<?x4x4x8xf32>, tensor<1x1x8x16xf32>) outs(%f16 : tensor<?x4x4x16xf32>) -> tensor<?x4x4x16xf32>
  %e8 = tensor.empty(%n) : tensor<?x4x4x8xf32>
  %relu = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%x : tensor<?x4x4x8xf32>) outs(%e8 : tensor<?x4x4x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.maximumf %a, %zero : f32
    linalg.yield %r : f32
  } -> tensor<?x4x4x8xf32>
  %e = tensor.empty(%n) : tensor<?x4x4x36xf32>
  %cat = linalg.generic {indexing_maps = [#id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      outs(%e : tensor<?x4x4x36xf32>) {
  ^bb0(%o: f32):
    %i0 = linalg.index 0 : index
    %i1 = linalg.index 1 : index
    %i2 = linalg.index 2 : index
    %i3 = linalg.index 3 : index
    %a0 = arith.maxsi %i3, %c0 : index
    %a1 = arith.minsi %a0, %c15 : index
    %v0 = tensor.extract %conv[%i0, %i1, %i2, %a1] : tensor<?x4x4x16xf32>
    %b0 = arith.subi %i3, %c16 : index
    %b1 = arith.maxsi %b0, %c0 : index
    %b2 = arith.minsi %b1, %c3 : index
    %v1 = tensor.extract %y[%i0, %i1, %i2, %b2] : tensor<?x4x4x4xf32>
    %d0 = arith.subi %i3, %c20 : index
    %d1 = arith.maxsi %d0, %c0 : index
    %d2 = arith.minsi %d1, %c7 : index
    %v2 = tensor.extract %relu[%i0, %i1, %i2, %d2] : tensor<?x4x4x8xf32>
    %g0 = arith.subi %i3, %c28 : index
    %g1 = arith.maxsi %g0, %c0 : index
    %g2 = arith.minsi %g1, %c7 : index
    %v3 = tensor.extract %relu[%i0, %i1, %i2, %g2] : tensor<?x4x4x8xf32>
    %p2 = arith.cmpi slt, %i3, %c28 : index
    %s2 = arith.select %p2, %v2, %v3 : f32
    %p1 = arith.cmpi slt, %i3, %c20 : index
    %s1 = arith.select %p1, %v1, %s2 : f32
    %p0 = arith.cmpi slt, %i3, %c16 : index
    %s0 = arith.select %p0, %v0, %s1 : f32
    linalg.yield %s0 : f32
  } -> tensor<?x4x4x36xf32>
  return %cat, %relu : tensor<?x4x4x36xf32>, tensor<?x4x4x8xf32>
}

// A gather that is not a concatenation (the second operand's extent does
// not fit its range along the axis) is left alone.
// CHECK-LABEL: func.func @not_a_concat(
// CHECK:         arith.select
// CHECK-NOT:     turbine.concat
func.func @not_a_concat(%a: tensor<2x4xf32>, %b: tensor<2x4xf32>) -> tensor<2x6xf32> {
  %c2 = arith.constant 2 : index
  %e = tensor.empty() : tensor<2x6xf32>
  %cat = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
      outs(%e : tensor<2x6xf32>) {
  ^bb0(%o: f32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %v0 = tensor.extract %a[%i, %j] : tensor<2x4xf32>
    %k = arith.subi %j, %c2 : index
    %v1 = tensor.extract %b[%i, %k] : tensor<2x4xf32>
    %p = arith.cmpi slt, %j, %c2 : index
    %s = arith.select %p, %v0, %v1 : f32
    linalg.yield %s : f32
  } -> tensor<2x6xf32>
  return %cat : tensor<2x6xf32>
}

// DenseNet's dense block: cat1 = [x0, x1] and cat2 = [x0, x1, x2], x2
// computed from cat1. cat2's tensor is written once, each update right
// after its operand (x1, x2 by their matmuls; x0 copied: x1's matmul reads
// it too), and cat1 is the view of its first 8 columns once x1 is in.
// CHECK-LABEL: func.func @dense_block(
// CHECK:         %[[X0:.*]] = linalg.matmul
// CHECK:         %[[E:.*]] = tensor.empty(%{{.*}}) : tensor<?x12xf32>
// CHECK:         %[[C0:.*]] = linalg.generic {{.*}} ins(%[[X0]] : tensor<?x4xf32>)
// CHECK:         %[[S0:.*]] = tensor.insert_slice %[[C0]] into %[[E]][0, 0] [%{{.*}}, 4]
// CHECK:         %[[X1:.*]] = linalg.matmul ins(%[[X0]],
// CHECK:         %[[O1:.*]] = arith.constant {turbine.kernel_operand} 4 : index
// CHECK-NEXT:    %[[S1:.*]] = tensor.insert_slice %[[X1]] into %[[S0]][0, %[[O1]]] [%{{.*}}, 4]
// CHECK-NEXT:    %[[CAT1:.*]] = tensor.extract_slice %[[S1]][0, 0] [%{{.*}}, 8] [1, 1] {turbine.concat_prefix}
// CHECK:         %[[R:.*]] = linalg.generic {{.*}} ins(%[[CAT1]] : tensor<?x8xf32>)
// CHECK:         %[[X2:.*]] = linalg.matmul ins(%[[R]],
// CHECK:         %[[O2:.*]] = arith.constant {turbine.kernel_operand} 8 : index
// CHECK-NEXT:    %[[S2:.*]] = tensor.insert_slice %[[X2]] into %[[S1]][0, %[[O2]]] [%{{.*}}, 4]
// CHECK-NOT:     arith.select
// CHECK:         return %[[S2]]
// FAMILY-LABEL: func.func @dense_block(
// FAMILY:         %[[X1:.*]] = turbine.dispatch @matmul_Dx4x4_f32{{.*}} in_place(%{{.*}} : tensor<?x12xf32>)
// FAMILY:         %[[R:.*]] = turbine.dispatch @elementwise_Dx8_f32{{.*}} (%[[X1]]) {{.*}} : (tensor<?x12xf32>) -> tensor<?x8xf32>
// FAMILY:         turbine.dispatch @matmul_Dx4x8_f32{{.*}} (%[[R]], %{{.*}}) {{.*}} in_place(%[[X1]] : tensor<?x12xf32>)
func.func @dense_block(%a: tensor<?x4xf32>, %w0: tensor<4x4xf32>, %w1: tensor<4x4xf32>, %w2: tensor<8x4xf32>) -> tensor<?x12xf32> {
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
  %cat1 = linalg.generic {indexing_maps = [#id2], iterator_types = ["parallel", "parallel"]} outs(%e8 : tensor<?x8xf32>) {
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
  %r8 = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%cat1 : tensor<?x8xf32>) outs(%e8 : tensor<?x8xf32>) {
  ^bb0(%in: f32, %o: f32):
    %m = arith.maximumf %in, %zero : f32
    linalg.yield %m : f32
  } -> tensor<?x8xf32>
  %x2 = linalg.matmul ins(%r8, %w2 : tensor<?x8xf32>, tensor<8x4xf32>) outs(%f4 : tensor<?x4xf32>) -> tensor<?x4xf32>
  %e12 = tensor.empty(%n) : tensor<?x12xf32>
  %cat2 = linalg.generic {indexing_maps = [#id2], iterator_types = ["parallel", "parallel"]} outs(%e12 : tensor<?x12xf32>) {
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

// The same, but x2's matmul reads cat1 itself: it would read and write cat2's
// tensor in one kernel, so x2 is copied into its slice instead.
// CHECK-LABEL: func.func @reads_prefix(
// CHECK:         %[[CAT1:.*]] = tensor.extract_slice {{.*}} {turbine.concat_prefix}
// CHECK:         %[[X2:.*]] = linalg.matmul ins(%[[CAT1]],
// CHECK:         %[[C2:.*]] = linalg.generic {{.*}} ins(%[[X2]] : tensor<?x4xf32>)
// CHECK:         tensor.insert_slice %[[C2]] into
func.func @reads_prefix(%a: tensor<?x4xf32>, %w0: tensor<4x4xf32>, %w1: tensor<4x4xf32>, %w2: tensor<8x4xf32>) -> tensor<?x12xf32> {
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
  %cat1 = linalg.generic {indexing_maps = [#id2], iterator_types = ["parallel", "parallel"]} outs(%e8 : tensor<?x8xf32>) {
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
  %x2 = linalg.matmul ins(%cat1, %w2 : tensor<?x8xf32>, tensor<8x4xf32>) outs(%f4 : tensor<?x4xf32>) -> tensor<?x4xf32>
  %e12 = tensor.empty(%n) : tensor<?x12xf32>
  %cat2 = linalg.generic {indexing_maps = [#id2], iterator_types = ["parallel", "parallel"]} outs(%e12 : tensor<?x12xf32>) {
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
