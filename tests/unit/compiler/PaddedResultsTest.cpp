//===- PaddedResultsTest.cpp - Producers writing padded results vs C++ -----===//
//
// A small residual network in the frontends' NCHW form (tensor.pad +
// linalg.conv_2d_nchw_fchw with constant filters, dynamic batch):
//
//   c1 = relu(conv3x3(pad 1, x) + b1)                       32 -> 32
//   c2 = relu(conv3x3(pad top 1, left 0, bottom 1, right 2, c1) + b2 + c1)
//   c3 = relu(conv3x3 / 2(pad 1, c2) + b3)                  32 -> 64
//   d  = conv1x1 / 2(c2)                                     the downsample
//   c4 = relu(conv3x3(pad 1, c3) + b4 + d)
//   p  = maxpool 2x2 / 2(c4)
//   c5 = relu(conv3x3(pad 1, p) + b5 + p)
//   out = maxpool 1x1(c5)                                    (keeps c5 NHWC)
//
// Every pad but the input's is written by its producer (PaddedResults.cpp):
// c1, c2 and c3's convolution epilogues and the pooling return the padded
// tensor, and the residual adds and the downsample read the unpadded value as
// a view of it. The test checks on the dispatch IR that this is the path
// taken (four padded results, three interior views, the input's pad the only
// pad kernel), then runs on local-sync and on local-task with 2 workers at
// batch 1 and 3 and compares with plain loops. Inputs, weights and biases
// are small integers, and the reference checks that the sum of the absolute
// values of every output's terms stays below 2^24, so f32 arithmetic is exact
// in any order: results must be equal. A wrong border (not zero) or interior
// offset changes the convolutions' sums.
//===----------------------------------------------------------------------===//
#include "CompileAndRun.h"

#include "turbine/runtime/Runtime.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <sstream>
#include <string>
#include <vector>

