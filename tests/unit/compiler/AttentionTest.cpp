//===- AttentionTest.cpp - Fused attention vs a C++ reference -------------===//
//
// Writes scaled-dot-product attention in the TorchScript importer's linalg
// form (q.k^T batch_matmul, * scale, + additive mask [T, L], last-axis
// softmax as max / sub / exp-sum / exp-div generics, .v batch_matmul; K and
// V optionally read through a prefix gather of a [B, KH, S, D] cache and a
// repeat_interleave head gather), checks that global-opt made it one
// turbine.attention (so the fused kernel is what runs), compiles and runs
// it on local-sync and local-task (2 workers), and compares with a
// straightforward double-precision softmax(q.k^T * scale + mask).v
// (atol 2e-5, rtol 1e-5). Cases: a plain attention (no cache, no GQA,
// static 8 keys); decode against a cache (one query row, 2 query heads per
// KV head, key lengths 1, 8, 13 and the whole cache: blocks of 8 and the
// one-at-a-time tail; some keys masked with -inf); prefill with a causal
// mask (19 query rows: two row tiles, rows whose first key block is all
// -inf but one key).
//===----------------------------------------------------------------------===//
#include "CompileAndRun.h"

#include "turbine/runtime/Runtime.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

namespace {

using namespace turbine::testing;
using turbine::runtime::Tensor;

struct AttentionCase {
  const char *name;
  int64_t heads, kvHeads, rows, headDim;
  int64_t cache;              // S: keys in K / V
  bool gathers;               // K / V read through prefix + head gathers
  std::vector<int64_t> keyLengths; // L per run (dynamic when gathers)
  bool causal;
};

/// The importer's form of attention (see the file comment); with `gathers`
/// the key length is dim 1 of the mask (dynamic), else all S keys.
std::string attentionSource(const AttentionCase &c) {
  int64_t h = c.heads, kh = c.kvHeads, t = c.rows, d = c.headDim, s = c.cache;
  int64_t bh = h;
  std::string l = c.gathers ? "?" : std::to_string(s);
  std::string dims = c.gathers ? "(%len)" : "()";
  auto ty = [](std::vector<std::string> shape) {
    std::string out = "tensor<";
    for (const std::string &x : shape)
      out += x + "x";
    return out + "f32>";
  };
  auto n = [](int64_t v) { return std::to_string(v); };
  std::string q4 = ty({"1", n(h), n(t), n(d)}), kv = ty({"1", n(kh), n(s), n(d)});
  std::string s4 = ty({"1", n(h), n(t), l}), row = ty({"1", n(h), n(t)});
  std::string par = "[\"parallel\", \"parallel\", \"parallel\", \"parallel\"]";
  std::string red = "[\"parallel\", \"parallel\", \"parallel\", \"reduction\"]";
  std::ostringstream os;
  os << "#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>\n"
     << "#row = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>\n"
     << "#mask = affine_map<(d0, d1, d2, d3) -> (d2, d3)>\n"
     << "func.func @main(%q: " << q4 << ", %k: " << kv << ", %v: " << kv
     << ", %m: " << ty({n(t), l}) << ") -> " << ty({n(bh), n(t), n(d)}) << " {\n"
     << "  %zero = arith.constant 0.0 : f32\n"
     << "  %ninf = arith.constant 0xFF800000 : f32\n"
     << "  %scale = arith.constant " << f32Literal(1.0f / std::sqrt(float(d))) << " : f32\n"
     << "  %c0 = arith.constant 0 : index\n  %c1 = arith.constant 1 : index\n"
     << "  %group = arith.constant " << h / kh << " : index\n";
  if (c.gathers)
    os << "  %len = tensor.dim %m, %c1 : " << ty({n(t), l}) << "\n";
  std::string kx = "%k", vx = "%v";
  if (c.gathers) {
    for (const char *x : {"k", "v"}) {
      std::string prefix = ty({"1", n(kh), l, n(d)}), heads = ty({"1", n(h), l, n(d)});
      os << "  %" << x << "pe = tensor.empty" << dims << " : " << prefix << "\n"
         << "  %" << x << "p = linalg.generic {indexing_maps = [#id], iterator_types = " << par
         << "} outs(%" << x << "pe : " << prefix << ") {\n  ^bb0(%out: f32):\n"
         << "    %i1 = linalg.index 1 : index\n    %i2 = linalg.index 2 : index\n"
         << "    %i3 = linalg.index 3 : index\n"
         << "    %e = tensor.extract %" << x << "[%c0, %i1, %i2, %i3] : " << kv << "\n"
         << "    linalg.yield %e : f32\n  } -> " << prefix << "\n"
         << "  %" << x << "ge = tensor.empty" << dims << " : " << heads << "\n"
         << "  %" << x << "g = linalg.generic {indexing_maps = [#id], iterator_types = " << par
         << "} outs(%" << x << "ge : " << heads << ") {\n  ^bb0(%out: f32):\n"
         << "    %i1 = linalg.index 1 : index\n    %hd = arith.divui %i1, %group : index\n"
         << "    %i2 = linalg.index 2 : index\n    %i3 = linalg.index 3 : index\n"
         << "    %e = tensor.extract %" << x << "p[%c0, %hd, %i2, %i3] : " << prefix << "\n"
         << "    linalg.yield %e : f32\n  } -> " << heads << "\n";
    }
    kx = "%kg";
    vx = "%vg";
  }
  std::string kxType = ty({"1", n(h), l, n(d)}), ktType = ty({"1", n(h), n(d), l});
  os << "  %kte = tensor.empty" << dims << " : " << ktType << "\n"
     << "  %kt = linalg.transpose ins(" << kx << " : " << kxType << ") outs(%kte : " << ktType
     << ") permutation = [0, 1, 3, 2]\n"
     << "  %qc = tensor.collapse_shape %q [[0, 1], [2], [3]] : " << q4 << " into "
     << ty({n(bh), n(t), n(d)}) << "\n"
     << "  %ktc = tensor.collapse_shape %kt [[0, 1], [2], [3]] : " << ktType << " into "
     << ty({n(bh), n(d), l}) << "\n"
     << "  %se = tensor.empty" << dims << " : " << ty({n(bh), n(t), l}) << "\n"
     << "  %sf = linalg.fill ins(%zero : f32) outs(%se : " << ty({n(bh), n(t), l}) << ") -> "
     << ty({n(bh), n(t), l}) << "\n"
     << "  %qk = linalg.batch_matmul ins(%qc, %ktc : " << ty({n(bh), n(t), n(d)}) << ", "
     << ty({n(bh), n(d), l}) << ") outs(%sf : " << ty({n(bh), n(t), l}) << ") -> "
     << ty({n(bh), n(t), l}) << "\n"
     << "  %qk4 = tensor.expand_shape %qk [[0, 1], [2], [3]] output_shape [1, " << h << ", "
     << t << ", " << (c.gathers ? "%len" : n(s)) << "] : " << ty({n(bh), n(t), l}) << " into "
     << s4 << "\n"
     << "  %e4 = tensor.empty" << dims << " : " << s4 << "\n"
     << "  %scaled = linalg.generic {indexing_maps = [#id, #id], iterator_types = " << par
     << "} ins(%qk4 : " << s4 << ") outs(%e4 : " << s4 << ") {\n"
     << "  ^bb0(%in: f32, %out: f32):\n    %x = arith.mulf %in, %scale : f32\n"
     << "    linalg.yield %x : f32\n  } -> " << s4 << "\n"
     << "  %masked = linalg.generic {indexing_maps = [#id, #mask, #id], iterator_types = " << par
     << "} ins(%scaled, %m : " << s4 << ", " << ty({n(t), l}) << ") outs(%e4 : " << s4
     << ") {\n  ^bb0(%in: f32, %in1: f32, %out: f32):\n    %x = arith.addf %in, %in1 : f32\n"
     << "    linalg.yield %x : f32\n  } -> " << s4 << "\n"
     << "  %re = tensor.empty() : " << row << "\n"
     << "  %mf = linalg.fill ins(%ninf : f32) outs(%re : " << row << ") -> " << row << "\n"
     << "  %max = linalg.generic {indexing_maps = [#id, #row], iterator_types = " << red
     << "} ins(%masked : " << s4 << ") outs(%mf : " << row << ") {\n"
     << "  ^bb0(%in: f32, %out: f32):\n    %x = arith.maximumf %out, %in : f32\n"
     << "    linalg.yield %x : f32\n  } -> " << row << "\n"
     << "  %shifted = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = " << par
     << "} ins(%masked, %max : " << s4 << ", " << row << ") outs(%e4 : " << s4 << ") {\n"
     << "  ^bb0(%in: f32, %in1: f32, %out: f32):\n    %x = arith.subf %in, %in1 : f32\n"
     << "    linalg.yield %x : f32\n  } -> " << s4 << "\n"
     << "  %sumf = linalg.fill ins(%zero : f32) outs(%re : " << row << ") -> " << row << "\n"
     << "  %sum = linalg.generic {indexing_maps = [#id, #row], iterator_types = " << red
     << "} ins(%shifted : " << s4 << ") outs(%sumf : " << row << ") {\n"
     << "  ^bb0(%in: f32, %out: f32):\n    %x = math.exp %in : f32\n"
     << "    %y = arith.addf %out, %x : f32\n    linalg.yield %y : f32\n  } -> " << row << "\n"
     << "  %probs = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = " << par
     << "} ins(%shifted, %sum : " << s4 << ", " << row << ") outs(%e4 : " << s4 << ") {\n"
     << "  ^bb0(%in: f32, %in1: f32, %out: f32):\n    %x = math.exp %in : f32\n"
     << "    %y = arith.divf %x, %in1 : f32\n    linalg.yield %y : f32\n  } -> " << s4 << "\n"
     << "  %pc = tensor.collapse_shape %probs [[0, 1], [2], [3]] : " << s4 << " into "
     << ty({n(bh), n(t), l}) << "\n"
     << "  %vc = tensor.collapse_shape " << vx << " [[0, 1], [2], [3]] : " << kxType << " into "
     << ty({n(bh), l, n(d)}) << "\n"
     << "  %oe = tensor.empty() : " << ty({n(bh), n(t), n(d)}) << "\n"
     << "  %of = linalg.fill ins(%zero : f32) outs(%oe : " << ty({n(bh), n(t), n(d)}) << ") -> "
     << ty({n(bh), n(t), n(d)}) << "\n"
     << "  %o = linalg.batch_matmul ins(%pc, %vc : " << ty({n(bh), n(t), l}) << ", "
     << ty({n(bh), l, n(d)}) << ") outs(%of : " << ty({n(bh), n(t), n(d)}) << ") -> "
     << ty({n(bh), n(t), n(d)}) << "\n"
     << "  return %o : " << ty({n(bh), n(t), n(d)}) << "\n}\n";
  return os.str();
}

float qValue(int64_t i) { return float((i * 37 + 11) % 23 - 11) / 8; }
float kValue(int64_t i) { return float((i * 53 + 7) % 29 - 14) / 9; }
float vValue(int64_t i) { return float((i * 31 + 3) % 19 - 9) / 5; }

/// The mask [T, L]: causal (key j visible to row i of a prompt at the end of
/// L keys when j <= L - T + i), else every 5th key masked plus small offsets.
float maskValue(const AttentionCase &c, int64_t row, int64_t key, int64_t length) {
  const float ninf = -std::numeric_limits<float>::infinity();
  if (c.causal)
    return key <= length - c.rows + row ? 0.0f : ninf;
  if (c.gathers && key % 5 == 3)
    return ninf;
  return float((row * 7 + key * 3) % 5 - 2) / 4;
}

std::vector<double> reference(const AttentionCase &c, const Tensor &q, const Tensor &k,
                              const Tensor &v, const Tensor &mask, int64_t length) {
  int64_t h = c.heads, t = c.rows, d = c.headDim, s = c.cache, group = c.heads / c.kvHeads;
  std::vector<double> out(h * t * d, 0.0);
  double scale = 1.0 / std::sqrt(double(d));
  for (int64_t head = 0; head < h; ++head)
    for (int64_t i = 0; i < t; ++i) {
      int64_t kh = head / group;
      std::vector<double> score(length);
      double best = -INFINITY;
      for (int64_t j = 0; j < length; ++j) {
        double dot = 0;
        for (int64_t x = 0; x < d; ++x)
          dot += double(q.dataAs<float>()[(head * t + i) * d + x]) *
                 k.dataAs<float>()[(kh * s + j) * d + x];
        score[j] = dot * scale + mask.dataAs<float>()[i * length + j];
        best = std::max(best, score[j]);
      }
      double sum = 0;
      for (double &e : score)
        sum += (e = std::exp(e - best));
      for (int64_t j = 0; j < length; ++j)
        for (int64_t x = 0; x < d; ++x)
          out[(head * t + i) * d + x] +=
              score[j] / sum * v.dataAs<float>()[(kh * s + j) * d + x];
    }
  return out;
}

class FusedAttention : public ::testing::TestWithParam<AttentionCase> {};

TEST_P(FusedAttention, MatchesReference) {
  const AttentionCase &c = GetParam();
  std::string source = attentionSource(c);
  {
    std::string ir, error;
    ASSERT_TRUE(compileSource(source, turbine::compiler::Phase::GlobalOpt, ir, nullptr, error))
        << error;
    EXPECT_NE(ir.find("turbine.attention"), std::string::npos) << "not fused:\n" << ir;
    EXPECT_EQ(ir.find("batch_matmul"), std::string::npos) << "matmuls left:\n" << ir;
  }
  runOnEachDevice(source, [&](turbine::runtime::Function &function,
                              turbine::runtime::Device &device, const char *deviceName) {
    for (int64_t length : c.keyLengths) {
      int64_t d = c.headDim;
      std::vector<Tensor> inputs;
      inputs.push_back(filledTensor({1, c.heads, c.rows, d}, qValue));
      inputs.push_back(filledTensor({1, c.kvHeads, c.cache, d}, kValue));
      inputs.push_back(filledTensor({1, c.kvHeads, c.cache, d}, vValue));
      inputs.push_back(filledTensor({c.rows, length}, [&](int64_t e) {
        return maskValue(c, e / length, e % length, length);
      }));
      auto results = function.invoke(device, inputs);
      ASSERT_TRUE(results.ok()) << results.message();
      const Tensor &out = results.value().at(0);
      ASSERT_EQ(out.elementCount(), c.heads * c.rows * d);
      std::vector<double> want = reference(c, inputs[0], inputs[1], inputs[2], inputs[3], length);
      int64_t mismatches = 0, first = -1;
      for (int64_t e = 0; e < out.elementCount(); ++e) {
        double got = out.dataAs<float>()[e];
        if (!(std::fabs(got - want[e]) <= 2e-5 + 1e-5 * std::fabs(want[e])) && mismatches++ == 0)
          first = e;
      }
      EXPECT_EQ(mismatches, 0) << c.name << " on " << deviceName << ", " << length
                               << " keys: first at (head " << first / (c.rows * d) << ", row "
                               << first / d % c.rows << ", " << first % d
                               << "): " << (first >= 0 ? out.dataAs<float>()[first] : 0.0f)
                               << " vs " << (first >= 0 ? want[first] : 0.0);
    }
  });
}

INSTANTIATE_TEST_SUITE_P(
    Cases, FusedAttention,
    ::testing::Values(
        AttentionCase{"plain", 4, 4, 3, 16, 8, false, {8}, false},
        AttentionCase{"decode_gqa_cache", 4, 2, 1, 32, 64, true, {1, 8, 13, 64}, false},
        AttentionCase{"prefill_causal", 4, 2, 19, 16, 32, true, {19, 27}, true}),
    [](const ::testing::TestParamInfo<AttentionCase> &info) { return info.param.name; });

} // namespace
