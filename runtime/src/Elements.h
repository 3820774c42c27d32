//===- Elements.h - Typed element stores (internal) -----------------------===//
//
// Writing one element of any dtype from a double or an integer; the reading
// side (elementAsDouble/elementAsInt) is public in TensorFormat.h.
//===----------------------------------------------------------------------===//
#ifndef TURBINE_RUNTIME_SRC_ELEMENTS_H
#define TURBINE_RUNTIME_SRC_ELEMENTS_H

#include "turbine/runtime/Tensor.h"

namespace turbine::runtime::detail {

/// Stores `value` (converted, with f16/bf16 rounding) into element `i`.
void storeFloatElement(Tensor &tensor, int64_t i, double value);
/// Stores `value` (truncated to the dtype's width) into element `i`.
void storeIntElement(Tensor &tensor, int64_t i, int64_t value);

} // namespace turbine::runtime::detail

#endif // TURBINE_RUNTIME_SRC_ELEMENTS_H
