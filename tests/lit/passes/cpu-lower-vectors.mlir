// cpu-lower-vectors.mlir - turbine-cpu-lower-vectors: a register tile's
// vector.contract becomes outer products (fused multiply-adds on rows of
// 32 lanes); an inner max reduction becomes one vector.reduction; transfers
// end at rank 1.

// RUN: turbine-opt %s --turbine-cpu-lower-vectors | FileCheck %s

#a = affine_map<(m, n, k) -> (m, k)>
#b = affine_map<(m, n, k) -> (k, n)>
#c = affine_map<(m, n, k) -> (m, n)>
// CHECK-LABEL: func.func @tile
// CHECK-NOT:     vector.contract
// CHECK:         vector.fma %{{.*}} : vector<32xf32>
func.func @tile(%a: vector<2x1xf32>, %b: vector<1x32xf32>, %acc: vector<2x32xf32>) -> vector<2x32xf32> {
  %r = vector.contract {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"],
                        kind = #vector.kind<add>} %a, %b, %acc : vector<2x1xf32>, vector<1x32xf32> into vector<2x32xf32>
  return %r : vector<2x32xf32>
}

// CHECK-LABEL: func.func @row_max
// CHECK:         vector.reduction <maximumf>, %{{.*}} : vector<64xf32> into f32
// CHECK-NOT:     vector.extract {{.*}} : f32 from vector<64xf32>
func.func @row_max(%v: vector<1x64xf32>, %init: vector<1xf32>) -> vector<1xf32> {
  %r = vector.multi_reduction <maximumf>, %v, %init [1] : vector<1x64xf32> to vector<1xf32>
  return %r : vector<1xf32>
}
