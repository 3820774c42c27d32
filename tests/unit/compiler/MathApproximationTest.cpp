//===- MathApproximationTest.cpp - Compiled exp vs std::exp ---------------===//
//
// The CPU target computes math.exp and math.erf on f32 with its own
// polynomials (compiler/targets/cpu/MathApproximations.cpp). This compiles
// an elementwise exp (and the sigmoid the frontends build on it,
// 1 / (1 + exp(-x))) over every 389th float of [-104, 89.5] and both signs,
// plus the edge values, runs it and compares with std::exp in double
// precision:
//  * exp within 2 ulp of the correctly rounded result where that is a
//    normal float and x <= 88 (measured over every 97th float: 1.96); relative error below 7e-5
//    above 88 (where the reduced argument reaches ln 2);
//  * +inf from the first float above ln(FLT_MAX), 0 below ln(2^-126) (the
//    results there are denormal: flushed), exp(+-inf) = +inf / 0, NaN
//    stays NaN;
//  * sigmoid within 4 ulp where its result is normal (measured: 3.2);
// and erf over every 389th float of [-6, 6] against std::erf: within 3.5e-7
// absolute (measured 3.3e-7), erf(+-inf) = +-1, NaN stays NaN.
//===----------------------------------------------------------------------===//
#include "CompileAndRun.h"

#include "turbine/runtime/Runtime.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

