//===- ExpApproximation.cpp - exp on f32 in 16 vector instructions --------===//
//
// Part of turbine-cpu-approximate-math (LowerKernelsToLLVM.cpp): math.exp on
// f32 (scalar or vector) without libm, cheaper than upstream's polynomial
// approximation (clamps on the input and on the exponent, a rounding, a
// degree-7 polynomial, a float-to-int conversion: ~22 instructions per
// vector), which was most of the cost of a SiLU or sigmoid epilogue.
//
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
//===----------------------------------------------------------------------===//
#include "targets/cpu/ExpApproximation.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/IR/TypeUtilities.h"

#include <cmath>

using namespace mlir;

namespace turbine::compiler {

namespace {

struct LowerExpF32 : OpRewritePattern<math::ExpOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(math::ExpOp op, PatternRewriter &rewriter) const override {
    Type type = op.getType();
    auto vectorType = dyn_cast<VectorType>(type);
    if (!getElementTypeOrSelf(type).isF32() || (vectorType && vectorType.isScalable()))
      return failure();
    Location loc = op.getLoc();
    Type intType = rewriter.getI32Type();
    if (vectorType)
      intType = vectorType.clone(intType);
    auto splat = [&](Type t, TypedAttr scalar) -> Value {
      if (auto v = dyn_cast<VectorType>(t))
        return arith::ConstantOp::create(rewriter, loc, DenseElementsAttr::get(v, scalar));
      return arith::ConstantOp::create(rewriter, loc, scalar);
    };
    auto f = [&](float v) { return splat(type, rewriter.getF32FloatAttr(v)); };
    auto fma = [&](Value a, Value b, Value c) { return math::FmaOp::create(rewriter, loc, a, b, c); };

    Value x = op.getOperand();
    // 0x1.8p23 + 127: adding it rounds to an integer and leaves n + 127 in
    // the low mantissa bits.
    const float magicBias = 0x1.8000FEp23f;
    Value biased = fma(x, f(0x1.715476p+0f /* log2(e) */), f(magicBias));
    biased = arith::MinimumFOp::create(rewriter, loc, biased, f(magicBias + 127.0f));
    Value scaleBits = arith::ShLIOp::create(
        rewriter, loc, arith::BitcastOp::create(rewriter, loc, intType, biased),
        splat(intType, rewriter.getI32IntegerAttr(23)));
    Value scale = arith::BitcastOp::create(rewriter, loc, type, scaleBits);
    Value n = arith::SubFOp::create(rewriter, loc, biased, f(magicBias));
    Value t = fma(n, f(-0x1.62E400p-1f /* -ln2 hi */), x);
    t = fma(n, f(-0x1.7F7D1Cp-20f /* -ln2 lo */), t);
    Value p = fma(f(0x1.0F9F9Cp-7f), t, f(0x1.573A1Ap-5f));
    p = fma(p, t, f(0x1.555A80p-3f));
    p = fma(p, t, f(0x1.FFFDC6p-2f));
    p = fma(p, t, f(0x1.FFFFF6p-1f));
    Value result = fma(arith::MulFOp::create(rewriter, loc, t, scale), p, scale);

    // Outside the range of normal results.
    Value overflow = arith::CmpFOp::create(rewriter, loc, arith::CmpFPredicate::OGT, x,
                                           f(0x1.62E42Ep+6f /* largest float below ln(FLT_MAX) */));
    result = arith::SelectOp::create(rewriter, loc, overflow, f(INFINITY), result);
    Value underflow = arith::CmpFOp::create(rewriter, loc, arith::CmpFPredicate::OLT, x,
                                            f(-0x1.5D589Ep+6f /* ln(2^-126) */));
    result = arith::SelectOp::create(rewriter, loc, underflow, f(0.0f), result);
    rewriter.replaceOp(op, result);
    return success();
  }
};

} // namespace

void populateExpApproximationPatterns(RewritePatternSet &patterns) {
  // Ahead of upstream's exp approximation (benefit 1), which stays for the
  // other types.
  patterns.add<LowerExpF32>(patterns.getContext(), /*benefit=*/2);
}

} // namespace turbine::compiler
