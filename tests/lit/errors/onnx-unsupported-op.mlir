// An op the importer does not support names the op type, the node and the
// opset.
// RUN: %python -c "import onnx; from onnx import helper, TensorProto as T; x = helper.make_tensor_value_info('x', T.FLOAT, [2, 3]); y = helper.make_tensor_value_info('y', T.INT32, [2, 3]); g = helper.make_graph([helper.make_node('Multinomial', ['x'], ['y'], name='my_sampler')], 'g', [x], [y]); onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid('', 13)]), '%t.onnx')"
// RUN: not %turbine compile %t.onnx -o %t.tmod 2>&1 | FileCheck %s
// CHECK: turbine compile: error: unsupported ONNX op 'Multinomial' (node 'my_sampler', opset 13, domain '')
