// Deeply nested ONNX control flow ends in a result or a clear error, never in
// a hang or a crash (Inputs/nested_models.py):
//  - Loop(1000) { Loop(1000) { x + 1 } }: unrolling would make a million body
//    copies; past the model's unrolling budget the loops run in the host
//    program instead, and the result is exact (x + 10^6: from -999995 to 5,
//    which any missing or extra iteration would change);
//  - If nested 40 deep: deeper than protobuf's message nesting limit, which
//    the parse error names;
//  - If nested 20 deep imports and runs.

// RUN: %python %S/Inputs/nested_models.py loops 2 1000 %t.loops.onnx
// RUN: %turbine compile %t.loops.onnx -o %t.loops.tmod
// RUN: %turbine run %t.loops.tmod --input=1xf32=-999995 | FileCheck %s --check-prefix=LOOPS
// LOOPS: 1xf32=5{{$}}

// RUN: %python %S/Inputs/nested_models.py ifs 40 %t.if40.onnx
// RUN: not %turbine compile %t.if40.onnx -o %t.tmod 2>&1 | FileCheck %s --check-prefix=IF40
// IF40: turbine compile: error: failed to parse ONNX model '{{.*}}': not a valid ModelProto (or subgraphs nested deeper than protobuf's limit of 100 nested messages, about 33 levels of If / Loop)

// RUN: %python %S/Inputs/nested_models.py ifs 20 %t.if20.onnx
// RUN: %turbine compile %t.if20.onnx -o %t.if20.tmod
// RUN: %turbine run %t.if20.tmod --input=1xf32=3 --input=i1=1 | FileCheck %s --check-prefix=IF20-THEN
// RUN: %turbine run %t.if20.tmod --input=1xf32=3 --input=i1=0 | FileCheck %s --check-prefix=IF20-ELSE
// IF20-THEN: 1xf32=3
// IF20-ELSE: 1xf32=-3
