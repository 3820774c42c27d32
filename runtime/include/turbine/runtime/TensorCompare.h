//===- TensorCompare.h - Checking results against expected values --------===//
//
// Tolerance-based comparison used by `turbine run --expected_output` and by
// tests: the first mismatching element is reported with its index.
//===----------------------------------------------------------------------===//
#ifndef TURBINE_RUNTIME_TENSORCOMPARE_H
#define TURBINE_RUNTIME_TENSORCOMPARE_H

#include "turbine/runtime/Tensor.h"

#include <string>

namespace turbine::runtime {

/// Compares `actual` with `expected`: same dtype and shape, and every value
/// within atol + rtol * |expected| (floats; NaN equals only NaN, infinities
/// must match exactly) or exactly equal (integers). Returns an empty string
/// when they match, else a description of the first mismatch
/// ("index [1, 0]: expected 3, got 3.5").
std::string compareTensors(const Tensor &expected, const Tensor &actual,
                           double atol, double rtol);

} // namespace turbine::runtime

#endif // TURBINE_RUNTIME_TENSORCOMPARE_H
