// cuda-arch-invalid.mlir - --cuda-arch takes sm_NN names with NN >= 75 (what
// CUDA 13's ptxas assembles); anything else is an error naming the entry.

// RUN: not %turbine compile %s --target=cuda --cuda-arch=sm_80,sm_60 -o %t.tmod 2>&1 | FileCheck %s --check-prefix=OLD
// OLD: turbine compile: error: --cuda-arch: bad CUDA architecture 'sm_60' in 'sm_80,sm_60' (expected sm_NN with NN >= 75, e.g. sm_80,sm_90)
// RUN: not %turbine compile %s --target=cuda --cuda-arch=compute_90 -o %t.tmod 2>&1 | FileCheck %s --check-prefix=NAME
// NAME: error: --cuda-arch: bad CUDA architecture 'compute_90'
// RUN: not %turbine compile %s --target=cuda --cuda-arch=sm_90,sm_90 -o %t.tmod 2>&1 | FileCheck %s --check-prefix=TWICE
// TWICE: error: --cuda-arch: CUDA architecture 'sm_90' given twice
// RUN: not %turbine compile %s --target=cuda --cuda-arch=sm_80, -o %t.tmod 2>&1 | FileCheck %s --check-prefix=EMPTY
// EMPTY: error: --cuda-arch: bad CUDA architecture '' in 'sm_80,'
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}
