// codegen-matmul-kernel-pack.mlir - a run-time B packed inside the matmul's
// kernel (MatmulDataTiling.cpp marks it, MatmulKernelPacking.cpp packs it).
//
// * global-opt: a run-time B with N >= 1024 (rows 4 KiB or more apart) and
//   M >= 64 stays a linalg.matmul, marked turbine.pack_b_in_kernel (M = 128
//   is too small for a pack dispatch of its own); M = 16, and N = 768, are
//   not marked.
// * dispatch: the marked matmul and its bias + ReLU are one kernel tiled 128
//   rows (all of M) x 128 columns (x = columns: 8 workgroups); the others
//   keep the plain contraction tiles.
// * codegen: one 4x256x32 stack scratch at the kernel's entry; in each K
//   tile (K = 300: 256 then 44) a fresh restrict, writable tensor of it is
//   written by the pack (B rows copied to panel rows: a transposing
//   transfer_write) and read by the packed contract's 8x32 register tile.

// RUN: %turbine compile %s --target-cpu=skylake-avx512 --compile-to=global-opt | FileCheck %s --check-prefix=GLOBAL
// RUN: %turbine compile %s --target-cpu=skylake-avx512 --compile-to=dispatch | FileCheck %s --check-prefix=DISPATCH
// RUN: %turbine compile %s --target-cpu=skylake-avx512 --compile-to=codegen --mlir-print-ir-after=turbine-cpu-tile-and-vectorize 2>&1 >/dev/null | FileCheck %s --check-prefix=KERNEL
// RUN: %turbine compile %s --target-cpu=skylake-avx512 --compile-to=global-opt --matmul-kernel-pack=off | FileCheck %s --check-prefix=OFF

// GLOBAL-LABEL: func.func @main(
// GLOBAL:         linalg.matmul {turbine.pack_b_in_kernel} ins(%{{.*}}, %{{.*}} : tensor<128x300xf32>, tensor<300x1024xf32>)
// GLOBAL-NOT:     linalg.contract
// GLOBAL-LABEL: func.func @few_rows(
// GLOBAL:         linalg.matmul ins(
// GLOBAL-LABEL: func.func @narrow(
// GLOBAL:         linalg.matmul ins(

// OFF-NOT:      turbine.pack_b_in_kernel

// DISPATCH-LABEL: func.func @main(
// DISPATCH:         turbine.dispatch @matmul_128x1024x300_f32[%c8, %c1, %c1]
// DISPATCH-NOT:     turbine.dispatch
// DISPATCH-LABEL: func.func @few_rows(
// DISPATCH:       func.func @matmul_128x1024x300_f32(
// DISPATCH-SAME:    turbine.workgroup_dims = array<i64: 1, 0, -1>, turbine.workgroup_tiles = array<i64: 128, 128>
// DISPATCH:         linalg.fill
// DISPATCH:         linalg.matmul {turbine.pack_b_in_kernel}
// DISPATCH:         linalg.generic
// DISPATCH:       func.func @matmul_16x1024x300_f32(
// DISPATCH-SAME:    turbine.workgroup_tiles = array<i64: 16, 128>
// DISPATCH:       func.func @matmul_128x768x300_f32(
// DISPATCH-SAME:    turbine.workgroup_tiles = array<i64: 64, 128>

// The IR is printed for the whole module, its affine maps as aliases.
// KERNEL-DAG:   #[[PACK:map[0-9]*]] = affine_map<(d0, d1, d2) -> (d1, d0, d2)>
// KERNEL-DAG:   #[[A:map[0-9]*]] = affine_map<(d0, d1, d2, d3) -> (d1, d3)>
// KERNEL-DAG:   #[[B:map[0-9]*]] = affine_map<(d0, d1, d2, d3) -> (d0, d3, d2)>
// KERNEL-DAG:   #[[C:map[0-9]*]] = affine_map<(d0, d1, d2, d3) -> (d1, d0, d2)>
// KERNEL-LABEL: func.func @matmul_128x1024x300_f32(
// KERNEL:         %[[SCRATCH:.*]] = memref.alloca() {alignment = 64 : i64} : memref<4x256x32xf32>
// KERNEL:         scf.for %{{.*}} = %c0 to %c300 step %c256
// KERNEL:           %[[PANELS:.*]] = bufferization.to_tensor %[[SCRATCH]] restrict writable : memref<4x256x32xf32> to tensor<4x256x32xf32>
// KERNEL:           vector.transfer_write {{.*}} {in_bounds = [true, true, true], permutation_map = #[[PACK]]} : vector<1x1x32xf32>, tensor<1x1x32xf32>
// KERNEL:           vector.contract {indexing_maps = [#[[A]], #[[B]], #[[C]]]{{.*}} : vector<8x1xf32>, vector<1x1x32xf32> into vector<8x1x32xf32>
// KERNEL-LABEL: func.func @matmul_16x1024x300_f32(
// KERNEL-NOT:     memref.alloca
// KERNEL-LABEL: func.func @matmul_128x768x300_f32(
// KERNEL-NOT:     memref.alloca
func.func @main(%a: tensor<128x300xf32>, %b: tensor<300x1024xf32>, %bias: tensor<1024xf32>) -> tensor<128x1024xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<128x1024xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<128x1024xf32>) -> tensor<128x1024xf32>
  %m = linalg.matmul ins(%a, %b : tensor<128x300xf32>, tensor<300x1024xf32>) outs(%f : tensor<128x1024xf32>) -> tensor<128x1024xf32>
  %e2 = tensor.empty() : tensor<128x1024xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i,j)->(i,j)>, affine_map<(i,j)->(j)>, affine_map<(i,j)->(i,j)>], iterator_types = ["parallel","parallel"]} ins(%m, %bias : tensor<128x1024xf32>, tensor<1024xf32>) outs(%e2 : tensor<128x1024xf32>) {
  ^bb0(%x: f32, %bb: f32, %o: f32):
    %s = arith.addf %x, %bb : f32
    %z = arith.maximumf %s, %zero : f32
    linalg.yield %z : f32
  } -> tensor<128x1024xf32>
  return %r : tensor<128x1024xf32>
}

func.func @few_rows(%a: tensor<16x300xf32>, %b: tensor<300x1024xf32>) -> tensor<16x1024xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<16x1024xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<16x1024xf32>) -> tensor<16x1024xf32>
  %m = linalg.matmul ins(%a, %b : tensor<16x300xf32>, tensor<300x1024xf32>) outs(%f : tensor<16x1024xf32>) -> tensor<16x1024xf32>
  return %m : tensor<16x1024xf32>
}

func.func @narrow(%a: tensor<128x300xf32>, %b: tensor<300x768xf32>) -> tensor<128x768xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<128x768xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<128x768xf32>) -> tensor<128x768xf32>
  %m = linalg.matmul ins(%a, %b : tensor<128x300xf32>, tensor<300x768xf32>) outs(%f : tensor<128x768xf32>) -> tensor<128x768xf32>
  return %m : tensor<128x768xf32>
}
