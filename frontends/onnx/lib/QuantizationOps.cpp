//===- QuantizationOps.cpp - ONNX (de)quantization and integer matmul/conv ===//
//
// QuantizeLinear / DequantizeLinear (per-tensor and per-axis, int8/uint8),
// DynamicQuantizeLinear, MatMulInteger, ConvInteger, QLinearMatMul and
// QLinearConv.
//
// Quantization is elementwise: q = saturate(round_half_even(x / scale) + zp).
// The integer products run through the float MatMul/Conv handlers on f64
// operands (x - zero_point), so shapes, broadcasting, padding, strides and
// groups have one implementation; f64 holds every int8/uint8 product sum
// exactly while |sum| < 2^53, i.e. for any reduction shorter than 2^37
// terms. The int32 results are then exact (outside the int32 range, where the
// reference wraps, the result is undefined).
//===----------------------------------------------------------------------===//
#include "ImportContext.h"

using namespace mlir;

namespace turbine::onnx_frontend {
namespace {

Type elementTypeOf(Value v) { return cast<RankedTensorType>(v.getType()).getElementType(); }
int64_t rankOf(Value v) { return cast<RankedTensorType>(v.getType()).getRank(); }

/// round_half_even(v) (+ zp), saturated to the range of `qType` and
/// converted to it.
Value quantizeScalar(OpBuilder &b, Location l, Value v, Value zp, bool zpUnsigned, Type qType,
                     bool qUnsigned) {
  Type ft = v.getType();
  Value r = math::RoundEvenOp::create(b, l, v);
  if (zp)
    r = arith::AddFOp::create(b, l, r, convertScalar(b, l, zp, ft, zpUnsigned));
  unsigned width = qType.getIntOrFloatBitWidth();
  double lo = qUnsigned ? 0.0 : -std::ldexp(1.0, width - 1);
  double hi = qUnsigned ? std::ldexp(1.0, width) - 1 : std::ldexp(1.0, width - 1) - 1;
  r = arith::MaximumFOp::create(b, l, r, arith::ConstantOp::create(b, l, b.getFloatAttr(ft, lo)));
  r = arith::MinimumFOp::create(b, l, r, arith::ConstantOp::create(b, l, b.getFloatAttr(ft, hi)));
  return convertScalar(b, l, r, qType, false, qUnsigned);
}

/// A scale or zero point of a (de)quantization along `axis` (may be
/// negative) of a rank-`rank` tensor: scalars and [1] broadcast as they are;
/// a 1-D [C] is reshaped to [1, .., C, .., 1] with C at `axis`.
FailureOr<Value> alongAxis(ImportContext &ctx, const onnx::NodeProto &node, Value v, int64_t axis,
                           int64_t rank) {
  auto type = cast<RankedTensorType>(v.getType());
  if (type.getRank() == 0 || (type.getRank() == 1 && type.getShape()[0] == 1))
    return v;
  if (type.getRank() != 1) {
    (void)ctx.unsupported(node, "scale and zero point must be scalars or 1-D (per-axis)");
    return failure();
  }
  std::optional<int64_t> normalized = normalizeAxis(axis, rank);
  if (!normalized || rank == 0) {
    (void)ctx.fail(node, "axis " + std::to_string(axis) + " is out of range for an input of rank " +
                             std::to_string(rank));
    return failure();
  }
  SmallVector<OpFoldResult> sizes(rank, ctx.builder.getIndexAttr(1));
  sizes[*normalized] = ctx.dim(v, 0);
  return ctx.reshape(v, sizes);
}

/// QuantizeLinear (opset 10: per-tensor; 13: `axis`, default 1).
LogicalResult convertQuantizeLinear(ImportContext &ctx, const onnx::NodeProto &node) {
  if (node.input_size() < 2)
    return ctx.fail(node, "expects inputs x and y_scale");
  auto x = ctx.getTensor(node, node.input(0));
  auto scale = ctx.getTensor(node, node.input(1));
  if (failed(x) || failed(scale))
    return failure();
  Value zp;
  Type qType = ctx.builder.getIntegerType(8);
  bool qUnsigned = true; // uint8 when y_zero_point is absent
  if (ImportContext::hasInput(node, 2)) {
    auto z = ctx.getTensor(node, node.input(2));
    if (failed(z))
      return failure();
    zp = *z;
    qType = elementTypeOf(zp);
    qUnsigned = ctx.isUnsigned(node.input(2));
  }
  if (!qType.isInteger(8))
    return ctx.unsupported(node, "only int8 and uint8 zero points are supported");
  Type ft = elementTypeOf(*scale);
  if (!isa<FloatType>(ft))
    return ctx.fail(node, "y_scale must be floating-point");
  int64_t rank = rankOf(*x);
  int64_t axis = ctx.intAttr(node, "axis", 1);
  auto s = alongAxis(ctx, node, *scale, axis, rank);
  if (failed(s))
    return failure();
  SmallVector<Value> operands{*x, *s};
  if (zp) {
    auto z = alongAxis(ctx, node, zp, axis, rank);
    if (failed(z))
      return failure();
    operands.push_back(*z);
  }
  bool xUnsigned = ctx.isUnsigned(node.input(0));
  auto r = ctx.elementwise(node, operands, qType, [&](OpBuilder &b, Location l, ValueRange a) {
    Value xf = convertScalar(b, l, a[0], ft, xUnsigned);
    Value q = arith::DivFOp::create(b, l, xf, a[1]);
    return quantizeScalar(b, l, q, a.size() > 2 ? a[2] : Value(), qUnsigned, qType, qUnsigned);
  });
  if (failed(r))
    return failure();
  ctx.setValue(node.output(0), *r);
  ctx.setOnnxType(node.output(0), qUnsigned ? onnx::TensorProto::UINT8 : onnx::TensorProto::INT8);
  return success();
}

/// DequantizeLinear: (x - zero_point) * scale.
LogicalResult convertDequantizeLinear(ImportContext &ctx, const onnx::NodeProto &node) {
  if (node.input_size() < 2)
    return ctx.fail(node, "expects inputs x and x_scale");
  auto x = ctx.getTensor(node, node.input(0));
  auto scale = ctx.getTensor(node, node.input(1));
  if (failed(x) || failed(scale))
    return failure();
  Type ft = elementTypeOf(*scale);
  if (!isa<FloatType>(ft))
    return ctx.fail(node, "x_scale must be floating-point");
  if (!isa<IntegerType>(elementTypeOf(*x)) || elementTypeOf(*x).isInteger(1))
    return ctx.unsupported(node, "x must be an integer tensor");
  int64_t rank = rankOf(*x);
  int64_t axis = ctx.intAttr(node, "axis", 1);
  auto s = alongAxis(ctx, node, *scale, axis, rank);
  if (failed(s))
    return failure();
  SmallVector<Value> operands{*x, *s};
  bool hasZp = ImportContext::hasInput(node, 2);
  if (hasZp) {
    auto z = ctx.getTensor(node, node.input(2));
    if (failed(z))
      return failure();
    if (elementTypeOf(*z) != elementTypeOf(*x))
      return ctx.fail(node, "x_zero_point must have x's element type");
    auto za = alongAxis(ctx, node, *z, axis, rank);
    if (failed(za))
      return failure();
    operands.push_back(*za);
  }
  bool xUnsigned = ctx.isUnsigned(node.input(0));
  auto r = ctx.elementwise(node, operands, ft, [&](OpBuilder &b, Location l, ValueRange a) -> Value {
    Value v = convertScalar(b, l, a[0], ft, xUnsigned);
    if (hasZp)
      v = arith::SubFOp::create(b, l, v, convertScalar(b, l, a[2], ft, xUnsigned));
    return arith::MulFOp::create(b, l, v, a[1]);
  });
  if (failed(r))
    return failure();
  ctx.setValue(node.output(0), *r);
  return success();
}

/// DynamicQuantizeLinear: uint8 with scale = (max(x, 0) - min(x, 0)) / 255
/// and zero point = saturate(round(-min / scale)), as the ONNX function body.
LogicalResult convertDynamicQuantizeLinear(ImportContext &ctx, const onnx::NodeProto &node) {
  auto x = ctx.getTensor(node, node.input(0));
  if (failed(x))
    return failure();
  Type ft = elementTypeOf(*x);
  if (!ft.isF32())
    return ctx.unsupported(node, "x must be float32");
  SmallVector<bool> all(rankOf(*x), true);
  double inf = std::numeric_limits<double>::infinity();
  Value minV = reduceDims(ctx, *x, all, ctx.scalarConstant(ft, inf),
                          [](OpBuilder &b, Location l, Value acc, Value e) -> Value {
                            return arith::MinimumFOp::create(b, l, acc, e);
                          });
  Value maxV = reduceDims(ctx, *x, all, ctx.scalarConstant(ft, -inf),
                          [](OpBuilder &b, Location l, Value acc, Value e) -> Value {
                            return arith::MaximumFOp::create(b, l, acc, e);
                          });
  Type u8 = ctx.builder.getIntegerType(8);
  auto zero = [&](OpBuilder &b, Location l) {
    return arith::ConstantOp::create(b, l, b.getFloatAttr(ft, 0.0));
  };
  auto scale = ctx.elementwise(node, ValueRange{minV, maxV}, ft,
                               [&](OpBuilder &b, Location l, ValueRange a) -> Value {
                                 Value lo = arith::MinimumFOp::create(b, l, a[0], zero(b, l));
                                 Value hi = arith::MaximumFOp::create(b, l, a[1], zero(b, l));
                                 return arith::DivFOp::create(
                                     b, l, arith::SubFOp::create(b, l, hi, lo),
                                     arith::ConstantOp::create(b, l, b.getFloatAttr(ft, 255.0)));
                               });
  if (failed(scale))
    return failure();
  auto zp = ctx.elementwise(node, ValueRange{minV, *scale}, u8,
                            [&](OpBuilder &b, Location l, ValueRange a) -> Value {
                              Value lo = arith::MinimumFOp::create(b, l, a[0], zero(b, l));
                              Value v = arith::SubFOp::create(b, l, zero(b, l),
                                                              arith::DivFOp::create(b, l, lo, a[1]));
                              return quantizeScalar(b, l, v, Value(), true, u8, true);
                            });
  if (failed(zp))
    return failure();
  auto y = ctx.elementwise(node, ValueRange{*x, *scale, *zp}, u8,
                           [&](OpBuilder &b, Location l, ValueRange a) -> Value {
                             Value q = arith::DivFOp::create(b, l, a[0], a[1]);
                             return quantizeScalar(b, l, q, a[2], true, u8, true);
                           });
  if (failed(y))
    return failure();
  ctx.setValue(node.output(0), *y);
  if (node.output_size() > 1 && !node.output(1).empty())
    ctx.setValue(node.output(1), *scale);
  if (node.output_size() > 2 && !node.output(2).empty())
    ctx.setValue(node.output(2), *zp);
  return success();
}

/// `x - zero_point` as f64 (exact for 8-bit integers). `rowZeroPoint`: a
/// 1-D zero point indexes dim -2 of x (MatMulInteger's per-row A zero
/// point) rather than broadcasting along the last dim.
FailureOr<Value> shiftedF64(ImportContext &ctx, const onnx::NodeProto &node, int xInput, int zpInput,
                            bool rowZeroPoint = false, int64_t zpAxis = -1) {
  auto x = ctx.getTensor(node, node.input(xInput));
  if (failed(x))
    return failure();
  Type it = elementTypeOf(*x);
  if (!it.isInteger(8)) {
    (void)ctx.unsupported(node, "input '" + node.input(xInput) + "' must be int8 or uint8");
    return failure();
  }
  bool isUnsigned = ctx.isUnsigned(node.input(xInput));
  SmallVector<Value> operands{*x};
  if (ImportContext::hasInput(node, zpInput)) {
    auto z = ctx.getTensor(node, node.input(zpInput));
    if (failed(z))
      return failure();
    if (elementTypeOf(*z) != it) {
      (void)ctx.fail(node, "zero point '" + node.input(zpInput) + "' must have its input's type");
      return failure();
    }
    Value zp = *z;
    if (rankOf(zp) == 1 && rowZeroPoint && rankOf(*x) >= 2)
      zp = ctx.reshape(zp, {ctx.dim(zp, 0), ctx.builder.getIndexAttr(1)});
    else if (rankOf(zp) == 1 && zpAxis >= 0 && rankOf(*x) > zpAxis) {
      auto a = alongAxis(ctx, node, zp, zpAxis, rankOf(*x));
      if (failed(a))
        return failure();
      zp = *a;
    }
    operands.push_back(zp);
  }
  Type f64 = ctx.builder.getF64Type();
  return ctx.elementwise(node, operands, f64, [&](OpBuilder &b, Location l, ValueRange a) -> Value {
    Value v = convertScalar(b, l, a[0], f64, isUnsigned);
    if (a.size() > 1)
      v = arith::SubFOp::create(b, l, v, convertScalar(b, l, a[1], f64, isUnsigned));
    return v;
  });
}

/// Runs the float handler of `opType` on `operands` (same attributes as
/// `node`) and returns its output. The node keeps its own op type and name,
/// so the handler's errors name the op the model used (e.g. QLinearConv).
FailureOr<Value> viaFloatOp(ImportContext &ctx, const onnx::NodeProto &node, const std::string &opType,
                            ArrayRef<Value> operands) {
  const OpHandler *handler = lookupOpHandler(opType, ctx.opset);
  if (!handler) {
    (void)ctx.unsupported(node, opType + " is not available at this opset");
    return failure();
  }
  onnx::NodeProto rewritten = node;
  rewritten.clear_input();
  rewritten.clear_output();
  for (auto [i, v] : llvm::enumerate(operands)) {
    std::string name = node.output(0) + "#" + opType + "_operand" + std::to_string(i);
    ctx.setValue(name, v);
    rewritten.add_input(name);
  }
  std::string out = node.output(0) + "#" + opType + "_result";
  rewritten.add_output(out);
  if (failed((*handler)(ctx, rewritten)))
    return failure();
  return ctx.getTensor(node, out);
}

/// An f64 tensor of exact integers as int32.
FailureOr<Value> toI32(ImportContext &ctx, const onnx::NodeProto &node, Value v) {
  Type i32 = ctx.builder.getI32Type();
  return ctx.elementwise(node, ValueRange{v}, i32, [&](OpBuilder &b, Location l, ValueRange a) {
    return convertScalar(b, l, a[0], i32);
  });
}

/// acc * (a_scale * b_scale / y_scale) requantized to y_zero_point's type.
/// `scales` are already broadcast-shaped against `acc`.
LogicalResult requantize(ImportContext &ctx, const onnx::NodeProto &node, Value acc,
                         ArrayRef<Value> scales, int yZpInput) {
  auto yZp = ctx.getTensor(node, node.input(yZpInput));
  if (failed(yZp))
    return failure();
  Type qType = elementTypeOf(*yZp);
  if (!qType.isInteger(8))
    return ctx.unsupported(node, "y_zero_point must be int8 or uint8");
  bool qUnsigned = ctx.isUnsigned(node.input(yZpInput));
  for (Value s : scales)
    if (!elementTypeOf(s).isF32())
      return ctx.fail(node, "scales must be float32");
  SmallVector<Value> operands{acc};
  operands.append(scales.begin(), scales.end()); // a_scale, b_scale, y_scale
  operands.push_back(*yZp);
  Type f64 = ctx.builder.getF64Type();
  auto r = ctx.elementwise(node, operands, qType, [&](OpBuilder &b, Location l, ValueRange a) -> Value {
    auto ext = [&](Value v) { return convertScalar(b, l, v, f64); };
    Value multiplier = arith::DivFOp::create(b, l, arith::MulFOp::create(b, l, ext(a[1]), ext(a[2])), ext(a[3]));
    Value v = arith::MulFOp::create(b, l, a[0], multiplier);
    return quantizeScalar(b, l, v, a[4], qUnsigned, qType, qUnsigned);
  });
  if (failed(r))
    return failure();
  ctx.setValue(node.output(0), *r);
  return success();
}

LogicalResult convertMatMulInteger(ImportContext &ctx, const onnx::NodeProto &node) {
  if (node.input_size() < 2)
    return ctx.fail(node, "expects inputs A and B");
  auto a = shiftedF64(ctx, node, 0, 2, /*rowZeroPoint=*/true);
  auto b = shiftedF64(ctx, node, 1, 3);
  if (failed(a) || failed(b))
    return failure();
  auto product = viaFloatOp(ctx, node, "MatMul", {*a, *b});
  if (failed(product))
    return failure();
  auto r = toI32(ctx, node, *product);
  if (failed(r))
    return failure();
  ctx.setValue(node.output(0), *r);
  return success();
}

LogicalResult convertConvInteger(ImportContext &ctx, const onnx::NodeProto &node) {
  if (node.input_size() < 2)
    return ctx.fail(node, "expects inputs x and w");
  auto x = shiftedF64(ctx, node, 0, 2);
  auto w = shiftedF64(ctx, node, 1, 3, false, /*zpAxis=*/0);
  if (failed(x) || failed(w))
    return failure();
  auto conv = viaFloatOp(ctx, node, "Conv", {*x, *w});
  if (failed(conv))
    return failure();
  auto r = toI32(ctx, node, *conv);
  if (failed(r))
    return failure();
  ctx.setValue(node.output(0), *r);
  return success();
}

/// A per-tensor scale, or a 1-D one reshaped to index `dim` of a rank-`rank` result.
FailureOr<Value> scaleFor(ImportContext &ctx, const onnx::NodeProto &node, int input, int64_t dim,
                          int64_t rank) {
  auto s = ctx.getTensor(node, node.input(input));
  if (failed(s))
    return failure();
  if (rankOf(*s) == 0 || (rankOf(*s) == 1 && cast<RankedTensorType>(s->getType()).getDimSize(0) == 1))
    return *s;
  return alongAxis(ctx, node, *s, dim, rank);
}

/// QLinearMatMul: integer matmul of the shifted operands, requantized.
LogicalResult convertQLinearMatMul(ImportContext &ctx, const onnx::NodeProto &node) {
  if (node.input_size() != 8)
    return ctx.fail(node, "expects 8 inputs");
  auto a = shiftedF64(ctx, node, 0, 2, /*rowZeroPoint=*/true);
  auto b = shiftedF64(ctx, node, 3, 5);
  if (failed(a) || failed(b))
    return failure();
  auto acc = viaFloatOp(ctx, node, "MatMul", {*a, *b});
  if (failed(acc))
    return failure();
  int64_t rank = rankOf(*acc);
  auto aScale = scaleFor(ctx, node, 1, std::max<int64_t>(rank - 2, 0), rank);
  auto bScale = scaleFor(ctx, node, 4, rank - 1, rank);
  auto yScale = ctx.getTensor(node, node.input(6));
  if (failed(aScale) || failed(bScale) || failed(yScale))
    return failure();
  return requantize(ctx, node, *acc, {*aScale, *bScale, *yScale}, 7);
}

/// QLinearConv: integer conv of the shifted operands (+ int32 bias), requantized.
LogicalResult convertQLinearConv(ImportContext &ctx, const onnx::NodeProto &node) {
  if (node.input_size() < 8)
    return ctx.fail(node, "expects at least 8 inputs");
  auto x = shiftedF64(ctx, node, 0, 2);
  auto w = shiftedF64(ctx, node, 3, 5, false, /*zpAxis=*/0);
  if (failed(x) || failed(w))
    return failure();
  SmallVector<Value> convOperands{*x, *w};
  if (ImportContext::hasInput(node, 8)) {
    auto bias = ctx.getTensor(node, node.input(8));
    if (failed(bias))
      return failure();
    if (!elementTypeOf(*bias).isInteger(32))
      return ctx.fail(node, "bias must be int32");
    Type f64 = ctx.builder.getF64Type();
    auto bf = ctx.elementwise(node, ValueRange{*bias}, f64, [&](OpBuilder &b, Location l, ValueRange a) {
      return convertScalar(b, l, a[0], f64);
    });
    if (failed(bf))
      return failure();
    convOperands.push_back(*bf);
  }
  auto acc = viaFloatOp(ctx, node, "Conv", convOperands);
  if (failed(acc))
    return failure();
  int64_t rank = rankOf(*acc);
  auto xScale = scaleFor(ctx, node, 1, 0, rank);
  auto wScale = scaleFor(ctx, node, 4, 1, rank); // per output channel
  auto yScale = ctx.getTensor(node, node.input(6));
  if (failed(xScale) || failed(wScale) || failed(yScale))
    return failure();
  return requantize(ctx, node, *acc, {*xScale, *wScale, *yScale}, 7);
}

} // namespace

void registerQuantizationOps(OpRegistry &r) {
  r.add("QuantizeLinear", convertQuantizeLinear, 10);
  r.add("DequantizeLinear", convertDequantizeLinear, 10);
  r.add("DynamicQuantizeLinear", convertDynamicQuantizeLinear, 11);
  r.add("MatMulInteger", convertMatMulInteger, 10);
  r.add("ConvInteger", convertConvInteger, 10);
  r.add("QLinearMatMul", convertQLinearMatMul, 10);
  r.add("QLinearConv", convertQLinearConv, 10);
}

} // namespace turbine::onnx_frontend
