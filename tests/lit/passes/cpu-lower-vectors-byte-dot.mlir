// cpu-lower-vectors-byte-dot.mlir - turbine-cpu-lower-vectors rewrites a
// byte dot product, acc + sum over the 4 bytes of each i32 lane of
// u8(x) * s8(y) (what the int8-activation GEMV tiles write), into the
// instructions its turbine.byte_dot mark names: "vpdpbusd" (16 lanes, with
// the byte operands in either order of the multiply; the bytes reach the
// intrinsic as <64 x i8>, by shape_casts this pass lowers to element moves
// that LLVM folds away) or "vpmaddubsw" (per 8 lanes vpmaddubsw, then
// vpmaddwd by ones, added to the accumulator). Unmarked, sign-extended x,
// or a shape the instruction does not take: stays arithmetic.

// RUN: turbine-opt %s --turbine-cpu-lower-vectors | FileCheck %s

// CHECK-LABEL: func.func @vnni(
// CHECK-SAME:    %[[ACC:.*]]: vector<16xi32>, %[[X:.*]]: vector<16x4xi8>, %[[Y:.*]]: vector<16x4xi8>)
// CHECK-NOT:     arith.muli
// CHECK:         %[[R:.*]] = llvm.call_intrinsic "llvm.x86.avx512.vpdpbusd.512"(%[[ACC]], %{{.*}}, %{{.*}}) : (vector<16xi32>, vector<64xi8>, vector<64xi8>) -> vector<16xi32>
// CHECK:         return %[[R]]
func.func @vnni(%acc: vector<16xi32>, %x: vector<16x4xi8>, %y: vector<16x4xi8>) -> vector<16xi32> {
  %xu = arith.extui %x : vector<16x4xi8> to vector<16x4xi32>
  %ys = arith.extsi %y : vector<16x4xi8> to vector<16x4xi32>
  %p = arith.muli %xu, %ys : vector<16x4xi32>
  %r = vector.multi_reduction <add>, %p, %acc {turbine.byte_dot = "vpdpbusd"} [1] : vector<16x4xi32> to vector<16xi32>
  return %r : vector<16xi32>
}

// CHECK-LABEL: func.func @vnni_swapped(
// CHECK-SAME:    %[[ACC:.*]]: vector<16xi32>, %[[X:.*]]: vector<16x4xi8>, %[[Y:.*]]: vector<16x4xi8>)
// CHECK-NOT:     arith.muli
// CHECK:         llvm.call_intrinsic "llvm.x86.avx512.vpdpbusd.512"(%[[ACC]], %{{.*}}, %{{.*}})
func.func @vnni_swapped(%acc: vector<16xi32>, %x: vector<16x4xi8>, %y: vector<16x4xi8>) -> vector<16xi32> {
  %xu = arith.extui %x : vector<16x4xi8> to vector<16x4xi32>
  %ys = arith.extsi %y : vector<16x4xi8> to vector<16x4xi32>
  %p = arith.muli %ys, %xu : vector<16x4xi32>
  %r = vector.multi_reduction <add>, %p, %acc {turbine.byte_dot = "vpdpbusd"} [1] : vector<16x4xi32> to vector<16xi32>
  return %r : vector<16xi32>
}

// Two halves of 8 lanes: each 32 bytes of x and y, vpmaddubsw, vpmaddwd
// by ones; the halves joined and added to the accumulator.
// CHECK-LABEL: func.func @pair_sums(
// CHECK-SAME:    %[[ACC:.*]]: vector<16xi32>
// CHECK-NOT:     arith.muli
// CHECK:         %[[ONES:.*]] = arith.constant dense<1> : vector<16xi16>
// CHECK:         %[[P0:.*]] = llvm.call_intrinsic "llvm.x86.avx2.pmadd.ub.sw"(%{{.*}}, %{{.*}}) : (vector<32xi8>, vector<32xi8>) -> vector<16xi16>
// CHECK:         %[[Q0:.*]] = llvm.call_intrinsic "llvm.x86.avx2.pmadd.wd"(%[[P0]], %[[ONES]]) : (vector<16xi16>, vector<16xi16>) -> vector<8xi32>
// CHECK:         %[[P1:.*]] = llvm.call_intrinsic "llvm.x86.avx2.pmadd.ub.sw"
// CHECK:         %[[Q1:.*]] = llvm.call_intrinsic "llvm.x86.avx2.pmadd.wd"(%[[P1]], %[[ONES]])
// CHECK:         %[[J:.*]] = vector.shuffle %[[Q0]], %[[Q1]] [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15]
// CHECK:         %[[R:.*]] = arith.addi %[[ACC]], %[[J]] : vector<16xi32>
// CHECK:         return %[[R]]
func.func @pair_sums(%acc: vector<16xi32>, %x: vector<16x4xi8>, %y: vector<16x4xi8>) -> vector<16xi32> {
  %xu = arith.extui %x : vector<16x4xi8> to vector<16x4xi32>
  %ys = arith.extsi %y : vector<16x4xi8> to vector<16x4xi32>
  %p = arith.muli %xu, %ys : vector<16x4xi32>
  %r = vector.multi_reduction <add>, %p, %acc {turbine.byte_dot = "vpmaddubsw"} [1] : vector<16x4xi32> to vector<16xi32>
  return %r : vector<16xi32>
}

