// Shapes whose dims multiply past 2^63 elements are refused at import with
// the value or node that has them, never imported (element counts computed
// from them would overflow): a graph input declared 4294967296x4294967296,
// and a Reshape to a constant 4294967296x4294967296x4.
// RUN: %python -c "import onnx; from onnx import helper, TensorProto as T; x = helper.make_tensor_value_info('x', T.FLOAT, [4294967296, 4294967296]); y = helper.make_tensor_value_info('y', T.FLOAT, [4294967296, 4294967296]); g = helper.make_graph([helper.make_node('Relu', ['x'], ['y'])], 'g', [x], [y]); onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid('', 17)]), '%t.input.onnx')"
// RUN: not %turbine compile %t.input.onnx -o %t.tmod 2>&1 | FileCheck %s --check-prefix=INPUT
// RUN: %python -c "import onnx; from onnx import helper, TensorProto as T; x = helper.make_tensor_value_info('x', T.FLOAT, [4]); y = helper.make_tensor_value_info('y', T.FLOAT, ['a', 'b', 'c']); s = helper.make_tensor('s', T.INT64, [3], [4294967296, 4294967296, 4]); g = helper.make_graph([helper.make_node('Reshape', ['x', 's'], ['y'], name='big')], 'g', [x], [y], [s]); onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid('', 17)]), '%t.reshape.onnx')"
// RUN: not %turbine compile %t.reshape.onnx -o %t.tmod 2>&1 | FileCheck %s --check-prefix=RESHAPE
// INPUT: turbine compile: error: graph input: graph value 'x' has shape 4294967296x4294967296xf32, more elements than fit in 64 bits
// RESHAPE: turbine compile: error: {{.*}}'big'{{.*}}output 'y' would be 4294967296x4294967296x4xf32, more elements than fit in 64 bits
