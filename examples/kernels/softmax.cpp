//===- softmax.cpp - Row softmax in the kernel language -------------------===//
//
// Usage: kernels_softmax [M N] [--print]
// Traces the kernel, runs it with the interpreter, compares with a plain C++
// softmax and prints the max error and the time per call.
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
  int64_t M = 37, N = 100;
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
  Result<Kernel> kernel = softmaxKernel();
  if (!kernel.ok()) {
    std::fprintf(stderr, "%s\n", kernel.message().c_str());
    return 1;
  }
  if (print)
    std::printf("%s", kernel->print().c_str());
  std::vector<float> x = randomValues(M * N, 1, -4.0f, 4.0f);
  auto input = f32Tensor(x, {M, N});
  auto output = f32Zeros({M, N});
  Bindings symbols = {{"BLOCK_N", blockN}};
  Status status;
  double us = microsPerCall(
      [&] { status = interpret(*kernel, {input, output}, symbols); }, 3);
  if (!status.ok()) {
    std::fprintf(stderr, "%s\n", status.message().c_str());
    return 1;
  }
  double err = maxAbsError(valuesOf(output), softmaxReference(x, M, N));
  std::printf("softmax M=%lld N=%lld BLOCK_N=%lld\n", (long long)M,
              (long long)N, (long long)blockN);
  std::printf("  interpreter: max error %.3g vs C++ reference, %.1f us/call\n",
              err, us);
  auto compiled = f32Zeros({M, N});
  double firstMs = 0, launchUs = 0;
  status = runCompiled([&] { return launch(*kernel, {input, compiled}, symbols); },
                       20, firstMs, launchUs);
  if (!status.ok()) {
    std::fprintf(stderr, "%s\n", status.message().c_str());
    return 1;
  }
  double cerr = maxAbsError(valuesOf(compiled), softmaxReference(x, M, N));
  double vsInterp = maxAbsError(valuesOf(compiled), valuesOf(output));
  std::printf("  compiled:    max error %.3g vs C++ reference (%.3g vs interpreter), "
              "first launch %.1f ms, %.1f us/call\n", cerr, vsInterp, firstMs, launchUs);
  return err <= 1e-6 && cerr <= 1e-6 ? 0 : 1;
}
