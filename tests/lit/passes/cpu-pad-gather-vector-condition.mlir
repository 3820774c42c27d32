// cpu-pad-gather-vector-condition.mlir - turbine-cpu-tile-and-vectorize on
// the pad gather in front of a depthwise convolution (MobileNetV2's
// 56x56x144, bias + ReLU6 epilogue, dynamic batch; the kernel as the
// dispatch phase writes it): the gather is vectorized over channels in
// equal static chunks (144 = 3 x 48, not 64 + 64 + 16 with a mask on every
// transfer), and its in-bounds condition, which depends on the pixel only,
// is computed on scalars and broadcast once (as vectors of one index per
// channel lane, AVX2 CPUs built each i1 lane by byte inserts: 3.4x slower).

// RUN: turbine-opt %s --pass-pipeline='builtin.module(turbine-cpu-tile-and-vectorize{target-cpu=x86-64-v3})' | FileCheck %s

// CHECK-LABEL: func.func @depthwise_conv2d_3x3s1_56x56x144_f32
// CHECK:         scf.for %{{.*}} = %c0 to %c144 step %c48
// CHECK-NOT:       vector.create_mask
// CHECK-NOT:       xindex>
// CHECK:           arith.cmpi sge, %{{.*}}, %{{.*}} : index
// CHECK:           arith.andi %{{.*}}, %{{.*}} : i1
// CHECK:           %[[MASK:.*]] = vector.broadcast %{{.*}} : i1 to vector<1x1x1x48xi1>
// CHECK:           %[[READ:.*]] = vector.transfer_read {{.*}} : tensor<?x56x56x144xf32>, vector<1x1x1x48xf32>
// CHECK:           arith.select %[[MASK]], %[[READ]], %{{.*}} : vector<1x1x1x48xi1>, vector<1x1x1x48xf32>
#map = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#map1 = affine_map<(d0, d1, d2, d3) -> (d3)>
module attributes {turbine.kernels} {
  func.func @depthwise_conv2d_3x3s1_56x56x144_f32(%arg0: !llvm.ptr, %arg1: index, %arg2: index, %arg3: index) attributes {turbine.kernel, turbine.workgroup_dims = array<i64: 3, 2, 1>, turbine.workgroup_tiles = array<i64: 0, 2, 56, 144>} {
    %0 = turbine.push_constant %arg0[0]
    %1 = turbine.binding %arg0[0] dims(%0) : memref<?x56x56x144xf32>
    %2 = bufferization.to_tensor %1 restrict : memref<?x56x56x144xf32> to tensor<?x56x56x144xf32>
    %3 = turbine.binding %arg0[1] : memref<3x3x144xf32>
    %4 = bufferization.to_tensor %3 restrict : memref<3x3x144xf32> to tensor<3x3x144xf32>
    %5 = turbine.binding %arg0[2] : memref<144xf32>
    %6 = bufferization.to_tensor %5 restrict : memref<144xf32> to tensor<144xf32>
    %7 = turbine.push_constant %arg0[1]
    %8 = turbine.binding %arg0[3] dims(%7) : memref<?x56x56x144xf32>
    %9 = turbine.push_constant %arg0[2]
    %c55 = arith.constant 55 : index
    %c56 = arith.constant 56 : index
    %c1 = arith.constant 1 : index
    %cst = arith.constant 6.000000e+00 : f32
    %cst_0 = arith.constant 0.000000e+00 : f32
    %c0 = arith.constant 0 : index
    %10 = tensor.empty(%9) : tensor<?x56x56x144xf32>
    %11 = linalg.fill ins(%cst_0 : f32) outs(%10 : tensor<?x56x56x144xf32>) -> tensor<?x56x56x144xf32>
    %12 = tensor.empty(%9) : tensor<?x58x58x144xf32>
    %13 = linalg.generic {indexing_maps = [#map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} outs(%12 : tensor<?x58x58x144xf32>) {
    ^bb0(%out: f32):
      %16 = linalg.index 0 : index
      %17 = linalg.index 1 : index
      %18 = arith.subi %17, %c1 : index
      %19 = arith.cmpi sge, %18, %c0 : index
      %20 = arith.cmpi slt, %18, %c56 : index
      %21 = arith.andi %19, %20 : i1
      %22 = arith.maxsi %18, %c0 : index
      %23 = arith.minsi %22, %c55 : index
      %24 = linalg.index 2 : index
      %25 = arith.subi %24, %c1 : index
      %26 = arith.cmpi sge, %25, %c0 : index
      %27 = arith.cmpi slt, %25, %c56 : index
      %28 = arith.andi %26, %27 : i1
      %29 = arith.andi %21, %28 : i1
      %30 = arith.maxsi %25, %c0 : index
      %31 = arith.minsi %30, %c55 : index
      %32 = linalg.index 3 : index
      %extracted = tensor.extract %2[%16, %23, %31, %32] : tensor<?x56x56x144xf32>
      %33 = arith.select %29, %extracted, %cst_0 : f32
      linalg.yield %33 : f32
    } -> tensor<?x58x58x144xf32>
    %14 = linalg.depthwise_conv_2d_nhwc_hwc {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%13, %4 : tensor<?x58x58x144xf32>, tensor<3x3x144xf32>) outs(%11 : tensor<?x56x56x144xf32>) -> tensor<?x56x56x144xf32>
    %15 = linalg.generic {indexing_maps = [#map, #map1, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%14, %6 : tensor<?x56x56x144xf32>, tensor<144xf32>) outs(%10 : tensor<?x56x56x144xf32>) {
    ^bb0(%in: f32, %in_1: f32, %out: f32):
      %16 = arith.addf %in, %in_1 : f32
      %17 = arith.maximumf %16, %cst_0 : f32
      %18 = arith.minimumf %17, %cst : f32
      linalg.yield %18 : f32
    } -> tensor<?x56x56x144xf32>
    bufferization.materialize_in_destination %15 in restrict writable %8 : (tensor<?x56x56x144xf32>, memref<?x56x56x144xf32>) -> ()
    return
    }
}
