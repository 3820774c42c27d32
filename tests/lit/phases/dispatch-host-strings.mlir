// dispatch-host-strings.mlir - string tensors stay on the host.
//
// ONNX Cast from and to STRING become turbine.from_string / turbine.to_string
// and StringNormalizer turbine.string_normalize: dispatch formation leaves
// them in the host function around the kernel that adds 1 to the parsed
// numbers, and the host program runs them (opcodes from_string, to_string,
// string_normalize). The normalized result's length is data.

// RUN: %turbine compile %s --compile-to=dispatch | FileCheck %s
// RUN: %turbine compile %s -o %t.tmod
// RUN: %turbine run %t.tmod --input='3xstring=1.5 "-2" 1e-7' | FileCheck %s --check-prefix=OUT
// RUN: not %turbine run %t.tmod --input='3xstring=1.5 two 3' 2>&1 | FileCheck %s --check-prefix=BAD

// CHECK-LABEL: func.func @main(
// CHECK-SAME:    %[[X:[^:]*]]: tensor<3x!turbine.string>
// CHECK:         %[[F:.*]] = turbine.from_string %[[X]] : tensor<3x!turbine.string> -> tensor<3xf32>
// CHECK:         %[[D:.*]] = turbine.dispatch @elementwise_3_f32[{{.*}}] (%[[F]]) : (tensor<3xf32>) -> tensor<3xf32>
// CHECK:         %[[S:.*]] = turbine.to_string %[[D]] : tensor<3xf32> -> tensor<3x!turbine.string>
// CHECK:         %[[N:.*]] = turbine.string_normalize %[[S]] {{.*}}stopwords = ["2.5"]{{.*}} -> tensor<?x!turbine.string>
// CHECK:         return %[[N]], %[[S]]
// CHECK:       module @kernels
// CHECK:         arith.addf

// OUT:      result[0]: hal.buffer_view
// OUT-NEXT: 2xstring="-1.0" "1.0000001"{{$}}
// OUT-NEXT: result[1]: hal.buffer_view
// OUT-NEXT: 3xstring="2.5" "-1.0" "1.0000001"{{$}}

// BAD: function 'main', instruction {{[0-9]+}} (from_string): cast from strings to f32: element 1 ("two") is not a number

#map = affine_map<(d0) -> (d0)>
func.func @main(%x: tensor<3x!turbine.string>) -> (tensor<?x!turbine.string>, tensor<3x!turbine.string>) {
  %one = arith.constant 1.0 : f32
  %f = turbine.from_string %x : tensor<3x!turbine.string> -> tensor<3xf32>
  %init = tensor.empty() : tensor<3xf32>
  %g = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel"]}
      ins(%f : tensor<3xf32>) outs(%init : tensor<3xf32>) {
  ^bb0(%a: f32, %out: f32):
    %s = arith.addf %a, %one : f32
    linalg.yield %s : f32
  } -> tensor<3xf32>
  %s = turbine.to_string %g : tensor<3xf32> -> tensor<3x!turbine.string>
  %n = turbine.string_normalize %s {case_change = "NONE", case_sensitive = true, locale = "",
                                    stopwords = ["2.5"]} : tensor<3x!turbine.string> -> tensor<?x!turbine.string>
  return %n, %s : tensor<?x!turbine.string>, tensor<3x!turbine.string>
}
