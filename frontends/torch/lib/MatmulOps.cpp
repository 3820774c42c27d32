//===- MatmulOps.cpp - aten linear, matmul family ------------------------===//
//
// aten::linear / addmm / mm / bmm / matmul (torch's broadcasting rules) / t
// as linalg.matmul / batch_matmul. Constant linear weights are transposed at
// import time so the matmul reads them in [K, N] order; such a weight is
// named `<state_dict key>.T` in the artifact (ImportContext::nameParameter).
//===----------------------------------------------------------------------===//
#include "ImportContext.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"

#include <cmath>
#include <cstring>

using namespace mlir;

namespace turbine::torch_frontend {
namespace {

Value zeroOf(ImportContext &ctx, Type t) { return ctx.scalarConstant(t, 0); }

/// W^T of a 2-D tensor input: transposed at import time when constant.
FailureOr<Value> transposedWeight(ImportContext &ctx, const TorchNode &node, size_t i) {
  TValue &w = ctx.input(node, i);
  if (w.isTensor() && !w.tensor && w.constant && w.constant->shape.size() == 2 &&
      w.constant->dtype != TorchDType::i1 && w.constant->dtype != TorchDType::unsupported) {
    const TorchConstant &c = *w.constant;
    int64_t rows = c.shape[0], cols = c.shape[1];
    Type et = elementTypeOf(ctx.context, c.dtype);
    size_t width = et.getIntOrFloatBitWidth() / 8;
    std::vector<char> out(c.data.size());
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t col = 0; col < cols; ++col)
        std::memcpy(&out[(col * rows + r) * width], &c.data[(r * cols + col) * width], width);
    auto type = RankedTensorType::get({cols, rows}, et);
    auto op = arith::ConstantOp::create(
        ctx.builder, ctx.loc, DenseElementsAttr::getFromRawBuffer(type, ArrayRef<char>(out.data(), out.size())));
    ctx.nameParameter(op, c.name.empty() ? "" : c.name + ".T");
    return (Value)op;
  }
  auto t = ctx.tensorInput(node, i);
  if (failed(t))
    return failure();
  if (tensorType(*t).getRank() != 2) {
    (void)ctx.fail(node, "weight must be 2-D");
    return failure();
  }
  return ctx.transpose(*t, {1, 0});
}

LogicalResult convertLinear(ImportContext &ctx, const TorchNode &node) {
  auto x = ctx.tensorInput(node, 0);
  if (failed(x))
    return failure();
  if (!isa<FloatType>(tensorType(*x).getElementType()))
    return ctx.unsupported(node, "only floating-point inputs are supported");
  if (tensorType(*x).getRank() < 1)
    return ctx.fail(node, "input must have rank >= 1");
  auto wT = transposedWeight(ctx, node, 1);
  if (failed(wT))
    return failure();
  Value x2 = *x;
  bool vector = tensorType(x2).getRank() == 1;
  if (vector)
    x2 = ctx.reshape(x2, {ctx.builder.getIndexAttr(1), ctx.dim(x2, 0)});
  Value r = matmulLastDim(ctx, x2, *wT);
  if (!ctx.isNoneInput(node, 2)) {
    auto bias = ctx.tensorInput(node, 2);
    if (failed(bias))
      return failure();
    auto withBias = addBias(ctx, node, r, *bias);
    if (failed(withBias))
      return failure();
    r = *withBias;
  }
  if (vector)
    r = ctx.reshape(r, {ctx.dim(r, 1)});
  ctx.setTensor(node, 0, r);
  return success();
}

LogicalResult convertT(ImportContext &ctx, const TorchNode &node) {
  auto x = ctx.tensorInput(node, 0);
  if (failed(x))
    return failure();
  int64_t rank = tensorType(*x).getRank();
  if (rank > 2)
    return ctx.fail(node, "t() expects a tensor of rank <= 2");
  ctx.setTensor(node, 0, rank == 2 ? ctx.transpose(*x, {1, 0}) : *x);
  return success();
}

LogicalResult convertMatmul(ImportContext &ctx, const TorchNode &node) {
  auto a = ctx.tensorInput(node, 0), b = ctx.tensorInput(node, 1);
  if (failed(a) || failed(b))
    return failure();
  int64_t ra = tensorType(*a).getRank(), rb = tensorType(*b).getRank();
  if (node.kind == "aten::mm" && (ra != 2 || rb != 2))
    return ctx.fail(node, "mm expects 2-D operands");
  if (node.kind == "aten::bmm" && (ra != 3 || rb != 3))
    return ctx.fail(node, "bmm expects 3-D operands");
  auto r = matmulValues(ctx, node, *a, *b);
  if (failed(r))
    return failure();
  ctx.setTensor(node, 0, *r);
  return success();
}

LogicalResult convertAddmm(ImportContext &ctx, const TorchNode &node) {
  auto bias = ctx.tensorInput(node, 0), m1 = ctx.tensorInput(node, 1), m2 = ctx.tensorInput(node, 2);
  if (failed(bias) || failed(m1) || failed(m2))
    return failure();
  if (tensorType(*m1).getRank() != 2 || tensorType(*m2).getRank() != 2)
    return ctx.fail(node, "addmm expects 2-D matrices");
  double beta = 1.0, alpha = 1.0;
  if (node.inputs.size() > 3) {
    auto b = ctx.floatInput(node, 3);
    if (failed(b))
      return failure();
    beta = *b;
  }
  if (node.inputs.size() > 4) {
    auto a = ctx.floatInput(node, 4);
    if (failed(a))
      return failure();
    alpha = *a;
  }
  Value mm = matmul2D(ctx, *m1, *m2);
  auto r = addBias(ctx, node, mm, *bias, alpha, beta);
  if (failed(r))
    return failure();
  ctx.setTensor(node, 0, *r);
  return success();
}

} // namespace

void registerMatmulOps(OpRegistry &r) {
  r.add("aten::linear", convertLinear);
  r.add("aten::t", convertT);
  r.add("aten::matmul", convertMatmul);
  r.add("aten::mm", convertMatmul);
  r.add("aten::bmm", convertMatmul);
  r.add("aten::addmm", convertAddmm);
}

} // namespace turbine::torch_frontend
