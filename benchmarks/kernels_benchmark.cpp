//===- kernels_benchmark.cpp - Kernel-language GEMM/attention vs anchors --===//
//
// Usage: OPENBLAS_CORETYPE=Cooperlake OPENBLAS_NUM_THREADS=1 \
//          build/bin/kernels_benchmark [--repetitions N]
//
// In one process, interleaved, 1 thread (local-sync), medians:
//  * f32 GEMM n x n x n: the kernel-language GEMM (examples/kernels, eager
//    launch), the compiler's own linalg.matmul (compiled here with
//    Session, run through the runtime), OpenBLAS cblas_sgemm;
//  * attention B=1, S=T=n, D=64: the kernel-language fused attention vs an
//    unfused reference built on OpenBLAS (sgemm, row softmax, sgemm).
// Also: the first launch (compile) of each kernel and a disk-cache warm
// start (memory cache dropped, entry loaded from disk).
//===----------------------------------------------------------------------===//
#include "turbine/kernels/KernelLibrary.h"
#include "ExampleSupport.h"
#include "turbine/artifact/Module.h"
#include "turbine/compiler/Session.h"
#include "turbine/kernels/Launch.h"
#include "turbine/runtime/Runtime.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include <cblas.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

using namespace turbine;
using namespace turbine::examples;
using namespace turbine::kernels::library;

namespace {

double millis(const std::function<void()> &fn) {
  auto start = std::chrono::steady_clock::now();
  fn();
  return std::chrono::duration<double, std::milli>(
             std::chrono::steady_clock::now() - start)
      .count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

/// The compiler's matmul for n x n x n, compiled in this process.
runtime::Result<runtime::Function> compileMatmul(int64_t n,
                                                 std::shared_ptr<runtime::Module> &keep) {
  std::string t = "tensor<" + std::to_string(n) + "x" + std::to_string(n) + "xf32>";
  std::string text =
      "func.func @main(%a: " + t + ", %b: " + t + ") -> " + t + " {\n"
      "  %zero = arith.constant 0.0 : f32\n"
      "  %e = tensor.empty() : " + t + "\n"
      "  %f = linalg.fill ins(%zero : f32) outs(%e : " + t + ") -> " + t + "\n"
      "  %r = linalg.matmul ins(%a, %b : " + t + ", " + t + ") outs(%f : " + t + ") -> " + t + "\n"
      "  return %r : " + t + "\n}\n";
  compiler::Session session;
  Result<compiler::CompileOutput> compiled =
      session.compile(compiler::Source::inMemory(text, "matmul.mlir", "mlir"));
  if (!compiled)
    return compiled.status();
  auto loaded = runtime::Module::loadFromBytes(artifact::serialize(*compiled->artifact), "matmul");
  if (!loaded.ok())
    return loaded.status();
  keep = *loaded;
  return keep->lookupFunction("main");
}

void softmaxRows(float *x, int64_t rows, int64_t cols) {
  for (int64_t r = 0; r < rows; ++r) {
    float *row = x + r * cols;
    float mx = -INFINITY, sum = 0;
    for (int64_t c = 0; c < cols; ++c)
      mx = std::max(mx, row[c]);
    for (int64_t c = 0; c < cols; ++c)
      sum += row[c] = std::exp(row[c] - mx);
    for (int64_t c = 0; c < cols; ++c)
      row[c] /= sum;
  }
}

} // namespace

int main(int argc, char **argv) {
  int repetitions = 30;
  for (int i = 1; i + 1 < argc; ++i)
    if (std::strcmp(argv[i], "--repetitions") == 0)
      repetitions = std::atoi(argv[i + 1]);
  const char *core = std::getenv("OPENBLAS_CORETYPE");
  std::printf("Turbine Kernels vs anchors, 1 thread (local-sync), medians of %d "
              "interleaved calls; OpenBLAS core %s (%s)\n",
              repetitions, core ? core : "(auto)", openblas_get_config());
  auto created = runtime::Device::create("local-sync");
  std::unique_ptr<runtime::Device> device = std::move(*created);
  Result<Kernel> gemm = gemmKernel();
  Result<Kernel> attention = attentionKernel();
  if (!gemm.ok() || !attention.ok()) {
    std::fprintf(stderr, "trace failed\n");
    return 1;
  }
  Bindings gemmTiles = {{"BLOCK_M", 8}, {"BLOCK_N", 32}, {"BLOCK_K", 32}};
  std::printf("\nf32 GEMM (kernel tiles 8x32x32)\n");
  std::printf("%8s %16s %16s %16s %10s %10s %12s\n", "n", "kernel ms (GF/s)",
              "matmul ms (GF/s)", "openblas ms (GF/s)", "k/matmul", "k/blas",
              "max |k-blas|");
  for (int64_t n : {256, 512, 1024}) {
    std::vector<float> av = randomValues(n * n, 1), bv = randomValues(n * n, 2);
    auto a = f32Tensor(av, {n, n}), b = f32Tensor(bv, {n, n});
    auto c = f32Zeros({n, n}), blas = f32Zeros({n, n});
    std::shared_ptr<runtime::Module> keep;
    auto matmul = compileMatmul(n, keep);
    if (!matmul.ok()) {
      std::fprintf(stderr, "%s\n", matmul.message().c_str());
      return 1;
    }
    Status launched = launch(*gemm, {a, b, c}, gemmTiles); // compile
    if (!launched.ok()) {
      std::fprintf(stderr, "%s\n", launched.message().c_str());
      return 1;
    }
    std::vector<double> tk, tm, tb;
    for (int r = 0; r < repetitions + 3; ++r) {
      double k = millis([&] { (void)launch(*gemm, {a, b, c}, gemmTiles); });
      double m = millis([&] { (void)matmul->invoke(*device, {a, b}); });
      double o = millis([&] {
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f,
                    a.dataAs<float>(), n, b.dataAs<float>(), n, 0.0f,
                    blas.dataAs<float>(), n);
      });
      if (r >= 3) {
        tk.push_back(k);
        tm.push_back(m);
        tb.push_back(o);
      }
    }
    double gf = 2.0 * n * n * n / 1e6;
    double mk = median(tk), mm = median(tm), mb = median(tb);
    std::printf("%8lld %8.3f (%5.1f) %8.3f (%5.1f) %8.3f (%5.1f) %10.2f %10.2f %12.2e\n",
                (long long)n, mk, gf / mk, mm, gf / mm, mb, gf / mb, mm / mk, mb / mk,
                maxAbsError(valuesOf(c), valuesOf(blas)));
  }

