// A node of a custom domain is a custom op named "<domain>.<op_type>"; the
// CLI registers none, so compiling names the op and the node.
// RUN: %python -c "import onnx; from onnx import helper, TensorProto as T; x = helper.make_tensor_value_info('x', T.FLOAT, [2, 3]); y = helper.make_tensor_value_info('y', T.FLOAT, [2, 3]); g = helper.make_graph([helper.make_node('Fancy', ['x'], ['y'], name='my_fancy', domain='my.ops')], 'g', [x], [y]); onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid('', 13), helper.make_opsetid('my.ops', 1)]), '%t.onnx')"
// RUN: not %turbine compile %t.onnx -o %t.tmod 2>&1 | FileCheck %s
// The custom-op calls are expanded first thing in the dispatch phase.
// CHECK: turbine compile: error: {{.*}}phase 'dispatch' failed:
// CHECK-NEXT: custom op 'my.ops.Fancy' at loc("my_fancy"{{.*}}): not registered
