//===- gemm.cpp - Tiled GEMM with a loop over K in the kernel language ----===//
//
// Usage: kernels_gemm [M N K [BLOCK_M BLOCK_N BLOCK_K]] [--print]
// Default tiles 16x16x16 (shapes need not be multiples). Runs the interpreter,
// compares with a plain C++ GEMM, prints the max error and time per call.
//===----------------------------------------------------------------------===//
#include "LaunchSupport.h"
#include "turbine/kernels/KernelLibrary.h"
#include "References.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>

using namespace turbine::examples;
using namespace turbine::kernels::library;

int main(int argc, char **argv) {
  int64_t M = 50, N = 40, K = 35;
  bool print = argc > 1 && std::strcmp(argv[argc - 1], "--print") == 0;
  if (print)
    --argc;
  int64_t bm = 16, bn = 16, bk = 16;
  if (argc == 4 || argc == 7) {
    M = std::atoll(argv[1]);
    N = std::atoll(argv[2]);
    K = std::atoll(argv[3]);
  }
  if (argc == 7) {
    bm = std::atoll(argv[4]);
    bn = std::atoll(argv[5]);
    bk = std::atoll(argv[6]);
  }
  Result<Kernel> kernel = gemmKernel();
  if (!kernel.ok()) {
    std::fprintf(stderr, "%s\n", kernel.message().c_str());
    return 1;
  }
  if (print)
    std::printf("%s", kernel->print().c_str());
  std::vector<float> a = randomValues(M * K, 1), b = randomValues(K * N, 2);
  auto ta = f32Tensor(a, {M, K}), tb = f32Tensor(b, {K, N});
  auto tc = f32Zeros({M, N});
  Bindings tiles = {{"BLOCK_M", bm}, {"BLOCK_N", bn}, {"BLOCK_K", bk}};
  Status status;
  double us = microsPerCall(
      [&] { status = interpret(*kernel, {ta, tb, tc}, tiles); }, 3);
  if (!status.ok()) {
    std::fprintf(stderr, "%s\n", status.message().c_str());
    return 1;
  }
  double err = maxAbsError(valuesOf(tc), gemmReference(a, b, M, N, K));
  std::printf("gemm M=%lld N=%lld K=%lld tiles %lldx%lldx%lld\n", (long long)M,
              (long long)N, (long long)K, (long long)bm, (long long)bn, (long long)bk);
  std::printf("  interpreter: max error %.3g vs C++ reference, %.1f us/call\n",
              err, us);
  auto compiled = f32Zeros({M, N});
  double firstMs = 0, launchUs = 0;
  status = runCompiled([&] { return launch(*kernel, {ta, tb, compiled}, tiles); },
                       20, firstMs, launchUs);
  if (!status.ok()) {
    std::fprintf(stderr, "%s\n", status.message().c_str());
    return 1;
  }
  double cerr = maxAbsError(valuesOf(compiled), gemmReference(a, b, M, N, K));
  double vsInterp = maxAbsError(valuesOf(compiled), valuesOf(tc));
  std::printf("  compiled:    max error %.3g vs C++ reference (%.3g vs interpreter), "
              "first launch %.1f ms, %.1f us/call\n", cerr, vsInterp, firstMs, launchUs);
  return err <= 1e-4 && cerr <= 1e-4 ? 0 : 1;
}
