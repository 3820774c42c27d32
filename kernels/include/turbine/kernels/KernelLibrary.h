//===- KernelLibrary.h - Standard kernels written in the kernel language ---===//
//
// Row softmax, GEMM, layernorm and fused attention. Each function traces one
// kernel; tile sizes are symbols bound at specialization. The examples
// (examples/kernels), the tests (tests/unit/kernels) and the PyTorch ops
// (torch.ops.turbine.*, python/extension/KernelOps.cpp) all use these
// definitions, so what is shown is what is tested and shipped.
//===----------------------------------------------------------------------===//
#ifndef TURBINE_KERNELS_KERNELLIBRARY_H
#define TURBINE_KERNELS_KERNELLIBRARY_H

#include "turbine/kernels/Language.h"

#include <cmath>

namespace turbine::kernels::library {
using namespace turbine::kernels;

/// Row softmax: one workgroup per row; BLOCK_N >= N (masked tail).
inline Result<Kernel> softmaxKernel() {
  Symbol M("M"), N("N"), BLOCK_N("BLOCK_N");
  return trace("softmax", {M}, [&](KernelBuilder &k) {
    Buffer input = k.input("input", {M, N}, f32);
    Buffer output = k.output("output", {M, N}, f32);
    Expr row = program_id(0);
    Tile x = load(input, {row, 0}, {1, BLOCK_N}, masked(-INFINITY));
    Tile numerator = exp2((x - max(x)) * M_LOG2E);
    store(output, {row, 0}, numerator / sum(numerator), masked());
  });
}

/// C = A x B with BLOCK_M x BLOCK_N output tiles, a loop over K carrying the
/// accumulator (f32), inputs of dtype `ab`.
inline Result<Kernel> gemmKernel(DType ab = f32) {
  Symbol M("M"), N("N"), K("K");
  Symbol BLOCK_M("BLOCK_M"), BLOCK_N("BLOCK_N"), BLOCK_K("BLOCK_K");
  return trace("gemm", {ceildiv(M, BLOCK_M), ceildiv(N, BLOCK_N)},
               [&](KernelBuilder &k) {
    Buffer a = k.input("a", {M, K}, ab);
    Buffer b = k.input("b", {K, N}, ab);
    Buffer c = k.output("c", {M, N}, f32);
    Expr m = program_id(0) * BLOCK_M, n = program_id(1) * BLOCK_N;
    auto [acc] = for_loop(0, ceildiv(K, BLOCK_K),
                          {constant(0.0, {BLOCK_M, BLOCK_N}, f32)},
                          [&](Expr kk, Tile &acc) {
      Tile ta = load(a, {m, kk * BLOCK_K}, {BLOCK_M, BLOCK_K}, masked());
      Tile tb = load(b, {kk * BLOCK_K, n}, {BLOCK_K, BLOCK_N}, masked());
      acc = dot(ta, tb, acc);
    });
    store(c, {m, n}, acc, masked());
  });
}

/// y = (x - mean) / sqrt(var + eps) * weight + bias per row; BLOCK_N >= N.
inline Result<Kernel> layernormKernel(double eps = 1e-5) {
  Symbol M("M"), N("N"), BLOCK_N("BLOCK_N");
  return trace("layernorm", {M}, [&](KernelBuilder &k) {
    Buffer input = k.input("input", {M, N}, f32);
    Buffer weight = k.input("weight", {N}, f32);
    Buffer bias = k.input("bias", {N}, f32);
    Buffer output = k.output("output", {M, N}, f32);
    Expr row = program_id(0);
    Tile x = load(input, {row, 0}, {1, BLOCK_N}, masked());
    Tile w = reshape(load(weight, {0}, {BLOCK_N}, masked()), {1, BLOCK_N});
    Tile b = reshape(load(bias, {0}, {BLOCK_N}, masked()), {1, BLOCK_N});
    Tile mean = sum(x) / N;
    Tile centered = select(iota({1, BLOCK_N}, 1) < N, x - mean, 0.0);
    Tile variance = sum(centered * centered) / N;
    store(output, {row, 0}, centered * rsqrt(variance + eps) * w + b, masked());
  });
}

/// Fused attention O = softmax(Q K^T / sqrt(D)) V for Q[B, S, D],
/// K/V[B, T, D]: one pass over K/V in BLOCK_N steps carrying the running
/// max, the running sum and the rescaled accumulator (flash attention).
inline Result<Kernel> attentionKernel() {
  Symbol B("B"), S("S"), T("T"), D("D"), BLOCK_M("BLOCK_M"), BLOCK_N("BLOCK_N");
  return trace("attention", {ceildiv(S, BLOCK_M), B}, [&](KernelBuilder &k) {
    Buffer q = k.input("q", {B, S, D}, f32);
    Buffer kk = k.input("k", {B, T, D}, f32);
    Buffer v = k.input("v", {B, T, D}, f32);
    Buffer o = k.output("o", {B, S, D}, f32);
    Expr batch = program_id(1), m = program_id(0) * BLOCK_M;
    Tile qt = reshape(load(q, {batch, m, 0}, {1, BLOCK_M, D}, masked()),
                      {BLOCK_M, D}) * rsqrt(constant(D, f32));
    auto [rowMax, rowSum, acc] = for_loop(
        0, ceildiv(T, BLOCK_N),
        {constant(-INFINITY, {BLOCK_M, 1}, f32),
         constant(0.0, {BLOCK_M, 1}, f32), constant(0.0, {BLOCK_M, D}, f32)},
        [&](Expr j, Tile &rowMax, Tile &rowSum, Tile &acc) {
          Expr n = j * BLOCK_N;
          Tile kt = reshape(load(kk, {batch, n, 0}, {1, BLOCK_N, D}, masked()), {BLOCK_N, D});
          Tile vt = reshape(load(v, {batch, n, 0}, {1, BLOCK_N, D}, masked()), {BLOCK_N, D});
          Tile s = dot(qt, transpose(kt), constant(0.0, {BLOCK_M, BLOCK_N}, f32));
          s = select(iota({BLOCK_M, BLOCK_N}, 1) + n < T, s, -INFINITY);
          Tile newMax = maximum(rowMax, max(s));
          Tile p = exp(s - newMax);
          Tile rescale = exp(rowMax - newMax);
          rowSum = rowSum * rescale + sum(p);
          acc = dot(p, vt, acc * rescale);
          rowMax = newMax;
        });
    store(o, {batch, m, 0}, reshape(acc / rowSum, {1, BLOCK_M, D}), masked());
  });
}

} // namespace turbine::kernels::library

#endif // TURBINE_KERNELS_KERNELLIBRARY_H