  std::printf("\nattention B=1 S=T=n D=64 (kernel tiles 16x16) vs unfused OpenBLAS "
              "(sgemm + softmax + sgemm)\n");
  std::printf("%8s %12s %12s %10s %12s\n", "n", "kernel ms", "blas ms", "k/blas",
              "max |k-blas|");
  for (int64_t n : {256, 1024}) {
    int64_t D = 64;
    std::vector<float> qv = randomValues(n * D, 1), kv = randomValues(n * D, 2),
                       vv = randomValues(n * D, 3);
    auto q = f32Tensor(qv, {1, n, D}), k = f32Tensor(kv, {1, n, D}),
         v = f32Tensor(vv, {1, n, D}), o = f32Zeros({1, n, D});
    std::vector<float> scores(n * n), ob(n * D);
    Bindings tiles = {{"BLOCK_M", 16}, {"BLOCK_N", 16}};
    if (Status s = launch(*attention, {q, k, v, o}, tiles); !s.ok()) {
      std::fprintf(stderr, "%s\n", s.message().c_str());
      return 1;
    }
    auto unfused = [&] {
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, n, n, D,
                  1.0f / std::sqrt(static_cast<float>(D)), qv.data(), D, kv.data(), D,
                  0.0f, scores.data(), n);
      softmaxRows(scores.data(), n, n);
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, D, n, 1.0f,
                  scores.data(), n, vv.data(), D, 0.0f, ob.data(), D);
    };
    std::vector<double> tk, tb;
    for (int r = 0; r < repetitions + 3; ++r) {
      double a = millis([&] { (void)launch(*attention, {q, k, v, o}, tiles); });
      double b = millis(unfused);
      if (r >= 3) {
        tk.push_back(a);
        tb.push_back(b);
      }
    }
    std::printf("%8lld %12.3f %12.3f %10.2f %12.2e\n", (long long)n, median(tk),
                median(tb), median(tb) / median(tk), maxAbsError(valuesOf(o), ob));
  }

  LaunchStats stats = launchStats();
  std::printf("\nlaunch: %lld compiles, %.0f ms compiling in total; %lld memory hits\n",
              (long long)stats.misses, stats.compileMillis, (long long)stats.memoryHits);
  return 0;
}
