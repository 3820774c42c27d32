//===- References.h - Plain C++ references for the example kernels --------===//
//
// Straightforward loops in double precision, independent of the kernel
// language, that the examples and tests compare against. Row-major data.
//===----------------------------------------------------------------------===//
#ifndef TURBINE_EXAMPLES_KERNELS_REFERENCES_H
#define TURBINE_EXAMPLES_KERNELS_REFERENCES_H

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

namespace turbine::examples {

inline std::vector<float> softmaxReference(const std::vector<float> &x,
                                           int64_t M, int64_t N) {
  std::vector<float> y(x.size());
  for (int64_t m = 0; m < M; ++m) {
    double mx = -INFINITY, s = 0;
    for (int64_t n = 0; n < N; ++n)
      mx = std::max(mx, static_cast<double>(x[m * N + n]));
    for (int64_t n = 0; n < N; ++n)
      s += std::exp(x[m * N + n] - mx);
    for (int64_t n = 0; n < N; ++n)
      y[m * N + n] = static_cast<float>(std::exp(x[m * N + n] - mx) / s);
  }
  return y;
}

inline std::vector<float> gemmReference(const std::vector<float> &a,
                                        const std::vector<float> &b, int64_t M,
                                        int64_t N, int64_t K) {
  std::vector<float> c(M * N);
  for (int64_t m = 0; m < M; ++m)
    for (int64_t n = 0; n < N; ++n) {
      double s = 0;
      for (int64_t k = 0; k < K; ++k)
        s += static_cast<double>(a[m * K + k]) * b[k * N + n];
      c[m * N + n] = static_cast<float>(s);
    }
  return c;
}

inline std::vector<float> layernormReference(const std::vector<float> &x,
                                             const std::vector<float> &w,
                                             const std::vector<float> &b,
                                             int64_t M, int64_t N, double eps) {
  std::vector<float> y(x.size());
  for (int64_t m = 0; m < M; ++m) {
    double mean = 0, var = 0;
    for (int64_t n = 0; n < N; ++n)
      mean += x[m * N + n];
    mean /= N;
    for (int64_t n = 0; n < N; ++n)
      var += (x[m * N + n] - mean) * (x[m * N + n] - mean);
    var /= N;
    for (int64_t n = 0; n < N; ++n)
      y[m * N + n] = static_cast<float>((x[m * N + n] - mean) /
                                            std::sqrt(var + eps) * w[n] +
                                        b[n]);
  }
  return y;
}

/// softmax(Q K^T / sqrt(D)) V for Q[B, S, D], K/V[B, T, D].
inline std::vector<float> attentionReference(const std::vector<float> &q,
                                             const std::vector<float> &k,
                                             const std::vector<float> &v,
                                             int64_t B, int64_t S, int64_t T,
                                             int64_t D) {
  std::vector<float> o(B * S * D);
  std::vector<double> scores(T);
  double scale = 1.0 / std::sqrt(static_cast<double>(D));
  for (int64_t b = 0; b < B; ++b)
    for (int64_t s = 0; s < S; ++s) {
      double mx = -INFINITY, sum = 0;
      for (int64_t t = 0; t < T; ++t) {
        double dot = 0;
        for (int64_t d = 0; d < D; ++d)
          dot += static_cast<double>(q[(b * S + s) * D + d]) * k[(b * T + t) * D + d];
        scores[t] = dot * scale;
        mx = std::max(mx, scores[t]);
      }
      for (int64_t t = 0; t < T; ++t) {
        scores[t] = std::exp(scores[t] - mx);
        sum += scores[t];
      }
      for (int64_t d = 0; d < D; ++d) {
        double acc = 0;
        for (int64_t t = 0; t < T; ++t)
          acc += scores[t] * v[(b * T + t) * D + d];
        o[(b * S + s) * D + d] = static_cast<float>(acc / sum);
      }
    }
  return o;
}

} // namespace turbine::examples

#endif // TURBINE_EXAMPLES_KERNELS_REFERENCES_H
