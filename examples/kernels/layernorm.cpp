//===- layernorm.cpp - Row layer normalization in the kernel language -----===//
//
// Usage: kernels_layernorm [M N] [--print]
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
  int64_t M = 33, N = 77;
  bool print = argc > 1 && std::strcmp(argv[argc - 1], "--print") == 0;
  if (print)
    --argc;
  if (argc == 3) {
    M = std::atoll(argv[1]);
    N = std::atoll(argv[2]);
  }
  int64_t blockN = 1;
  while (blockN < N)
    blockN *= 2;
  Result<Kernel> kernel = layernormKernel(1e-5);
  if (!kernel.ok()) {
    std::fprintf(stderr, "%s\n", kernel.message().c_str());
    return 1;
  }
  if (print)
    std::printf("%s", kernel->print().c_str());
  std::vector<float> x = randomValues(M * N, 1, -3.0f, 5.0f);
  std::vector<float> w = randomValues(N, 2), b = randomValues(N, 3);
  auto tx = f32Tensor(x, {M, N}), tw = f32Tensor(w, {N}), tb = f32Tensor(b, {N});
  auto ty = f32Zeros({M, N});
  Status status;
  double us = microsPerCall(
      [&] {
        status = interpret(*kernel, {tx, tw, tb, ty}, {{"BLOCK_N", blockN}});
      },
      3);
  if (!status.ok()) {
    std::fprintf(stderr, "%s\n", status.message().c_str());
    return 1;
  }
  double err = maxAbsError(valuesOf(ty), layernormReference(x, w, b, M, N, 1e-5));
  std::printf("layernorm M=%lld N=%lld BLOCK_N=%lld\n", (long long)M,
              (long long)N, (long long)blockN);
  std::printf("  interpreter: max error %.3g vs C++ reference, %.1f us/call\n",
              err, us);
  auto compiled = f32Zeros({M, N});
  double firstMs = 0, launchUs = 0;
  status = runCompiled([&] { return launch(*kernel, {tx, tw, tb, compiled}, {{"BLOCK_N", blockN}}); },
                       20, firstMs, launchUs);
  if (!status.ok()) {
    std::fprintf(stderr, "%s\n", status.message().c_str());
    return 1;
  }
  double cerr = maxAbsError(valuesOf(compiled), layernormReference(x, w, b, M, N, 1e-5));
  double vsInterp = maxAbsError(valuesOf(compiled), valuesOf(ty));
  std::printf("  compiled:    max error %.3g vs C++ reference (%.3g vs interpreter), "
              "first launch %.1f ms, %.1f us/call\n", cerr, vsInterp, firstMs, launchUs);
  return err <= 1e-5 && cerr <= 1e-5 ? 0 : 1;
}