namespace {

using namespace turbine::testing;

using turbine::runtime::DType;
using turbine::runtime::Tensor;

constexpr int64_t kChannels = 32, kWide = 64, kHeight = 10, kWidth = 12;

/// An NCHW activation of the reference: values and, per element, the sum of
/// the absolute values of the terms that made it (the exactness bound).
struct Activation {
  int64_t n, c, h, w;
  std::vector<double> value, bound;
  Activation(int64_t n, int64_t c, int64_t h, int64_t w)
      : n(n), c(c), h(h), w(w), value(n * c * h * w), bound(n * c * h * w) {}
  int64_t at(int64_t b, int64_t ch, int64_t y, int64_t x) const {
    return ((b * c + ch) * h + y) * w + x;
  }
};

struct Conv {
  std::string name;
  int64_t in, out, k, stride;
  int64_t pads[4]; // top, left, bottom, right
  int seed;
  bool hasBias = true;
};

/// Weights in {-1, 0, 1}, about half of them zero; biases in {-2 .. 2}.
float weight(const Conv &c, int64_t f, int64_t ch, int64_t y, int64_t x) {
  int64_t h = (c.seed * 131 + f * 31 + ch * 17 + y * 7 + x * 3) % 13;
  return h < 3 ? -1.f : h < 6 ? 1.f : 0.f;
}
float bias(const Conv &c, int64_t f) { return float((f * 5 + c.seed) % 5 - 2); }
float input(int64_t n, int64_t c, int64_t y, int64_t x) {
  return float((3 * n + 7 * c + 5 * y + 11 * x) % 5 - 2);
}

int64_t outSize(int64_t in, int64_t k, int64_t stride, int64_t lo, int64_t hi) {
  return (in + lo + hi - k) / stride + 1;
}

Activation conv(const Activation &x, const Conv &c) {
  Activation y(x.n, c.out, outSize(x.h, c.k, c.stride, c.pads[0], c.pads[2]),
               outSize(x.w, c.k, c.stride, c.pads[1], c.pads[3]));
  for (int64_t b = 0; b < x.n; ++b)
    for (int64_t f = 0; f < c.out; ++f)
      for (int64_t oy = 0; oy < y.h; ++oy)
        for (int64_t ox = 0; ox < y.w; ++ox) {
          double sum = c.hasBias ? bias(c, f) : 0, bound = std::abs(sum);
          for (int64_t ch = 0; ch < c.in; ++ch)
            for (int64_t ky = 0; ky < c.k; ++ky)
              for (int64_t kx = 0; kx < c.k; ++kx) {
                int64_t iy = oy * c.stride + ky - c.pads[0], ix = ox * c.stride + kx - c.pads[1];
                if (iy < 0 || iy >= x.h || ix < 0 || ix >= x.w)
                  continue;
                double term = x.value[x.at(b, ch, iy, ix)] * weight(c, f, ch, ky, kx);
                sum += term;
                bound += std::abs(term);
              }
          y.value[y.at(b, f, oy, ox)] = sum;
          y.bound[y.at(b, f, oy, ox)] = bound;
        }
  return y;
}

Activation addRelu(Activation y, const Activation *skip) {
  for (size_t i = 0; i < y.value.size(); ++i) {
    if (skip) {
      y.value[i] += skip->value[i];
      y.bound[i] += std::abs(skip->value[i]);
    }
    y.value[i] = std::max(y.value[i], 0.0);
  }
  return y;
}

Activation maxPool2x2(const Activation &x) {
  Activation y(x.n, x.c, x.h / 2, x.w / 2);
  for (int64_t b = 0; b < x.n; ++b)
    for (int64_t ch = 0; ch < x.c; ++ch)
      for (int64_t oy = 0; oy < y.h; ++oy)
        for (int64_t ox = 0; ox < y.w; ++ox) {
          double best = -INFINITY;
          for (int64_t ky = 0; ky < 2; ++ky)
            for (int64_t kx = 0; kx < 2; ++kx)
              best = std::max(best, x.value[x.at(b, ch, 2 * oy + ky, 2 * ox + kx)]);
          y.value[y.at(b, ch, oy, ox)] = best;
        }
  return y;
}

const Conv kConv1{"c1", kChannels, kChannels, 3, 1, {1, 1, 1, 1}, 1};
const Conv kConv2{"c2", kChannels, kChannels, 3, 1, {1, 0, 1, 2}, 2};
const Conv kConv3{"c3", kChannels, kWide, 3, 2, {1, 1, 1, 1}, 3};
const Conv kDown{"d", kChannels, kWide, 1, 2, {0, 0, 0, 0}, 4, /*hasBias=*/false};
const Conv kConv4{"c4", kWide, kWide, 3, 1, {1, 1, 1, 1}, 5};
const Conv kConv5{"c5", kWide, kWide, 3, 1, {1, 1, 1, 1}, 6};

/// The network of the file comment, in double, with the exactness check.
std::vector<float> reference(int64_t batch) {
  Activation x(batch, kChannels, kHeight, kWidth);
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t c = 0; c < kChannels; ++c)
      for (int64_t y = 0; y < kHeight; ++y)
        for (int64_t xx = 0; xx < kWidth; ++xx)
          x.value[x.at(b, c, y, xx)] = input(b, c, y, xx);
  Activation c1 = addRelu(conv(x, kConv1), nullptr);
  Activation c2 = addRelu(conv(c1, kConv2), &c1);
  Activation c3 = addRelu(conv(c2, kConv3), nullptr);
  Activation d = conv(c2, kDown);
  Activation c4 = addRelu(conv(c3, kConv4), &d);
  Activation p = maxPool2x2(c4);
  Activation out = addRelu(conv(p, kConv5), &p);
  for (const Activation *a : {&c1, &c2, &c3, &d, &c4, &out})
    for (double bound : a->bound)
      EXPECT_LT(bound + 1, 16777216.0) << "the reference's sums would not be exact in f32";
  return std::vector<float>(out.value.begin(), out.value.end());
}

std::string tensorType(std::vector<int64_t> dims) {
  std::string s = "tensor<";
  for (int64_t d : dims)
    s += (d < 0 ? std::string("?") : std::to_string(d)) + "x";
  return s + "f32>";
}

const char *kIdentity4 = "affine_map<(a, b, c, d) -> (a, b, c, d)>";
const char *kParallel4 =
    "iterator_types = [\"parallel\", \"parallel\", \"parallel\", \"parallel\"]";

