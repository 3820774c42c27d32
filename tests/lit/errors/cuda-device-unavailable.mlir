// `turbine run/bench --device=cuda` where the cuda device cannot be made (no
// driver library) is a clear error and a non-zero exit (the toolkit's stub
// in its place: tests/unit/CudaDeviceTest.cpp); a cuda artifact on a CPU
// device names the device to use. No GPU is needed.
// REQUIRES: cuda-toolkit
// RUN: %turbine compile %s --target=cuda -o %t.tmod
// RUN: not env TURBINE_CUDA_DRIVER=/nonexistent/libcuda.so.1 %turbine run %t.tmod \
// RUN:   --device=cuda --input=8xf32=1 --input=8xf32=2 2>&1 | FileCheck %s --check-prefix=NODRIVER
// RUN: not env TURBINE_CUDA_DRIVER=/nonexistent/libcuda.so.1 %turbine bench %t.tmod \
// RUN:   --device=cuda --input=8xf32=1 --input=8xf32=2 2>&1 | FileCheck %s --check-prefix=BENCH
// RUN: not %turbine run %t.tmod --device=local-sync --input=8xf32=1 --input=8xf32=2 2>&1 \
// RUN:   | FileCheck %s --check-prefix=CPU
// NODRIVER: turbine run: error: device 'cuda' is not available: cannot load the CUDA driver library '/nonexistent/libcuda.so.1' (is an NVIDIA driver installed?)
// BENCH: turbine bench: error: device 'cuda' is not available: cannot load the CUDA driver library
// CPU: turbine run: error: function 'main': the artifact was compiled for target 'cuda', which device 'local-sync' does not run (run it on device 'cuda')
func.func @main(%x: tensor<8xf32>, %y: tensor<8xf32>) -> tensor<8xf32> {
  %e = tensor.empty() : tensor<8xf32>
  %r = linalg.add ins(%x, %y : tensor<8xf32>, tensor<8xf32>) outs(%e : tensor<8xf32>) -> tensor<8xf32>
  return %r : tensor<8xf32>
}
