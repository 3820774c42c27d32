//===- TensorCompare.cpp - Checking results against expected values ------===//
//
// Shape and dtype must match exactly; floats compare within
// atol + rtol * |expected| (NaN only equals NaN, infinities exactly), integers
// and booleans compare exactly, strings byte for byte.
//===----------------------------------------------------------------------===//
#include "turbine/runtime/TensorCompare.h"

#include "turbine/runtime/StringOps.h"
#include "turbine/runtime/TensorFormat.h"

#include <cmath>
#include <cstdio>

namespace turbine::runtime {

namespace {

std::string formatIndex(const std::vector<int64_t> &shape, int64_t flat) {
  std::vector<int64_t> index(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    index[d] = shape[d] ? flat % shape[d] : 0;
    flat = shape[d] ? flat / shape[d] : 0;
  }
  std::string text = "[";
  for (size_t d = 0; d < index.size(); ++d)
    text += (d ? ", " : "") + std::to_string(index[d]);
  return text + "]";
}

std::string formatValue(double v) {
  char buffer[64];
  std::snprintf(buffer, sizeof(buffer), "%.9G", v);
  return buffer;
}

} // namespace

std::string compareTensors(const Tensor &expected, const Tensor &actual,
                           double atol, double rtol) {
  if (expected.dtype() != actual.dtype() || expected.shape() != actual.shape())
    return "expected " + expected.typeString() + ", got " + actual.typeString();
  if (dtypeIsString(expected.dtype())) {
    const std::string *e = expected.dataAs<std::string>();
    const std::string *a = actual.dataAs<std::string>();
    for (int64_t i = 0; i < expected.elementCount(); ++i)
      if (e[i] != a[i])
        return "index " + formatIndex(expected.shape(), i) + ": expected " +
               quoteString(e[i]) + ", got " + quoteString(a[i]);
    return "";
  }
  bool isFloat = dtypeIsFloat(expected.dtype());
  for (int64_t i = 0; i < expected.elementCount(); ++i) {
    if (isFloat) {
      double e = elementAsDouble(expected, i), a = elementAsDouble(actual, i);
      bool equal;
      if (std::isnan(e) || std::isnan(a))
        equal = std::isnan(e) && std::isnan(a);
      else if (std::isinf(e) || std::isinf(a))
        equal = e == a;
      else
        equal = std::fabs(a - e) <= atol + rtol * std::fabs(e);
      if (!equal)
        return "index " + formatIndex(expected.shape(), i) + ": expected " +
               formatValue(e) + ", got " + formatValue(a) + " (atol " +
               formatValue(atol) + ", rtol " + formatValue(rtol) + ")";
    } else {
      int64_t e = elementAsInt(expected, i), a = elementAsInt(actual, i);
      if (e == a)
        continue;
      // u64 values above INT64_MAX are printed as the unsigned numbers they are.
      bool isU64 = expected.dtype() == DType::u64;
      auto text = [&](int64_t v) {
        return isU64 ? std::to_string(static_cast<uint64_t>(v)) : std::to_string(v);
      };
      return "index " + formatIndex(expected.shape(), i) + ": expected " + text(e) +
             ", got " + text(a);
    }
  }
  return "";
}

} // namespace turbine::runtime
