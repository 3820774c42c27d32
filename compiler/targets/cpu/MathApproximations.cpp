//===- MathApproximations.cpp - exp and erf on f32 in few instructions ----===//
//
// Part of turbine-cpu-approximate-math (LowerKernelsToLLVM.cpp): math.exp and
// math.erf on f32 (scalar or vector) without libm, cheaper than upstream's
// polynomial approximations, which were most of the cost of a SiLU, sigmoid
// or GELU epilogue.
//
// exp, 16 vector instructions (upstream's: clamps on the input and on the
// exponent, a rounding, a degree-7 polynomial, a float-to-int conversion,
// ~22):
//   n = round(x * log2(e)), by adding a magic bias in the same FMA: the
//       bias's low mantissa bits then hold n + 127, and shifting them left
//       by 23 gives the bits of s = 2^n (n at most 127: one min);
//   t = x - n * ln2, in two FMAs (Cody-Waite: ln2 = hi + lo, hi exact in
//       a product with n), |t| <= ln2/2;
//   exp(x) = s + s * t * p(t), p of degree 4 (a degree-5 minimax
//       polynomial for exp on [-ln2/2, ln2/2], relative error 9.2e-8: the
//       coefficients XNNPACK's f32 exp kernels use);
//   x above ln(FLT_MAX) gives +inf, x below ln(2^-126) gives 0 (the exact
//       results there are infinite, or denormal: flushed), NaN stays NaN
//       (the selects compare false, and t is NaN).
// Error: within 2 ulp of the correctly rounded result for x in [-87.3, 88]
// (1.96 at worst over every 97th float of the range;
// tests/unit/compiler/MathApproximationTest.cpp checks every 389th against
// std::exp); above 88.38, where n is held at 127 and |t| reaches ln 2, the
// polynomial's relative error grows to 6.7e-5 (results above 2.4e38).
//
// erf, 15 vector instructions (upstream's: three intervals, each
// coefficient chosen by blends, ~70 with the broadcasts): x clamped to
// [-4, 4] (erf is +-1 in f32 beyond), then x * P(x^2) / Q(x^2), P of degree
// 6 and Q of degree 4 in x^2 (the rational approximation Eigen and XLA use
// for f32). Error: at most 3.3e-7 absolute and relative (5.5 ulp, near
// |x| = 3.9; upstream's: 2.5e-7, 4.3 ulp), NaN stays NaN.
//===----------------------------------------------------------------------===//
#include "targets/cpu/MathApproximations.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/IR/TypeUtilities.h"

#include <cmath>

using namespace mlir;

namespace turbine::compiler {

namespace {

/// Builds f32 constants and ops of one scalar or vector type at one place.
struct F32Builder {
  PatternRewriter &rewriter;
  Location loc;
  Type type, intType;

