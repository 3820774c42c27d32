// string-into-kernel.mlir - a string tensor given to an op that would become
// a kernel is rejected in the input phase, naming the op and the type.

// RUN: not %turbine compile %s -o %t.tmod 2>&1 | FileCheck %s

// CHECK: turbine compile: error: {{.*}}string-into-kernel.mlir: phase 'input' failed:
// CHECK: 'linalg.generic' uses a string tensor ('tensor<2x!turbine.string>'): strings only run in the host string ops
#map = affine_map<(d0) -> (d0)>
func.func @main(%x: tensor<2x!turbine.string>) -> tensor<2x!turbine.string> {
  %init = tensor.empty() : tensor<2x!turbine.string>
  %y = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel"]}
      ins(%x : tensor<2x!turbine.string>) outs(%init : tensor<2x!turbine.string>) {
  ^bb0(%a: !turbine.string, %out: !turbine.string):
    linalg.yield %a : !turbine.string
  } -> tensor<2x!turbine.string>
  return %y : tensor<2x!turbine.string>
}