/// Emits `%<name> = conv(<in>)` for an input of `h` x `w`, with a bias:
/// relu(conv + bias [+ skip]), without: the convolution alone (an identity
/// generic, as the downsample's batch norm would be); returns the result's
/// (h, w).
std::pair<int64_t, int64_t> emitConv(std::ostringstream &os, const Conv &c,
                                     const std::string &in, int64_t h, int64_t w,
                                     const std::string &skip) {
  int64_t hp = h + c.pads[0] + c.pads[2], wp = w + c.pads[1] + c.pads[3];
  int64_t oh = outSize(h, c.k, c.stride, c.pads[0], c.pads[2]);
  int64_t ow = outSize(w, c.k, c.stride, c.pads[1], c.pads[3]);
  std::string inType = tensorType({-1, c.in, h, w}), paddedType = tensorType({-1, c.in, hp, wp});
  std::string filterType = tensorType({c.out, c.in, c.k, c.k});
  std::string r = tensorType({-1, c.out, oh, ow});
  std::string source = "%" + in;
  if (c.pads[0] || c.pads[1] || c.pads[2] || c.pads[3]) {
    os << "  %" << c.name << "_in = tensor.pad %" << in << " low[0, 0, " << c.pads[0] << ", "
       << c.pads[1] << "] high[0, 0, " << c.pads[2] << ", " << c.pads[3] << "] {\n"
       << "  ^bb0(%i0: index, %i1: index, %i2: index, %i3: index):\n"
       << "    tensor.yield %zero : f32\n"
       << "  } : " << inType << " to " << paddedType << "\n";
    source = "%" + c.name + "_in";
  } else {
    paddedType = inType;
  }
  os << "  %" << c.name << "_w = arith.constant dense<[";
  for (int64_t f = 0; f < c.out; ++f) {
    os << (f ? ", [" : "[");
    for (int64_t ch = 0; ch < c.in; ++ch) {
      os << (ch ? ", [" : "[");
      for (int64_t y = 0; y < c.k; ++y) {
        os << (y ? ", [" : "[");
        for (int64_t x = 0; x < c.k; ++x)
          os << (x ? ", " : "") << f32Literal(weight(c, f, ch, y, x));
        os << "]";
      }
      os << "]";
    }
    os << "]";
  }
  os << "]> : " << filterType << "\n"
     << "  %" << c.name << "_e = tensor.empty(%n) : " << r << "\n"
     << "  %" << c.name << "_acc = linalg.fill ins(%zero : f32) outs(%" << c.name << "_e : " << r
     << ") -> " << r << "\n"
     << "  %" << c.name << "_conv = linalg.conv_2d_nchw_fchw {strides = dense<" << c.stride
     << "> : tensor<2xi64>, dilations = dense<1> : tensor<2xi64>} ins(" << source << ", %"
     << c.name << "_w : " << paddedType << ", " << filterType << ") outs(%" << c.name
     << "_acc : " << r << ") -> " << r << "\n";
  if (!c.hasBias) {
    os << "  %" << c.name << " = linalg.generic {indexing_maps = [" << kIdentity4 << ", "
       << kIdentity4 << "], " << kParallel4 << "} ins(%" << c.name << "_conv : " << r
       << ") outs(%" << c.name << "_e : " << r << ") {\n"
       << "  ^bb0(%v: f32, %o: f32):\n"
       << "    linalg.yield %v : f32\n"
       << "  } -> " << r << "\n";
    return {oh, ow};
  }
  std::string biasType = tensorType({c.out});
  os << "  %" << c.name << "_b = arith.constant dense<[";
  for (int64_t f = 0; f < c.out; ++f)
    os << (f ? ", " : "") << f32Literal(bias(c, f));
  os << "]> : " << biasType << "\n"
     << "  %" << c.name << "_e2 = tensor.empty(%n) : " << r << "\n"
     << "  %" << c.name << " = linalg.generic {indexing_maps = [" << kIdentity4
     << ", affine_map<(a, b, c, d) -> (b)>, " << (skip.empty() ? "" : std::string(kIdentity4) + ", ")
     << kIdentity4 << "], " << kParallel4 << "} ins(%" << c.name << "_conv, %" << c.name << "_b"
     << (skip.empty() ? "" : ", %" + skip) << " : " << r << ", " << biasType
     << (skip.empty() ? "" : ", " + r) << ") outs(%" << c.name << "_e2 : " << r << ") {\n"
     << "  ^bb0(%v: f32, %bb: f32" << (skip.empty() ? "" : ", %s: f32") << ", %o: f32):\n"
     << "    %t = arith.addf %v, %bb : f32\n"
     << (skip.empty() ? "    %u = arith.addf %t, %zero : f32\n" : "    %u = arith.addf %t, %s : f32\n")
     << "    %z = arith.maximumf %u, %zero : f32\n"
     << "    linalg.yield %z : f32\n"
     << "  } -> " << r << "\n";
  return {oh, ow};
}

