// cuda-matmul-ptx.mlir - the link of the cuda target on the MLP layer
// (Inputs/cuda-mlp-layer.mlir): PTX for the oldest --cuda-arch (sm_80, with
// libdevice's tanh linked in, so no __nv_ call is left), a cubin per arch
// that the toolkit's ptxas accepted, and the artifact's metadata: target,
// kernel, images, launch parameter counts.

// REQUIRES: cuda-toolkit
// RUN: rm -rf %t.phases
// RUN: %turbine compile %S/Inputs/cuda-mlp-layer.mlir --target=cuda --cuda-arch=sm_90,sm_80 -o %t.tmod --dump-phases=%t.phases
// RUN: FileCheck %s --check-prefix=PTX < %t.phases/kernels.ptx
// PTX:           .version 8.0
// PTX:           .target sm_80
// PTX:           .visible .entry matmul_Dx32x64_f32(
// PTX-COUNT-9:     .param .u64
// PTX:           mul.rn.f32
// PTX-NOT:       call{{.*}}__nv_
// RUN: %python -c "import json,struct,sys; b=open('%t.tmod','rb').read(); o,n=struct.unpack_from('<QQ',b,16); m=json.loads(b[o:o+n]); print(m['target'], m['kernels'], [(i['format'], i['arch']) for i in m['images']], m['kernel_launch'])" | FileCheck %s --check-prefix=META
// META: cuda ['matmul_Dx32x64_f32'] [('ptx', 'sm_80'), ('cubin', 'sm_80'), ('cubin', 'sm_90')] [{'bindings': 4, 'constants': 2, 'max_threads': 256}]

