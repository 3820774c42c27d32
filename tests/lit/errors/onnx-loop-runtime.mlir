// A Loop whose trip count M is run-time data runs in the host program; what
// it cannot run is refused at compile time naming the op, the node and the
// opset (a carried value whose shape changes between iterations, a carried
// sequence), and a scan output whose slices change shape fails at run time
// with a message naming the node. Models: Inputs/loop_models.py.

// RUN: %python %S/Inputs/loop_models.py carried-shape %t.shape.onnx
// RUN: not %turbine compile %t.shape.onnx -o %t.tmod 2>&1 | FileCheck %s --check-prefix=SHAPE
// SHAPE: turbine compile: error: unsupported ONNX op 'Loop' (node 'the_loop', opset 13, domain ''): loop-carried value 'v_out' changes type or shape between iterations (tensor<2xf32> on entry but tensor<4xf32> after an iteration); a Loop run at run time needs fixed types

// RUN: %python %S/Inputs/loop_models.py carried-seq %t.seq.onnx
// RUN: not %turbine compile %t.seq.onnx -o %t.tmod 2>&1 | FileCheck %s --check-prefix=SEQ
// SEQ: turbine compile: error: unsupported ONNX op 'Loop' (node 'the_loop', opset 13, domain ''): loop-carried value 'empty' is a sequence, an optional or missing; a Loop run at run time carries tensors only

// RUN: %python %S/Inputs/loop_models.py scan-shape %t.scan.onnx
// RUN: %turbine compile %t.scan.onnx -o %t.scan.tmod
// RUN: %turbine run %t.scan.tmod --input="i64=1" --input="i1=1" | FileCheck %s --check-prefix=SCAN-ONE
// RUN: not %turbine run %t.scan.tmod --input="i64=3" --input="i1=1" 2>&1 \
// RUN:   | FileCheck %s --check-prefix=SCAN-GROWS
// SCAN-ONE:      result[0]: hal.buffer_view
// SCAN-ONE-NEXT: 1x1xf32=[1]{{$}}
// SCAN-GROWS: turbine run: error: function 'main', instruction {{[0-9]+}} (assert): assertion failed: ONNX node 'the_loop' (Loop, opset 13): scan output 'part' changes shape between iterations
