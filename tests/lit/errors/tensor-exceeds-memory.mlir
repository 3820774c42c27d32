// A model whose tensors would not fit in memory: MatMul of a 20000x1 and a
// 1x20000 input makes a 20000x20000 f32 result (1.5 GiB). Under a 1 GiB
// runtime memory limit (TURBINE_MEMORY_LIMIT; the default is the machine's
// memory) the run stops at that allocation with a clear error and a non-zero
// exit, before touching any of it; with room it runs.
// RUN: %python -c "import onnx; from onnx import helper, TensorProto as T; a = helper.make_tensor_value_info('a', T.FLOAT, ['m', 1]); b = helper.make_tensor_value_info('b', T.FLOAT, [1, 'n']); y = helper.make_tensor_value_info('y', T.FLOAT, ['m', 'n']); g = helper.make_graph([helper.make_node('MatMul', ['a', 'b'], ['y'])], 'g', [a, b], [y]); onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid('', 17)]), '%t.onnx')"
// RUN: %turbine compile %t.onnx -o %t.tmod
// RUN: not env TURBINE_MEMORY_LIMIT=1G %turbine run %t.tmod --input=20000x1xf32=1 \
// RUN:   --input=1x20000xf32=2 2>&1 | FileCheck %s --check-prefix=LIMIT
// RUN: env TURBINE_MEMORY_LIMIT=1G %turbine run %t.tmod --input=2x1xf32=1 \
// RUN:   --input=1x3xf32=2 | FileCheck %s --check-prefix=FITS
// LIMIT: turbine run: error: function 'main', instruction {{[0-9]+}} (alloc): cannot allocate 1.5 GiB for a 20000x20000xf32 tensor: more than the memory limit of 1.0 GiB (set TURBINE_MEMORY_LIMIT to change it)
// FITS: 2x3xf32=[2 2 2][2 2 2]
