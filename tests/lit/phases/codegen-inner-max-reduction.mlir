// codegen-inner-max-reduction.mlir - a row max (softmax's first step) is a
// vector reduction, not a chain of scalar maximums.
//
// 3x128 f32 reduced over the inner dim with arith.maximumf: each 64-wide tile
// becomes one llvm.intr.vector.reduce.fmaximum (VectorReductions.cpp) whose
// result is combined with the running row max by the only scalar maximum. maximumf propagates NaN and the result
// must stay exact: row 0 holds 0..127 shifted (max 100), row 1 a NaN among
// them, row 2 -inf everywhere but one -3.5.

// RUN: %turbine compile %s --compile-to=codegen | FileCheck %s
// RUN: %turbine compile %s -o %t.tmod
// RUN: %python -c "import numpy as np; x = np.arange(384, dtype=np.float32).reshape(3, 128) - 27; x[1] -= 128; x[1, 77] = np.nan; x[2] = -np.inf; x[2, 5] = -3.5; np.save('%t.x.npy', x)"
// RUN: %turbine run %t.tmod --input=@%t.x.npy | FileCheck %s --check-prefix=RUN-CHECK

// CHECK:       module @kernels
// CHECK:         llvm.func @reduce_max_3x128_f32(
// CHECK-NOT:       llvm.intr.maximum(
// CHECK:           %[[TILE:.*]] = llvm.intr.vector.reduce.fmaximum
// CHECK-NEXT:      llvm.intr.maximum(%[[TILE]], %{{.*}}) : (f32, f32) -> f32
// CHECK-NOT:       llvm.intr.maximum(
// CHECK:         llvm.return

// RUN-CHECK: 3xf32=100 NAN -3.5{{$}}

func.func @main(%x: tensor<3x128xf32>) -> tensor<3xf32> {
  %ninf = arith.constant 0xFF800000 : f32
  %e = tensor.empty() : tensor<3xf32>
  %init = linalg.fill ins(%ninf : f32) outs(%e : tensor<3xf32>) -> tensor<3xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>],
                       iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<3x128xf32>) outs(%init : tensor<3xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %m = arith.maximumf %acc, %a : f32
    linalg.yield %m : f32
  } -> tensor<3xf32>
  return %r : tensor<3xf32>
}