// CHECK-LABEL: func.func @pair_sums_eight_lanes(
// CHECK:         llvm.call_intrinsic "llvm.x86.avx2.pmadd.ub.sw"
// CHECK:         llvm.call_intrinsic "llvm.x86.avx2.pmadd.wd"
// CHECK-NOT:     llvm.call_intrinsic
// CHECK:         return
func.func @pair_sums_eight_lanes(%acc: vector<8xi32>, %x: vector<8x4xi8>, %y: vector<8x4xi8>) -> vector<8xi32> {
  %xu = arith.extui %x : vector<8x4xi8> to vector<8x4xi32>
  %ys = arith.extsi %y : vector<8x4xi8> to vector<8x4xi32>
  %p = arith.muli %xu, %ys : vector<8x4xi32>
  %r = vector.multi_reduction <add>, %p, %acc {turbine.byte_dot = "vpmaddubsw"} [1] : vector<8x4xi32> to vector<8xi32>
  return %r : vector<8xi32>
}

// CHECK-LABEL: func.func @unmarked(
// CHECK-NOT:     llvm.call_intrinsic
// CHECK:         return
func.func @unmarked(%acc: vector<16xi32>, %x: vector<16x4xi8>, %y: vector<16x4xi8>) -> vector<16xi32> {
  %xu = arith.extui %x : vector<16x4xi8> to vector<16x4xi32>
  %ys = arith.extsi %y : vector<16x4xi8> to vector<16x4xi32>
  %p = arith.muli %xu, %ys : vector<16x4xi32>
  %r = vector.multi_reduction <add>, %p, %acc [1] : vector<16x4xi32> to vector<16xi32>
  return %r : vector<16xi32>
}

// CHECK-LABEL: func.func @signed_signed(
// CHECK-NOT:     llvm.call_intrinsic
// CHECK:         return
func.func @signed_signed(%acc: vector<16xi32>, %x: vector<16x4xi8>, %y: vector<16x4xi8>) -> vector<16xi32> {
  %xs = arith.extsi %x : vector<16x4xi8> to vector<16x4xi32>
  %ys = arith.extsi %y : vector<16x4xi8> to vector<16x4xi32>
  %p = arith.muli %xs, %ys : vector<16x4xi32>
  %r = vector.multi_reduction <add>, %p, %acc {turbine.byte_dot = "vpdpbusd"} [1] : vector<16x4xi32> to vector<16xi32>
  return %r : vector<16xi32>
}

// vpdpbusd takes 16 lanes, vpmaddubsw multiples of 8.
// CHECK-LABEL: func.func @vnni_eight_lanes(
// CHECK-NOT:     llvm.call_intrinsic
// CHECK:         return
func.func @vnni_eight_lanes(%acc: vector<8xi32>, %x: vector<8x4xi8>, %y: vector<8x4xi8>) -> vector<8xi32> {
  %xu = arith.extui %x : vector<8x4xi8> to vector<8x4xi32>
  %ys = arith.extsi %y : vector<8x4xi8> to vector<8x4xi32>
  %p = arith.muli %xu, %ys : vector<8x4xi32>
  %r = vector.multi_reduction <add>, %p, %acc {turbine.byte_dot = "vpdpbusd"} [1] : vector<8x4xi32> to vector<8xi32>
  return %r : vector<8xi32>
}

// CHECK-LABEL: func.func @pair_sums_four_lanes(
// CHECK-NOT:     llvm.call_intrinsic
// CHECK:         return
func.func @pair_sums_four_lanes(%acc: vector<4xi32>, %x: vector<4x4xi8>, %y: vector<4x4xi8>) -> vector<4xi32> {
  %xu = arith.extui %x : vector<4x4xi8> to vector<4x4xi32>
  %ys = arith.extsi %y : vector<4x4xi8> to vector<4x4xi32>
  %p = arith.muli %xu, %ys : vector<4x4xi32>
  %r = vector.multi_reduction <add>, %p, %acc {turbine.byte_dot = "vpmaddubsw"} [1] : vector<4x4xi32> to vector<4xi32>
  return %r : vector<4xi32>
}
