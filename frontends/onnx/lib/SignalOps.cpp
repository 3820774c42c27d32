//===- SignalOps.cpp - ONNX window functions, DFT and STFT -> linalg -------===//
//
// HannWindow, HammingWindow, BlackmanWindow (opset 17): a constant window
// length gives a constant window computed in double precision; a length
// derived from a dynamic dim or read on the host at run time (a data input)
// gives a generic that evaluates the formula in
// the output type (f32 unless output_datatype asks for f64).
//
// DFT and STFT (opset 17) as naive O(n^2) transforms, one linalg.generic
// each: the output (real, imaginary) pairs are parallel loops and the signal
// position a reduction loop; the twiddle factors cos/sin(2*pi*m/N) for
// m < N are import-time constant tables read at (k * n) mod N, so no
// trigonometry runs in the kernel and the angles are exact. Straightforward
// rather than fast (no FFT); transform lengths must be static, except for
// STFT's frame_step / frame_length read at run time (the kernel then reads
// the samples by index and computes its twiddle factors).
//
// MelWeightMatrix (opset 17): the triangular mel filter bank of ONNX's
// reference, one generic over (spectrogram bin, mel bin) with the sizes and
// sample rate read on the host at run time.
//===----------------------------------------------------------------------===//
#include "ImportContext.h"

#include <cmath>

using namespace mlir;

