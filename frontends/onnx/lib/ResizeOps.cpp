//===- ResizeOps.cpp - ONNX Resize / Upsample -> linalg -------------------===//
//
// Resize (opsets 10, 11, 13+) and Upsample (7, 9) with every mode (nearest
// with each nearest_mode, N-linear, cubic with cubic_coeff_a and
// exclude_outside) and coordinate_transformation_mode (half_pixel,
// pytorch_half_pixel, align_corners, asymmetric, tf_half_pixel_for_nn,
// tf_crop_and_resize with roi and extrapolation_value).
//
// The interpolation is separable, so per resized axis and output position
// the source indices and weights ("taps": 1 for nearest, 2 for linear, 4
// for cubic) are computed at import time in double precision, following the
// ONNX reference implementation (onnx/backend/test/case/node/resize.py) step
// by step, and embedded as small constant tables. One linalg.generic over
// the output then reads the tables of its position, gathers the tap
// products with tensor.extract and sums them weighted. Axes whose input or
// output length is dynamic (a dynamic dim, or sizes from a shape
// computation) compute the same coordinates and weights in the kernel, in
// double precision, and their output length floor(len * scale) on the host
// with exact integer arithmetic. Scales, roi and sizes known only at run
// time are supported too: sizes are read on the host (getShapeOperand);
// for scales a one-element-per-axis kernel computes (int64)(len * scale)
// as ONNX's reference does and the host reads those lengths; the kernel
// reads the scale and roi values itself and computes every axis' taps (the
// import-time tables need the values; an axis whose run-time scale is 1 is
// not known to be trivial, so it costs its taps like any other).
//
// RoiAlign, which resamples too, and GridSample: SamplingOps.cpp.
//===----------------------------------------------------------------------===//
#include "ImportContext.h"

#include <algorithm>
#include <cmath>

using namespace mlir;

namespace turbine::onnx_frontend {
namespace {

enum class ResizeMode { Nearest, Linear, Cubic };

/// The attributes that decide the interpolation of one axis.
struct ResizeSettings {
  ResizeMode mode = ResizeMode::Nearest;
  std::string coordinateMode = "half_pixel";
  std::string nearestMode = "round_prefer_floor";
  double cubicA = -0.75;
  bool excludeOutside = false;
  double extrapolationValue = 0.0;
};

/// Source taps of one axis: per output position, `taps` indices into the
/// input axis (already clamped) and their weights; `valid` false where
/// tf_crop_and_resize extrapolates.
struct AxisTable {
  int64_t taps = 1;
  std::vector<int32_t> indices;  ///< [outLen * taps]
  std::vector<double> weights;   ///< [outLen * taps]
  std::vector<bool> valid;       ///< [outLen]
  bool anyInvalid = false;

