// onnx-nonzero-count.mlir - ONNX NonZero: the size of the result is a count
// of data. A kernel counts the non-zero elements, the host reads the count
// (host-program `load`) and sizes the result, then kernels fill in the
// indices in row-major order. Expected values from numpy.nonzero; an
// all-zero input gives an empty 2x0 result.

// RUN: %python -c "import onnx; from onnx import helper, TensorProto as T; x = helper.make_tensor_value_info('x', T.FLOAT, ['rows', 3]); y = helper.make_tensor_value_info('y', T.INT64, [2, 'n']); g = helper.make_graph([helper.make_node('NonZero', ['x'], ['y'], name='nz')], 'g', [x], [y]); onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid('', 13)]), '%t.onnx')"
// RUN: %turbine compile %t.onnx -o %t.tmod
// RUN: %turbine run %t.tmod --device=local-task --task_workers=2 \
// RUN:   --input="2x3xf32=0 1.5 0 -2 0 3" | FileCheck %s --check-prefix=SOME
// RUN: %turbine run %t.tmod --device=local-sync \
// RUN:   --input="4x3xf32=0 0 0 0 0 0 0 0 0 0 0 7" | FileCheck %s --check-prefix=ONE
// RUN: %turbine run %t.tmod --input="2x3xf32=0 0 0 0 0 0" | FileCheck %s --check-prefix=NONE

// SOME:      result[0]: hal.buffer_view
// SOME-NEXT: 2x3xi64=[0 1 1][1 0 2]{{$}}
// ONE:       result[0]: hal.buffer_view
// ONE-NEXT:  2x1xi64=[3][2]{{$}}
// NONE:      result[0]: hal.buffer_view
// NONE-NEXT: 2x0xi64=[][]{{$}}
