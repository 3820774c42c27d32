// fuse-attention.mlir - turbine-fuse-attention: scaled-dot-product attention
// in the TorchScript importer's linalg form (q.k^T batch_matmul, * scale,
// + additive mask [T, L], last-axis softmax as max / sub / exp-sum / exp-div
// generics, .v batch_matmul) becomes one turbine.attention. K / V read
// through a prefix gather (a KV cache's [:, :, :L]) and a head gather
// (repeat_interleave, grouped-query attention) are read from the cache
// itself, with L as key_length: the gathers, the matmuls and the softmax are
// gone (also with torch.jit.trace's 0-d f64 scale). A softmax over another axis, or a mask that is multiplied rather
// than added, is not attention: left alone.

// RUN: turbine-opt %s --turbine-fuse-attention | FileCheck %s

#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#row = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
#col = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>
#mask = affine_map<(d0, d1, d2, d3) -> (d2, d3)>
#scalar = affine_map<(d0, d1, d2, d3) -> ()>

// A plain attention: no cache, as many KV heads as query heads, 8 keys.
// CHECK-LABEL: func.func @plain(
// CHECK-SAME:      %[[Q:.*]]: tensor<1x4x3x16xf32>, %[[K:.*]]: tensor<1x4x8x16xf32>, %[[V:.*]]: tensor<1x4x8x16xf32>, %[[M:.*]]: tensor<3x8xf32>)
// CHECK-DAG:     %[[L:.*]] = arith.constant 8 : index
// CHECK-DAG:     %[[INIT:.*]] = tensor.empty() : tensor<1x4x3x16xf32>
// CHECK:         %[[A:.*]] = turbine.attention %[[Q]], %[[K]], %[[V]] key_length(%[[L]]) mask(%[[M]] : tensor<3x8xf32>) scale(2.500000e-01) outs(%[[INIT]])
// CHECK:         %[[FLAT:.*]] = tensor.collapse_shape %[[A]] {{\[}}[0, 1], [2], [3]]
// CHECK-NEXT:    return %[[FLAT]] : tensor<4x3x16xf32>

func.func @plain(%q: tensor<1x4x3x16xf32>, %k: tensor<1x4x8x16xf32>, %v: tensor<1x4x8x16xf32>, %m: tensor<3x8xf32>) -> tensor<4x3x16xf32> {
  %zero = arith.constant 0.000000e+00 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %scale = arith.constant 2.500000e-01 : f32
  %c0 = arith.constant 0 : index
  %kte = tensor.empty() : tensor<1x4x16x8xf32>
  %kt = linalg.transpose ins(%k : tensor<1x4x8x16xf32>) outs(%kte : tensor<1x4x16x8xf32>) permutation = [0, 1, 3, 2]
  %qc = tensor.collapse_shape %q [[0, 1], [2], [3]] : tensor<1x4x3x16xf32> into tensor<4x3x16xf32>
  %ktc = tensor.collapse_shape %kt [[0, 1], [2], [3]] : tensor<1x4x16x8xf32> into tensor<4x16x8xf32>
  %se = tensor.empty() : tensor<4x3x8xf32>
  %sf = linalg.fill ins(%zero : f32) outs(%se : tensor<4x3x8xf32>) -> tensor<4x3x8xf32>
  %qk = linalg.batch_matmul ins(%qc, %ktc : tensor<4x3x16xf32>, tensor<4x16x8xf32>) outs(%sf : tensor<4x3x8xf32>) -> tensor<4x3x8xf32>
  %qk4 = tensor.expand_shape %qk [[0, 1], [2], [3]] output_shape [1, 4, 3, 8] : tensor<4x3x8xf32> into tensor<1x4x3x8xf32>
  %e = tensor.empty() : tensor<1x4x3x8xf32>
  %scaled = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%qk4 : tensor<1x4x3x8xf32>) outs(%e : tensor<1x4x3x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %x = arith.mulf %in, %scale : f32
    linalg.yield %x : f32
  } -> tensor<1x4x3x8xf32>
  %masked = linalg.generic {indexing_maps = [#id, #mask, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%scaled, %m : tensor<1x4x3x8xf32>, tensor<3x8xf32>) outs(%e : tensor<1x4x3x8xf32>) {
  ^bb0(%in: f32, %in1: f32, %out: f32):
    %x = arith.addf %in, %in1 : f32
    linalg.yield %x : f32
  } -> tensor<1x4x3x8xf32>
  %re = tensor.empty() : tensor<1x4x3xf32>
  %mf = linalg.fill ins(%ninf : f32) outs(%re : tensor<1x4x3xf32>) -> tensor<1x4x3xf32>
  %max = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%masked : tensor<1x4x3x8xf32>) outs(%mf : tensor<1x4x3xf32>) {
  ^bb0(%in: f32, %out: f32):
    %x = arith.maximumf %out, %in : f32
    linalg.yield %x : f32
  } -> tensor<1x4x3xf32>
  %shifted = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%masked, %max : tensor<1x4x3x8xf32>, tensor<1x4x3xf32>) outs(%e : tensor<1x4x3x8xf32>) {
  ^bb0(%in: f32, %in1: f32, %out: f32):
    %x = arith.subf %in, %in1 : f32
    linalg.yield %x : f32
  } -> tensor<1x4x3x8xf32>
  %sumf = linalg.fill ins(%zero : f32) outs(%re : tensor<1x4x3xf32>) -> tensor<1x4x3xf32>
  %sum = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%shifted : tensor<1x4x3x8xf32>) outs(%sumf : tensor<1x4x3xf32>) {
  ^bb0(%in: f32, %out: f32):
    %x = math.exp %in : f32
    %y = arith.addf %out, %x : f32
    linalg.yield %y : f32
  } -> tensor<1x4x3xf32>
  %probs = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%shifted, %sum : tensor<1x4x3x8xf32>, tensor<1x4x3xf32>) outs(%e : tensor<1x4x3x8xf32>) {
  ^bb0(%in: f32, %in1: f32, %out: f32):
    %x = math.exp %in : f32
    %y = arith.divf %x, %in1 : f32
    linalg.yield %y : f32
  } -> tensor<1x4x3x8xf32>
  %pc = tensor.collapse_shape %probs [[0, 1], [2], [3]] : tensor<1x4x3x8xf32> into tensor<4x3x8xf32>
  %vc = tensor.collapse_shape %v [[0, 1], [2], [3]] : tensor<1x4x8x16xf32> into tensor<4x8x16xf32>
  %oe = tensor.empty() : tensor<4x3x16xf32>
  %of = linalg.fill ins(%zero : f32) outs(%oe : tensor<4x3x16xf32>) -> tensor<4x3x16xf32>
  %o = linalg.batch_matmul ins(%pc, %vc : tensor<4x3x8xf32>, tensor<4x8x16xf32>) outs(%of : tensor<4x3x16xf32>) -> tensor<4x3x16xf32>
  return %o : tensor<4x3x16xf32>
}

