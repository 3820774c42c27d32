//===- CpuFeatures.h - Which x86 instructions the target CPU has ----------===//
//
// The kernel strategies choose instructions by the CPU the artifact is
// compiled for (CompileOptions::targetCpu, `--target-cpu`): "host" is this
// machine's CPU and its features as LLVM detects them, any other name an
// LLVM CPU (znver4, skylake-avx512, x86-64-v3, ...) with that CPU's
// features, "" (the CUDA target's host-side codegen, lit tests that do not
// say) none of the optional ones: the generic vector code every target has.
//===----------------------------------------------------------------------===//
#ifndef TURBINE_COMPILER_CPU_CPUFEATURES_H
#define TURBINE_COMPILER_CPU_CPUFEATURES_H

#include "llvm/ADT/StringRef.h"

#include <cstdint>

namespace turbine::artifact {
struct Module;
} // namespace turbine::artifact

namespace turbine::compiler {

struct CpuFeatures {
  /// The vector registers the register tiles are sized for: 32 of 512 bits
  /// with AVX512F, 16 of 256 bits with AVX, 16 of 128 bits (SSE) otherwise.
  int64_t vectorBits = 128;
  int64_t vectorRegisters = 16;
  /// AVX512F (vpermps over 16 lanes: GGUF Q4_0 nibbles to f32 by table).
  bool avx512f = false;
  /// AVX512-VNNI (vpdpbusd): int4 and GGUF Q8_0 / Q4_0 GEMVs on
  /// int8-rounded activations (with --quantized-matmul-activations=int8).
  bool avx512vnni = false;
  /// AVX2 (vpmaddubsw + vpmaddwd): the same GEMVs' byte dot products on a
  /// CPU without AVX512-VNNI, in 16-bit pair sums (ByteDot,
  /// CodegenStrategies.h).
  bool avx2 = false;
  /// AVX512-BF16 (vdpbf16ps).
  bool avx512bf16 = false;
};

/// The features of `targetCpu` ("host", an LLVM CPU name, or "" for none:
/// x86-64's SSE registers). An unknown CPU name has none of them (LLVM
/// rejects it later, at link). Answers are kept per name (the strategies
/// ask once per kernel).
CpuFeatures cpuFeatures(llvm::StringRef targetCpu);

/// Records in `out` the CPU `targetCpu` names (this machine's for "host" or
/// "", as EmitLibrary compiles for) and which extensions of
/// artifact/CpuFeatures.h it has: the kernels may use any of them, and the
/// runtime checks the loading CPU for each.
void recordTargetCpu(llvm::StringRef targetCpu, artifact::Module &out);

/// Registers the native LLVM target and its asm printer, once per process.
/// LLVM's target registry may not be written while another thread reads it
/// (llvm/MC/TargetRegistry.h); the codegen passes look CPUs up on the
/// context's worker threads and sessions may run on several threads, so
/// every registration goes through here (a function-local static: the first
/// caller registers, concurrent callers wait for it).
void initializeNativeTarget();

} // namespace turbine::compiler

#endif // TURBINE_COMPILER_CPU_CPUFEATURES_H