  F32Builder(PatternRewriter &rewriter, Location loc, Type type)
      : rewriter(rewriter), loc(loc), type(type), intType(rewriter.getI32Type()) {
    if (auto vector = dyn_cast<VectorType>(type))
      intType = vector.clone(intType);
  }
  Value splat(Type t, TypedAttr scalar) {
    if (auto v = dyn_cast<VectorType>(t))
      return arith::ConstantOp::create(rewriter, loc, DenseElementsAttr::get(v, scalar));
    return arith::ConstantOp::create(rewriter, loc, scalar);
  }
  Value f(float v) { return splat(type, rewriter.getF32FloatAttr(v)); }
  Value i(int32_t v) { return splat(intType, rewriter.getI32IntegerAttr(v)); }
  Value fma(Value a, Value b, Value c) { return math::FmaOp::create(rewriter, loc, a, b, c); }
  Value mul(Value a, Value b) { return arith::MulFOp::create(rewriter, loc, a, b); }
  /// Horner's scheme: coefficients from the highest degree down.
  Value polynomial(Value x, ArrayRef<float> coefficients) {
    Value p = f(coefficients.front());
    for (float c : coefficients.drop_front())
      p = fma(p, x, f(c));
    return p;
  }
};

/// Whether `type` is f32 or a fixed-size vector of f32.
bool isF32OrVector(Type type) {
  auto vector = dyn_cast<VectorType>(type);
  return getElementTypeOrSelf(type).isF32() && !(vector && vector.isScalable());
}

struct LowerExpF32 : OpRewritePattern<math::ExpOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(math::ExpOp op, PatternRewriter &rewriter) const override {
    if (!isF32OrVector(op.getType()))
      return failure();
    F32Builder b(rewriter, op.getLoc(), op.getType());
    Location loc = op.getLoc();
    Value x = op.getOperand();
    // 0x1.8p23 + 127: adding it rounds to an integer and leaves n + 127 in
    // the low mantissa bits.
    const float magicBias = 0x1.8000FEp23f;
    Value biased = b.fma(x, b.f(0x1.715476p+0f /* log2(e) */), b.f(magicBias));
    biased = arith::MinimumFOp::create(rewriter, loc, biased, b.f(magicBias + 127.0f));
    Value scaleBits = arith::ShLIOp::create(
        rewriter, loc, arith::BitcastOp::create(rewriter, loc, b.intType, biased), b.i(23));
    Value scale = arith::BitcastOp::create(rewriter, loc, b.type, scaleBits);
    Value n = arith::SubFOp::create(rewriter, loc, biased, b.f(magicBias));
    Value t = b.fma(n, b.f(-0x1.62E400p-1f /* -ln2 hi */), x);
    t = b.fma(n, b.f(-0x1.7F7D1Cp-20f /* -ln2 lo */), t);
    Value p = b.polynomial(t, {0x1.0F9F9Cp-7f, 0x1.573A1Ap-5f, 0x1.555A80p-3f, 0x1.FFFDC6p-2f,
                               0x1.FFFFF6p-1f});
    Value result = b.fma(b.mul(t, scale), p, scale);
    // Outside the range of normal results.
    Value overflow = arith::CmpFOp::create(rewriter, loc, arith::CmpFPredicate::OGT, x,
                                           b.f(0x1.62E42Ep+6f /* largest float below ln(FLT_MAX) */));
    result = arith::SelectOp::create(rewriter, loc, overflow, b.f(INFINITY), result);
    Value underflow = arith::CmpFOp::create(rewriter, loc, arith::CmpFPredicate::OLT, x,
                                            b.f(-0x1.5D589Ep+6f /* ln(2^-126) */));
    result = arith::SelectOp::create(rewriter, loc, underflow, b.f(0.0f), result);
    rewriter.replaceOp(op, result);
    return success();
  }
};

struct LowerErfF32 : OpRewritePattern<math::ErfOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(math::ErfOp op, PatternRewriter &rewriter) const override {
    if (!isF32OrVector(op.getType()))
      return failure();
    F32Builder b(rewriter, op.getLoc(), op.getType());
    Location loc = op.getLoc();
    // maximumf / minimumf keep a NaN.
    Value x = arith::MaximumFOp::create(
        rewriter, loc, arith::MinimumFOp::create(rewriter, loc, op.getOperand(), b.f(4.0f)),
        b.f(-4.0f));
    Value x2 = b.mul(x, x);
    Value p = b.mul(x, b.polynomial(x2, {-2.72614225801306e-10f, 2.77068142495902e-08f,
                                         -2.10102402082508e-06f, -5.69250639462346e-05f,
                                         -7.34990630326855e-04f, -2.95459980854025e-03f,
                                         -1.60960333262415e-02f}));
    Value q = b.polynomial(x2, {-1.45660718464996e-05f, -2.13374055278905e-04f,
                                -1.68282697438203e-03f, -7.37332916720468e-03f,
                                -1.42647390514189e-02f});
    rewriter.replaceOpWithNewOp<arith::DivFOp>(op, p, q);
    return success();
  }
};

} // namespace

void populateMathApproximationPatterns(RewritePatternSet &patterns) {
  // Ahead of upstream's approximations (benefit 1), which stay for the
  // other types and functions.
  patterns.add<LowerExpF32, LowerErfF32>(patterns.getContext(), /*benefit=*/2);
}

} // namespace turbine::compiler
