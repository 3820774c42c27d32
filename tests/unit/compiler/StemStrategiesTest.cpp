//===- StemStrategiesTest.cpp - Network stem kernels vs a C++ reference ---===//
//
// The kernels in front of and right after a CNN's first convolution, as
// functions of their own (dynamic batch, run on local-sync and on
// local-task with 2 workers, batches 1 and 3), compared bit for bit with
// plain loops:
//  - a padded NHWC max pooling read at clamped indices
//    (ClampedMaxPooling.cpp), on inputs with NaN, -0, +0 and -inf at the
//    borders: the rewrite claims exactness for all of them (IEEE maximum:
//    NaN wins, -0 < +0);
//  - the padded NHWC copy of an NCHW image (ChannelsLastInputGather.cpp)
//    with a width that is not a multiple of 16 and uneven pads.
// Each also checks on the lowered kernel that the named path was taken.
//===----------------------------------------------------------------------===//
#include "CompileAndRun.h"

#include "turbine/runtime/Runtime.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

namespace {

using namespace turbine::testing;

using turbine::runtime::DType;
using turbine::runtime::Tensor;

/// Compiles `source` (also to the codegen phase, into `lowered`), runs it on
/// both devices for each batch with input shape {batch, dims...} filled by
/// `value`, and compares the result bit for bit with `reference(batch)`.
void compileAndCompare(const std::string &source, const std::vector<int64_t> &dims,
                       const std::function<float(int64_t)> &value,
                       const std::function<std::vector<float>(int64_t)> &reference,
                       std::string &lowered) {
  std::string error;
  ASSERT_TRUE(compileSource(source, turbine::compiler::Phase::Codegen, lowered, nullptr, error))
      << error;
  runOnEachDevice(source, [&](turbine::runtime::Function &function,
                              turbine::runtime::Device &device, const char *deviceName) {
    for (int64_t batch : {1, 3}) {
      std::vector<int64_t> shape = {batch};
      shape.insert(shape.end(), dims.begin(), dims.end());
      std::vector<Tensor> inputs;
      inputs.push_back(filledTensor(shape, value));
      auto results = function.invoke(device, inputs);
      ASSERT_TRUE(results.ok()) << results.message();
      const Tensor &out = results.value().at(0);
      std::vector<float> expected = reference(batch);
      ASSERT_EQ(out.elementCount(), static_cast<int64_t>(expected.size()));
      int64_t mismatches = 0, first = -1;
      for (size_t e = 0; e < expected.size(); ++e) {
        float got = out.dataAs<float>()[e];
        // Bit for bit, except that any NaN matches any NaN and a zero a
        // zero of either sign (codegen's float max / min leave the sign of
        // a zero result open: LowerKernelsToLLVM.cpp).
        bool same = std::isnan(expected[e])   ? std::isnan(got)
                    : expected[e] == 0.0f ? got == 0.0f
                                          : std::memcmp(&got, &expected[e], sizeof(float)) == 0;
        if (!same && mismatches++ == 0)
          first = static_cast<int64_t>(e);
      }
      EXPECT_EQ(mismatches, 0) << deviceName << " batch " << batch << ": first at flat index "
                               << first << ": "
                               << (first >= 0 ? out.dataAs<float>()[first] : 0.f) << " vs "
                               << (first >= 0 ? expected[first] : 0.f);
    }
  });
}

/// IEEE 754-2019 maximum (arith.maximumf): NaN if either is, -0 < +0.
float ieeeMaximum(float a, float b) {
  if (std::isnan(a) || std::isnan(b))
    return std::numeric_limits<float>::quiet_NaN();
  if (a == 0 && b == 0)
    return std::signbit(a) ? b : a;
  return a > b ? a : b;
}

// NHWC 9x11x40, pads top 1, left 1, bottom 1, right 0, 3x3 window, stride 2,
// -inf padding and initial value.
constexpr int64_t kPoolH = 9, kPoolW = 11, kPoolC = 40;
constexpr int64_t kPoolOH = (kPoolH + 2 - 3) / 2 + 1, kPoolOW = (kPoolW + 1 - 3) / 2 + 1;

/// Special values on the image's borders (where windows are clamped) and a
/// few inside, small exact values elsewhere.
float poolInput(int64_t i) {
  int64_t c = i % kPoolC, x = i / kPoolC % kPoolW, y = i / (kPoolC * kPoolW) % kPoolH;
  bool border = y == 0 || x == 0 || y == kPoolH - 1 || x == kPoolW - 1;
  switch ((c + 3 * x + 5 * y) % (border ? 5 : 23)) {
  case 0:
    return std::numeric_limits<float>::quiet_NaN();
  case 1:
    return -0.0f;
  case 2:
    return 0.0f;
  case 3:
    return -std::numeric_limits<float>::infinity();
  default:
    return float((7 * c + 11 * x + 13 * y) % 17 - 12) / 4;
  }
}

TEST(StemStrategies, PaddedMaxPoolClampedExactWithNaNAndZeros) {
  std::ostringstream os;
  os << "func.func @main(%x: tensor<?x9x11x40xf32>) -> tensor<?x" << kPoolOH << "x" << kPoolOW
     << "x40xf32> {\n"
     << "  %ninf = arith.constant 0xFF800000 : f32\n"
     << "  %c0 = arith.constant 0 : index\n"
     << "  %n = tensor.dim %x, %c0 : tensor<?x9x11x40xf32>\n"
     << "  %p = tensor.pad %x low[0, 1, 1, 0] high[0, 1, 0, 0] {\n"
     << "  ^bb0(%i0: index, %i1: index, %i2: index, %i3: index):\n"
     << "    tensor.yield %ninf : f32\n"
     << "  } : tensor<?x9x11x40xf32> to tensor<?x11x12x40xf32>\n"
     << "  %win = tensor.empty() : tensor<3x3xf32>\n"
     << "  %e = tensor.empty(%n) : tensor<?x" << kPoolOH << "x" << kPoolOW << "x40xf32>\n"
     << "  %init = linalg.fill ins(%ninf : f32) outs(%e : tensor<?x" << kPoolOH << "x"
     << kPoolOW << "x40xf32>) -> tensor<?x" << kPoolOH << "x" << kPoolOW << "x40xf32>\n"
     << "  %pool = linalg.pooling_nhwc_max {dilations = dense<1> : tensor<2xi64>, strides = "
        "dense<2> : tensor<2xi64>} ins(%p, %win : tensor<?x11x12x40xf32>, tensor<3x3xf32>) "
        "outs(%init : tensor<?x"
     << kPoolOH << "x" << kPoolOW << "x40xf32>) -> tensor<?x" << kPoolOH << "x" << kPoolOW
     << "x40xf32>\n"
     << "  return %pool : tensor<?x" << kPoolOH << "x" << kPoolOW << "x40xf32>\n}\n";
  auto reference = [](int64_t batch) {
    std::vector<float> out(batch * kPoolOH * kPoolOW * kPoolC);
    for (int64_t n = 0; n < batch; ++n)
      for (int64_t y = 0; y < kPoolOH; ++y)
        for (int64_t x = 0; x < kPoolOW; ++x)
          for (int64_t c = 0; c < kPoolC; ++c) {
            float best = -std::numeric_limits<float>::infinity();
            for (int64_t ky = 0; ky < 3; ++ky)
              for (int64_t kx = 0; kx < 3; ++kx) {
                int64_t iy = 2 * y + ky - 1, ix = 2 * x + kx - 1;
                float v = -std::numeric_limits<float>::infinity(); // The padding.
                if (iy >= 0 && iy < kPoolH && ix >= 0 && ix < kPoolW)
                  v = poolInput(((n * kPoolH + iy) * kPoolW + ix) * kPoolC + c);
                best = ieeeMaximum(best, v);
              }
            out[((n * kPoolOH + y) * kPoolOW + x) * kPoolC + c] = best;
          }
    return out;
  };
  std::string lowered;
  compileAndCompare(os.str(), {kPoolH, kPoolW, kPoolC}, poolInput, reference, lowered);
  // Clamped: no padded scratch tile, no select of the padding value.
  EXPECT_EQ(lowered.find("llvm.call @malloc"), std::string::npos) << lowered;
  EXPECT_EQ(lowered.find("llvm.select"), std::string::npos) << lowered;
  EXPECT_NE(lowered.find("llvm.intr.maximum"), std::string::npos) << lowered;
}

// NCHW 3x5x21 (21 = 16 + 5 pixels per row), padded top 2, left 1, bottom 0,
// right 3 with 0.5, to NHWC 7x25x3.
constexpr int64_t kImageC = 3, kImageH = 5, kImageW = 21;
constexpr int64_t kPadTop = 2, kPadLeft = 1, kPaddedH = 7, kPaddedW = 25;

TEST(StemStrategies, NchwImageToPaddedNhwcByRows) {
  std::string source = R"(
func.func @main(%x: tensor<?x3x5x21xf32>) -> tensor<?x7x25x3xf32> {
  %half = arith.constant 0.5 : f32
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x3x5x21xf32>
  %p = tensor.pad %x low[0, 0, 2, 1] high[0, 0, 0, 3] {
  ^bb0(%i0: index, %i1: index, %i2: index, %i3: index):
    tensor.yield %half : f32
  } : tensor<?x3x5x21xf32> to tensor<?x3x7x25xf32>
  %e = tensor.empty(%n) : tensor<?x7x25x3xf32>
  %t = linalg.transpose ins(%p : tensor<?x3x7x25xf32>) outs(%e : tensor<?x7x25x3xf32>)
      permutation = [0, 2, 3, 1]
  return %t : tensor<?x7x25x3xf32>
}
)";
  auto value = [](int64_t i) { return float(i % 1000) / 8; };
  auto reference = [&](int64_t batch) {
    std::vector<float> out(batch * kPaddedH * kPaddedW * kImageC);
    for (int64_t n = 0; n < batch; ++n)
      for (int64_t y = 0; y < kPaddedH; ++y)
        for (int64_t x = 0; x < kPaddedW; ++x)
          for (int64_t c = 0; c < kImageC; ++c) {
            int64_t iy = y - kPadTop, ix = x - kPadLeft;
            bool inside = iy >= 0 && iy < kImageH && ix >= 0 && ix < kImageW;
            out[((n * kPaddedH + y) * kPaddedW + x) * kImageC + c] =
                inside ? value(((n * kImageC + c) * kImageH + iy) * kImageW + ix) : 0.5f;
          }
    return out;
  };
  std::string lowered;
  compileAndCompare(source, {kImageC, kImageH, kImageW}, value, reference, lowered);
  // By rows: 16-float loads and shuffles, no element gathers.
  EXPECT_NE(lowered.find("llvm.shufflevector"), std::string::npos) << lowered;
  EXPECT_NE(lowered.find("-> vector<16xf32>"), std::string::npos) << lowered;
  EXPECT_EQ(lowered.find("llvm.intr.masked.gather"), std::string::npos) << lowered;
}

} // namespace