// Decode against a KV cache of 32 positions: the used prefix [0, %len) and
// 2 query heads per KV head, each through a gather of its own.
// CHECK-LABEL: func.func @cache_gqa(
// CHECK-SAME:      %[[Q:.*]]: tensor<1x4x1x16xf32>, %[[K:.*]]: tensor<1x2x32x16xf32>, %[[V:.*]]: tensor<1x2x32x16xf32>, %[[M:.*]]: tensor<1x?xf32>, %[[LEN:.*]]: index)
// CHECK-NOT:     linalg.generic
// CHECK:         turbine.attention %[[Q]], %[[K]], %[[V]] key_length(%[[LEN]]) mask(%[[M]] : tensor<1x?xf32>) scale(2.500000e-01)
// CHECK-SAME:      : tensor<1x4x1x16xf32>, tensor<1x2x32x16xf32>, tensor<1x2x32x16xf32> -> tensor<1x4x1x16xf32>
// CHECK-NOT:     linalg.
// CHECK:         return

func.func @cache_gqa(%q: tensor<1x4x1x16xf32>, %k: tensor<1x2x32x16xf32>, %v: tensor<1x2x32x16xf32>, %m: tensor<1x?xf32>, %len: index) -> tensor<4x1x16xf32> {
  %zero = arith.constant 0.000000e+00 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %scale = arith.constant 2.500000e-01 : f32
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %kpe = tensor.empty(%len) : tensor<1x2x?x16xf32>
  %kp = linalg.generic {indexing_maps = [#id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} outs(%kpe : tensor<1x2x?x16xf32>) {
  ^bb0(%out: f32):
    %i1 = linalg.index 1 : index
    %i2 = linalg.index 2 : index
    %i3 = linalg.index 3 : index
    %x = tensor.extract %k[%c0, %i1, %i2, %i3] : tensor<1x2x32x16xf32>
    linalg.yield %x : f32
  } -> tensor<1x2x?x16xf32>
  %kge = tensor.empty(%len) : tensor<1x4x?x16xf32>
  %kg = linalg.generic {indexing_maps = [#id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} outs(%kge : tensor<1x4x?x16xf32>) {
  ^bb0(%out: f32):
    %i1 = linalg.index 1 : index
    %h = arith.divui %i1, %c2 : index
    %i2 = linalg.index 2 : index
    %i3 = linalg.index 3 : index
    %x = tensor.extract %kp[%c0, %h, %i2, %i3] : tensor<1x2x?x16xf32>
    linalg.yield %x : f32
  } -> tensor<1x4x?x16xf32>
  %vpe = tensor.empty(%len) : tensor<1x2x?x16xf32>
  %vp = linalg.generic {indexing_maps = [#id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} outs(%vpe : tensor<1x2x?x16xf32>) {
  ^bb0(%out: f32):
    %i1 = linalg.index 1 : index
    %i2 = linalg.index 2 : index
    %i3 = linalg.index 3 : index
    %x = tensor.extract %v[%c0, %i1, %i2, %i3] : tensor<1x2x32x16xf32>
    linalg.yield %x : f32
  } -> tensor<1x2x?x16xf32>
  %vge = tensor.empty(%len) : tensor<1x4x?x16xf32>
  %vg = linalg.generic {indexing_maps = [#id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} outs(%vge : tensor<1x4x?x16xf32>) {
  ^bb0(%out: f32):
    %i1 = linalg.index 1 : index
    %h = arith.divui %i1, %c2 : index
    %i2 = linalg.index 2 : index
    %i3 = linalg.index 3 : index
    %x = tensor.extract %vp[%c0, %h, %i2, %i3] : tensor<1x2x?x16xf32>
    linalg.yield %x : f32
  } -> tensor<1x4x?x16xf32>
  %kte = tensor.empty(%len) : tensor<1x4x16x?xf32>
  %kt = linalg.transpose ins(%kg : tensor<1x4x?x16xf32>) outs(%kte : tensor<1x4x16x?xf32>) permutation = [0, 1, 3, 2]
  %qc = tensor.collapse_shape %q [[0, 1], [2], [3]] : tensor<1x4x1x16xf32> into tensor<4x1x16xf32>
  %ktc = tensor.collapse_shape %kt [[0, 1], [2], [3]] : tensor<1x4x16x?xf32> into tensor<4x16x?xf32>
  %se = tensor.empty(%len) : tensor<4x1x?xf32>
  %sf = linalg.fill ins(%zero : f32) outs(%se : tensor<4x1x?xf32>) -> tensor<4x1x?xf32>
  %qk = linalg.batch_matmul ins(%qc, %ktc : tensor<4x1x16xf32>, tensor<4x16x?xf32>) outs(%sf : tensor<4x1x?xf32>) -> tensor<4x1x?xf32>
  %qk4 = tensor.expand_shape %qk [[0, 1], [2], [3]] output_shape [1, 4, 1, %len] : tensor<4x1x?xf32> into tensor<1x4x1x?xf32>
  %e = tensor.empty(%len) : tensor<1x4x1x?xf32>
  %scaled = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%qk4 : tensor<1x4x1x?xf32>) outs(%e : tensor<1x4x1x?xf32>) {
  ^bb0(%in: f32, %out: f32):
    %x = arith.mulf %in, %scale : f32
    linalg.yield %x : f32
  } -> tensor<1x4x1x?xf32>
  %masked = linalg.generic {indexing_maps = [#id, #mask, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%scaled, %m : tensor<1x4x1x?xf32>, tensor<1x?xf32>) outs(%e : tensor<1x4x1x?xf32>) {
  ^bb0(%in: f32, %in1: f32, %out: f32):
    %x = arith.addf %in, %in1 : f32
    linalg.yield %x : f32
  } -> tensor<1x4x1x?xf32>
  %re = tensor.empty() : tensor<1x4x1xf32>
  %mf = linalg.fill ins(%ninf : f32) outs(%re : tensor<1x4x1xf32>) -> tensor<1x4x1xf32>
  %max = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%masked : tensor<1x4x1x?xf32>) outs(%mf : tensor<1x4x1xf32>) {
  ^bb0(%in: f32, %out: f32):
    %x = arith.maximumf %out, %in : f32
    linalg.yield %x : f32
  } -> tensor<1x4x1xf32>
  %shifted = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%masked, %max : tensor<1x4x1x?xf32>, tensor<1x4x1xf32>) outs(%e : tensor<1x4x1x?xf32>) {
  ^bb0(%in: f32, %in1: f32, %out: f32):
    %x = arith.subf %in, %in1 : f32
    linalg.yield %x : f32
  } -> tensor<1x4x1x?xf32>
  %sumf = linalg.fill ins(%zero : f32) outs(%re : tensor<1x4x1xf32>) -> tensor<1x4x1xf32>
  %sum = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%shifted : tensor<1x4x1x?xf32>) outs(%sumf : tensor<1x4x1xf32>) {
  ^bb0(%in: f32, %out: f32):
    %x = math.exp %in : f32
    %y = arith.addf %out, %x : f32
    linalg.yield %y : f32
  } -> tensor<1x4x1xf32>
  %probs = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%shifted, %sum : tensor<1x4x1x?xf32>, tensor<1x4x1xf32>) outs(%e : tensor<1x4x1x?xf32>) {
  ^bb0(%in: f32, %in1: f32, %out: f32):
    %x = math.exp %in : f32
    %y = arith.divf %x, %in1 : f32
    linalg.yield %y : f32
  } -> tensor<1x4x1x?xf32>
  %pc = tensor.collapse_shape %probs [[0, 1], [2], [3]] : tensor<1x4x1x?xf32> into tensor<4x1x?xf32>
  %vc = tensor.collapse_shape %vg [[0, 1], [2], [3]] : tensor<1x4x?x16xf32> into tensor<4x?x16xf32>
  %oe = tensor.empty() : tensor<4x1x16xf32>
  %of = linalg.fill ins(%zero : f32) outs(%oe : tensor<4x1x16xf32>) -> tensor<4x1x16xf32>
  %o = linalg.batch_matmul ins(%pc, %vc : tensor<4x1x?xf32>, tensor<4x?x16xf32>) outs(%of : tensor<4x1x16xf32>) -> tensor<4x1x16xf32>
  return %o : tensor<4x1x16xf32>
}

