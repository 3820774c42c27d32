// cuda-unsupported-op.mlir - a dispatch with an op the cuda target cannot
// lower (complex arithmetic: no pass of its pipeline lowers the complex
// dialect) is a compile error naming the op, its kernel and its location,
// before the toolkit is needed; no artifact is written.

// RUN: rm -f %t.tmod
// RUN: not %turbine compile %s --target=cuda -o %t.tmod 2>&1 | FileCheck %s
// CHECK: phase 'link' failed: the cuda target cannot lower 'complex.exp' in kernel 'elementwise_8_f32' to NVVM ({{.*}}cuda-unsupported-op.mlir:15)
// RUN: not ls %t.tmod
func.func @main(%x: tensor<8xf32>) -> tensor<8xf32> {
  %e = tensor.empty() : tensor<8xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i)->(i)>, affine_map<(i)->(i)>], iterator_types = ["parallel"]} ins(%x : tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %c = complex.create %a, %a : complex<f32>
    %l = complex.exp %c : complex<f32>
    %t = complex.re %l : complex<f32>
    linalg.yield %t : f32
  } -> tensor<8xf32>
  return %r : tensor<8xf32>
}
