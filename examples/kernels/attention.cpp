//===- attention.cpp - Fused (flash) attention in the kernel language -----===//
//
// Usage: kernels_attention [B S T D] [--print]
// Tiles BLOCK_M = BLOCK_N = 16 (S and T need not be multiples).
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
  int64_t B = 2, S = 37, T = 45, D = 16;
  bool print = argc > 1 && std::strcmp(argv[argc - 1], "--print") == 0;
  if (print)
    --argc;
  if (argc == 5) {
    B = std::atoll(argv[1]);
    S = std::atoll(argv[2]);
    T = std::atoll(argv[3]);
    D = std::atoll(argv[4]);
  }
  Result<Kernel> kernel = attentionKernel();
  if (!kernel.ok()) {
    std::fprintf(stderr, "%s\n", kernel.message().c_str());
    return 1;
  }
  if (print)
    std::printf("%s", kernel->print().c_str());
  std::vector<float> q = randomValues(B * S * D, 1), k = randomValues(B * T * D, 2),
                     v = randomValues(B * T * D, 3);
  auto tq = f32Tensor(q, {B, S, D}), tk = f32Tensor(k, {B, T, D}),
       tv = f32Tensor(v, {B, T, D});
  auto to = f32Zeros({B, S, D});
  Bindings tiles = {{"BLOCK_M", 16}, {"BLOCK_N", 16}};
  Status status;
  double us = microsPerCall(
      [&] { status = interpret(*kernel, {tq, tk, tv, to}, tiles); }, 3);
  if (!status.ok()) {
    std::fprintf(stderr, "%s\n", status.message().c_str());
    return 1;
  }
  double err = maxAbsError(valuesOf(to), attentionReference(q, k, v, B, S, T, D));
  std::printf("attention B=%lld S=%lld T=%lld D=%lld tiles 16x16\n",
              (long long)B, (long long)S, (long long)T, (long long)D);
  std::printf("  interpreter: max error %.3g vs C++ reference, %.1f us/call\n",
              err, us);
  auto compiled = f32Zeros({B, S, D});
  double firstMs = 0, launchUs = 0;
  status = runCompiled([&] { return launch(*kernel, {tq, tk, tv, compiled}, tiles); },
                       20, firstMs, launchUs);
  if (!status.ok()) {
    std::fprintf(stderr, "%s\n", status.message().c_str());
    return 1;
  }
  double cerr = maxAbsError(valuesOf(compiled), attentionReference(q, k, v, B, S, T, D));
  double vsInterp = maxAbsError(valuesOf(compiled), valuesOf(to));
  std::printf("  compiled:    max error %.3g vs C++ reference (%.3g vs interpreter), "
              "first launch %.1f ms, %.1f us/call\n", cerr, vsInterp, firstMs, launchUs);
  return err <= 1e-5 && cerr <= 1e-5 ? 0 : 1;
}
