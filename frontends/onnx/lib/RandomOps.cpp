//===- RandomOps.cpp - ONNX RandomUniform/Normal(Like), Bernoulli ---------===//
//
// Draws come from a counter-based generator: a hash of the element's linear
// index and the seed (uniformAtIndex), so a kernel's result does not depend
// on how it is tiled or parallelized. The draws are Turbine's own: for the
// same seed they differ from NumPy's or ONNX Runtime's (no independent
// implementation can match another framework's stream), and they are the
// same on every call of a compiled function (a per-call stream would need
// generator state in the host program). Without a `seed` attribute the node's
// first output name seeds it, so two unseeded nodes draw differently.
//===----------------------------------------------------------------------===//
#include "ImportContext.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"

#include "llvm/ADT/Hashing.h"

#include <cmath>
#include <cstring>

using namespace mlir;

namespace turbine::onnx_frontend {

Value uniformAtIndex(OpBuilder &b, Location l, ArrayRef<OpFoldResult> sizes, int64_t seed) {
  Type i32 = b.getI32Type();
  auto c32 = [&](uint32_t v) {
    return arith::ConstantOp::create(b, l, b.getIntegerAttr(i32, static_cast<int32_t>(v)));
  };
  Value linear = arith::ConstantIndexOp::create(b, l, 0);
  for (auto [d, size] : llvm::enumerate(sizes)) {
    Value sizeValue = isa<Value>(size) ? cast<Value>(size)
                                       : (Value)arith::ConstantIndexOp::create(
                                             b, l, cast<IntegerAttr>(cast<Attribute>(size)).getInt());
    linear = arith::AddIOp::create(b, l, arith::MulIOp::create(b, l, linear, sizeValue),
                                   linalg::IndexOp::create(b, l, d));
  }
  Value h = arith::IndexCastUIOp::create(b, l, i32, linear);
  h = arith::AddIOp::create(b, l, arith::MulIOp::create(b, l, h, c32(0x9E3779B1u)),
                            c32(static_cast<uint32_t>(seed) * 0x85EBCA77u + 0x27D4EB2Fu));
  auto mix = [&](uint32_t shift) { h = arith::XOrIOp::create(b, l, h, arith::ShRUIOp::create(b, l, h, c32(shift))); };
  mix(16);
  h = arith::MulIOp::create(b, l, h, c32(0x85EBCA6Bu));
  mix(13);
  h = arith::MulIOp::create(b, l, h, c32(0xC2B2AE35u));
  mix(16);
  Value top24 = arith::ShRUIOp::create(b, l, h, c32(8));
  Value u = arith::UIToFPOp::create(b, l, b.getF32Type(), top24);
  return arith::MulFOp::create(b, l, u, arith::ConstantOp::create(b, l, b.getF32FloatAttr(1.0f / 16777216.0f)));
}

namespace {

/// The node's seed: the float attribute's bits, else its first output's name.
int64_t seedOf(const ImportContext &ctx, const onnx::NodeProto &node) {
  if (const onnx::AttributeProto *seed = ctx.attr(node, "seed")) {
    float value = seed->f();
    uint32_t bits;
    std::memcpy(&bits, &value, sizeof bits);
    return bits;
  }
  return static_cast<int64_t>(llvm::hash_value(node.output(0)));
}

/// The output element type: the `dtype` attribute, else `fallback`.
FailureOr<Type> outputType(ImportContext &ctx, const onnx::NodeProto &node, Type fallback) {
  const onnx::AttributeProto *dtype = ctx.attr(node, "dtype");
  if (!dtype)
    return fallback;
  Type t = convertElementType(ctx.context, static_cast<int>(dtype->i()));
  if (!t)
    return ctx.unsupported(node, "dtype " + std::to_string(dtype->i()));
  return t;
}

enum class Distribution { Uniform, Normal };

/// A tensor of `sizes` filled with draws: uniform in [low, high) or normal
/// with `mean` and `scale` (Box-Muller over two independent uniform streams).
LogicalResult emitRandom(ImportContext &ctx, const onnx::NodeProto &node,
                         SmallVector<OpFoldResult> sizes, Type et, Distribution kind) {
  if (!isa<FloatType>(et))
    return ctx.unsupported(node, "only floating-point outputs are supported");
  int64_t seed = seedOf(ctx, node);
  bool uniform = kind == Distribution::Uniform;
  double a = uniform ? ctx.floatAttr(node, "low", 0.0f) : ctx.floatAttr(node, "mean", 0.0f);
  double b2 = uniform ? ctx.floatAttr(node, "high", 1.0f) : ctx.floatAttr(node, "scale", 1.0f);
  int64_t rank = static_cast<int64_t>(sizes.size());
  Value init = ctx.empty(sizes, et);
  SmallVector<utils::IteratorType> parallel(rank, utils::IteratorType::parallel);
  Value result =
      linalg::GenericOp::create(
          ctx.builder, ctx.loc, TypeRange{init.getType()}, ValueRange{}, ValueRange{init},
          SmallVector<AffineMap>{ctx.builder.getMultiDimIdentityMap(rank)}, parallel,
          [&](OpBuilder &b, Location l, ValueRange) {
            auto f32 = [&](double v) { return arith::ConstantOp::create(b, l, b.getF32FloatAttr(float(v))); };
            Value u = uniformAtIndex(b, l, sizes, seed);
            Value draw;
            if (uniform) {
              draw = arith::AddFOp::create(b, l, f32(a), arith::MulFOp::create(b, l, u, f32(b2 - a)));
            } else {
              Value u1 = arith::SubFOp::create(b, l, f32(1.0), u); // (0, 1]
              Value u2 = uniformAtIndex(b, l, sizes, seed ^ 0x68E31DA4);
              Value radius = math::SqrtOp::create(
                  b, l, arith::MulFOp::create(b, l, f32(-2.0), math::LogOp::create(b, l, u1)));
              Value angle = arith::MulFOp::create(b, l, u2, f32(6.283185307179586));
              Value z = arith::MulFOp::create(b, l, radius, math::CosOp::create(b, l, angle));
              draw = arith::AddFOp::create(b, l, f32(a), arith::MulFOp::create(b, l, z, f32(b2)));
            }
            linalg::YieldOp::create(b, l, convertScalar(b, l, draw, et));
          })
          .getResult(0);
  ctx.recordDims(result, sizes);
  ctx.setValue(node.output(0), result);
  return success();
}

LogicalResult convertRandom(ImportContext &ctx, const onnx::NodeProto &node, Distribution kind) {
  std::optional<std::vector<int64_t>> shape = ctx.intsAttr(node, "shape");
  if (!shape)
    return ctx.fail(node, "needs the `shape` attribute");
  SmallVector<OpFoldResult> sizes;
  for (int64_t d : *shape) {
    if (d < 0)
      return ctx.fail(node, "shape has a negative dim " + std::to_string(d));
    sizes.push_back(ctx.builder.getIndexAttr(d));
  }
  FailureOr<Type> et = outputType(ctx, node, ctx.builder.getF32Type());
  return failed(et) ? failure() : emitRandom(ctx, node, sizes, *et, kind);
}

LogicalResult convertRandomLike(ImportContext &ctx, const onnx::NodeProto &node, Distribution kind) {
  auto x = ctx.getTensor(node, node.input(0));
  if (failed(x))
    return failure();
  FailureOr<Type> et = outputType(ctx, node, cast<RankedTensorType>(x->getType()).getElementType());
  return failed(et) ? failure() : emitRandom(ctx, node, ctx.dims(*x), *et, kind);
}

/// Bernoulli (opset 15): 1 where a uniform draw is below the input
/// probability, else 0, in `dtype` (default: the input's type).
LogicalResult convertBernoulli(ImportContext &ctx, const onnx::NodeProto &node) {
  auto p = ctx.getTensor(node, node.input(0));
  if (failed(p))
    return failure();
  Type in = cast<RankedTensorType>(p->getType()).getElementType();
  if (!isa<FloatType>(in))
    return ctx.fail(node, "input probabilities must be floating point");
  FailureOr<Type> et = outputType(ctx, node, in);
  if (failed(et))
    return failure();
  int64_t seed = seedOf(ctx, node);
  SmallVector<OpFoldResult> sizes = ctx.dims(*p);
  auto y = ctx.elementwise(node, ValueRange{*p}, *et, [&](OpBuilder &b, Location l, ValueRange a) -> Value {
    Value u = uniformAtIndex(b, l, sizes, seed);
    Value hit = arith::CmpFOp::create(b, l, arith::CmpFPredicate::OLT, u,
                                      convertScalar(b, l, a[0], b.getF32Type()));
    return convertScalar(b, l, hit, *et, /*fromUnsigned=*/true);
  });
  if (failed(y))
    return failure();
  ctx.setValue(node.output(0), *y);
  return success();
}

} // namespace

void registerRandomOps(OpRegistry &r) {
  r.add("RandomUniform", [](ImportContext &c, const onnx::NodeProto &n) { return convertRandom(c, n, Distribution::Uniform); });
  r.add("RandomNormal", [](ImportContext &c, const onnx::NodeProto &n) { return convertRandom(c, n, Distribution::Normal); });
  r.add("RandomUniformLike", [](ImportContext &c, const onnx::NodeProto &n) { return convertRandomLike(c, n, Distribution::Uniform); });
  r.add("RandomNormalLike", [](ImportContext &c, const onnx::NodeProto &n) { return convertRandomLike(c, n, Distribution::Normal); });
  r.add("Bernoulli", convertBernoulli, 15);
}

} // namespace turbine::onnx_frontend
