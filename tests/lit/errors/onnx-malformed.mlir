// A file that is not an ONNX ModelProto is rejected with a clear message and
// a non-zero exit, and no artifact is written.
// RUN: rm -f %t.tmod && printf 'not a model' > %t.onnx
// RUN: not %turbine compile %t.onnx -o %t.tmod 2>&1 | FileCheck %s
// RUN: test ! -e %t.tmod
// CHECK: turbine compile: error: failed to parse ONNX model '{{.*}}.onnx'
