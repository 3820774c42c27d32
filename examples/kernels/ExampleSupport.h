//===- ExampleSupport.h - Random inputs, error and timing for examples ----===//
#ifndef TURBINE_EXAMPLES_KERNELS_EXAMPLESUPPORT_H
#define TURBINE_EXAMPLES_KERNELS_EXAMPLESUPPORT_H

#include "turbine/kernels/Interpreter.h"
#include "turbine/runtime/Tensor.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

namespace turbine::examples {

/// Uniform values in [lo, hi) from a fixed seed.
inline std::vector<float> randomValues(size_t count, unsigned seed,
                                       float lo = -1.0f, float hi = 1.0f) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(count);
  for (float &x : v)
    x = dist(gen);
  return v;
}

/// A runtime tensor (f32) holding a copy of `values`.
inline runtime::Tensor f32Tensor(const std::vector<float> &values,
                                 std::vector<int64_t> shape) {
  auto t = runtime::Tensor::fromBytes(DType::f32, std::move(shape),
                                      values.data(), values.size() * 4);
  return *t;
}

/// A zero-filled f32 tensor.
inline runtime::Tensor f32Zeros(std::vector<int64_t> shape) {
  return *runtime::Tensor::zeros(DType::f32, std::move(shape));
}

inline std::vector<float> valuesOf(const runtime::Tensor &t) {
  std::vector<float> v(static_cast<size_t>(t.elementCount()));
  std::memcpy(v.data(), t.data(), v.size() * 4);
  return v;
}

/// max |a - b|; NaN anywhere gives infinity.
inline double maxAbsError(const std::vector<float> &a,
                          const std::vector<float> &b) {
  if (a.size() != b.size())
    return INFINITY;
  double e = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    double d = std::fabs(static_cast<double>(a[i]) - b[i]);
    if (std::isnan(d))
      return INFINITY;
    e = std::max(e, d);
  }
  return e;
}

/// Median microseconds per call of `fn` over `repetitions` calls.
template <typename F> double microsPerCall(F &&fn, int repetitions) {
  std::vector<double> times;
  for (int i = 0; i < repetitions; ++i) {
    auto start = std::chrono::steady_clock::now();
    fn();
    times.push_back(std::chrono::duration<double, std::micro>(
                        std::chrono::steady_clock::now() - start)
                        .count());
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

} // namespace turbine::examples

#endif // TURBINE_EXAMPLES_KERNELS_EXAMPLESUPPORT_H