namespace turbine::onnx_frontend {
namespace {

constexpr double kPi = 3.14159265358979323846;

enum class WindowKind { Hann, Hamming, Blackman };

/// Reads a scalar (or one-element) integer input known at import time.
std::optional<int64_t> constantScalarInput(ImportContext &ctx, const onnx::NodeProto &node, int i) {
  auto shape = ctx.getShapeTensor(node.input(i));
  if (!shape || shape->elements.size() != 1 || !shape->elements[0].isConstant())
    return std::nullopt;
  return shape->elements[0].constant;
}

/// The window of length `size` (an index value) computed in a generic.
Value dynamicWindow(ImportContext &ctx, Value size, Type et, WindowKind kind, bool periodic) {
  OpBuilder &b = ctx.builder;
  Type ft = et.isF64() ? (Type)b.getF64Type() : (Type)b.getF32Type();
  Value init = ctx.empty({size}, et);
  // Only index scalars cross into kernels: N is converted inside the body.
  Value denominatorIndex =
      periodic ? size : (Value)arith::SubIOp::create(b, ctx.loc, size, ctx.indexConstant(1));
  Value result = linalg::GenericOp::create(
                     b, ctx.loc, TypeRange{init.getType()}, ValueRange{}, ValueRange{init},
                     SmallVector<AffineMap>{b.getMultiDimIdentityMap(1)},
                     SmallVector<utils::IteratorType>{utils::IteratorType::parallel},
                     [&](OpBuilder &nb, Location l, ValueRange) {
                       auto fc = [&](double v) -> Value { return arith::ConstantOp::create(nb, l, nb.getFloatAttr(ft, v)); };
                       Value i = arith::IndexCastOp::create(nb, l, nb.getI64Type(), linalg::IndexOp::create(nb, l, 0));
                       Value denominator = arith::SIToFPOp::create(
                           nb, l, ft, arith::IndexCastOp::create(nb, l, nb.getI64Type(), denominatorIndex));
                       Value t = arith::DivFOp::create(
                           nb, l, arith::MulFOp::create(nb, l, fc(2 * kPi), arith::SIToFPOp::create(nb, l, ft, i)),
                           denominator);
                       Value cosT = math::CosOp::create(nb, l, t);
                       Value v;
                       switch (kind) {
                       case WindowKind::Hann:
                         v = arith::SubFOp::create(nb, l, fc(0.5), arith::MulFOp::create(nb, l, fc(0.5), cosT));
                         break;
                       case WindowKind::Hamming:
                         v = arith::SubFOp::create(nb, l, fc(25.0 / 46.0), arith::MulFOp::create(nb, l, fc(21.0 / 46.0), cosT));
                         break;
                       case WindowKind::Blackman: {
                         Value cos2T = math::CosOp::create(nb, l, arith::MulFOp::create(nb, l, fc(2.0), t));
                         v = arith::SubFOp::create(nb, l, fc(0.42), arith::MulFOp::create(nb, l, fc(0.5), cosT));
                         v = arith::AddFOp::create(nb, l, v, arith::MulFOp::create(nb, l, fc(0.08), cos2T));
                         break;
                       }
                       }
                       if (et != ft)
                         v = isa<FloatType>(et) ? (Value)arith::TruncFOp::create(nb, l, et, v)
                                                : (Value)arith::FPToSIOp::create(nb, l, et, v);
                       linalg::YieldOp::create(nb, l, v);
                     })
                     .getResult(0);
  ctx.recordDims(result, {size});
  return result;
}

LogicalResult convertWindow(ImportContext &ctx, const onnx::NodeProto &node, WindowKind kind) {
  int64_t dtype = ctx.intAttr(node, "output_datatype", onnx::TensorProto::FLOAT);
  Type et = convertElementType(ctx.context, (int)dtype);
  if (!et)
    return ctx.unsupported(node, "output_datatype " + std::to_string(dtype));
  bool periodic = ctx.intAttr(node, "periodic", 1) != 0;
  // Known at import time (constant or derived from shapes), else read on
  // the host at run time.
  auto sizeTensor = ctx.getShapeOperand(node, 0, "size");
  if (failed(sizeTensor))
    return failure();
  if (sizeTensor->elements.size() != 1)
    return ctx.fail(node, "size must be a scalar");
  if (!sizeTensor->elements[0].isConstant()) {
    OpFoldResult length = ctx.toFoldResult(sizeTensor->elements[0]);
    if (failed(ctx.check(node, ctx.compare(arith::CmpIPredicate::sge, length, ctx.builder.getIndexAttr(0)),
                         "size must be non-negative")))
      return failure();
    ctx.setValue(node.output(0), dynamicWindow(ctx, sizeTensor->elements[0].value, et, kind, periodic));
    return success();
  }
  std::optional<int64_t> size = sizeTensor->elements[0].constant;
  if (*size < 0)
    return ctx.fail(node, "size must be non-negative");
  double n = periodic ? (double)*size : (double)(*size - 1);
  SmallVector<Attribute> values;
  for (int64_t i = 0; i < *size; ++i) {
    double t = 2 * kPi * (double)i / n;
    double v;
    switch (kind) {
    case WindowKind::Hann: v = 0.5 - 0.5 * std::cos(t); break;
    case WindowKind::Hamming: v = 25.0 / 46.0 - 21.0 / 46.0 * std::cos(t); break;
    case WindowKind::Blackman: v = 0.42 - 0.5 * std::cos(t) + 0.08 * std::cos(2 * t); break;
    }
    if (isa<FloatType>(et))
      values.push_back(ctx.builder.getFloatAttr(et, v));
    else
      values.push_back(ctx.builder.getIntegerAttr(et, (int64_t)v));
  }
  auto type = RankedTensorType::get({*size}, et);
  ctx.setConstant(node.output(0), DenseElementsAttr::get(type, values));
  return success();
}

/// cos(2*pi*m/n) (or sin) for m < n as a constant [n] tensor of `et`.
Value twiddleTable(ImportContext &ctx, int64_t n, Type et, bool sine) {
  SmallVector<Attribute> values;
  for (int64_t m = 0; m < n; ++m) {
    double angle = 2 * kPi * (double)m / (double)n;
    values.push_back(ctx.builder.getFloatAttr(et, sine ? std::sin(angle) : std::cos(angle)));
  }
  return arith::ConstantOp::create(ctx.builder, ctx.loc,
                                   DenseElementsAttr::get(RankedTensorType::get({n}, et), values));
}

/// Shared body of DFT and STFT: given the real (and optional imaginary)
/// sample and the weight (window, or null), the twiddle index (k*n) mod N,
/// returns the contribution to output component c (0 real, 1 imaginary).
/// Forward: (xr + i xi)(cos - i sin); inverse: (xr + i xi)(cos + i sin).
Value twiddleTerm(OpBuilder &b, Location l, Value xr, Value xi, Value cosTable, Value sinTable,
                  Value twiddle, Value component, bool inverse) {
  Value cosv = tensor::ExtractOp::create(b, l, cosTable, twiddle);
  Value sinv = tensor::ExtractOp::create(b, l, sinTable, twiddle);
  if (!inverse)
    sinv = arith::NegFOp::create(b, l, sinv);
  // (xr + i xi)(cos + i s) = xr cos - xi s + i (xi cos + xr s), s = +-sin.
  Value re = arith::MulFOp::create(b, l, xr, cosv);
  Value im = arith::MulFOp::create(b, l, xr, sinv);
  if (xi) {
    re = arith::SubFOp::create(b, l, re, arith::MulFOp::create(b, l, xi, sinv));
    im = arith::AddFOp::create(b, l, im, arith::MulFOp::create(b, l, xi, cosv));
  }
  Value isImag = arith::CmpIOp::create(b, l, arith::CmpIPredicate::eq, component,
                                       arith::ConstantIndexOp::create(b, l, 1));
  return arith::SelectOp::create(b, l, isImag, im, re);
}

/// DFT-17: input [batch, signal..., 1 or 2], axis (default 1), inverse,
/// onesided, optional constant dft_length (the signal is zero-padded or
/// truncated to it).
LogicalResult convertDFT(ImportContext &ctx, const onnx::NodeProto &node) {
  auto x = ctx.getTensor(node, node.input(0));
  if (failed(x))
    return failure();
  auto type = cast<RankedTensorType>(x->getType());
  int64_t rank = type.getRank();
  Type et = type.getElementType();
  if (!isa<FloatType>(et))
    return ctx.unsupported(node, "input must be floating-point");
  if (rank < 3 || type.isDynamicDim(rank - 1) || type.getDimSize(rank - 1) < 1 ||
      type.getDimSize(rank - 1) > 2)
    return ctx.fail(node, "input must be [batch, signal..., 1 or 2]");
  bool complex = type.getDimSize(rank - 1) == 2;
  int64_t axis = ctx.intAttr(node, "axis", 1);
  if (axis < 0)
    axis += rank;
  if (axis < 1 || axis > rank - 2)
    return ctx.fail(node, "axis " + std::to_string(ctx.intAttr(node, "axis", 1)) +
                              " is not a signal dim of a rank-" + std::to_string(rank) + " input");
  if (type.isDynamicDim(axis))
    return ctx.unsupported(node, "a dynamic transform axis");
  // n: the transform length; the signal is zero-padded or truncated to it.
  int64_t signalLength = type.getDimSize(axis), n = signalLength;
  if (ImportContext::hasInput(node, 1)) {
    auto length = constantScalarInput(ctx, node, 1);
    if (!length)
      return ctx.unsupported(node, "input 'dft_length' ('" + node.input(1) +
                                       "') must be a constant scalar (it decides the output shape)");
    if (*length <= 0)
      return ctx.fail(node, "dft_length must be positive");
    n = *length;
  }
  int64_t used = std::min(n, signalLength); // samples that enter the sum
  bool inverse = ctx.intAttr(node, "inverse", 0) != 0;
  bool onesided = ctx.intAttr(node, "onesided", 0) != 0;
  if (inverse && onesided)
    return ctx.unsupported(node, "inverse=1 with onesided=1");
  int64_t bins = onesided ? n / 2 + 1 : n;
  if (n == 0)
    return ctx.unsupported(node, "an empty transform axis");

  OpBuilder &b = ctx.builder;
  SmallVector<OpFoldResult> outSizes = ctx.dims(*x);
  outSizes[axis] = b.getIndexAttr(bins);
  outSizes[rank - 1] = b.getIndexAttr(2);
  Value init = ctx.filled(outSizes, ctx.scalarConstant(et, 0));
  // Loops: output dims (parallel), then the signal position (reduction).
  // Samples are read through indexing maps; when the signal is truncated the
  // reduction loop is shorter than the axis, so a range operand sets it and
  // the samples are read with tensor.extract.
  bool truncated = used < signalLength;
  auto sampleMap = [&](int64_t component) {
    SmallVector<AffineExpr> exprs;
    for (int64_t d = 0; d < rank - 1; ++d)
      exprs.push_back(b.getAffineDimExpr(d == axis ? rank : d));
    exprs.push_back(b.getAffineConstantExpr(component));
    return AffineMap::get(rank + 1, 0, exprs, &ctx.context);
  };
  SmallVector<Value> ins;
  SmallVector<AffineMap> maps;
  Value signal = *x;
  if (truncated) {
    ins.push_back(ctx.empty({b.getIndexAttr(used)}, b.getI1Type()));
    maps.push_back(AffineMap::get(rank + 1, 0, {b.getAffineDimExpr(rank)}, &ctx.context));
  } else {
    ins.push_back(*x);
    maps.push_back(sampleMap(0));
    if (complex) {
      ins.push_back(*x);
      maps.push_back(sampleMap(1));
    }
  }
  maps.push_back(AffineMap::getMultiDimIdentityMap(rank + 1, &ctx.context).getMajorSubMap(rank));
  SmallVector<utils::IteratorType> iterators(rank, utils::IteratorType::parallel);
  iterators.push_back(utils::IteratorType::reduction);
  Value cosTable = twiddleTable(ctx, n, et, false), sinTable = twiddleTable(ctx, n, et, true);
  Value scale = inverse ? ctx.scalarConstant(et, 1.0 / (double)n) : Value();
  Value result = linalg::GenericOp::create(
                     b, ctx.loc, TypeRange{init.getType()}, ins, ValueRange{init}, maps, iterators,
                     [&](OpBuilder &nb, Location l, ValueRange args) {
                       Value k = linalg::IndexOp::create(nb, l, axis);
                       Value c = linalg::IndexOp::create(nb, l, rank - 1);
                       Value m = linalg::IndexOp::create(nb, l, rank);
                       Value twiddle = arith::RemUIOp::create(nb, l, arith::MulIOp::create(nb, l, k, m),
                                                              arith::ConstantIndexOp::create(nb, l, n));
                       Value xr = args[0], xi = complex ? args[1] : Value();
                       if (truncated) {
                         SmallVector<Value> at;
                         for (int64_t d = 0; d < rank - 1; ++d)
                           at.push_back(d == axis ? m : (Value)linalg::IndexOp::create(nb, l, d));
                         at.push_back(arith::ConstantIndexOp::create(nb, l, 0));
                         xr = tensor::ExtractOp::create(nb, l, signal, at);
                         if (complex) {
                           at.back() = arith::ConstantIndexOp::create(nb, l, 1);
                           xi = tensor::ExtractOp::create(nb, l, signal, at);
                         }
                       }
                       Value term = twiddleTerm(nb, l, xr, xi, cosTable, sinTable, twiddle, c, inverse);
                       if (scale)
                         term = arith::MulFOp::create(nb, l, term, scale);
                       linalg::YieldOp::create(nb, l, (Value)arith::AddFOp::create(nb, l, args.back(), term));
                     })
                     .getResult(0);
  ctx.recordDims(result, outSizes);
  ctx.setValue(node.output(0), result);
  return success();
}

/// STFT whose frame_step or frame_length is known only at run time: both
/// read on the host (getShapeOperand) and checked there, the frame count and
/// bin count by index arithmetic; the kernel reads the samples with
/// tensor.extract at frame * step + position and computes the twiddle
/// factors cos/sin(2*pi*((k*m) mod N)/N) in double precision.
LogicalResult convertSTFTAtRunTime(ImportContext &ctx, const onnx::NodeProto &node, Value x) {
  using P = arith::CmpIPredicate;
  auto type = cast<RankedTensorType>(x.getType());
  Type et = type.getElementType();
  bool complex = type.getDimSize(2) == 2;
  OpBuilder &b = ctx.builder;
  auto stepTensor = ctx.getShapeOperand(node, 1, "frame_step");
  if (failed(stepTensor))
    return failure();
  if (stepTensor->elements.size() != 1)
    return ctx.fail(node, "frame_step must be a scalar");
  OpFoldResult step = ctx.toFoldResult(stepTensor->elements[0]);
  OpFoldResult length = ctx.dim(x, 1);
  Value window;
  OpFoldResult n;
  if (ImportContext::hasInput(node, 2)) {
    auto w = ctx.getTensor(node, node.input(2));
    if (failed(w))
      return failure();
    auto wType = cast<RankedTensorType>(w->getType());
    if (wType.getRank() != 1 || wType.getElementType() != et)
      return ctx.fail(node, "window must be a 1-D tensor of the signal's type");
    window = *w;
    n = ctx.dim(window, 0);
  }
  if (ImportContext::hasInput(node, 3)) {
    auto fl = ctx.getShapeOperand(node, 3, "frame_length");
    if (failed(fl))
      return failure();
    if (fl->elements.size() != 1)
      return ctx.fail(node, "frame_length must be a scalar");
    OpFoldResult given = ctx.toFoldResult(fl->elements[0]);
    if (window && failed(ctx.check(node, ctx.compare(P::eq, given, n), "frame_length differs from the window length")))
      return failure();
    n = given;
  }
  if (!n)
    return ctx.fail(node, "needs a window or frame_length");
  OpFoldResult zero = b.getIndexAttr(0), one = b.getIndexAttr(1);
  if (failed(ctx.check(node, ctx.compare(P::sgt, step, zero), "frame_step must be positive")) ||
      failed(ctx.check(node, ctx.both(ctx.compare(P::sge, n, one), ctx.compare(P::sle, n, length)),
                       "frame_length must be in [1, signal length]")))
    return failure();
  bool onesided = ctx.intAttr(node, "onesided", 1) != 0;
  OpFoldResult bins = onesided ? ctx.indexOp<arith::AddIOp>(ctx.indexOp<arith::DivSIOp>(n, b.getIndexAttr(2)), one)
                               : n;
  OpFoldResult frames =
      ctx.indexOp<arith::AddIOp>(ctx.indexOp<arith::DivSIOp>(ctx.indexOp<arith::SubIOp>(length, n), step), one);
  if (!window) // a rectangular window keeps one code path
    window = ctx.filled({n}, ctx.scalarConstant(et, 1.0));
  SmallVector<OpFoldResult> outSizes{ctx.dim(x, 0), frames, bins, b.getIndexAttr(2)};
  Value init = ctx.filled(outSizes, ctx.scalarConstant(et, 0));
  auto d = [&](unsigned i) { return b.getAffineDimExpr(i); };
  SmallVector<AffineMap> maps{AffineMap::get(5, 0, {d(4)}, &ctx.context),
                              AffineMap::get(5, 0, {d(0), d(1), d(2), d(3)}, &ctx.context)};
  using IT = utils::IteratorType;
  SmallVector<IT> iterators{IT::parallel, IT::parallel, IT::parallel, IT::parallel, IT::reduction};
  Value stepValue = ctx.toIndexValue(step), nValue = ctx.toIndexValue(n);
  Value result = linalg::GenericOp::create(
                     b, ctx.loc, TypeRange{init.getType()}, ValueRange{window}, ValueRange{init}, maps, iterators,
                     [&](OpBuilder &nb, Location l, ValueRange args) {
                       Type f64 = nb.getF64Type();
                       auto idx = [&](int64_t v) -> Value { return arith::ConstantIndexOp::create(nb, l, v); };
                       auto toF64 = [&](Value index) -> Value {
                         return arith::SIToFPOp::create(nb, l, f64,
                                                        arith::IndexCastOp::create(nb, l, nb.getI64Type(), index));
                       };
                       Value batch = linalg::IndexOp::create(nb, l, 0), frame = linalg::IndexOp::create(nb, l, 1);
                       Value k = linalg::IndexOp::create(nb, l, 2), c = linalg::IndexOp::create(nb, l, 3);
                       Value m = linalg::IndexOp::create(nb, l, 4);
                       Value at = arith::AddIOp::create(nb, l, arith::MulIOp::create(nb, l, frame, stepValue), m);
                       Value w = args[0];
                       Value xr = arith::MulFOp::create(nb, l, tensor::ExtractOp::create(nb, l, x, ValueRange{batch, at, idx(0)}), w);
                       Value xi = complex ? (Value)arith::MulFOp::create(
                                                nb, l, tensor::ExtractOp::create(nb, l, x, ValueRange{batch, at, idx(1)}), w)
                                          : Value();
                       Value twiddle = arith::RemUIOp::create(nb, l, arith::MulIOp::create(nb, l, k, m), nValue);
                       Value angle = arith::DivFOp::create(
                           nb, l,
                           arith::MulFOp::create(nb, l, arith::ConstantOp::create(nb, l, nb.getFloatAttr(f64, 2 * kPi)),
                                                 toF64(twiddle)),
                           toF64(nValue));
                       Value cosv = math::CosOp::create(nb, l, angle), sinv = math::SinOp::create(nb, l, angle);
                       if (et != f64) {
                         cosv = arith::TruncFOp::create(nb, l, et, cosv);
                         sinv = arith::TruncFOp::create(nb, l, et, sinv);
                       }
                       sinv = arith::NegFOp::create(nb, l, sinv); // forward transform: cos - i sin
                       Value re = arith::MulFOp::create(nb, l, xr, cosv), im = arith::MulFOp::create(nb, l, xr, sinv);
                       if (xi) {
                         re = arith::SubFOp::create(nb, l, re, arith::MulFOp::create(nb, l, xi, sinv));
                         im = arith::AddFOp::create(nb, l, im, arith::MulFOp::create(nb, l, xi, cosv));
                       }
                       Value isImag = arith::CmpIOp::create(nb, l, P::eq, c, idx(1));
                       Value term = arith::SelectOp::create(nb, l, isImag, im, re);
                       linalg::YieldOp::create(nb, l, (Value)arith::AddFOp::create(nb, l, args.back(), term));
                     })
                     .getResult(0);
  ctx.recordDims(result, outSizes);
  ctx.setValue(node.output(0), result);
  return success();
}

/// STFT-17: signal [batch, length, 1 or 2], frame_step, optional window
/// [frame_length], optional frame_length, onesided (default 1).
LogicalResult convertSTFT(ImportContext &ctx, const onnx::NodeProto &node) {
  auto x = ctx.getTensor(node, node.input(0));
  if (failed(x))
    return failure();
  auto type = cast<RankedTensorType>(x->getType());
  Type et = type.getElementType();
  if (!isa<FloatType>(et))
    return ctx.unsupported(node, "signal must be floating-point");
  if (type.getRank() != 3 || type.isDynamicDim(2) || type.getDimSize(2) < 1 || type.getDimSize(2) > 2)
    return ctx.fail(node, "signal must be [batch, length, 1 or 2]");
  if (type.isDynamicDim(1))
    return ctx.unsupported(node, "a dynamic signal length");
  bool complex = type.getDimSize(2) == 2;
  int64_t length = type.getDimSize(1);
  auto step = constantScalarInput(ctx, node, 1);
  if (!step)
    return convertSTFTAtRunTime(ctx, node, *x);
  if (*step <= 0)
    return ctx.fail(node, "frame_step must be positive");
  Value window;
  std::optional<int64_t> frameLength;
  if (ImportContext::hasInput(node, 2)) {
    auto w = ctx.getTensor(node, node.input(2));
    if (failed(w))
      return failure();
    auto wType = cast<RankedTensorType>(w->getType());
    if (wType.getRank() != 1 || wType.isDynamicDim(0) || wType.getElementType() != et)
      return ctx.fail(node, "window must be a static 1-D tensor of the signal's type");
    window = *w;
    frameLength = wType.getDimSize(0);
  }
  if (ImportContext::hasInput(node, 3)) {
    auto fl = constantScalarInput(ctx, node, 3);
    if (!fl)
      return convertSTFTAtRunTime(ctx, node, *x);
    if (frameLength && *frameLength != *fl)
      return ctx.fail(node, "frame_length differs from the window length");
    frameLength = fl;
  }
  if (!frameLength)
    return ctx.fail(node, "needs a window or frame_length");
  int64_t n = *frameLength;
  if (n <= 0 || n > length)
    return ctx.fail(node, "frame_length must be in [1, signal length]");
  bool onesided = ctx.intAttr(node, "onesided", 1) != 0;
  int64_t bins = onesided ? n / 2 + 1 : n;
  int64_t frames = (length - n) / *step + 1;

  OpBuilder &b = ctx.builder;
  if (!window) // a rectangular window keeps one code path
    window = ctx.filled({b.getIndexAttr(n)}, ctx.scalarConstant(et, 1.0));
  SmallVector<OpFoldResult> outSizes{ctx.dim(*x, 0), b.getIndexAttr(frames), b.getIndexAttr(bins),
                                     b.getIndexAttr(2)};
  Value init = ctx.filled(outSizes, ctx.scalarConstant(et, 0));
  // Loops (batch, frame, bin, component, position).
  auto d = [&](unsigned i) { return b.getAffineDimExpr(i); };
  auto sampleMap = [&](int64_t component) {
    return AffineMap::get(5, 0, {d(0), d(1) * *step + d(4), b.getAffineConstantExpr(component)}, &ctx.context);
  };
  SmallVector<Value> ins{window, *x};
  SmallVector<AffineMap> maps{AffineMap::get(5, 0, {d(4)}, &ctx.context), sampleMap(0)};
  if (complex) {
    ins.push_back(*x);
    maps.push_back(sampleMap(1));
  }
  maps.push_back(AffineMap::get(5, 0, {d(0), d(1), d(2), d(3)}, &ctx.context));
  using IT = utils::IteratorType;
  SmallVector<IT> iterators{IT::parallel, IT::parallel, IT::parallel, IT::parallel, IT::reduction};
  Value cosTable = twiddleTable(ctx, n, et, false), sinTable = twiddleTable(ctx, n, et, true);
  Value result = linalg::GenericOp::create(
                     b, ctx.loc, TypeRange{init.getType()}, ins, ValueRange{init}, maps, iterators,
                     [&](OpBuilder &nb, Location l, ValueRange args) {
                       Value k = linalg::IndexOp::create(nb, l, 2);
                       Value c = linalg::IndexOp::create(nb, l, 3);
                       Value m = linalg::IndexOp::create(nb, l, 4);
                       Value twiddle = arith::RemUIOp::create(nb, l, arith::MulIOp::create(nb, l, k, m),
                                                              arith::ConstantIndexOp::create(nb, l, n));
                       Value w = args[0];
                       Value xr = arith::MulFOp::create(nb, l, args[1], w);
                       Value xi = complex ? (Value)arith::MulFOp::create(nb, l, args[2], w) : Value();
                       Value term = twiddleTerm(nb, l, xr, xi, cosTable, sinTable, twiddle, c, false);
                       linalg::YieldOp::create(nb, l, (Value)arith::AddFOp::create(nb, l, args.back(), term));
                     })
                     .getResult(0);
  ctx.recordDims(result, outSizes);
  ctx.setValue(node.output(0), result);
  return success();
}

/// MelWeightMatrix-17: [dft_length / 2 + 1, num_mel_bins] triangular
/// filters, as ONNX's reference computes them: the band edges
/// fb(k) = int(((dft_length + 1) * 700 * (10^((low_mel + k * mel_step) / 2595) - 1))
/// // sample_rate), with low/high mel and the step in float32 (the reference's
/// float32 inputs) and the rest in double; element (j, i) rises from
/// fb(i) to 1 at fb(i+1) and falls to fb(i+2). The sizes and the sample rate
/// are read on the host at run time, the edge frequencies in the kernel.
LogicalResult convertMelWeightMatrix(ImportContext &ctx, const onnx::NodeProto &node) {
  using P = arith::CmpIPredicate;
  if (node.input_size() != 5)
    return ctx.fail(node, "expects 5 inputs");
  Type outType = convertElementType(ctx.context, (int)ctx.intAttr(node, "output_datatype", 1));
  if (!outType || !isa<FloatType>(outType))
    return ctx.unsupported(node, "output_datatype " + std::to_string(ctx.intAttr(node, "output_datatype", 1)) +
                                     " (only floating-point outputs are supported)");
  const char *names[] = {"num_mel_bins", "dft_length", "sample_rate"};
  SmallVector<OpFoldResult> scalars;
  for (int i = 0; i < 3; ++i) {
    auto t = ctx.getShapeOperand(node, i, names[i]);
    if (failed(t))
      return failure();
    if (t->elements.size() != 1)
      return ctx.fail(node, std::string(names[i]) + " must be a scalar");
    scalars.push_back(ctx.toFoldResult(t->elements[0]));
  }
  SmallVector<Value> edges;
  for (int i = 3; i < 5; ++i) {
    auto t = ctx.getTensor(node, node.input(i));
    if (failed(t))
      return failure();
    auto type = cast<RankedTensorType>(t->getType());
    if (!isa<FloatType>(type.getElementType()) || !type.hasStaticShape() || type.getNumElements() != 1)
      return ctx.fail(node, std::string(i == 3 ? "lower_edge_hertz" : "upper_edge_hertz") +
                                " must be a one-element float tensor");
    edges.push_back(*t);
  }
  OpBuilder &b = ctx.builder;
  OpFoldResult zero = b.getIndexAttr(0);
  if (failed(ctx.check(node, ctx.compare(P::sgt, scalars[0], zero), "num_mel_bins must be positive")) ||
      failed(ctx.check(node, ctx.compare(P::sgt, scalars[1], zero), "dft_length must be positive")) ||
      failed(ctx.check(node, ctx.compare(P::sgt, scalars[2], zero), "sample_rate must be positive")))
    return failure();
  OpFoldResult spectrogramBins =
      ctx.indexOp<arith::AddIOp>(ctx.indexOp<arith::DivSIOp>(scalars[1], b.getIndexAttr(2)), b.getIndexAttr(1));
  SmallVector<OpFoldResult> outSizes{spectrogramBins, scalars[0]};
  Value melBins = ctx.toIndexValue(scalars[0]), dftLength = ctx.toIndexValue(scalars[1]);
  Value sampleRate = ctx.toIndexValue(scalars[2]);
  Value init = ctx.empty(outSizes, outType);
  Value result =
      linalg::GenericOp::create(
          b, ctx.loc, TypeRange{init.getType()}, ValueRange{}, ValueRange{init},
          SmallVector<AffineMap>{b.getMultiDimIdentityMap(2)},
          SmallVector<utils::IteratorType>(2, utils::IteratorType::parallel),
          [&](OpBuilder &nb, Location l, ValueRange) {
            Type f32 = nb.getF32Type(), f64 = nb.getF64Type(), i64 = nb.getI64Type();
            auto c32 = [&](double v) -> Value { return arith::ConstantOp::create(nb, l, nb.getF32FloatAttr((float)v)); };
            auto c64 = [&](double v) -> Value { return arith::ConstantOp::create(nb, l, nb.getF64FloatAttr(v)); };
            auto toI64 = [&](Value index) -> Value { return arith::IndexCastOp::create(nb, l, i64, index); };
            auto read = [&](Value tensor) -> Value {
              auto type = cast<RankedTensorType>(tensor.getType());
              SmallVector<Value> indices(type.getRank(), arith::ConstantIndexOp::create(nb, l, 0));
              return convertScalar(nb, l, tensor::ExtractOp::create(nb, l, tensor, indices), f32);
            };
            // mel(hz) = 2595 * log10(1 + hz / 700) in float32.
            auto mel = [&](Value hz) -> Value {
              Value v = arith::AddFOp::create(nb, l, c32(1), arith::DivFOp::create(nb, l, hz, c32(700)));
              return arith::MulFOp::create(nb, l, c32(2595), math::Log10Op::create(nb, l, v));
            };
            Value lowMel = mel(read(edges[0])), highMel = mel(read(edges[1]));
            Value binCount = arith::SIToFPOp::create(
                nb, l, f32, toI64(arith::AddIOp::create(nb, l, melBins, arith::ConstantIndexOp::create(nb, l, 2))));
            Value melStep = arith::DivFOp::create(nb, l, arith::SubFOp::create(nb, l, highMel, lowMel), binCount);
            Value lowMel64 = arith::ExtFOp::create(nb, l, f64, lowMel), melStep64 = arith::ExtFOp::create(nb, l, f64, melStep);
            Value dftPlusOne = arith::SIToFPOp::create(nb, l, f64, arith::AddIOp::create(nb, l, toI64(dftLength),
                                                                                         arith::ConstantOp::create(nb, l, nb.getI64IntegerAttr(1))));
            Value rate = arith::SIToFPOp::create(nb, l, f64, toI64(sampleRate));
            Value j = toI64(linalg::IndexOp::create(nb, l, 0)), i = toI64(linalg::IndexOp::create(nb, l, 1));
            auto edge = [&](int64_t offset) -> Value { // fb(i + offset) as i64
              Value k = arith::SIToFPOp::create(
                  nb, l, f64, arith::AddIOp::create(nb, l, i, arith::ConstantOp::create(nb, l, nb.getI64IntegerAttr(offset))));
              Value m = arith::AddFOp::create(nb, l, arith::MulFOp::create(nb, l, k, melStep64), lowMel64);
              Value hz = arith::MulFOp::create(
                  nb, l, c64(700),
                  arith::SubFOp::create(nb, l, math::PowFOp::create(nb, l, c64(10), arith::DivFOp::create(nb, l, m, c64(2595))),
                                        c64(1)));
              Value bin = math::FloorOp::create(nb, l, arith::DivFOp::create(nb, l, arith::MulFOp::create(nb, l, dftPlusOne, hz), rate));
              return arith::FPToSIOp::create(nb, l, i64, bin);
            };
            Value low = edge(0), center = edge(1), high = edge(2);
            auto toF = [&](Value v) -> Value { return arith::SIToFPOp::create(nb, l, f64, v); };
            Value rising = arith::DivFOp::create(nb, l, toF(arith::SubIOp::create(nb, l, j, low)),
                                                 toF(arith::SubIOp::create(nb, l, center, low)));
            Value falling = arith::DivFOp::create(nb, l, toF(arith::SubIOp::create(nb, l, high, j)),
                                                  toF(arith::SubIOp::create(nb, l, high, center)));
            Value isRising = arith::AndIOp::create(nb, l, arith::CmpIOp::create(nb, l, P::sge, j, low),
                                                   arith::CmpIOp::create(nb, l, P::slt, j, center));
            Value isFalling = arith::AndIOp::create(nb, l, arith::CmpIOp::create(nb, l, P::sgt, j, center),
                                                    arith::CmpIOp::create(nb, l, P::slt, j, high));
            Value v = arith::SelectOp::create(nb, l, isFalling, falling, c64(0));
            v = arith::SelectOp::create(nb, l, isRising, rising, v);
            v = arith::SelectOp::create(nb, l, arith::CmpIOp::create(nb, l, P::eq, j, center), c64(1), v);
            linalg::YieldOp::create(nb, l, convertScalar(nb, l, v, outType));
          })
          .getResult(0);
  ctx.recordDims(result, outSizes);
  ctx.setValue(node.output(0), result);
  return success();
}

} // namespace

void registerSignalOps(OpRegistry &r) {
  r.add("MelWeightMatrix", convertMelWeightMatrix, 17);
  r.add("HannWindow", [](ImportContext &c, const onnx::NodeProto &n) { return convertWindow(c, n, WindowKind::Hann); }, 17);
  r.add("HammingWindow", [](ImportContext &c, const onnx::NodeProto &n) { return convertWindow(c, n, WindowKind::Hamming); }, 17);
  r.add("BlackmanWindow", [](ImportContext &c, const onnx::NodeProto &n) { return convertWindow(c, n, WindowKind::Blackman); }, 17);
  r.add("DFT", convertDFT, 17, 19);
  r.add("STFT", convertSTFT, 17);
}

} // namespace turbine::onnx_frontend
