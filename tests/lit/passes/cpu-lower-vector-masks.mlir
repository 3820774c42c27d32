// cpu-lower-vector-masks.mlir - turbine-cpu-lower-vector-masks: a
// vector.mask around a transfer becomes a masked transfer (the form the
// LLVM lowering turns into llvm.intr.masked.load/store).

// RUN: turbine-opt %s --turbine-cpu-lower-vector-masks | FileCheck %s

// CHECK-LABEL: func.func @masked
// CHECK-NOT:     vector.mask
// CHECK:         %[[M:.*]] = vector.create_mask %{{.*}} : vector<64xi1>
// CHECK:         vector.transfer_read %{{.*}}[%{{.*}}], %{{.*}}, %[[M]] : memref<?xf32>, vector<64xf32>
func.func @masked(%m: memref<?xf32>, %n: index) -> vector<64xf32> {
  %c0 = arith.constant 0 : index
  %pad = arith.constant 0.0 : f32
  %mask = vector.create_mask %n : vector<64xi1>
  %v = vector.mask %mask { vector.transfer_read %m[%c0], %pad : memref<?xf32>, vector<64xf32> } : vector<64xi1> -> vector<64xf32>
  return %v : vector<64xf32>
}
