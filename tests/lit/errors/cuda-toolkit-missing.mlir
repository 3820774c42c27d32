// cuda-toolkit-missing.mlir - the cuda target's link needs the CUDA toolkit
// (ptxas, libdevice); a $CUDA_HOME that is not one is an error naming it,
// after the phases that need no toolkit (codegen) have run, and no artifact
// is written.

// RUN: rm -f %t.tmod
// RUN: env CUDA_HOME=%t.no-such-dir not %turbine compile %s --target=cuda -o %t.tmod 2>&1 | FileCheck %s
// CHECK: error: {{.*}}: phase 'link' failed: {{.}}CUDA_HOME='{{.*}}no-such-dir' is not a CUDA toolkit (the cuda target needs its bin/ptxas and nvvm/libdevice/libdevice.10.bc)
// RUN: not ls %t.tmod
// RUN: env CUDA_HOME=%t.no-such-dir %turbine compile %s --target=cuda --compile-to=codegen | FileCheck %s --check-prefix=CODEGEN
// CODEGEN: gpu.module @turbine_cuda_kernels
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i)->(i)>, affine_map<(i)->(i)>], iterator_types = ["parallel"]} ins(%x : tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = math.exp %a : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  return %r : tensor<4xf32>
}
