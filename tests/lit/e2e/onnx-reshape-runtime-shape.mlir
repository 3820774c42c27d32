// onnx-reshape-runtime-shape.mlir - an ONNX Reshape whose target shape is a
// graph input: the host reads the shape at run time (0 copies the input dim,
// -1 is inferred), so one artifact serves several shapes; ONNX's rules are
// checked at run time with messages naming the node.
//
// x = 0..23 as 2x3x4 (row-major), so every result lists 0..23 in order.

// RUN: %python -c "import onnx; from onnx import helper, TensorProto as T; x = helper.make_tensor_value_info('x', T.FLOAT, [2, 3, 4]); s = helper.make_tensor_value_info('shape', T.INT64, [3]); y = helper.make_tensor_value_info('y', T.FLOAT, ['a', 'b', 'c']); g = helper.make_graph([helper.make_node('Reshape', ['x', 'shape'], ['y'], name='reshape_by_input')], 'g', [x, s], [y]); onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid('', 14)]), '%t.onnx')"
// RUN: %turbine compile %t.onnx -o %t.tmod
// RUN: %turbine run %t.tmod --device=local-sync \
// RUN:   --input="2x3x4xf32=0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23" \
// RUN:   --input="3xi64=4 0 -1" | FileCheck %s --check-prefix=SHAPE432
// RUN: %turbine run %t.tmod --device=local-task --task_workers=2 \
// RUN:   --input="2x3x4xf32=0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23" \
// RUN:   --input="3xi64=1 -1 12" | FileCheck %s --check-prefix=SHAPE1x2x12
// RUN: not %turbine run %t.tmod \
// RUN:   --input="2x3x4xf32=0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23" \
// RUN:   --input="3xi64=5 5 1" 2>&1 | FileCheck %s --check-prefix=COUNT
// RUN: not %turbine run %t.tmod \
// RUN:   --input="2x3x4xf32=0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23" \
// RUN:   --input="3xi64=-1 -1 6" 2>&1 | FileCheck %s --check-prefix=TWO-INFERRED

// SHAPE432:      result[0]: hal.buffer_view
// SHAPE432-NEXT: 4x3x2xf32={{\[\[}}0 1][2 3][4 5]]{{\[\[}}6 7][8 9][10 11]]{{\[\[}}12 13][14 15][16 17]]{{\[\[}}18 19][20 21][22 23]]{{$}}
// SHAPE1x2x12:      result[0]: hal.buffer_view
// SHAPE1x2x12-NEXT: 1x2x12xf32={{\[\[}}0 1 2 3 4 5 6 7 8 9 10 11][12 13 14 15 16 17 18 19 20 21 22 23]]{{$}}
// COUNT: turbine run: error: function 'main', instruction {{[0-9]+}} (assert): assertion failed: ONNX node 'reshape_by_input' (Reshape, opset 14): the target shape holds a different number of elements than the input
// TWO-INFERRED: turbine run: error: function 'main', instruction {{[0-9]+}} (assert): assertion failed: ONNX node 'reshape_by_input' (Reshape, opset 14): the target shape has more than one -1