std::string networkSource() {
  std::ostringstream os;
  std::string x = tensorType({-1, kChannels, kHeight, kWidth});
  std::ostringstream body;
  auto [h1, w1] = emitConv(body, kConv1, "x", kHeight, kWidth, "");
  auto [h2, w2] = emitConv(body, kConv2, "c1", h1, w1, "c1");
  auto [h3, w3] = emitConv(body, kConv3, "c2", h2, w2, "");
  emitConv(body, kDown, "c2", h2, w2, "");
  auto [h4, w4] = emitConv(body, kConv4, "c3", h3, w3, "d");
  std::string c4Type = tensorType({-1, kWide, h4, w4});
  std::string pType = tensorType({-1, kWide, h4 / 2, w4 / 2});
  body << "  %ninf = arith.constant 0xFF800000 : f32\n"
       << "  %win = tensor.empty() : tensor<2x2xf32>\n"
       << "  %pe = tensor.empty(%n) : " << pType << "\n"
       << "  %pinit = linalg.fill ins(%ninf : f32) outs(%pe : " << pType << ") -> " << pType << "\n"
       << "  %p = linalg.pooling_nchw_max {dilations = dense<1> : tensor<2xi64>, strides = "
          "dense<2> : tensor<2xi64>} ins(%c4, %win : "
       << c4Type << ", tensor<2x2xf32>) outs(%pinit : " << pType << ") -> " << pType << "\n";
  auto [h5, w5] = emitConv(body, kConv5, "p", h4 / 2, w4 / 2, "p");
  // A 1x1 max pooling (the identity) reads c5 in NHWC, so the last epilogue
  // and its residual input p stay NHWC (the graph's NCHW result is
  // transposed after it, like ResNet's average pooling).
  std::string outType = tensorType({-1, kWide, h5, w5});
  body << "  %win1 = tensor.empty() : tensor<1x1xf32>\n"
       << "  %oe = tensor.empty(%n) : " << outType << "\n"
       << "  %oinit = linalg.fill ins(%ninf : f32) outs(%oe : " << outType << ") -> " << outType
       << "\n"
       << "  %out = linalg.pooling_nchw_max {dilations = dense<1> : tensor<2xi64>, strides = "
          "dense<1> : tensor<2xi64>} ins(%c5, %win1 : "
       << outType << ", tensor<1x1xf32>) outs(%oinit : " << outType << ") -> " << outType << "\n";
  os << "func.func @main(%x: " << x << ") -> " << outType << " {\n"
     << "  %c0 = arith.constant 0 : index\n"
     << "  %n = tensor.dim %x, %c0 : " << x << "\n"
     << "  %zero = arith.constant 0.0 : f32\n"
     << body.str() << "  return %out : " << outType << "\n}\n";
  return os.str();
}

int64_t countOccurrences(const std::string &text, const std::string &needle) {
  int64_t count = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1))
    ++count;
  return count;
}

TEST(PaddedResults, ResidualNetworkWritesPadsInProducers) {
  std::string source = networkSource(), ir, error;
  ASSERT_TRUE(compileSource(source, turbine::compiler::Phase::Dispatch, ir, nullptr, error))
      << error << "\n" << source;
  // c1, c2, c3 and the pooling write their padded results; c1 (c2's
  // residual), c2 (the downsample) and p (the last residual) are read
  // through views of them.
  EXPECT_EQ(countOccurrences(ir, "{turbine.padded_result}"), 4) << ir;
  EXPECT_EQ(countOccurrences(ir, "{turbine.padded_interior}"), 3) << ir;
  // The only pad kernel left pads the function's input (no producer kernel).
  int padKernels = 0;
  for (const std::string &kernel : kernelTexts(ir, "func.func"))
    padKernels += kernel.find("tensor.extract %") != std::string::npos &&
                  kernel.find("linalg.conv") == std::string::npos &&
                  kernel.find("linalg.pooling") == std::string::npos;
  EXPECT_EQ(padKernels, 1) << ir;

  runOnEachDevice(source, [&](turbine::runtime::Function &function,
                              turbine::runtime::Device &device, const char *deviceName) {
    for (int64_t batch : {1, 3}) {
      Tensor x = Tensor::allocate(DType::f32, {batch, kChannels, kHeight, kWidth}).value();
      for (int64_t e = 0; e < x.elementCount(); ++e) {
        int64_t xx = e % kWidth, y = e / kWidth % kHeight, c = e / (kWidth * kHeight) % kChannels,
                n = e / (kWidth * kHeight * kChannels);
        x.dataAs<float>()[e] = input(n, c, y, xx);
      }
      std::vector<Tensor> inputs;
      inputs.push_back(std::move(x));
      auto results = function.invoke(device, inputs);
      ASSERT_TRUE(results.ok()) << results.message();
      const Tensor &out = results.value().at(0);
      std::vector<float> expected = reference(batch);
      ASSERT_EQ(out.elementCount(), static_cast<int64_t>(expected.size()));
      int64_t mismatches = 0, first = -1, nonzero = 0;
      for (size_t e = 0; e < expected.size(); ++e) {
        nonzero += expected[e] != 0;
        if (out.dataAs<float>()[e] != expected[e] && mismatches++ == 0)
          first = static_cast<int64_t>(e);
      }
      // A reference of zeros (everything cut by the ReLUs) would test nothing.
      EXPECT_GT(nonzero, static_cast<int64_t>(expected.size()) / 4);
      EXPECT_EQ(mismatches, 0) << deviceName << " batch " << batch << ": first at flat index "
                               << first << ": "
                               << (first >= 0 ? out.dataAs<float>()[first] : 0.f) << " vs "
                               << (first >= 0 ? expected[first] : 0.f);
    }
  });
}

} // namespace