namespace {

using namespace turbine::testing;
using turbine::runtime::DType;
using turbine::runtime::Tensor;

/// Every `stride`-th float from 0 to `limit` (by bit pattern), both signs,
/// then the edge values.
std::vector<float> sweep(float positiveLimit, float negativeLimit, uint32_t stride) {
  std::vector<float> values;
  auto bitsOf = [](float v) {
    uint32_t b;
    std::memcpy(&b, &v, sizeof b);
    return b;
  };
  auto floatOf = [](uint32_t b) {
    float v;
    std::memcpy(&v, &b, sizeof v);
    return v;
  };
  for (uint32_t b = 0; b < bitsOf(positiveLimit); b += stride)
    values.push_back(floatOf(b));
  for (uint32_t b = 0; b < bitsOf(negativeLimit); b += stride)
    values.push_back(-floatOf(b));
  const float inf = std::numeric_limits<float>::infinity();
  for (float edge : {inf, -inf, std::numeric_limits<float>::quiet_NaN(),
                     0x1.62E42Ep+6f /* largest float below ln(FLT_MAX) */,
                     0x1.62E430p+6f /* smallest float above it */,
                     -0x1.5D589Ep+6f /* smallest float above ln(2^-126) */,
                     -0x1.5D58A0p+6f /* largest float below it */, 88.0f, -87.0f})
    values.push_back(edge);
  return values;
}

/// `main` applies the elementwise body `body` (SSA value %r from %x) to a
/// dynamic 1-D tensor.
std::string elementwiseSource(const std::string &body) {
  return "#id = affine_map<(d0) -> (d0)>\n"
         "func.func @main(%a: tensor<?xf32>) -> tensor<?xf32> {\n"
         "  %c0 = arith.constant 0 : index\n"
         "  %n = tensor.dim %a, %c0 : tensor<?xf32>\n"
         "  %e = tensor.empty(%n) : tensor<?xf32>\n"
         "  %y = linalg.generic {indexing_maps = [#id, #id], iterator_types = [\"parallel\"]}\n"
         "      ins(%a : tensor<?xf32>) outs(%e : tensor<?xf32>) {\n"
         "  ^bb0(%x: f32, %out: f32):\n" +
         body +
         "    linalg.yield %r : f32\n"
         "  } -> tensor<?xf32>\n"
         "  return %y : tensor<?xf32>\n"
         "}\n";
}

/// Runs `source` on `inputs` on each device and calls `check(input, got)`.
void runElementwise(const std::string &source, const std::vector<float> &inputs,
                    const std::function<void(float, float)> &check) {
  runOnEachDevice(source, [&](turbine::runtime::Function &function,
                              turbine::runtime::Device &device, const char *deviceName) {
    SCOPED_TRACE(deviceName);
    std::vector<Tensor> args;
    args.push_back(filledTensor({int64_t(inputs.size())},
                                [&](int64_t i) { return inputs[size_t(i)]; }));
    auto results = function.invoke(device, args);
    ASSERT_TRUE(results.ok()) << results.message();
    ASSERT_EQ(results.value().size(), 1u);
    const float *got = results.value()[0].dataAs<float>();
    for (size_t i = 0; i < inputs.size(); ++i)
      check(inputs[i], got[i]);
  });
}

/// |got - want| in units of the spacing of floats at want (rounded to f32).
double ulpError(float got, double want) {
  float rounded = float(want);
  double spacing = double(std::nextafter(std::fabs(rounded), std::numeric_limits<float>::infinity())) -
                   double(std::fabs(rounded));
  return std::fabs(double(got) - want) / spacing;
}

TEST(MathApproximation, ExpMatchesLibmWithin2Ulp) {
  std::vector<float> inputs = sweep(89.5f, 104.0f, 389);
  double worstUlp = 0;
  int failures = 0;
  runElementwise(elementwiseSource("    %r = math.exp %x : f32\n"), inputs, [&](float x, float got) {
    double want = std::exp(double(x));
    bool ok = true;
    if (std::isnan(x))
      ok = std::isnan(got);
    else if (x > 0x1.62E42Ep+6f)
      ok = got == std::numeric_limits<float>::infinity();
    else if (x < -0x1.5D589Ep+6f)
      ok = got == 0.0f;
    else if (x > 88.0f) {
      ok = std::fabs(double(got) - want) / want < 7e-5;
    } else {
      double ulp = ulpError(got, want);
      worstUlp = std::max(worstUlp, ulp);
      ok = ulp <= 2.0;
    }
    if (!ok && ++failures <= 5)
      ADD_FAILURE() << "exp(" << x << ") = " << got << ", libm " << want;
  });
  EXPECT_EQ(failures, 0);
  EXPECT_GT(worstUlp, 0.5) << "the sweep did not reach the polynomial's error";
}

TEST(MathApproximation, SigmoidFromExpWithin4Ulp) {
  std::vector<float> inputs = sweep(89.5f, 104.0f, 389);
  int failures = 0;
  runElementwise(elementwiseSource("    %one = arith.constant 1.0 : f32\n"
                                   "    %m = arith.negf %x : f32\n"
                                   "    %ex = math.exp %m : f32\n"
                                   "    %d = arith.addf %ex, %one : f32\n"
                                   "    %r = arith.divf %one, %d : f32\n"),
                 inputs, [&](float x, float got) {
                   double want = 1.0 / (1.0 + std::exp(-double(x)));
                   bool ok;
                   if (std::isnan(x))
                     ok = std::isnan(got);
                   else if (want < double(std::numeric_limits<float>::min()))
                     ok = got >= 0.0f && got <= std::numeric_limits<float>::min();
                   else
                     ok = ulpError(got, want) <= 4.0;
                   if (!ok && ++failures <= 5)
                     ADD_FAILURE() << "sigmoid(" << x << ") = " << got << ", libm " << want;
                 });
  EXPECT_EQ(failures, 0);
}

TEST(MathApproximation, ErfMatchesLibmWithin3p5em7) {
  std::vector<float> inputs = sweep(6.0f, 6.0f, 389);
  double worst = 0;
  int failures = 0;
  runElementwise(elementwiseSource("    %r = math.erf %x : f32\n"), inputs, [&](float x, float got) {
    bool ok;
    if (std::isnan(x)) {
      ok = std::isnan(got);
    } else {
      double error = std::fabs(double(got) - std::erf(double(x)));
      worst = std::max(worst, error);
      ok = error <= 3.5e-7;
    }
    if (!ok && ++failures <= 5)
      ADD_FAILURE() << "erf(" << x << ") = " << got << ", libm " << std::erf(double(x));
  });
  EXPECT_EQ(failures, 0);
  EXPECT_GT(worst, 1e-8) << "the sweep did not reach the approximation's error";
}

} // namespace
