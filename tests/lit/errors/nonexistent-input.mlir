// nonexistent-input.mlir - a missing input file is reported by name, and no
// artifact is written.

// RUN: rm -f %t.tmod
// RUN: not %turbine compile %t.does-not-exist.mlir -o %t.tmod 2>&1 | FileCheck %s
// RUN: not ls %t.tmod

// CHECK: turbine compile: error: input file '{{.*}}.does-not-exist.mlir' does not exist
