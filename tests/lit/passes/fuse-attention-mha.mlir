// fuse-attention-mha.mlir - turbine-fuse-attention on nn.MultiheadAttention
// as the TorchScript importer lowers it (this file is its `--compile-to=input`
// output for tests/models' mha model, 1x10x32, 4 heads): canonicalization
// composed the key's head transpose and kᵀ into one [0, 2, 3, 1] transpose,
// which the pass splits back, so the per-head attention becomes one
// turbine.attention and no batch_matmul is left.

// RUN: turbine-opt %s --turbine-fuse-attention | FileCheck %s

// CHECK-LABEL: func.func @main
// CHECK-NOT:     linalg.batch_matmul
// CHECK:         turbine.attention
// CHECK-NOT:     linalg.batch_matmul
#map = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#map1 = affine_map<(d0, d1, d2) -> (d0, d1)>
#map2 = affine_map<(d0, d1, d2) -> (d2)>
#map3 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#map4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
module {
  func.func @main(%arg0: tensor<1x10x32xf32> {turbine.name = "x"}) -> (tensor<1x10x32xf32> {turbine.name = "output"}) {
    %cst = arith.constant {turbine.param_name = "attn.out_proj.weight.T"} dense_resource<__elided__> : tensor<32x32xf32>
    %cst_0 = arith.constant 0xFF800000 : f32
    %cst_1 = arith.constant 0.353553385 : f32
    %cst_2 = arith.constant {turbine.param_name = "attn.in_proj_weight[64:96].T"} dense_resource<__elided__> : tensor<32x32xf32>
    %cst_3 = arith.constant {turbine.param_name = "attn.in_proj_weight[32:64].T"} dense_resource<__elided__> : tensor<32x32xf32>
    %cst_4 = arith.constant {turbine.param_name = "attn.in_proj_weight[0:32].T"} dense_resource<__elided__> : tensor<32x32xf32>
    %cst_5 = arith.constant {turbine.param_name = "ln.bias"} dense<0.000000e+00> : tensor<32xf32>
    %cst_6 = arith.constant {turbine.param_name = "ln.weight"} dense<1.000000e+00> : tensor<32xf32>
    %cst_7 = arith.constant 9.99999974E-6 : f32
    %cst_8 = arith.constant 0.000000e+00 : f32
    %cst_9 = arith.constant 3.200000e+01 : f32
    %0 = tensor.empty() : tensor<1x10xf32>
    %1 = linalg.fill ins(%cst_8 : f32) outs(%0 : tensor<1x10xf32>) -> tensor<1x10xf32>
    %2 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "parallel", "reduction"]} ins(%arg0 : tensor<1x10x32xf32>) outs(%1 : tensor<1x10xf32>) {
    ^bb0(%in: f32, %out: f32):
      %56 = arith.addf %out, %in : f32
      linalg.yield %56 : f32
    } -> tensor<1x10xf32>
    %3 = tensor.empty() : tensor<1x10x32xf32>
    %4 = linalg.generic {indexing_maps = [#map, #map1, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%arg0, %2 : tensor<1x10x32xf32>, tensor<1x10xf32>) outs(%3 : tensor<1x10x32xf32>) {
    ^bb0(%in: f32, %in_28: f32, %out: f32):
      %56 = arith.divf %in_28, %cst_9 : f32
      %57 = arith.subf %in, %56 : f32
      linalg.yield %57 : f32
    } -> tensor<1x10x32xf32>
    %5 = tensor.empty() : tensor<1x10xf32>
    %6 = linalg.fill ins(%cst_8 : f32) outs(%5 : tensor<1x10xf32>) -> tensor<1x10xf32>
    %7 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "parallel", "reduction"]} ins(%4 : tensor<1x10x32xf32>) outs(%6 : tensor<1x10xf32>) {
    ^bb0(%in: f32, %out: f32):
      %56 = arith.mulf %in, %in : f32
      %57 = arith.addf %out, %56 : f32
      linalg.yield %57 : f32
    } -> tensor<1x10xf32>
    %8 = tensor.empty() : tensor<1x10x32xf32>
    %9 = linalg.generic {indexing_maps = [#map, #map1, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%4, %7 : tensor<1x10x32xf32>, tensor<1x10xf32>) outs(%8 : tensor<1x10x32xf32>) {
    ^bb0(%in: f32, %in_28: f32, %out: f32):
      %56 = arith.divf %in_28, %cst_9 : f32
      %57 = arith.addf %56, %cst_7 : f32
      %58 = math.rsqrt %57 : f32
      %59 = arith.mulf %in, %58 : f32
      linalg.yield %59 : f32
    } -> tensor<1x10x32xf32>
    %10 = tensor.empty() : tensor<1x10x32xf32>
    %11 = linalg.generic {indexing_maps = [#map, #map2, #map2, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%9, %cst_6, %cst_5 : tensor<1x10x32xf32>, tensor<32xf32>, tensor<32xf32>) outs(%10 : tensor<1x10x32xf32>) {
    ^bb0(%in: f32, %in_28: f32, %in_29: f32, %out: f32):
      %56 = arith.mulf %in, %in_28 : f32
      %57 = arith.addf %56, %in_29 : f32
      linalg.yield %57 : f32
    } -> tensor<1x10x32xf32>
    %collapsed = tensor.collapse_shape %11 [[0, 1], [2]] : tensor<1x10x32xf32> into tensor<10x32xf32>
    %12 = tensor.empty() : tensor<10x32xf32>
    %13 = linalg.fill ins(%cst_8 : f32) outs(%12 : tensor<10x32xf32>) -> tensor<10x32xf32>
    %14 = linalg.matmul ins(%collapsed, %cst_4 : tensor<10x32xf32>, tensor<32x32xf32>) outs(%13 : tensor<10x32xf32>) -> tensor<10x32xf32>
    %expanded = tensor.expand_shape %14 [[0, 1], [2]] output_shape [1, 10, 32] : tensor<10x32xf32> into tensor<1x10x32xf32>
    %15 = tensor.empty() : tensor<1x10x32xf32>
    %16 = linalg.generic {indexing_maps = [#map, #map2, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%expanded, %cst_5 : tensor<1x10x32xf32>, tensor<32xf32>) outs(%15 : tensor<1x10x32xf32>) {
    ^bb0(%in: f32, %in_28: f32, %out: f32):
      %56 = arith.addf %in, %in_28 : f32
      linalg.yield %56 : f32
    } -> tensor<1x10x32xf32>
    %expanded_10 = tensor.expand_shape %16 [[0], [1], [2, 3]] output_shape [1, 10, 4, 8] : tensor<1x10x32xf32> into tensor<1x10x4x8xf32>
    %17 = tensor.empty() : tensor<1x4x10x8xf32>
    %transposed = linalg.transpose ins(%expanded_10 : tensor<1x10x4x8xf32>) outs(%17 : tensor<1x4x10x8xf32>) permutation = [0, 2, 1, 3] 
    %collapsed_11 = tensor.collapse_shape %11 [[0, 1], [2]] : tensor<1x10x32xf32> into tensor<10x32xf32>
    %18 = tensor.empty() : tensor<10x32xf32>
    %19 = linalg.fill ins(%cst_8 : f32) outs(%18 : tensor<10x32xf32>) -> tensor<10x32xf32>
    %20 = linalg.matmul ins(%collapsed_11, %cst_3 : tensor<10x32xf32>, tensor<32x32xf32>) outs(%19 : tensor<10x32xf32>) -> tensor<10x32xf32>
    %expanded_12 = tensor.expand_shape %20 [[0, 1], [2]] output_shape [1, 10, 32] : tensor<10x32xf32> into tensor<1x10x32xf32>
    %21 = tensor.empty() : tensor<1x10x32xf32>
    %22 = linalg.generic {indexing_maps = [#map, #map2, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%expanded_12, %cst_5 : tensor<1x10x32xf32>, tensor<32xf32>) outs(%21 : tensor<1x10x32xf32>) {
    ^bb0(%in: f32, %in_28: f32, %out: f32):
      %56 = arith.addf %in, %in_28 : f32
      linalg.yield %56 : f32
    } -> tensor<1x10x32xf32>
    %expanded_13 = tensor.expand_shape %22 [[0], [1], [2, 3]] output_shape [1, 10, 4, 8] : tensor<1x10x32xf32> into tensor<1x10x4x8xf32>
    %collapsed_14 = tensor.collapse_shape %11 [[0, 1], [2]] : tensor<1x10x32xf32> into tensor<10x32xf32>
    %23 = tensor.empty() : tensor<10x32xf32>
    %24 = linalg.fill ins(%cst_8 : f32) outs(%23 : tensor<10x32xf32>) -> tensor<10x32xf32>
    %25 = linalg.matmul ins(%collapsed_14, %cst_2 : tensor<10x32xf32>, tensor<32x32xf32>) outs(%24 : tensor<10x32xf32>) -> tensor<10x32xf32>
    %expanded_15 = tensor.expand_shape %25 [[0, 1], [2]] output_shape [1, 10, 32] : tensor<10x32xf32> into tensor<1x10x32xf32>
    %26 = tensor.empty() : tensor<1x10x32xf32>
    %27 = linalg.generic {indexing_maps = [#map, #map2, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%expanded_15, %cst_5 : tensor<1x10x32xf32>, tensor<32xf32>) outs(%26 : tensor<1x10x32xf32>) {
    ^bb0(%in: f32, %in_28: f32, %out: f32):
      %56 = arith.addf %in, %in_28 : f32
      linalg.yield %56 : f32
    } -> tensor<1x10x32xf32>
    %expanded_16 = tensor.expand_shape %27 [[0], [1], [2, 3]] output_shape [1, 10, 4, 8] : tensor<1x10x32xf32> into tensor<1x10x4x8xf32>
    %28 = tensor.empty() : tensor<1x4x10x8xf32>
    %transposed_17 = linalg.transpose ins(%expanded_16 : tensor<1x10x4x8xf32>) outs(%28 : tensor<1x4x10x8xf32>) permutation = [0, 2, 1, 3] 
    %29 = tensor.empty() : tensor<1x4x8x10xf32>
    %transposed_18 = linalg.transpose ins(%expanded_13 : tensor<1x10x4x8xf32>) outs(%29 : tensor<1x4x8x10xf32>) permutation = [0, 2, 3, 1] 
    %collapsed_19 = tensor.collapse_shape %transposed [[0, 1], [2], [3]] : tensor<1x4x10x8xf32> into tensor<4x10x8xf32>
    %collapsed_20 = tensor.collapse_shape %transposed_18 [[0, 1], [2], [3]] : tensor<1x4x8x10xf32> into tensor<4x8x10xf32>
    %30 = tensor.empty() : tensor<4x10x10xf32>
    %31 = linalg.fill ins(%cst_8 : f32) outs(%30 : tensor<4x10x10xf32>) -> tensor<4x10x10xf32>
    %32 = linalg.batch_matmul ins(%collapsed_19, %collapsed_20 : tensor<4x10x8xf32>, tensor<4x8x10xf32>) outs(%31 : tensor<4x10x10xf32>) -> tensor<4x10x10xf32>
    %expanded_21 = tensor.expand_shape %32 [[0, 1], [2], [3]] output_shape [1, 4, 10, 10] : tensor<4x10x10xf32> into tensor<1x4x10x10xf32>
    %33 = tensor.empty() : tensor<1x4x10x10xf32>
    %34 = linalg.generic {indexing_maps = [#map3, #map3], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%expanded_21 : tensor<1x4x10x10xf32>) outs(%33 : tensor<1x4x10x10xf32>) {
    ^bb0(%in: f32, %out: f32):
      %56 = arith.mulf %in, %cst_1 : f32
      linalg.yield %56 : f32
    } -> tensor<1x4x10x10xf32>
    %35 = tensor.empty() : tensor<1x4x10xf32>
    %36 = linalg.fill ins(%cst_0 : f32) outs(%35 : tensor<1x4x10xf32>) -> tensor<1x4x10xf32>
    %37 = linalg.generic {indexing_maps = [#map3, #map4], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%34 : tensor<1x4x10x10xf32>) outs(%36 : tensor<1x4x10xf32>) {
    ^bb0(%in: f32, %out: f32):
      %56 = arith.maximumf %out, %in : f32
      linalg.yield %56 : f32
    } -> tensor<1x4x10xf32>
    %38 = tensor.empty() : tensor<1x4x10x10xf32>
    %39 = linalg.generic {indexing_maps = [#map3, #map4, #map3], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%34, %37 : tensor<1x4x10x10xf32>, tensor<1x4x10xf32>) outs(%38 : tensor<1x4x10x10xf32>) {
    ^bb0(%in: f32, %in_28: f32, %out: f32):
      %56 = arith.subf %in, %in_28 : f32
      linalg.yield %56 : f32
    } -> tensor<1x4x10x10xf32>
    %40 = tensor.empty() : tensor<1x4x10xf32>
    %41 = linalg.fill ins(%cst_8 : f32) outs(%40 : tensor<1x4x10xf32>) -> tensor<1x4x10xf32>
    %42 = linalg.generic {indexing_maps = [#map3, #map4], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%39 : tensor<1x4x10x10xf32>) outs(%41 : tensor<1x4x10xf32>) {
    ^bb0(%in: f32, %out: f32):
      %56 = math.exp %in : f32
      %57 = arith.addf %out, %56 : f32
      linalg.yield %57 : f32
    } -> tensor<1x4x10xf32>
    %43 = tensor.empty() : tensor<1x4x10x10xf32>
    %44 = linalg.generic {indexing_maps = [#map3, #map4, #map3], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%39, %42 : tensor<1x4x10x10xf32>, tensor<1x4x10xf32>) outs(%43 : tensor<1x4x10x10xf32>) {
    ^bb0(%in: f32, %in_28: f32, %out: f32):
      %56 = math.exp %in : f32
      %57 = arith.divf %56, %in_28 : f32
      linalg.yield %57 : f32
    } -> tensor<1x4x10x10xf32>
    %collapsed_22 = tensor.collapse_shape %44 [[0, 1], [2], [3]] : tensor<1x4x10x10xf32> into tensor<4x10x10xf32>
    %collapsed_23 = tensor.collapse_shape %transposed_17 [[0, 1], [2], [3]] : tensor<1x4x10x8xf32> into tensor<4x10x8xf32>
    %45 = tensor.empty() : tensor<4x10x8xf32>
    %46 = linalg.fill ins(%cst_8 : f32) outs(%45 : tensor<4x10x8xf32>) -> tensor<4x10x8xf32>
    %47 = linalg.batch_matmul ins(%collapsed_22, %collapsed_23 : tensor<4x10x10xf32>, tensor<4x10x8xf32>) outs(%46 : tensor<4x10x8xf32>) -> tensor<4x10x8xf32>
    %expanded_24 = tensor.expand_shape %47 [[0, 1], [2], [3]] output_shape [1, 4, 10, 8] : tensor<4x10x8xf32> into tensor<1x4x10x8xf32>
    %48 = tensor.empty() : tensor<1x10x4x8xf32>
    %transposed_25 = linalg.transpose ins(%expanded_24 : tensor<1x4x10x8xf32>) outs(%48 : tensor<1x10x4x8xf32>) permutation = [0, 2, 1, 3] 
    %collapsed_26 = tensor.collapse_shape %transposed_25 [[0, 1], [2, 3]] : tensor<1x10x4x8xf32> into tensor<10x32xf32>
    %49 = tensor.empty() : tensor<10x32xf32>
    %50 = linalg.fill ins(%cst_8 : f32) outs(%49 : tensor<10x32xf32>) -> tensor<10x32xf32>
    %51 = linalg.matmul ins(%collapsed_26, %cst : tensor<10x32xf32>, tensor<32x32xf32>) outs(%50 : tensor<10x32xf32>) -> tensor<10x32xf32>
    %expanded_27 = tensor.expand_shape %51 [[0, 1], [2]] output_shape [1, 10, 32] : tensor<10x32xf32> into tensor<1x10x32xf32>
    %52 = tensor.empty() : tensor<1x10x32xf32>
    %53 = linalg.generic {indexing_maps = [#map, #map2, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%expanded_27, %cst_5 : tensor<1x10x32xf32>, tensor<32xf32>) outs(%52 : tensor<1x10x32xf32>) {
    ^bb0(%in: f32, %in_28: f32, %out: f32):
      %56 = arith.addf %in, %in_28 : f32
      linalg.yield %56 : f32
    } -> tensor<1x10x32xf32>
    %54 = tensor.empty() : tensor<1x10x32xf32>
    %55 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%arg0, %53 : tensor<1x10x32xf32>, tensor<1x10x32xf32>) outs(%54 : tensor<1x10x32xf32>) {
    ^bb0(%in: f32, %in_28: f32, %out: f32):
      %56 = arith.addf %in, %in_28 : f32
      linalg.yield %56 : f32
    } -> tensor<1x10x32xf32>
    return %55 : tensor<1x10x32xf32>
  }
}
