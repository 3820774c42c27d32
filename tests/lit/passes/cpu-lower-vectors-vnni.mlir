// cpu-lower-vectors-vnni.mlir - turbine-cpu-lower-vectors rewrites
// acc + sum over the 4 bytes of each i32 lane of u8(x) * s8(y) (what the
// int4 GEMV tile writes for a CPU with AVX512-VNNI) into vpdpbusd, with the
// byte operands in either order of the multiply (the bytes reach the
// intrinsic as <64 x i8>, by shape_casts this pass lowers to element moves
// that LLVM folds away); a sign-extended x, or a shape other than 16 x 4,
// stays arithmetic.

// RUN: turbine-opt %s --turbine-cpu-lower-vectors | FileCheck %s

// CHECK-LABEL: func.func @dot(
// CHECK-SAME:    %[[ACC:.*]]: vector<16xi32>, %[[X:.*]]: vector<16x4xi8>, %[[Y:.*]]: vector<16x4xi8>)
// CHECK-NOT:     arith.muli
// CHECK:         %[[R:.*]] = llvm.call_intrinsic "llvm.x86.avx512.vpdpbusd.512"(%[[ACC]], %{{.*}}, %{{.*}}) : (vector<16xi32>, vector<64xi8>, vector<64xi8>) -> vector<16xi32>
// CHECK:         return %[[R]]
func.func @dot(%acc: vector<16xi32>, %x: vector<16x4xi8>, %y: vector<16x4xi8>) -> vector<16xi32> {
  %xu = arith.extui %x : vector<16x4xi8> to vector<16x4xi32>
  %ys = arith.extsi %y : vector<16x4xi8> to vector<16x4xi32>
  %p = arith.muli %xu, %ys : vector<16x4xi32>
  %r = vector.multi_reduction <add>, %p, %acc [1] : vector<16x4xi32> to vector<16xi32>
  return %r : vector<16xi32>
}

// CHECK-LABEL: func.func @swapped(
// CHECK-SAME:    %[[ACC:.*]]: vector<16xi32>, %[[X:.*]]: vector<16x4xi8>, %[[Y:.*]]: vector<16x4xi8>)
// CHECK-NOT:     arith.muli
// CHECK:         llvm.call_intrinsic "llvm.x86.avx512.vpdpbusd.512"(%[[ACC]], %{{.*}}, %{{.*}})
func.func @swapped(%acc: vector<16xi32>, %x: vector<16x4xi8>, %y: vector<16x4xi8>) -> vector<16xi32> {
  %xu = arith.extui %x : vector<16x4xi8> to vector<16x4xi32>
  %ys = arith.extsi %y : vector<16x4xi8> to vector<16x4xi32>
  %p = arith.muli %ys, %xu : vector<16x4xi32>
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
  %r = vector.multi_reduction <add>, %p, %acc [1] : vector<16x4xi32> to vector<16xi32>
  return %r : vector<16xi32>
}

// CHECK-LABEL: func.func @eight_lanes(
// CHECK-NOT:     llvm.call_intrinsic
// CHECK:         return
func.func @eight_lanes(%acc: vector<8xi32>, %x: vector<8x4xi8>, %y: vector<8x4xi8>) -> vector<8xi32> {
  %xu = arith.extui %x : vector<8x4xi8> to vector<8x4xi32>
  %ys = arith.extsi %y : vector<8x4xi8> to vector<8x4xi32>
  %p = arith.muli %xu, %ys : vector<8x4xi32>
  %r = vector.multi_reduction <add>, %p, %acc [1] : vector<8x4xi32> to vector<8xi32>
  return %r : vector<8xi32>
}