// torch.jit.trace's scale: a 0-d f64 constant tensor read by the generic and
// truncated to f32 in its body.
// CHECK-LABEL: func.func @traced_scale(
// CHECK:         turbine.attention %{{.*}} scale(2.500000e-01)
// CHECK-NOT:     linalg.batch_matmul
// CHECK:         return
func.func @traced_scale(%q: tensor<1x4x3x16xf32>, %k: tensor<1x4x8x16xf32>, %v: tensor<1x4x8x16xf32>, %m: tensor<3x8xf32>) -> tensor<4x3x16xf32> {
  %zero = arith.constant 0.000000e+00 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %scale = arith.constant dense<2.500000e-01> : tensor<f64>
  %c0 = arith.constant 0 : index
  %kte = tensor.empty() : tensor<1x4x16x8xf32>
  %kt = linalg.transpose ins(%k : tensor<1x4x8x16xf32>) outs(%kte : tensor<1x4x16x8xf32>) permutation = [0, 1, 3, 2]
  %qc = tensor.collapse_shape %q [[0, 1], [2], [3]] : tensor<1x4x3x16xf32> into tensor<4x3x16xf32>
  %ktc = tensor.collapse_shape %kt [[0, 1], [2], [3]] : tensor<1x4x16x8xf32> into tensor<4x16x8xf32>
  %se = tensor.empty() : tensor<4x3x8xf32>
  %sf = linalg.fill ins(%zero : f32) outs(%se : tensor<4x3x8xf32>) -> tensor<4x3x8xf32>
  %qk = linalg.batch_matmul ins(%qc, %ktc : tensor<4x3x16xf32>, tensor<4x16x8xf32>) outs(%sf : tensor<4x3x8xf32>) -> tensor<4x3x8xf32>
  %qk4 = tensor.expand_shape %qk [[0, 1], [2], [3]] output_shape [1, 4, 3, 8] : tensor<4x3x8xf32> into tensor<1x4x3x8xf32>
  %e = tensor.empty() : tensor<1x4x3x8xf32>
  %scaled = linalg.generic {indexing_maps = [#id, #scalar, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%qk4, %scale : tensor<1x4x3x8xf32>, tensor<f64>) outs(%e : tensor<1x4x3x8xf32>) {
  ^bb0(%in: f32, %s: f64, %out: f32):
    %s32 = arith.truncf %s : f64 to f32
    %x = arith.mulf %in, %s32 : f32
    linalg.yield %x : f32
  } -> tensor<1x4x3x8xf32>
  %masked = linalg.generic {indexing_maps = [#id, #mask, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%scaled, %m : tensor<1x4x3x8xf32>, tensor<3x8xf32>) outs(%e : tensor<1x4x3x8xf32>) {
  ^bb0(%in: f32, %in1: f32, %out: f32):
    %x = arith.addf %in, %in1 : f32
    linalg.yield %x : f32
  } -> tensor<1x4x3x8xf32>
  %re = tensor.empty() : tensor<1x4x3xf32>
  %mf = linalg.fill ins(%ninf : f32) outs(%re : tensor<1x4x3xf32>) -> tensor<1x4x3xf32>
  %max = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%masked : tensor<1x4x3x8xf32>) outs(%mf : tensor<1x4x3xf32>) {
  ^bb0(%in: f32, %out: f32):
    %x = arith.maximumf %out, %in : f32
    linalg.yield %x : f32
  } -> tensor<1x4x3xf32>
  %shifted = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%masked, %max : tensor<1x4x3x8xf32>, tensor<1x4x3xf32>) outs(%e : tensor<1x4x3x8xf32>) {
  ^bb0(%in: f32, %in1: f32, %out: f32):
    %x = arith.subf %in, %in1 : f32
    linalg.yield %x : f32
  } -> tensor<1x4x3x8xf32>
  %sumf = linalg.fill ins(%zero : f32) outs(%re : tensor<1x4x3xf32>) -> tensor<1x4x3xf32>
  %sum = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%shifted : tensor<1x4x3x8xf32>) outs(%sumf : tensor<1x4x3xf32>) {
  ^bb0(%in: f32, %out: f32):
    %x = math.exp %in : f32
    %y = arith.addf %out, %x : f32
    linalg.yield %y : f32
  } -> tensor<1x4x3xf32>
  %probs = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%shifted, %sum : tensor<1x4x3x8xf32>, tensor<1x4x3xf32>) outs(%e : tensor<1x4x3x8xf32>) {
  ^bb0(%in: f32, %in1: f32, %out: f32):
    %x = math.exp %in : f32
    %y = arith.divf %x, %in1 : f32
    linalg.yield %y : f32
  } -> tensor<1x4x3x8xf32>
  %pc = tensor.collapse_shape %probs [[0, 1], [2], [3]] : tensor<1x4x3x8xf32> into tensor<4x3x8xf32>
  %vc = tensor.collapse_shape %v [[0, 1], [2], [3]] : tensor<1x4x8x16xf32> into tensor<4x8x16xf32>
  %oe = tensor.empty() : tensor<4x3x16xf32>
  %of = linalg.fill ins(%zero : f32) outs(%oe : tensor<4x3x16xf32>) -> tensor<4x3x16xf32>
  %o = linalg.batch_matmul ins(%pc, %vc : tensor<4x3x8xf32>, tensor<4x8x16xf32>) outs(%of : tensor<4x3x16xf32>) -> tensor<4x3x16xf32>
  return %o : tensor<4x3x16xf32>
}

