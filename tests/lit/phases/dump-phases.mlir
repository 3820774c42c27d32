// dump-phases.mlir - --dump-phases=DIR writes one numbered file per phase.
//
// A full compile writes 1.input.mlir ... 5.link.mlir next to the artifact;
// --compile-to=dispatch stops after 3.dispatch.mlir. Each dump holds that
// phase's IR (spot-checked on the dispatch and codegen files).

// RUN: rm -rf %t && mkdir -p %t
// RUN: %turbine compile %s -o %t/out.tmod --dump-phases=%t/all
// RUN: ls %t/all | FileCheck %s --check-prefix=ALL
// RUN: FileCheck %s --check-prefix=DISPATCH --input-file=%t/all/3.dispatch.mlir
// RUN: FileCheck %s --check-prefix=CODEGEN --input-file=%t/all/4.codegen.mlir
// RUN: %turbine compile %s --compile-to=dispatch -o %t/dispatch.mlir --dump-phases=%t/partial
// RUN: ls %t/partial | FileCheck %s --check-prefix=PARTIAL
// RUN: diff %t/dispatch.mlir %t/partial/3.dispatch.mlir

// ALL:      1.input.mlir
// ALL-NEXT: 2.global-opt.mlir
// ALL-NEXT: 3.dispatch.mlir
// ALL-NEXT: 4.codegen.mlir
// ALL-NEXT: 5.link.mlir
// ALL-NOT:  .mlir

// PARTIAL:      1.input.mlir
// PARTIAL-NEXT: 2.global-opt.mlir
// PARTIAL-NEXT: 3.dispatch.mlir
// PARTIAL-NOT:  .mlir

// DISPATCH: turbine.dispatch @elementwise_4x8_f32
// DISPATCH: func.func @elementwise_4x8_f32(
// CODEGEN:  llvm.func @elementwise_4x8_f32(
#id = affine_map<(i, j) -> (i, j)>
func.func @main(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %e = tensor.empty() : tensor<4x8xf32>
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %n = arith.negf %a : f32
    linalg.yield %n : f32
  } -> tensor<4x8xf32>
  return %r : tensor<4x8xf32>
}