  /// True when output position x reads exactly input position x.
  bool isIdentity(int64_t inLen, int64_t outLen) const {
    if (inLen != outLen || anyInvalid)
      return false;
    for (int64_t x = 0; x < outLen; ++x) {
      double total = 0;
      for (int64_t k = 0; k < taps; ++k) {
        double w = weights[x * taps + k];
        if (w != 0 && indices[x * taps + k] != x)
          return false;
        total += w;
      }
      if (total != 1.0)
        return false;
    }
    return true;
  }
};

/// ONNX's coefficient functions for a ratio in (0, 1].
std::vector<double> tapCoefficients(const ResizeSettings &s, double ratio, bool ratioIsInteger) {
  switch (s.mode) {
  case ResizeMode::Nearest: {
    if (ratioIsInteger)
      return {0, 1};
    bool ceil;
    if (s.nearestMode == "round_prefer_ceil")
      ceil = ratio >= 0.5;
    else if (s.nearestMode == "floor")
      ceil = false;
    else if (s.nearestMode == "ceil")
      ceil = true;
    else // round_prefer_floor
      ceil = ratio > 0.5;
    return {ceil ? 0.0 : 1.0, ceil ? 1.0 : 0.0};
  }
  case ResizeMode::Linear:
    return {1 - ratio, ratio};
  case ResizeMode::Cubic: {
    double a = s.cubicA, r = ratio, q = 1 - ratio;
    return {((a * (r + 1) - 5 * a) * (r + 1) + 8 * a) * (r + 1) - 4 * a,
            ((a + 2) * r - (a + 3)) * r * r + 1,
            ((a + 2) * q - (a + 3)) * q * q + 1,
            ((a * (q + 1) - 5 * a) * (q + 1) + 8 * a) * (q + 1) - 4 * a};
  }
  }
  return {};
}

/// The `n` indices nearest to `x` among [0, limit), ties to the smaller
/// index, in ascending order (ONNX's get_neighbor_idxes).
std::vector<int64_t> nearestIndices(double x, int64_t n, int64_t limit) {
  int64_t center = std::clamp<int64_t>((int64_t)std::floor(x), 0, limit - 1);
  std::vector<int64_t> candidates;
  for (int64_t i = std::max<int64_t>(0, center - n - 1); i < std::min(limit, center + n + 2); ++i)
    candidates.push_back(i);
  std::stable_sort(candidates.begin(), candidates.end(), [&](int64_t a, int64_t b) {
    double da = std::abs(x - (double)a), db = std::abs(x - (double)b);
    return da != db ? da < db : a < b;
  });
  candidates.resize(std::min<size_t>(candidates.size(), n));
  std::sort(candidates.begin(), candidates.end());
  return candidates;
}

/// Computes the taps of one axis: `scale` is the ONNX scale factor (given,
/// or out/in when sizes are given), roiStart/roiEnd the axis' roi.
AxisTable computeAxisTable(const ResizeSettings &s, int64_t inLen, int64_t outLen, double scale,
                           double roiStart, double roiEnd) {
  AxisTable t;
  const int64_t n = s.mode == ResizeMode::Cubic ? 4 : 2;
  t.taps = n;
  t.valid.assign(outLen, true);
  const double inputWidth = (double)inLen;
  const double outputWidth = scale * inputWidth;
  const std::string &ctm = s.coordinateMode;
  for (int64_t xi = 0; xi < outLen; ++xi) {
    double x = (double)xi, xOri;
    bool valid = true;
    if (ctm == "align_corners") {
      xOri = outputWidth == 1 ? 0.0 : x * (inputWidth - 1) / (outputWidth - 1);
    } else if (ctm == "asymmetric") {
      xOri = x / scale;
    } else if (ctm == "tf_crop_and_resize") {
      xOri = outputWidth == 1 ? (roiEnd - roiStart) * (inputWidth - 1) / 2
                              : x * (roiEnd - roiStart) * (inputWidth - 1) / (outputWidth - 1);
      xOri += roiStart * (inputWidth - 1);
      valid = !(xOri < 0 || xOri > inputWidth - 1);
    } else if (ctm == "pytorch_half_pixel") {
      xOri = outputWidth == 1 ? -0.5 : (x + 0.5) / scale - 0.5;
    } else if (ctm == "tf_half_pixel_for_nn") {
      xOri = (x + 0.5) / scale;
    } else { // half_pixel
      xOri = (x + 0.5) / scale - 0.5;
    }
    if (!valid) {
      t.valid[xi] = false;
      t.anyInvalid = true;
      for (int64_t k = 0; k < n; ++k) {
        t.indices.push_back(0);
        t.weights.push_back(0);
      }
      continue;
    }
    double xOriInt = std::floor(xOri);
    bool isInteger = xOri == xOriInt;
    double ratio = isInteger ? 1.0 : xOri - xOriInt;
    std::vector<double> coeffs = tapCoefficients(s, ratio, isInteger);
    // Neighbors in the input padded by ceil(n/2) at each end ('edge').
    int64_t pad = (n + 1) / 2;
    std::vector<int64_t> idx = nearestIndices(xOri + pad, n, inLen + 2 * pad);
    for (int64_t &i : idx)
      i -= pad;
    if (s.excludeOutside) {
      double sum = 0;
      for (int64_t k = 0; k < n; ++k) {
        if (idx[k] < 0 || idx[k] >= inLen)
          coeffs[k] = 0;
        sum += coeffs[k];
      }
      for (double &c : coeffs)
        c /= sum;
    }
    for (int64_t k = 0; k < n; ++k) {
      t.indices.push_back((int32_t)std::clamp<int64_t>(idx[k], 0, inLen - 1));
      t.weights.push_back(coeffs[k]);
    }
  }
  // Nearest keeps only the chosen tap.
  if (s.mode == ResizeMode::Nearest) {
    AxisTable one;
    one.taps = 1;
    one.valid = t.valid;
    one.anyInvalid = t.anyInvalid;
    for (int64_t x = 0; x < outLen; ++x) {
      bool second = t.weights[x * 2 + 1] != 0;
      one.indices.push_back(t.indices[x * 2 + (second ? 1 : 0)]);
      one.weights.push_back(1.0);
    }
    return one;
  }
  return t;
}

/// Reads a constant float tensor (any float type) as doubles.
std::optional<std::vector<double>> constantFloats(ImportContext &ctx, const std::string &name) {
  auto attr = ctx.getConstant(name);
  if (!attr || !isa<FloatType>(attr->getType().getElementType()))
    return std::nullopt;
  std::vector<double> values;
  for (APFloat v : attr->getValues<APFloat>()) {
    bool lost = false;
    v.convert(APFloat::IEEEdouble(), APFloat::rmNearestTiesToEven, &lost);
    values.push_back(v.convertToDouble());
  }
  return values;
}

/// True when input `i` is given and not a constant with zero elements (opset
/// 11 passes absent scales/roi as empty tensors).
bool inputPresent(ImportContext &ctx, const onnx::NodeProto &node, int i) {
  if (!ImportContext::hasInput(node, i))
    return false;
  if (auto attr = ctx.getConstant(node.input(i)))
    return attr->getNumElements() != 0;
  if (Value v = ctx.lookupValue(node.input(i)))
    if (auto type = dyn_cast<RankedTensorType>(v.getType()); type && type.hasStaticShape())
      return type.getNumElements() != 0;
  return true;
}

/// Input `i` as a float tensor whose values are read in the Resize kernel
/// (run-time scales or roi), or failure with a message naming `what`.
FailureOr<Value> runtimeFloatInput(ImportContext &ctx, const onnx::NodeProto &node, int i, const char *what) {
  auto t = ctx.getTensor(node, node.input(i));
  if (failed(t))
    return failure();
  if (!isa<FloatType>(cast<RankedTensorType>(t->getType()).getElementType())) {
    (void)ctx.fail(node, std::string("input '") + what + "' ('" + node.input(i) + "') must be a float tensor");
    return failure();
  }
  return *t;
}

/// floor(len * scale) on the host with index arithmetic only: a float scale
/// is m / 2^e exactly, so the product is floordiv(len * m, 2^e) (what the
/// reference's double product gives, as len * m fits in 53 bits).
Value scaledLength(ImportContext &ctx, Value len, double scale) {
  int exponent = 0;
  double fraction = std::frexp(scale, &exponent); // scale = fraction * 2^exponent
  int64_t m = (int64_t)std::ldexp(fraction, 53);
  int64_t e = 53 - exponent;
  while (e > 0 && m % 2 == 0) {
    m /= 2;
    --e;
  }
  OpBuilder &b = ctx.builder;
  for (; e < 0; ++e) // scale is an integer times a power of two
    m *= 2;
  Value product = arith::MulIOp::create(b, ctx.loc, len, ctx.indexConstant(m));
  if (e == 0)
    return product;
  return arith::FloorDivSIOp::create(b, ctx.loc, product, ctx.indexConstant(int64_t(1) << e));
}

/// How one resized axis gets its taps in the kernel: from import-time tables
/// (static lengths), or computed from the output index (dynamic lengths).
struct AxisPlan {
  int64_t axis = 0;
  int64_t taps = 1;
  // Table plan: operand positions.
  bool fromTable = false;
  int64_t firstIndex = 0, firstWeight = 0, validOperand = -1;
  // Computed plan: lengths (index values captured by the kernel) and the
  // scale when given (else out / in).
  Value inLen, outLen;
  std::optional<double> scale;
  double roiStart = 0, roiEnd = 1;
  // Run-time scales / roi (float tensors read in the kernel at the axis'
  // position: scales[axis], roi[axis] and roi[rank + axis]); null when the
  // values above are the import-time ones.
  Value scaleTensor, roiTensor;
  int64_t rank = 0;
};

/// Taps of a computed axis plan, evaluated in double precision in the kernel
/// with the same formulas as computeAxisTable. Positions always satisfy
/// x_original >= -0.5 for these transforms, so taps floor(x)-1 .. floor(x)+2
/// (cubic) or floor(x), floor(x)+1 (linear) are the reference's neighbors.
void computeTaps(OpBuilder &b, Location l, const ResizeSettings &s, const AxisPlan &plan, Value position,
                 SmallVector<Value> &indices, SmallVector<Value> &weights, Value &valid) {
  Type f64 = b.getF64Type(), i64 = b.getI64Type();
  auto fc = [&](double v) -> Value { return arith::ConstantOp::create(b, l, b.getFloatAttr(f64, v)); };
  auto toF = [&](Value index) -> Value {
    return arith::SIToFPOp::create(b, l, f64, arith::IndexCastOp::create(b, l, i64, index));
  };
  auto readF = [&](Value tensor, int64_t i) -> Value {
    Value v = tensor::ExtractOp::create(b, l, tensor, ValueRange{arith::ConstantIndexOp::create(b, l, i)});
    return v.getType() == f64 ? v : (Value)arith::ExtFOp::create(b, l, f64, v);
  };
  Value x = toF(position), inF = toF(plan.inLen);
  Value scale = plan.scaleTensor ? readF(plan.scaleTensor, plan.axis)
                : plan.scale     ? fc(*plan.scale)
                                 : (Value)arith::DivFOp::create(b, l, toF(plan.outLen), inF);
  Value outputWidth = arith::MulFOp::create(b, l, scale, inF);
  Value widthIsOne = arith::CmpFOp::create(b, l, arith::CmpFPredicate::OEQ, outputWidth, fc(1.0));
  Value inMinusOne = arith::SubFOp::create(b, l, inF, fc(1.0));
  Value widthMinusOne = arith::SubFOp::create(b, l, outputWidth, fc(1.0));
  Value halfPixel = arith::SubFOp::create(
      b, l, arith::DivFOp::create(b, l, arith::AddFOp::create(b, l, x, fc(0.5)), scale), fc(0.5));
  const std::string &ctm = s.coordinateMode;
  Value xOri;
  if (ctm == "align_corners") {
    Value v = arith::DivFOp::create(b, l, arith::MulFOp::create(b, l, x, inMinusOne), widthMinusOne);
    xOri = arith::SelectOp::create(b, l, widthIsOne, fc(0.0), v);
  } else if (ctm == "asymmetric") {
    xOri = arith::DivFOp::create(b, l, x, scale);
  } else if (ctm == "tf_crop_and_resize") {
    Value roiStart = plan.roiTensor ? readF(plan.roiTensor, plan.axis) : fc(plan.roiStart);
    Value roiEnd = plan.roiTensor ? readF(plan.roiTensor, plan.rank + plan.axis) : fc(plan.roiEnd);
    Value extent = arith::SubFOp::create(b, l, roiEnd, roiStart);
    Value one = arith::DivFOp::create(b, l, arith::MulFOp::create(b, l, extent, inMinusOne), fc(2.0));
    Value many = arith::DivFOp::create(
        b, l, arith::MulFOp::create(b, l, arith::MulFOp::create(b, l, x, extent), inMinusOne), widthMinusOne);
    xOri = arith::SelectOp::create(b, l, widthIsOne, one, many);
    xOri = arith::AddFOp::create(b, l, xOri, arith::MulFOp::create(b, l, roiStart, inMinusOne));
    Value below = arith::CmpFOp::create(b, l, arith::CmpFPredicate::OLT, xOri, fc(0.0));
    Value above = arith::CmpFOp::create(b, l, arith::CmpFPredicate::OGT, xOri, inMinusOne);
    valid = arith::XOrIOp::create(b, l, arith::OrIOp::create(b, l, below, above),
                                  arith::ConstantOp::create(b, l, b.getBoolAttr(true)));
  } else if (ctm == "pytorch_half_pixel") {
    xOri = arith::SelectOp::create(b, l, widthIsOne, fc(-0.5), halfPixel);
  } else if (ctm == "tf_half_pixel_for_nn") {
    xOri = arith::DivFOp::create(b, l, arith::AddFOp::create(b, l, x, fc(0.5)), scale);
  } else {
    xOri = halfPixel;
  }
  Value floorF = math::FloorOp::create(b, l, xOri);
  Value frac = arith::SubFOp::create(b, l, xOri, floorF);
  Value floorI = arith::IndexCastOp::create(b, l, b.getIndexType(), arith::FPToSIOp::create(b, l, i64, floorF));
  Value last = arith::SubIOp::create(b, l, plan.inLen, arith::ConstantIndexOp::create(b, l, 1));
  auto clampIndex = [&](Value i) -> Value {
    return arith::MinSIOp::create(b, l, arith::MaxSIOp::create(b, l, i, arith::ConstantIndexOp::create(b, l, 0)),
                                  last);
  };
  auto offset = [&](int64_t k) -> Value {
    return arith::AddIOp::create(b, l, floorI, arith::ConstantIndexOp::create(b, l, k));
  };
  if (s.mode == ResizeMode::Nearest) {
    Value up;
    if (s.nearestMode == "round_prefer_ceil")
      up = arith::CmpFOp::create(b, l, arith::CmpFPredicate::OGE, frac, fc(0.5));
    else if (s.nearestMode == "floor")
      up = arith::ConstantOp::create(b, l, b.getBoolAttr(false));
    else if (s.nearestMode == "ceil")
      up = arith::CmpFOp::create(b, l, arith::CmpFPredicate::OGT, frac, fc(0.0));
    else
      up = arith::CmpFOp::create(b, l, arith::CmpFPredicate::OGT, frac, fc(0.5));
    indices.push_back(clampIndex(arith::SelectOp::create(b, l, up, offset(1), floorI)));
    return;
  }
  SmallVector<Value> rawIndices, coeffs;
  if (s.mode == ResizeMode::Linear) {
    rawIndices = {floorI, offset(1)};
    coeffs = {arith::SubFOp::create(b, l, fc(1.0), frac), frac};
  } else {
    double a = s.cubicA;
    // The cubic convolution kernel at distance t (0 <= t <= 2).
    auto near = [&](Value t) -> Value { // ((a+2) t - (a+3)) t^2 + 1
      Value v = arith::SubFOp::create(b, l, arith::MulFOp::create(b, l, fc(a + 2), t), fc(a + 3));
      return arith::AddFOp::create(b, l, arith::MulFOp::create(b, l, arith::MulFOp::create(b, l, v, t), t), fc(1.0));
    };
    auto far = [&](Value t) -> Value { // ((a t - 5a) t + 8a) t - 4a
      Value v = arith::SubFOp::create(b, l, arith::MulFOp::create(b, l, fc(a), t), fc(5 * a));
      v = arith::AddFOp::create(b, l, arith::MulFOp::create(b, l, v, t), fc(8 * a));
      return arith::SubFOp::create(b, l, arith::MulFOp::create(b, l, v, t), fc(4 * a));
    };
    Value q = arith::SubFOp::create(b, l, fc(1.0), frac);
    rawIndices = {offset(-1), floorI, offset(1), offset(2)};
    coeffs = {far(arith::AddFOp::create(b, l, frac, fc(1.0))), near(frac), near(q),
              far(arith::AddFOp::create(b, l, q, fc(1.0)))};
  }
  if (s.excludeOutside) {
    Value sum = fc(0.0);
    for (auto [i, c] : llvm::zip(rawIndices, coeffs)) {
      Value inside = arith::AndIOp::create(
          b, l, arith::CmpIOp::create(b, l, arith::CmpIPredicate::sge, i, arith::ConstantIndexOp::create(b, l, 0)),
          arith::CmpIOp::create(b, l, arith::CmpIPredicate::slt, i, plan.inLen));
      c = arith::SelectOp::create(b, l, inside, c, fc(0.0));
      sum = arith::AddFOp::create(b, l, sum, c);
    }
    for (Value &c : coeffs)
      c = arith::DivFOp::create(b, l, c, sum);
  }
  for (Value i : rawIndices)
    indices.push_back(clampIndex(i));
  weights = coeffs;
}

/// Output lengths (int64)(len * scale) of every axis for run-time `scales`
/// (a float tensor [rank]), as ONNX's reference computes them (the product
/// in double precision, truncated): one small kernel, read on the host.
/// Checks at run time that they are not negative.
FailureOr<std::vector<SymDim>> runtimeScaledLengths(ImportContext &ctx, const onnx::NodeProto &node, Value x,
                                                    Value scales) {
  int64_t rank = cast<RankedTensorType>(x.getType()).getRank();
  ShapeTensor inLens;
  inLens.elementType = ctx.builder.getI64Type();
  for (int64_t d = 0; d < rank; ++d)
    inLens.elements.push_back(ctx.toSymDim(ctx.dim(x, d)));
  Value lengths = ctx.materialize(inLens);
  auto product = ctx.elementwise(node, {lengths, scales}, ctx.builder.getI64Type(),
                                 [](OpBuilder &b, Location l, ValueRange args) -> Value {
                                   Type f64 = b.getF64Type();
                                   Value len = arith::SIToFPOp::create(b, l, f64, args[0]);
                                   Value scale = args[1].getType() == f64
                                                     ? args[1]
                                                     : (Value)arith::ExtFOp::create(b, l, f64, args[1]);
                                   return arith::FPToSIOp::create(b, l, b.getI64Type(),
                                                                  arith::MulFOp::create(b, l, len, scale));
                                 });
  if (failed(product))
    return failure();
  ShapeTensor out = ctx.readAtRunTime(*product);
  for (const SymDim &d : out.elements)
    if (failed(ctx.check(node, ctx.compare(arith::CmpIPredicate::sge, d.value, ctx.builder.getIndexAttr(0)),
                         "scales must be positive (an output length floor(len * scale) is negative)")))
      return failure();
  return out.elements;
}

/// Emits the resize of `x` given per-axis scales or output sizes (exactly
/// one of them non-empty) and the roi (empty unless tf_crop_and_resize).
/// Axes with static lengths read import-time tap tables; axes with a dynamic
/// input or output length compute their taps in the kernel.
/// `runtimeScales` / `runtimeRoi` (float tensors, null unless the values are
/// known only at run time) replace `scales` / `roi`: the output lengths are
/// then computed by a small kernel and read on the host, and every resized
/// axis computes its taps in the kernel from the values it reads.
LogicalResult emitResize(ImportContext &ctx, const onnx::NodeProto &node, Value x,
                         const ResizeSettings &s, const std::vector<double> &scales,
                         std::vector<SymDim> sizes, const std::vector<double> &roi,
                         Value runtimeScales = nullptr, Value runtimeRoi = nullptr) {
  auto type = cast<RankedTensorType>(x.getType());
  int64_t rank = type.getRank();
  Type et = type.getElementType();
  auto staticLength = [](Value t) {
    auto tt = cast<RankedTensorType>(t.getType());
    return tt.getRank() == 1 && !tt.isDynamicDim(0) && isa<FloatType>(tt.getElementType()) ? tt.getDimSize(0)
                                                                                            : (int64_t)-1;
  };
  if (runtimeScales) {
    if (staticLength(runtimeScales) != rank)
      return ctx.fail(node, "scales must be a 1-D float tensor of static length rank(X) = " + std::to_string(rank));
    auto lengths = runtimeScaledLengths(ctx, node, x, runtimeScales);
    if (failed(lengths))
      return failure();
    sizes = *lengths;
  }
  if (runtimeRoi && staticLength(runtimeRoi) != 2 * rank)
    return ctx.fail(node, "roi must be a 1-D float tensor of static length 2 * rank(X) = " +
                              std::to_string(2 * rank));
  if (!scales.empty() && (int64_t)scales.size() != rank)
    return ctx.fail(node, "scales has " + std::to_string(scales.size()) + " entries for an input of rank " +
                              std::to_string(rank));
  if (!sizes.empty() && (int64_t)sizes.size() != rank)
    return ctx.fail(node, "sizes has " + std::to_string(sizes.size()) + " entries for an input of rank " +
                              std::to_string(rank));
  if (s.coordinateMode == "tf_crop_and_resize" && !runtimeRoi && (int64_t)roi.size() != 2 * rank)
    return ctx.fail(node, "tf_crop_and_resize needs a constant roi with 2 * rank entries");
  if (s.mode != ResizeMode::Nearest && !isa<FloatType>(et))
    return ctx.unsupported(node, "linear and cubic modes need a floating-point input");

  OpBuilder &b = ctx.builder;
  SmallVector<OpFoldResult> outSizes;
  SmallVector<Value> tableOperands;
  SmallVector<AffineMap> maps;
  SmallVector<AxisPlan> plans;
  Type weightType = isa<FloatType>(et) ? et : b.getF32Type();
  for (int64_t d = 0; d < rank; ++d) {
    double roiStart = roi.empty() ? 0.0 : roi[d], roiEnd = roi.empty() ? 1.0 : roi[rank + d];
    std::optional<double> scale;
    if (!scales.empty()) {
      scale = scales[d];
      if (!(*scale > 0))
        return ctx.fail(node, "scales must be positive");
    }
    SymDim inDim = ctx.toSymDim(ctx.dim(x, d));
    bool crop = s.coordinateMode == "tf_crop_and_resize" && (runtimeRoi || roiStart != 0 || roiEnd != 1);
    // Scale 1, or a size that is the input's own dim (e.g. sizes computed
    // with Shape on a dynamic batch), keeps the axis as it is.
    bool trivial = !crop && ((scale && *scale == 1.0) || (!sizes.empty() && sizes[d] == inDim));
    if (trivial && !inDim.isConstant()) {
      outSizes.push_back(ctx.dim(x, d));
      continue;
    }
    SymDim outDim = scale ? (inDim.isConstant() ? SymDim::of((int64_t)(*scale * (double)inDim.constant))
                                                : SymDim::of(scaledLength(ctx, inDim.value, *scale)))
                          : sizes[d];
    if (outDim.isConstant() && outDim.constant < 0)
      return ctx.fail(node, "sizes must be non-negative");
    if (outDim.isRuntimeData) {
      OpFoldResult out = ctx.toFoldResult(outDim), in = ctx.toFoldResult(inDim), zero = b.getIndexAttr(0);
      if (failed(ctx.check(node, ctx.compare(arith::CmpIPredicate::sge, out, zero), "sizes must be non-negative")) ||
          failed(ctx.check(node,
                           ctx.either(ctx.compare(arith::CmpIPredicate::ne, in, zero),
                                      ctx.compare(arith::CmpIPredicate::eq, out, zero)),
                           "cannot resize an empty dim to a non-zero size")))
        return failure();
    }
    outSizes.push_back(ctx.toFoldResult(outDim));
    if (inDim.isConstant() && outDim.isConstant() && !runtimeRoi) {
      int64_t inLen = inDim.constant, outLen = outDim.constant;
      if (inLen == 0 && outLen != 0)
        return ctx.fail(node, "cannot resize empty dim " + std::to_string(d) + " to size " +
                                  std::to_string(outLen));
      if (outLen == 0)
        continue;
      AxisTable t = computeAxisTable(s, inLen, outLen, scale ? *scale : (double)outLen / (double)inLen,
                                     roiStart, roiEnd);
      if (t.isIdentity(inLen, outLen))
        continue;
      // Per tap an index table (i32) and a weight table (element type),
      // plus a validity table (i1) where tf_crop_and_resize extrapolates,
      // each read at the axis' output position.
      AffineMap map = AffineMap::get(rank, 0, {b.getAffineDimExpr(d)}, &ctx.context);
      AxisPlan plan;
      plan.axis = d;
      plan.taps = t.taps;
      plan.fromTable = true;
      auto indexType = RankedTensorType::get({outLen}, b.getI32Type());
      plan.firstIndex = tableOperands.size();
      for (int64_t k = 0; k < t.taps; ++k) {
        std::vector<int32_t> column;
        for (int64_t p = 0; p < outLen; ++p)
          column.push_back(t.indices[p * t.taps + k]);
        tableOperands.push_back(arith::ConstantOp::create(
            b, ctx.loc, DenseElementsAttr::get(indexType, ArrayRef<int32_t>(column))));
        maps.push_back(map);
      }
      plan.firstWeight = tableOperands.size();
      if (s.mode != ResizeMode::Nearest) {
        auto weightTensorType = RankedTensorType::get({outLen}, weightType);
        for (int64_t k = 0; k < t.taps; ++k) {
          SmallVector<Attribute> column;
          for (int64_t p = 0; p < outLen; ++p)
            column.push_back(b.getFloatAttr(weightType, t.weights[p * t.taps + k]));
          tableOperands.push_back(
              arith::ConstantOp::create(b, ctx.loc, DenseElementsAttr::get(weightTensorType, column)));
          maps.push_back(map);
        }
      }
      if (t.anyInvalid) {
        plan.validOperand = tableOperands.size();
        SmallVector<bool> valid(t.valid.begin(), t.valid.end());
        tableOperands.push_back(arith::ConstantOp::create(
            b, ctx.loc,
            DenseElementsAttr::get(RankedTensorType::get({outLen}, b.getI1Type()), ArrayRef<bool>(valid))));
        maps.push_back(map);
      }
      plans.push_back(plan);
      continue;
    }
    AxisPlan plan;
    plan.axis = d;
    plan.taps = s.mode == ResizeMode::Nearest ? 1 : s.mode == ResizeMode::Linear ? 2 : 4;
    plan.inLen = ctx.toIndexValue(ctx.dim(x, d));
    plan.outLen = ctx.toIndexValue(outSizes.back());
    plan.scale = scale;
    plan.roiStart = roiStart;
    plan.roiEnd = roiEnd;
    plan.scaleTensor = runtimeScales;
    plan.roiTensor = runtimeRoi;
    plan.rank = rank;
    plans.push_back(plan);
  }

  maps.push_back(b.getMultiDimIdentityMap(rank));
  Value init = ctx.empty(outSizes, et);
  SmallVector<utils::IteratorType> parallel(rank, utils::IteratorType::parallel);
  bool weighted = s.mode != ResizeMode::Nearest;
  double extrapolation = s.extrapolationValue;
  auto generic = linalg::GenericOp::create(
      b, ctx.loc, TypeRange{init.getType()}, tableOperands, ValueRange{init}, maps, parallel,
      [&](OpBuilder &nb, Location l, ValueRange args) {
        SmallVector<Value> position;
        for (int64_t d = 0; d < rank; ++d)
          position.push_back(linalg::IndexOp::create(nb, l, d));
        // Per resized axis: tap indices, weights (not for nearest), validity.
        SmallVector<SmallVector<Value>> tapIndices(plans.size()), tapWeights(plans.size());
        SmallVector<Value> valid(plans.size());
        for (auto [a, plan] : llvm::enumerate(plans)) {
          if (!plan.fromTable) {
            computeTaps(nb, l, s, plan, position[plan.axis], tapIndices[a], tapWeights[a], valid[a]);
            if (weighted && weightType != nb.getF64Type())
              for (Value &w : tapWeights[a])
                w = arith::TruncFOp::create(nb, l, weightType, w);
            continue;
          }
          for (int64_t k = 0; k < plan.taps; ++k) {
            tapIndices[a].push_back(arith::IndexCastOp::create(nb, l, nb.getIndexType(), args[plan.firstIndex + k]));
            if (weighted)
              tapWeights[a].push_back(args[plan.firstWeight + k]);
          }
          if (plan.validOperand >= 0)
            valid[a] = args[plan.validOperand];
        }
        // Enumerate the tap combinations (odometer over the resized axes).
        SmallVector<int64_t> tap(plans.size(), 0);
        Value sum;
        while (true) {
          SmallVector<Value> idx(position);
          Value weight;
          for (auto [a, plan] : llvm::enumerate(plans)) {
            idx[plan.axis] = tapIndices[a][tap[a]];
            if (weighted) {
              Value w = tapWeights[a][tap[a]];
              weight = weight ? (Value)arith::MulFOp::create(nb, l, weight, w) : w;
            }
          }
          Value v = tensor::ExtractOp::create(nb, l, x, idx);
          if (weighted) {
            Value term = weight ? (Value)arith::MulFOp::create(nb, l, weight, v) : v;
            sum = sum ? (Value)arith::AddFOp::create(nb, l, sum, term) : term;
          } else {
            sum = v;
          }
          int64_t a = 0;
          for (; a < (int64_t)plans.size(); ++a) {
            if (++tap[a] < plans[a].taps)
              break;
            tap[a] = 0;
          }
          if (a == (int64_t)plans.size())
            break;
        }
        for (Value v : valid) {
          if (!v)
            continue;
          Value fallback = isa<FloatType>(et)
                               ? (Value)arith::ConstantOp::create(nb, l, nb.getFloatAttr(et, extrapolation))
                               : (Value)arith::ConstantOp::create(
                                     nb, l, nb.getIntegerAttr(et, (int64_t)extrapolation));
          sum = arith::SelectOp::create(nb, l, v, sum, fallback);
        }
        linalg::YieldOp::create(nb, l, sum);
      });
  Value result = generic.getResult(0);
  ctx.recordDims(result, outSizes);
  ctx.setValue(node.output(0), result);
  return success();
}

FailureOr<ResizeMode> parseMode(ImportContext &ctx, const onnx::NodeProto &node, bool allowCubic) {
  std::string mode = ctx.stringAttr(node, "mode", "nearest");
  if (mode == "nearest")
    return ResizeMode::Nearest;
  if (mode == "linear" || mode == "bilinear")
    return ResizeMode::Linear;
  if (mode == "cubic" && allowCubic)
    return ResizeMode::Cubic;
  (void)ctx.unsupported(node, "mode '" + mode + "'");
  return failure();
}

/// Upsample (7: scales attribute; 9: scales input) and Resize-10: the
/// asymmetric transform, nearest rounds down.
LogicalResult convertLegacyResize(ImportContext &ctx, const onnx::NodeProto &node, bool scalesAttr) {
  auto x = ctx.getTensor(node, node.input(0));
  if (failed(x))
    return failure();
  ResizeSettings s;
  auto mode = parseMode(ctx, node, /*allowCubic=*/false);
  if (failed(mode))
    return failure();
  s.mode = *mode;
  s.coordinateMode = "asymmetric";
  s.nearestMode = "floor";
  std::vector<double> scales;
  if (scalesAttr) {
    const onnx::AttributeProto *a = ctx.attr(node, "scales");
    if (!a)
      return ctx.fail(node, "missing attribute 'scales'");
    scales.assign(a->floats().begin(), a->floats().end());
  } else {
    if (!ImportContext::hasInput(node, 1))
      return ctx.fail(node, "missing input 'scales'");
    auto c = constantFloats(ctx, node.input(1));
    if (!c) {
      auto t = runtimeFloatInput(ctx, node, 1, "scales");
      if (failed(t))
        return failure();
      return emitResize(ctx, node, *x, s, {}, {}, {}, *t);
    }
    scales = *c;
  }
  return emitResize(ctx, node, *x, s, scales, {}, {});
}

/// Resize-11 and later: inputs X, roi, scales, sizes.
LogicalResult convertResize(ImportContext &ctx, const onnx::NodeProto &node) {
  auto x = ctx.getTensor(node, node.input(0));
  if (failed(x))
    return failure();
  ResizeSettings s;
  auto mode = parseMode(ctx, node, /*allowCubic=*/true);
  if (failed(mode))
    return failure();
  s.mode = *mode;
  s.coordinateMode = ctx.stringAttr(node, "coordinate_transformation_mode", "half_pixel");
  static const char *kModes[] = {"half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric",
                                 "tf_half_pixel_for_nn", "tf_crop_and_resize"};
  if (!llvm::is_contained(kModes, s.coordinateMode))
    return ctx.unsupported(node, "coordinate_transformation_mode '" + s.coordinateMode + "'");
  s.nearestMode = ctx.stringAttr(node, "nearest_mode", "round_prefer_floor");
  static const char *kNearest[] = {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"};
  if (!llvm::is_contained(kNearest, s.nearestMode))
    return ctx.unsupported(node, "nearest_mode '" + s.nearestMode + "'");
  s.cubicA = ctx.floatAttr(node, "cubic_coeff_a", -0.75f);
  s.excludeOutside = ctx.intAttr(node, "exclude_outside", 0) != 0;
  s.extrapolationValue = ctx.floatAttr(node, "extrapolation_value", 0.0f);
  // Opset 18 additions; only their defaults are supported.
  if (ctx.intAttr(node, "antialias", 0) != 0)
    return ctx.unsupported(node, "antialias=1");
  if (ctx.attr(node, "axes"))
    return ctx.unsupported(node, "the 'axes' attribute");
  if (ctx.stringAttr(node, "keep_aspect_ratio_policy", "stretch") != "stretch")
    return ctx.unsupported(node, "keep_aspect_ratio_policy other than 'stretch'");

  std::vector<double> roi, scales;
  std::vector<SymDim> sizes;
  Value runtimeRoi, runtimeScales;
  if (s.coordinateMode == "tf_crop_and_resize" && inputPresent(ctx, node, 1)) {
    if (auto c = constantFloats(ctx, node.input(1))) {
      roi = *c;
    } else {
      auto t = runtimeFloatInput(ctx, node, 1, "roi");
      if (failed(t))
        return failure();
      runtimeRoi = *t;
    }
  }
  bool hasScales = inputPresent(ctx, node, 2), hasSizes = inputPresent(ctx, node, 3);
  if (hasScales == hasSizes)
    return ctx.fail(node, "exactly one of 'scales' and 'sizes' must be given");
  if (hasScales) {
    if (auto c = constantFloats(ctx, node.input(2))) {
      scales = *c;
    } else {
      auto t = runtimeFloatInput(ctx, node, 2, "scales");
      if (failed(t))
        return failure();
      runtimeScales = *t;
    }
  } else {
    // Known at import time (constant or shape computation), else read on
    // the host at run time.
    auto shape = ctx.getShapeOperand(node, 3, "sizes");
    if (failed(shape))
      return failure();
    sizes.assign(shape->elements.begin(), shape->elements.end());
  }
  if (s.coordinateMode == "tf_crop_and_resize" && roi.empty() && !runtimeRoi)
    return ctx.fail(node, "tf_crop_and_resize needs the roi input");
  return emitResize(ctx, node, *x, s, scales, sizes, roi, runtimeScales, runtimeRoi);
}

} // namespace

void registerResizeOps(OpRegistry &r) {
  r.add("Upsample", [](ImportContext &c, const onnx::NodeProto &n) { return convertLegacyResize(c, n, true); }, 7, 8);
  r.add("Upsample", [](ImportContext &c, const onnx::NodeProto &n) { return convertLegacyResize(c, n, false); }, 9, 9);
  r.add("Resize", [](ImportContext &c, const onnx::NodeProto &n) { return convertLegacyResize(c, n, false); }, 10, 10);
  r.add("Resize", convertResize, 11);
}

} // namespace turbine::onnx_frontend