// A splat mask (here zeros) adds the same value to every score: the fused op
// needs no mask.
// CHECK-LABEL: func.func @zero_mask(
// CHECK:         turbine.attention %{{.*}}, %{{.*}}, %{{.*}} key_length(%{{.*}}) scale(2.500000e-01)
// CHECK-NOT:     linalg.batch_matmul
// CHECK:         return
func.func @zero_mask(%q: tensor<1x4x3x16xf32>, %k: tensor<1x4x8x16xf32>, %v: tensor<1x4x8x16xf32>) -> tensor<4x3x16xf32> {
  %zero = arith.constant 0.000000e+00 : f32
  %m = arith.constant dense<0.000000e+00> : tensor<3x8xf32>
  %ninf = arith.constant 0xFF800000 : f32
  %scale = arith.constant 2.500000e-01 : f32
  %c0 = arith.constant 0 : index
  %kte = tensor.empty() : tensor<1x4x16x8xf32>
  %kt = linalg.transpose ins(%k : tensor<1x4x8x16xf32>) outs(%kte : tensor<1x4x16x8xf32>) permutation = [0, 1, 3, 2]
  %qc = tensor.collapse_shape %q [[0, 1], [2], [3]] : tensor<1x4x3x16xf32> into tensor<4x3x16xf32>
  %ktc = tensor.collapse_shape %kt [[0, 1], [2], [3]] : tensor<1x4x16x8xf32> into tensor<4x16x8xf32>
  %se = tensor.empty() : tensor<4x3x8xf32>
  %sf = linalg.fill ins(%zero : f32) outs(%se : tensor<4x3x8xf32>) -> tensor<4x3x8xf32>
  %qk = linalg.batch_matmul ins(%qc, %ktc : tensor<4x3x16xf32>, tensor<4x16x8xf32>) outs(%sf : tensor<4x3x8xf32>) -> tensor<4x3x8xf32>
  %qk4 = tensor.expand_shape %qk [[0, 1], [2], [3]] output_shape [1, 4, 3, 8] : tensor<4x3x8xf32> into tensor<1x4x3x8xf32>
  %e = tensor.empty() : tensor<1x4x3x8xf32>
  %scaled = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%qk4 : tensor<1x4x3x8xf32>) outs(%e : tensor<1x4x3x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %x = arith.mulf %in, %scale : f32
    linalg.yield %x : f32
  } -> tensor<1x4x3x8xf32>
  %masked = linalg.generic {indexing_maps = [#id, #mask, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%scaled, %m : tensor<1x4x3x8xf32>, tensor<3x8xf32>) outs(%e : tensor<1x4x3x8xf32>) {
  ^bb0(%in: f32, %in1: f32, %out: f32):
    %x = arith.addf %in, %in1 : f32
    linalg.yield %x : f32
  } -> tensor<1x4x3x8xf32>
  %re = tensor.empty() : tensor<1x4x3xf32>
  %mf = linalg.fill ins(%ninf : f32) outs(%re : tensor<1x4x3xf32>) -> tensor<1x4x3xf32>
  %max = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%masked : tensor<1x4x3x8xf32>) outs(%mf : tensor<1x4x3xf32>) {
  ^bb0(%in: f32, %out: f32):
    %x = arith.maximumf %out, %in : f32
    linalg.yield %x : f32
  } -> tensor<1x4x3xf32>
  %shifted = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%masked, %max : tensor<1x4x3x8xf32>, tensor<1x4x3xf32>) outs(%e : tensor<1x4x3x8xf32>) {
  ^bb0(%in: f32, %in1: f32, %out: f32):
    %x = arith.subf %in, %in1 : f32
    linalg.yield %x : f32
  } -> tensor<1x4x3x8xf32>
  %sumf = linalg.fill ins(%zero : f32) outs(%re : tensor<1x4x3xf32>) -> tensor<1x4x3xf32>
  %sum = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%shifted : tensor<1x4x3x8xf32>) outs(%sumf : tensor<1x4x3xf32>) {
  ^bb0(%in: f32, %out: f32):
    %x = math.exp %in : f32
    %y = arith.addf %out, %x : f32
    linalg.yield %y : f32
  } -> tensor<1x4x3xf32>
  %probs = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%shifted, %sum : tensor<1x4x3x8xf32>, tensor<1x4x3xf32>) outs(%e : tensor<1x4x3x8xf32>) {
  ^bb0(%in: f32, %in1: f32, %out: f32):
    %x = math.exp %in : f32
    %y = arith.divf %x, %in1 : f32
    linalg.yield %y : f32
  } -> tensor<1x4x3x8xf32>
  %pc = tensor.collapse_shape %probs [[0, 1], [2], [3]] : tensor<1x4x3x8xf32> into tensor<4x3x8xf32>
  %vc = tensor.collapse_shape %v [[0, 1], [2], [3]] : tensor<1x4x8x16xf32> into tensor<4x8x16xf32>
  %oe = tensor.empty() : tensor<4x3x16xf32>
  %of = linalg.fill ins(%zero : f32) outs(%oe : tensor<4x3x16xf32>) -> tensor<4x3x16xf32>
  %o = linalg.batch_matmul ins(%pc, %vc : tensor<4x3x8xf32>, tensor<4x8x16xf32>) outs(%of : tensor<4x3x16xf32>) -> tensor<4x3x16xf32>
  return %o : tensor<4x3x16xf32>
}

