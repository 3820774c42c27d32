//===- AttentionOps.cpp - aten::_native_multi_head_attention -------------===//
//
// nn.MultiheadAttention's fast path, which a module traced under no_grad in
// eval mode records: the packed input projection split into q/k/v (the
// constant weight rows rearranged at import time), scaled dot-product
// attention per head, the output projection. need_weights=True and masks
// are refused.
//===----------------------------------------------------------------------===//
#include "ImportContext.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"

#include <cmath>
#include <cstring>

using namespace mlir;

namespace turbine::torch_frontend {
namespace {

/// Rows [first, first + count) of a constant 2-D weight, transposed to
/// [cols, count] (null when the input is not such a constant).
Value constantRowsTransposed(ImportContext &ctx, const TValue &w, int64_t first, int64_t count) {
  if (!w.isTensor() || !w.constant || w.constant->shape.size() != 2)
    return nullptr;
  const TorchConstant &c = *w.constant;
  Type et = elementTypeOf(ctx.context, c.dtype);
  if (!et || !isa<FloatType>(et) || first + count > c.shape[0])
    return nullptr;
  int64_t cols = c.shape[1];
  size_t width = et.getIntOrFloatBitWidth() / 8;
  std::vector<char> out(count * cols * width);
  for (int64_t r = 0; r < count; ++r)
    for (int64_t col = 0; col < cols; ++col)
      std::memcpy(&out[(col * count + r) * width], &c.data[((first + r) * cols + col) * width], width);
  auto type = RankedTensorType::get({cols, count}, et);
  auto op = arith::ConstantOp::create(ctx.builder, ctx.loc,
                                      DenseElementsAttr::getFromRawBuffer(type, ArrayRef<char>(out.data(), out.size())));
  if (!c.name.empty())
    ctx.nameParameter(op, count == c.shape[0] ? c.name + ".T"
                                              : c.name + "[" + std::to_string(first) + ":" +
                                                    std::to_string(first + count) + "].T");
  return op;
}

/// Elements [first, first + count) of a constant 1-D tensor (null otherwise).
Value constantSlice1D(ImportContext &ctx, const TValue &b, int64_t first, int64_t count) {
  if (!b.isTensor() || !b.constant || b.constant->shape.size() != 1)
    return nullptr;
  const TorchConstant &c = *b.constant;
  Type et = elementTypeOf(ctx.context, c.dtype);
  if (!et || !isa<FloatType>(et) || first + count > c.shape[0])
    return nullptr;
  size_t width = et.getIntOrFloatBitWidth() / 8;
  auto type = RankedTensorType::get({count}, et);
  return arith::ConstantOp::create(
      ctx.builder, ctx.loc,
      DenseElementsAttr::getFromRawBuffer(type, ArrayRef<char>(c.data.data() + first * width, count * width)));
}

/// aten::_native_multi_head_attention (nn.MultiheadAttention's inference fast
/// path, batch-first): in-projection, per-head softmax(q k^T / sqrt(d)) v,
/// out-projection; constant weights, no mask.
LogicalResult convertNativeMha(ImportContext &ctx, const TorchNode &node) {
  auto q = ctx.tensorInput(node, 0), k = ctx.tensorInput(node, 1), v = ctx.tensorInput(node, 2);
  auto embed = ctx.intInput(node, 3), heads = ctx.intInput(node, 4);
  if (failed(q) || failed(k) || failed(v) || failed(embed) || failed(heads))
    return failure();
  if (!ctx.isNoneInput(node, 9))
    return ctx.unsupported(node, "an attention mask");
  int64_t e = *embed, h = *heads;
  if (h <= 0 || e % h != 0)
    return ctx.fail(node, "embed_dim must be a multiple of num_heads");
  for (Value t : {*q, *k, *v})
    if (tensorType(t).getRank() != 3)
      return ctx.unsupported(node, "only batched (3-D, batch-first) inputs");
  Type et = tensorType(*q).getElementType();
  const TValue &w = ctx.input(node, 5), &bias = ctx.input(node, 6);
  Value projected[3];
  Value inputs[3] = {*q, *k, *v};
  for (int i = 0; i < 3; ++i) {
    Value wT = constantRowsTransposed(ctx, w, i * e, e);
    Value b = constantSlice1D(ctx, bias, i * e, e);
    if (!wT || !b)
      return ctx.unsupported(node, "in-projection weights that are not constants");
    auto withBias = addBias(ctx, node, matmulLastDim(ctx, inputs[i], wT), b);
    if (failed(withBias))
      return failure();
    // [B, L, E] -> [B, L, H, D] -> [B, H, L, D]
    Value x = *withBias;
    Value split = ctx.reshape(x, {ctx.dim(x, 0), ctx.dim(x, 1), ctx.builder.getIndexAttr(h),
                                  ctx.builder.getIndexAttr(e / h)});
    projected[i] = ctx.transpose(split, {0, 2, 1, 3});
  }
  // softmax(q kᵀ · scale) v, in the form `torch.softmax(q @ k.transpose(2, 3)
  // * scale, -1) @ v` imports to, which turbine-fuse-attention makes one
  // attention dispatch.
  double scale = 1.0 / std::sqrt((double)(e / h));
  Value kT = ctx.transpose(projected[1], {0, 1, 3, 2});
  auto product = matmulValues(ctx, node, projected[0], kT); // [B, H, L, S]
  if (failed(product))
    return failure();
  auto scores = ctx.elementwiseTensors(node, ValueRange{*product}, et, [&](OpBuilder &b, Location l, ValueRange a) -> Value {
    return arith::MulFOp::create(b, l, a[0], arith::ConstantOp::create(b, l, b.getFloatAttr(et, scale)));
  });
  if (failed(scores))
    return failure();
  Value probs = softmaxOver(ctx, *scores, 3, /*isLog=*/false);
  auto attn = matmulValues(ctx, node, probs, projected[2]); // [B, H, L, D]
  if (failed(attn))
    return failure();
  Value merged = ctx.transpose(*attn, {0, 2, 1, 3});
  merged = ctx.reshape(merged, {ctx.dim(merged, 0), ctx.dim(merged, 1), ctx.builder.getIndexAttr(e)});
  Value pT = constantRowsTransposed(ctx, ctx.input(node, 7), 0, e);
  Value pb = constantSlice1D(ctx, ctx.input(node, 8), 0, e);
  if (!pT || !pb)
    return ctx.unsupported(node, "out-projection weights that are not constants");
  auto out = addBias(ctx, node, matmulLastDim(ctx, merged, pT), pb);
  if (failed(out))
    return failure();
  ctx.setTensor(node, 0, *out);
  bool needWeights = !ctx.isNoneInput(node, 10) && succeeded(ctx.boolInput(node, 10)) && *ctx.boolInput(node, 10);
  if (node.outputs.size() > 1) {
    if (needWeights)
      return ctx.unsupported(node, "need_weights=True");
    ctx.set(node.outputs[1], TValue::none());
  }
  return success();
}

} // namespace

void registerAttentionOps(OpRegistry &r) {
  r.add("aten::_native_multi_head_attention", convertNativeMha);
}

} // namespace turbine::torch_frontend
