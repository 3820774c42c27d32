//===- LibraryOps.cpp - The kernel library's kernels as named custom ops --===//
#include "turbine/kernels/LibraryOps.h"

#include "turbine/kernels/KernelLibrary.h"

#include <mutex>

namespace turbine::kernels {
namespace {

using Args = std::vector<BufferSignature>;

int64_t nextPowerOfTwo(int64_t n) {
  int64_t p = 1;
  while (p < n)
    p *= 2;
  return p;
}

std::string shapeText(const std::vector<int64_t> &shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

/// `name` must have `rank` dims and dtype `dtype`.
Status expect(const BufferSignature &arg, const char *name, size_t rank, DType dtype) {
  if (arg.shape.size() != rank)
    return Status::error(std::string(name) + " must have rank " + std::to_string(rank) +
                         ", got " + std::to_string(arg.shape.size()) + " (shape " +
                         shapeText(arg.shape) + ")");
  if (arg.dtype != dtype)
    return Status::error(std::string(name) + " must be " + std::string(dtypeName(dtype)) +
                         ", got " + std::string(dtypeName(arg.dtype)));
  return Status::success();
}

Status expectCount(const Args &args, size_t count, const char *signature) {
  if (args.size() != count)
    return Status::error("expects " + std::string(signature) + ", got " +
                         std::to_string(args.size()) + " tensor argument(s)");
  return Status::success();
}

Status selectSoftmax(const Args &args, CustomOpSelection &out) {
  if (Status s = expectCount(args, 1, "(x)"); !s.ok())
    return s;
  if (Status s = expect(args[0], "x", 2, f32); !s.ok())
    return s;
  out.results = {args[0]};
  out.symbols = {{"BLOCK_N", nextPowerOfTwo(args[0].shape[1])}};
  return Status::success();
}

Status selectLayerNorm(const Args &args, CustomOpSelection &out) {
  if (Status s = expectCount(args, 3, "(x, weight, bias)"); !s.ok())
    return s;
  for (auto [arg, name, rank] : {std::tuple{&args[0], "x", 2}, {&args[1], "weight", 1},
                                 {&args[2], "bias", 1}})
    if (Status s = expect(*arg, name, rank, f32); !s.ok())
      return s;
  int64_t n = args[0].shape[1];
  if (args[1].shape[0] != n || args[2].shape[0] != n)
    return Status::error("weight and bias must have x.size(1) = " + std::to_string(n) +
                         " elements, got " + shapeText(args[1].shape) + " and " +
                         shapeText(args[2].shape));
  auto eps = out.attributes.find("eps");
  if (eps == out.attributes.end())
    out.attributes["eps"] = 1e-5;
  else if (!(eps->second >= 0))
    return Status::error("eps must be >= 0, got " + std::to_string(eps->second));
  for (const auto &[name, value] : out.attributes)
    if (name != "eps")
      return Status::error("unknown attribute '" + name + "' (layer_norm takes eps)");
  out.results = {args[0]};
  out.symbols = {{"BLOCK_N", nextPowerOfTwo(n)}};
  return Status::success();
}

Status selectMatmul(const Args &args, CustomOpSelection &out) {
  if (Status s = expectCount(args, 2, "(a, b)"); !s.ok())
    return s;
  const BufferSignature &a = args[0], &b = args[1];
  if (a.shape.size() != 2 || b.shape.size() != 2 || a.shape[1] != b.shape[0])
    return Status::error("expected a [M, K] and b [K, N], got " + shapeText(a.shape) +
                         " and " + shapeText(b.shape));
  if (a.dtype != b.dtype || (a.dtype != f32 && a.dtype != f16))
    return Status::error("a and b must both be f32 or both f16, got " +
                         std::string(dtypeName(a.dtype)) + " and " +
                         std::string(dtypeName(b.dtype)));
  out.results = {{{a.shape[0], b.shape[1]}, f32}};
  out.symbols = {{"BLOCK_M", 8}, {"BLOCK_N", 32}, {"BLOCK_K", 32}};
  return Status::success();
}

Status selectAttention(const Args &args, CustomOpSelection &out) {
  if (Status s = expectCount(args, 3, "(q, k, v)"); !s.ok())
    return s;
  for (auto [arg, name] : {std::pair{&args[0], "q"}, {&args[1], "k"}, {&args[2], "v"}})
    if (Status s = expect(*arg, name, 3, f32); !s.ok())
      return s;
  const auto &q = args[0].shape, &k = args[1].shape, &v = args[2].shape;
  if (k != v || q[0] != k[0] || q[2] != k[2])
    return Status::error("expected q [B, S, D], k and v [B, T, D], got " + shapeText(q) + ", " +
                         shapeText(k) + ", " + shapeText(v));
  out.results = {args[0]};
  out.symbols = {{"BLOCK_M", 16}, {"BLOCK_N", 16}};
  return Status::success();
}

} // namespace

Status registerLibraryOps() {
  static Status status = [] {
    using namespace library;
    std::shared_ptr<const CustomOp> ops[] = {
        makeCustomOp("turbine.softmax", selectSoftmax,
                     [](const CustomOpSelection &) { return softmaxKernel(); }),
        makeCustomOp("turbine.layer_norm", selectLayerNorm,
                     [](const CustomOpSelection &s) {
                       return layernormKernel(s.attributes.at("eps"));
                     }),
        makeCustomOp("turbine.matmul", selectMatmul,
                     [](const CustomOpSelection &s) {
                       return gemmKernel(s.arguments.at(0).dtype);
                     }),
        makeCustomOp("turbine.attention", selectAttention,
                     [](const CustomOpSelection &) { return attentionKernel(); }),
    };
    for (auto &op : ops)
      if (Status s = registerCustomOp(op); !s.ok())
        return s;
    return Status::success();
  }();
  return status;
}

} // namespace turbine::kernels
