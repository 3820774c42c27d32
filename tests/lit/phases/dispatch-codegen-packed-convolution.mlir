// dispatch-codegen-packed-convolution.mlir - a convolution with a packed
// filter (ConvolutionFilterPacking.cpp) forms one kernel with its bias + ReLU
// epilogue (moved to NHWC by the max pooling that reads it), gets the NHWC
// convolution's workgroup tiles (32 output channels,
// whole rows; grid x = width, y = height, z = channel tiles), and codegen
// lowers each 32-channel tile to the vectorized register tile: no scalar
// generic with the packed map survives, and the FMAs are 32-wide vectors
// (two zmm registers each).

// RUN: %turbine compile %s --target-cpu=skylake-avx512 --compile-to=dispatch | FileCheck %s --check-prefix=DISPATCH
// RUN: %turbine compile %s --target-cpu=skylake-avx512 --compile-to=codegen | FileCheck %s --check-prefix=CODEGEN

// DISPATCH:     func.func @conv2d_3x1s1_7x7x1x64_f32({{.*}}) attributes {turbine.kernel, turbine.workgroup_dims = array<i64: 2, 1, 3>, turbine.workgroup_tiles = array<i64: 0, 1, 7, 32>}
// DISPATCH:       turbine.binding {{.*}} : memref<2x3x1x1x32xf32>
// DISPATCH:       linalg.fill
// DISPATCH:       linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]
// DISPATCH:       linalg.generic
// DISPATCH:         arith.addf
// DISPATCH:         arith.maximumf
// DISPATCH:     func.func @maxpool_2x2s2_3x3x64_f32(
// DISPATCH:       linalg.pooling_nhwc_max

// CODEGEN-NOT:  floordiv
// CODEGEN:      llvm.func @
// CODEGEN:        llvm.intr.fmuladd({{.*}}) : (vector<32xf32>, vector<32xf32>, vector<32xf32>) -> vector<32xf32>
func.func @main(%x: tensor<?x1x9x7xf32>) -> tensor<?x64x3x3xf32> {
  %w = arith.constant dense<[[[[0.0], [100.0], [200.0]]], [[[1.0], [101.0], [201.0]]], [[[2.0], [102.0], [202.0]]], [[[3.0], [103.0], [203.0]]], [[[4.0], [104.0], [204.0]]], [[[5.0], [105.0], [205.0]]], [[[6.0], [106.0], [206.0]]], [[[7.0], [107.0], [207.0]]], [[[8.0], [108.0], [208.0]]], [[[9.0], [109.0], [209.0]]], [[[10.0], [110.0], [210.0]]], [[[11.0], [111.0], [211.0]]], [[[12.0], [112.0], [212.0]]], [[[13.0], [113.0], [213.0]]], [[[14.0], [114.0], [214.0]]], [[[15.0], [115.0], [215.0]]], [[[16.0], [116.0], [216.0]]], [[[17.0], [117.0], [217.0]]], [[[18.0], [118.0], [218.0]]], [[[19.0], [119.0], [219.0]]], [[[20.0], [120.0], [220.0]]], [[[21.0], [121.0], [221.0]]], [[[22.0], [122.0], [222.0]]], [[[23.0], [123.0], [223.0]]], [[[24.0], [124.0], [224.0]]], [[[25.0], [125.0], [225.0]]], [[[26.0], [126.0], [226.0]]], [[[27.0], [127.0], [227.0]]], [[[28.0], [128.0], [228.0]]], [[[29.0], [129.0], [229.0]]], [[[30.0], [130.0], [230.0]]], [[[31.0], [131.0], [231.0]]], [[[32.0], [132.0], [232.0]]], [[[33.0], [133.0], [233.0]]], [[[34.0], [134.0], [234.0]]], [[[35.0], [135.0], [235.0]]], [[[36.0], [136.0], [236.0]]], [[[37.0], [137.0], [237.0]]], [[[38.0], [138.0], [238.0]]], [[[39.0], [139.0], [239.0]]], [[[40.0], [140.0], [240.0]]], [[[41.0], [141.0], [241.0]]], [[[42.0], [142.0], [242.0]]], [[[43.0], [143.0], [243.0]]], [[[44.0], [144.0], [244.0]]], [[[45.0], [145.0], [245.0]]], [[[46.0], [146.0], [246.0]]], [[[47.0], [147.0], [247.0]]], [[[48.0], [148.0], [248.0]]], [[[49.0], [149.0], [249.0]]], [[[50.0], [150.0], [250.0]]], [[[51.0], [151.0], [251.0]]], [[[52.0], [152.0], [252.0]]], [[[53.0], [153.0], [253.0]]], [[[54.0], [154.0], [254.0]]], [[[55.0], [155.0], [255.0]]], [[[56.0], [156.0], [256.0]]], [[[57.0], [157.0], [257.0]]], [[[58.0], [158.0], [258.0]]], [[[59.0], [159.0], [259.0]]], [[[60.0], [160.0], [260.0]]], [[[61.0], [161.0], [261.0]]], [[[62.0], [162.0], [262.0]]], [[[63.0], [163.0], [263.0]]]]> : tensor<64x1x3x1xf32>
  %bias = arith.constant dense<0.5> : tensor<64xf32>
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x1x9x7xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty(%n) : tensor<?x64x7x7xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<?x64x7x7xf32>) -> tensor<?x64x7x7xf32>
  %conv = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%x, %w : tensor<?x1x9x7xf32>, tensor<64x1x3x1xf32>) outs(%acc : tensor<?x64x7x7xf32>) -> tensor<?x64x7x7xf32>
  %e2 = tensor.empty(%n) : tensor<?x64x7x7xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(a, b, c, d) -> (a, b, c, d)>, affine_map<(a, b, c, d) -> (b)>, affine_map<(a, b, c, d) -> (a, b, c, d)>],
                       iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%conv, %bias : tensor<?x64x7x7xf32>, tensor<64xf32>) outs(%e2 : tensor<?x64x7x7xf32>) {
  ^bb0(%v: f32, %b: f32, %o: f32):
    %s = arith.addf %v, %b : f32
    %r = arith.maximumf %s, %zero : f32
    linalg.yield %r : f32
  } -> tensor<?x64x7x7xf32>
  %ninf = arith.constant 0xFF800000 : f32
  %win = tensor.empty() : tensor<2x2xf32>
  %pe = tensor.empty(%n) : tensor<?x64x3x3xf32>
  %pinit = linalg.fill ins(%ninf : f32) outs(%pe : tensor<?x64x3x3xf32>) -> tensor<?x64x3x3xf32>
  %pool = linalg.pooling_nchw_max {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
      ins(%y, %win : tensor<?x64x7x7xf32>, tensor<2x2xf32>) outs(%pinit : tensor<?x64x3x3xf32>) -> tensor<?x64x3x3xf32>
  return %pool : tensor<?x64x3x3xf32>
}