// Softmax over the query rows (dim 2), not the keys: not attention.
// CHECK-LABEL: func.func @softmax_other_axis(
// CHECK-NOT:     turbine.attention
// CHECK:         linalg.batch_matmul
// CHECK:         linalg.batch_matmul
// CHECK:         return

func.func @softmax_other_axis(%q: tensor<1x4x3x16xf32>, %k: tensor<1x4x8x16xf32>, %v: tensor<1x4x8x16xf32>, %m: tensor<3x8xf32>) -> tensor<4x3x16xf32> {
  %zero = arith.constant 0.000000e+00 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %scale = arith.constant 2.500000e-01 : f32
  %c0 = arith.constant 0 : index
  %kte = tensor.empty() : tensor<1x4x16x8xf32>
  %kt = linalg.transpose ins(%k : tensor<1x4x8x16xf32>) outs(%kte : tensor<1x4x16x8xf32>) permutation = [0, 1, 3, 2]
  %qc = tensor.collapse_shape %q [[0, 1], [2], [3]] : tensor<1x4x3x16xf32> into tensor<4x3x16xf32>
  %ktc = tensor.collapse_shape %kt [[0, 1], [2], [3]] : tensor<1x4x16x8xf32> into tensor<4x16x8xf32>
  %se = tensor.empty() : tensor<4x3x8xf32>
  %sf = linalg.fill ins(%zero : f32) outs(%se : tensor<4x3x8xf32>) -> tensor<4x3x8xf32>
  %qk = linalg.batch_matmul ins(%qc, %ktc : tensor<4x3x16xf32>, tensor<4x16x8xf32>) outs(%sf : tensor<4x3x8xf32>) -> tensor<4x3x8xf32>
  %qk4 = tensor.expand_shape %qk [[0, 1], [2], [3]] output_shape [1, 4, 3, 8] : tensor<4x3x8xf32> into tensor<1x4x3x8xf32>
  %e = tensor.empty() : tensor<1x4x3x8xf32>
  %scaled = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%qk4 : tensor<1x4x3x8xf32>) outs(%e : tensor<1x4x3x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %x = arith.mulf %in, %scale : f32
    linalg.yield %x : f32
  } -> tensor<1x4x3x8xf32>
  %masked = linalg.generic {indexing_maps = [#id, #mask, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%scaled, %m : tensor<1x4x3x8xf32>, tensor<3x8xf32>) outs(%e : tensor<1x4x3x8xf32>) {
  ^bb0(%in: f32, %in1: f32, %out: f32):
    %x = arith.addf %in, %in1 : f32
    linalg.yield %x : f32
  } -> tensor<1x4x3x8xf32>
  %re = tensor.empty() : tensor<1x4x8xf32>
  %mf = linalg.fill ins(%ninf : f32) outs(%re : tensor<1x4x8xf32>) -> tensor<1x4x8xf32>
  %max = linalg.generic {indexing_maps = [#id, #col], iterator_types = ["parallel", "parallel", "reduction", "parallel"]} ins(%masked : tensor<1x4x3x8xf32>) outs(%mf : tensor<1x4x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %x = arith.maximumf %out, %in : f32
    linalg.yield %x : f32
  } -> tensor<1x4x8xf32>
  %shifted = linalg.generic {indexing_maps = [#id, #col, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%masked, %max : tensor<1x4x3x8xf32>, tensor<1x4x8xf32>) outs(%e : tensor<1x4x3x8xf32>) {
  ^bb0(%in: f32, %in1: f32, %out: f32):
    %x = arith.subf %in, %in1 : f32
    linalg.yield %x : f32
  } -> tensor<1x4x3x8xf32>
  %sumf = linalg.fill ins(%zero : f32) outs(%re : tensor<1x4x8xf32>) -> tensor<1x4x8xf32>
  %sum = linalg.generic {indexing_maps = [#id, #col], iterator_types = ["parallel", "parallel", "reduction", "parallel"]} ins(%shifted : tensor<1x4x3x8xf32>) outs(%sumf : tensor<1x4x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %x = math.exp %in : f32
    %y = arith.addf %out, %x : f32
    linalg.yield %y : f32
  } -> tensor<1x4x8xf32>
  %probs = linalg.generic {indexing_maps = [#id, #col, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%shifted, %sum : tensor<1x4x3x8xf32>, tensor<1x4x8xf32>) outs(%e : tensor<1x4x3x8xf32>) {
  ^bb0(%in: f32, %in1: f32, %out: f32):
    %x = math.exp %in : f32
    %y = arith.divf %x, %in1 : f32
    linalg.yield %y : f32
  } -> tensor<1x4x3x8xf32>
  %pc = tensor.collapse_shape %probs [[0, 1], [2], [3]] : tensor<1x4x3x8xf32> into tensor<4x3x8xf32>
  %vc = tensor.collapse_shape %v [[0, 1], [2], [3]] : tensor<1x4x8x16xf32> into tensor<4x8x16xf32>
  %oe = tensor.empty() : tensor<4x3x16xf32>
  %of = linalg.fill ins(%zero : f32) outs(%oe : tensor<4x3x16xf32>) -> tensor<4x3x16xf32>
  %o = linalg.batch_matmul ins(%pc, %vc : tensor<4x3x8xf32>, tensor<4x8x16xf32>) outs(%of : tensor<4x3x16xf32>) -> tensor<4x3x16xf32>
  return %o : tensor<4x3x16xf32>
}

// The mask multiplies the scores: not an additive mask.
// CHECK-LABEL: func.func @mask_multiplied(
// CHECK-NOT:     turbine.attention
// CHECK:         linalg.batch_matmul
// CHECK:         linalg.batch_matmul
// CHECK:         return

func.func @mask_multiplied(%q: tensor<1x4x3x16xf32>, %k: tensor<1x4x8x16xf32>, %v: tensor<1x4x8x16xf32>, %m: tensor<3x8xf32>) -> tensor<4x3x16xf32> {
  %zero = arith.constant 0.000000e+00 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %scale = arith.constant 2.500000e-01 : f32
  %c0 = arith.constant 0 : index
  %kte = tensor.empty() : tensor<1x4x16x8xf32>
  %kt = linalg.transpose ins(%k : tensor<1x4x8x16xf32>) outs(%kte : tensor<1x4x16x8xf32>) permutation = [0, 1, 3, 2]
  %qc = tensor.collapse_shape %q [[0, 1], [2], [3]] : tensor<1x4x3x16xf32> into tensor<4x3x16xf32>
  %ktc = tensor.collapse_shape %kt [[0, 1], [2], [3]] : tensor<1x4x16x8xf32> into tensor<4x16x8xf32>
  %se = tensor.empty() : tensor<4x3x8xf32>
  %sf = linalg.fill ins(%zero : f32) outs(%se : tensor<4x3x8xf32>) -> tensor<4x3x8xf32>
  %qk = linalg.batch_matmul ins(%qc, %ktc : tensor<4x3x16xf32>, tensor<4x16x8xf32>) outs(%sf : tensor<4x3x8xf32>) -> tensor<4x3x8xf32>
  %qk4 = tensor.expand_shape %qk [[0, 1], [2], [3]] output_shape [1, 4, 3, 8] : tensor<4x3x8xf32> into tensor<1x4x3x8xf32>
  %e = tensor.empty() : tensor<1x4x3x8xf32>
  %scaled = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%qk4 : tensor<1x4x3x8xf32>) outs(%e : tensor<1x4x3x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %x = arith.mulf %in, %scale : f32
    linalg.yield %x : f32
  } -> tensor<1x4x3x8xf32>
  %masked = linalg.generic {indexing_maps = [#id, #mask, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%scaled, %m : tensor<1x4x3x8xf32>, tensor<3x8xf32>) outs(%e : tensor<1x4x3x8xf32>) {
  ^bb0(%in: f32, %in1: f32, %out: f32):
    %x = arith.mulf %in, %in1 : f32
    linalg.yield %x : f32
  } -> tensor<1x4x3x8xf32>
  %re = tensor.empty() : tensor<1x4x3xf32>
  %mf = linalg.fill ins(%ninf : f32) outs(%re : tensor<1x4x3xf32>) -> tensor<1x4x3xf32>
  %max = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%masked : tensor<1x4x3x8xf32>) outs(%mf : tensor<1x4x3xf32>) {
  ^bb0(%in: f32, %out: f32):
    %x = arith.maximumf %out, %in : f32
    linalg.yield %x : f32
  } -> tensor<1x4x3xf32>
  %shifted = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%masked, %max : tensor<1x4x3x8xf32>, tensor<1x4x3xf32>) outs(%e : tensor<1x4x3x8xf32>) {
  ^bb0(%in: f32, %in1: f32, %out: f32):
    %x = arith.subf %in, %in1 : f32
    linalg.yield %x : f32
  } -> tensor<1x4x3x8xf32>
  %sumf = linalg.fill ins(%zero : f32) outs(%re : tensor<1x4x3xf32>) -> tensor<1x4x3xf32>
  %sum = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%shifted : tensor<1x4x3x8xf32>) outs(%sumf : tensor<1x4x3xf32>) {
  ^bb0(%in: f32, %out: f32):
    %x = math.exp %in : f32
    %y = arith.addf %out, %x : f32
    linalg.yield %y : f32
  } -> tensor<1x4x3xf32>
  %probs = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%shifted, %sum : tensor<1x4x3x8xf32>, tensor<1x4x3xf32>) outs(%e : tensor<1x4x3x8xf32>) {
  ^bb0(%in: f32, %in1: f32, %out: f32):
    %x = math.exp %in : f32
    %y = arith.divf %x, %in1 : f32
    linalg.yield %y : f32
  } -> tensor<1x4x3x8xf32>
  %pc = tensor.collapse_shape %probs [[0, 1], [2], [3]] : tensor<1x4x3x8xf32> into tensor<4x3x8xf32>
  %vc = tensor.collapse_shape %v [[0, 1], [2], [3]] : tensor<1x4x8x16xf32> into tensor<4x8x16xf32>
  %oe = tensor.empty() : tensor<4x3x16xf32>
  %of = linalg.fill ins(%zero : f32) outs(%oe : tensor<4x3x16xf32>) -> tensor<4x3x16xf32>
  %o = linalg.batch_matmul ins(%pc, %vc : tensor<4x3x8xf32>, tensor<4x8x16xf32>) outs(%of : tensor<4x3x16xf32>) -> tensor<4x3x16xf32>
  return %o : tensor<4x3x16xf32>
}
