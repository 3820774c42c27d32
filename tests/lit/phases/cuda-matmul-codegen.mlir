// cuda-matmul-codegen.mlir - the cuda target on the MLP layer (matmul + bias +
// tanh, dynamic batch): one thread per output element (workgroup tiles of 1,
// grid 32 x batch), one gpu.func kernel lowered to NVVM (libdevice's tanh).
// Needs no CUDA toolkit (cuda-matmul-ptx.mlir goes on to PTX and cubins).

// RUN: %turbine compile %S/Inputs/cuda-mlp-layer.mlir --target=cuda --compile-to=dispatch | FileCheck %s --check-prefix=DISPATCH
// DISPATCH:      %[[D:.*]] = tensor.dim %arg0, %c0
// DISPATCH:      turbine.dispatch @matmul_Dx32x64_f32[%c32, %[[D]], %c1]
// DISPATCH:      turbine.workgroup_tiles = array<i64: 1, 1>

// RUN: %turbine compile %S/Inputs/cuda-mlp-layer.mlir --target=cuda --compile-to=codegen | FileCheck %s --check-prefix=CODEGEN
// CODEGEN:       func.func private @matmul_Dx32x64_f32
// CODEGEN-SAME:    turbine.cuda.bindings = 4
// CODEGEN:       gpu.module @turbine_cuda_kernels
// CODEGEN:         llvm.func @matmul_Dx32x64_f32(%{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: i64, %{{.*}}: i64, %{{.*}}: i64, %{{.*}}: i64, %{{.*}}: i64)
// CODEGEN-SAME:      nvvm.kernel
// CODEGEN:           nvvm.read.ptx.sreg.ctaid.x
// CODEGEN:           nvvm.read.ptx.sreg.tid.x
// CODEGEN:           llvm.call @__nv_tanhf

