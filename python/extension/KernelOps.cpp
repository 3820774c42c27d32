//===- KernelOps.cpp - Turbine Kernels as eager torch ops -----------------===//
//
// The standard kernels of the kernel language (turbine/kernels/
// KernelLibrary.h) as torch operators, compiled for each new specialization
// on first call and cached (in memory and on disk; kernels/ Launch.h):
//   torch.ops.turbine.softmax(x: [M, N] f32) -> [M, N]           (rows)
//   torch.ops.turbine.layer_norm(x: [M, N], weight: [N], bias: [N], eps) -> [M, N]
//   torch.ops.turbine.matmul(a: [M, K], b: [K, N]) -> [M, N]     (f32 or f16 in, f32 out)
//   torch.ops.turbine.attention(q: [B, S, D], k: [B, T, D], v: [B, T, D]) -> [B, S, D]
// CPU tensors; misuse (rank, dtype, shapes) raises RuntimeError naming the op.
//===----------------------------------------------------------------------===//
#include "TensorInterop.h"

#include "turbine/kernels/KernelLibrary.h"
#include "turbine/kernels/Launch.h"

#include <torch/library.h>
#include <torch/types.h>

#include <map>
#include <mutex>

namespace turbine::torch_ext {
namespace {

using kernels::Bindings;
using kernels::Kernel;

/// Traces a library kernel once per process (keyed by name and variant).
const Kernel &cachedKernel(const std::string &key,
                           const std::function<kernels::Result<Kernel>()> &trace) {
  static std::mutex mutex;
  static std::map<std::string, Kernel> traced;
  std::lock_guard<std::mutex> lock(mutex);
  auto it = traced.find(key);
  if (it == traced.end()) {
    kernels::Result<Kernel> kernel = trace();
    TORCH_CHECK(kernel.ok(), "turbine: cannot trace kernel '", key, "': ", kernel.message());
    it = traced.emplace(key, std::move(*kernel)).first;
  }
  return it->second;
}

void check(const at::Tensor &t, const char *op, const char *name, int64_t rank) {
  TORCH_CHECK(t.dim() == rank, "turbine.", op, ": ", name, " must have rank ", rank, ", got ",
              t.dim());
  TORCH_CHECK(t.scalar_type() == at::kFloat, "turbine.", op, ": ", name,
              " must be float32, got ", c10::toString(t.scalar_type()));
}

int64_t nextPowerOfTwo(int64_t n) {
  int64_t p = 1;
  while (p < n)
    p *= 2;
  return p;
}

void run(const char *op, const Kernel &kernel, const std::vector<at::Tensor> &buffers,
         const Bindings &symbols) {
  std::vector<runtime::Tensor> views;
  for (const at::Tensor &t : buffers)
    views.push_back(toRuntimeTensor(t, std::string("turbine.") + op));
  kernels::Status status = kernels::launch(kernel, views, symbols);
  TORCH_CHECK(status.ok(), "turbine.", op, ": ", status.message());
}

at::Tensor softmax(const at::Tensor &x) {
  check(x, "softmax", "x", 2);
  at::Tensor in = x.contiguous();
  at::Tensor out = at::empty_like(in);
  run("softmax", cachedKernel("softmax", kernels::library::softmaxKernel), {in, out},
      {{"BLOCK_N", nextPowerOfTwo(in.size(1))}});
  return out;
}

at::Tensor layerNorm(const at::Tensor &x, const at::Tensor &weight, const at::Tensor &bias,
                     double eps) {
  check(x, "layer_norm", "x", 2);
  check(weight, "layer_norm", "weight", 1);
  check(bias, "layer_norm", "bias", 1);
  TORCH_CHECK(weight.size(0) == x.size(1) && bias.size(0) == x.size(1),
              "turbine.layer_norm: weight and bias must have x.size(1) = ", x.size(1),
              " elements");
  at::Tensor in = x.contiguous();
  at::Tensor out = at::empty_like(in);
  // eps is a constant of the traced kernel: one trace per eps value.
  const Kernel &kernel = cachedKernel("layer_norm eps=" + std::to_string(eps),
                                      [&] { return kernels::library::layernormKernel(eps); });
  run("layer_norm", kernel, {in, weight.contiguous(), bias.contiguous(), out},
      {{"BLOCK_N", nextPowerOfTwo(in.size(1))}});
  return out;
}

at::Tensor matmul(const at::Tensor &a, const at::Tensor &b) {
  TORCH_CHECK(a.dim() == 2 && b.dim() == 2 && a.size(1) == b.size(0),
              "turbine.matmul: expected a [M, K] and b [K, N], got ", a.sizes(), " and ",
              b.sizes());
  TORCH_CHECK(a.scalar_type() == b.scalar_type() &&
                  (a.scalar_type() == at::kFloat || a.scalar_type() == at::kHalf),
              "turbine.matmul: a and b must both be float32 or both float16");
  bool half = a.scalar_type() == at::kHalf;
  const Kernel &kernel = cachedKernel(half ? "matmul f16" : "matmul f32", [&] {
    return kernels::library::gemmKernel(half ? kernels::f16 : kernels::f32);
  });
  at::Tensor out = at::empty({a.size(0), b.size(1)}, at::kFloat);
  run("matmul", kernel, {a.contiguous(), b.contiguous(), out},
      {{"BLOCK_M", 8}, {"BLOCK_N", 32}, {"BLOCK_K", 32}});
  return out;
}

at::Tensor attention(const at::Tensor &q, const at::Tensor &k, const at::Tensor &v) {
  check(q, "attention", "q", 3);
  check(k, "attention", "k", 3);
  check(v, "attention", "v", 3);
  TORCH_CHECK(k.sizes() == v.sizes() && q.size(0) == k.size(0) && q.size(2) == k.size(2),
              "turbine.attention: expected q [B, S, D], k and v [B, T, D], got ", q.sizes(),
              ", ", k.sizes(), ", ", v.sizes());
  at::Tensor out = at::empty_like(q.contiguous());
  run("attention", cachedKernel("attention", kernels::library::attentionKernel),
      {q.contiguous(), k.contiguous(), v.contiguous(), out}, {{"BLOCK_M", 16}, {"BLOCK_N", 16}});
  return out;
}

} // namespace
} // namespace turbine::torch_ext

TORCH_LIBRARY_FRAGMENT(turbine, m) {
  m.def("softmax(Tensor x) -> Tensor", &turbine::torch_ext::softmax);
  m.def("layer_norm(Tensor x, Tensor weight, Tensor bias, float eps=1e-05) -> Tensor",
        &turbine::torch_ext::layerNorm);
  m.def("matmul(Tensor a, Tensor b) -> Tensor", &turbine::torch_ext::matmul);
  m.def("attention(Tensor q, Tensor k, Tensor v) -> Tensor", &turbine::torch_ext::attention);
}
