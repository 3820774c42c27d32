// Shape inputs that are read at run time must be small integer tensors of
// static length; anything else is refused at compile time with a message
// naming the op, the node and the input. A rule that fails on constants is
// reported at compile time, not deferred to a run-time check.

// A target shape of dynamic length: the result rank would depend on data.
// RUN: %python -c "import onnx; from onnx import helper, TensorProto as T; x = helper.make_tensor_value_info('x', T.FLOAT, [2, 3]); s = helper.make_tensor_value_info('shape', T.INT64, ['n']); y = helper.make_tensor_value_info('y', T.FLOAT, ['a', 'b']); g = helper.make_graph([helper.make_node('Reshape', ['x', 'shape'], ['y'], name='r')], 'g', [x, s], [y]); onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid('', 14)]), '%t.dynamic.onnx')"
// RUN: not %turbine compile %t.dynamic.onnx -o %t.tmod 2>&1 | FileCheck %s --check-prefix=DYNAMIC
// DYNAMIC: turbine compile: error: unsupported ONNX op 'Reshape' (node 'r', opset 14, domain ''): input 'shape' (shape) is read at run time, so it must be a rank-0 or rank-1 integer tensor of static length <= 64; it is tensor<?xi64>

// Unsqueeze axes that are floats.
// RUN: %python -c "import onnx; from onnx import helper, TensorProto as T; x = helper.make_tensor_value_info('x', T.FLOAT, [2, 3]); a = helper.make_tensor_value_info('axes', T.FLOAT, [1]); y = helper.make_tensor_value_info('y', T.FLOAT, ['a', 'b', 'c']); g = helper.make_graph([helper.make_node('Unsqueeze', ['x', 'axes'], ['y'], name='u')], 'g', [x, a], [y]); onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid('', 13)]), '%t.float.onnx')"
// RUN: not %turbine compile %t.float.onnx -o %t.tmod 2>&1 | FileCheck %s --check-prefix=FLOAT
// FLOAT: turbine compile: error: unsupported ONNX op 'Unsqueeze' (node 'u', opset 13, domain ''): input 'axes' (axes) is read at run time, so it must be a rank-0 or rank-1 integer tensor of static length <= 64; it is tensor<1xf32>

// Tile with a constant negative repeat: the check folds, the compile fails.
// RUN: %python -c "import onnx; from onnx import helper, TensorProto as T; x = helper.make_tensor_value_info('x', T.FLOAT, [2, 3]); y = helper.make_tensor_value_info('y', T.FLOAT, ['a', 'b']); r = helper.make_tensor('r', T.INT64, [2], [1, -2]); g = helper.make_graph([helper.make_node('Tile', ['x', 'r'], ['y'], name='t')], 'g', [x], [y], initializer=[r]); onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid('', 13)]), '%t.negative.onnx')"
// RUN: not %turbine compile %t.negative.onnx -o %t.tmod 2>&1 | FileCheck %s --check-prefix=NEGATIVE
// NEGATIVE: turbine compile: error: ONNX node 't' (Tile, opset 13): repeats element 1 is negative
