// update-slices-in-place.mlir - turbine-update-slices-in-place: a host
// tensor.insert_slice becomes an identity copy of the slice (the kernel's
// root) inserted with turbine.slice_update, after a cf.assert per dim whose
// offset is a run-time value. Into a mutable global loaded only for this
// update and stored straight back, the load itself is the destination
// (turbine.update_only: the kernel writes the global's storage); anything
// else is copied first.

// RUN: turbine-opt %s --turbine-update-slices-in-place | FileCheck %s

ml_program.global private mutable @cache(dense<0.0> : tensor<1x2x8x4xf32>) : tensor<1x2x8x4xf32>

// CHECK-LABEL: func.func @append
// CHECK:         %[[POS:.*]] = arith.index_cast
// CHECK:         %[[LOAD:.*]] = ml_program.global_load @cache : tensor<1x2x8x4xf32> {turbine.update_only}
// CHECK:         %[[GE:.*]] = arith.cmpi sge, %[[POS]], %c0
// CHECK:         %[[END:.*]] = arith.addi %[[POS]], %c1
// CHECK:         %[[LE:.*]] = arith.cmpi sle, %[[END]], %c8
// CHECK:         %[[OK:.*]] = arith.andi %[[GE]], %[[LE]]
// CHECK:         cf.assert %[[OK]], "slice update of global 'cache' out of bounds: dim 2 needs 0 <= offset and offset + size <= 8"
// CHECK:         %[[SRC:.*]] = linalg.generic {{.*}} ins(%arg0 : tensor<1x2x1x4xf32>)
// CHECK:         %[[UPD:.*]] = tensor.insert_slice %[[SRC]] into %[[LOAD]][0, 0, %[[POS]], 0] [1, 2, 1, 4] [1, 1, 1, 1] {turbine.slice_update}
// CHECK:         ml_program.global_store @cache = %[[UPD]]
func.func @append(%k: tensor<1x2x1x4xf32>, %p: i64) {
  %pos = arith.index_cast %p : i64 to index
  %c = ml_program.global_load @cache : tensor<1x2x8x4xf32>
  %u = tensor.insert_slice %k into %c[0, 0, %pos, 0] [1, 2, 1, 4] [1, 1, 1, 1] : tensor<1x2x1x4xf32> into tensor<1x2x8x4xf32>
  ml_program.global_store @cache = %u : tensor<1x2x8x4xf32>
  return
}

// The loaded value is also returned: the update must not change it under
// its reader, so the cache is copied and the copy updated.
// CHECK-LABEL: func.func @append_and_read
// CHECK:         %[[LOAD:.*]] = ml_program.global_load @cache : tensor<1x2x8x4xf32>
// CHECK-NOT:     turbine.update_only
// CHECK:         %[[COPY:.*]] = linalg.generic {{.*}} ins(%[[LOAD]] : tensor<1x2x8x4xf32>)
// CHECK:         tensor.insert_slice %{{.*}} into %[[COPY]]{{.*}} {turbine.slice_update}
func.func @append_and_read(%k: tensor<1x2x1x4xf32>, %p: i64) -> tensor<1x2x8x4xf32> {
  %pos = arith.index_cast %p : i64 to index
  %c = ml_program.global_load @cache : tensor<1x2x8x4xf32>
  %u = tensor.insert_slice %k into %c[0, 0, %pos, 0] [1, 2, 1, 4] [1, 1, 1, 1] : tensor<1x2x1x4xf32> into tensor<1x2x8x4xf32>
  ml_program.global_store @cache = %u : tensor<1x2x8x4xf32>
  return %c : tensor<1x2x8x4xf32>
}

// A dynamic slice size (prefill of T positions) is checked against the
// extent too; static dims need no assert.
// CHECK-LABEL: func.func @prefill
// CHECK:         %[[T:.*]] = tensor.dim %arg0, %c2
// CHECK:         %[[END:.*]] = arith.addi %c0{{.*}}, %[[T]]
// CHECK:         arith.cmpi sle, %[[END]], %c8
// CHECK:         cf.assert
// CHECK-NOT:     cf.assert
// CHECK:         tensor.insert_slice {{.*}} {turbine.slice_update}
func.func @prefill(%k: tensor<1x2x?x4xf32>) {
  %c2 = arith.constant 2 : index
  %t = tensor.dim %k, %c2 : tensor<1x2x?x4xf32>
  %c = ml_program.global_load @cache : tensor<1x2x8x4xf32>
  %u = tensor.insert_slice %k into %c[0, 0, 0, 0] [1, 2, %t, 4] [1, 1, 1, 1] : tensor<1x2x?x4xf32> into tensor<1x2x8x4xf32>
  ml_program.global_store @cache = %u : tensor<1x2x8x4xf32>
  return
}
