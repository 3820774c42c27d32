//===- WindowHelpers.cpp - ONNX convolution/pooling windows --------------===//
//
// What the convolution, pooling and pad handlers share (declared in
// ImportContext.h): reading a window's kernel/strides/dilations/pads/auto_pad
// attributes, its output size, and constant padding of the spatial dims.
//===----------------------------------------------------------------------===//
#include "ImportContext.h"

#include <algorithm>
#include <cctype>
#include <limits>
#include <map>

using namespace mlir;

namespace turbine::onnx_frontend {
namespace {

RankedTensorType tensorType(Value v) { return cast<RankedTensorType>(v.getType()); }

} // namespace

/// Pads `input` by `low`/`high` per dim with `padValue` (tensor.pad; the
/// compiler's global-opt lowers it, after layout rewrites have seen it).
Value padTensor(ImportContext &ctx, Value input, ArrayRef<int64_t> low, ArrayRef<int64_t> high,
                Value padValue) {
  int64_t rank = tensorType(input).getRank();
  bool any = false;
  for (int64_t d = 0; d < rank; ++d)
    any |= low[d] != 0 || high[d] != 0;
  if (!any)
    return input;
  SmallVector<OpFoldResult> inSizes = ctx.dims(input), outSizes;
  for (int64_t d = 0; d < rank; ++d) {
    SymDim s = ctx.toSymDim(inSizes[d]);
    int64_t extra = low[d] + high[d];
    if (extra == 0)
      outSizes.push_back(inSizes[d]);
    else if (s.isConstant())
      outSizes.push_back(ctx.builder.getIndexAttr(s.constant + extra));
    else
      outSizes.push_back((Value)arith::AddIOp::create(ctx.builder, ctx.loc, s.value,
                                                      ctx.indexConstant(extra)));
  }
  Value padded = tensor::PadOp::create(ctx.builder, ctx.loc, Type(), input,
                                       getAsIndexOpFoldResult(ctx.builder.getContext(), low),
                                       getAsIndexOpFoldResult(ctx.builder.getContext(), high),
                                       padValue)
                     ->getResult(0);
  ctx.recordDims(padded, outSizes);
  return padded;
}

/// Reads kernel/strides/dilations/pads/auto_pad for a window of
/// `kernel.size()` spatial dims (2 or 3) over `input`. For a 1-D op (`oneD`,
/// input already reshaped to [N, C, 1, L], kernel widened to [1, k]) the
/// attributes are widened with a unit leading spatial dim.
FailureOr<WindowAttrs> readWindowAttrs(ImportContext &ctx, const onnx::NodeProto &node,
                                       Value input, ArrayRef<int64_t> kernel, bool oneD) {
  WindowAttrs w;
  w.kernel.assign(kernel.begin(), kernel.end());
  auto get = [&](const char *name, int64_t def, size_t n) -> SmallVector<int64_t> {
    auto v = ctx.intsAttr(node, name);
    if (!v)
      return SmallVector<int64_t>(n, def);
    return SmallVector<int64_t>(v->begin(), v->end());
  };
  const size_t spatial = kernel.size();
  size_t rank = oneD ? 1 : spatial;
  w.strides = get("strides", 1, rank);
  w.dilations = get("dilations", 1, rank);
  SmallVector<int64_t> pads = get("pads", 0, 2 * rank);
  if (oneD) {
    if (w.strides.size() != 1 || w.dilations.size() != 1 || pads.size() != 2) {
      (void)ctx.fail(node, "strides/dilations/pads have the wrong length for a 1-D window");
      return failure();
    }
    w.strides.insert(w.strides.begin(), 1);
    w.dilations.insert(w.dilations.begin(), 1);
    pads = {0, pads[0], 0, pads[1]};
  }
  w.ceilMode = ctx.intAttr(node, "ceil_mode", 0) != 0;
  if (w.strides.size() != spatial || w.dilations.size() != spatial || pads.size() != 2 * spatial) {
    (void)ctx.fail(node, "strides/dilations/pads have the wrong length for a " +
                             std::to_string(spatial) + "-D window");
    return failure();
  }
  w.padLow.assign(pads.begin(), pads.begin() + spatial);
  w.padHigh.assign(pads.begin() + spatial, pads.end());
  std::string autoPad = ctx.stringAttr(node, "auto_pad", "NOTSET");
  if (autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER") {
    auto type = tensorType(input);
    for (size_t d = 0; d < spatial; ++d) {
      if (type.isDynamicDim(2 + d)) {
        (void)ctx.unsupported(node, "auto_pad " + autoPad + " on a dynamic spatial dim");
        return failure();
      }
      int64_t in = type.getDimSize(2 + d);
      int64_t out = (in + w.strides[d] - 1) / w.strides[d];
      int64_t total = std::max<int64_t>(0, (out - 1) * w.strides[d] +
                                               w.dilations[d] * (w.kernel[d] - 1) + 1 - in);
      w.padLow[d] = autoPad == "SAME_UPPER" ? total / 2 : total - total / 2;
      w.padHigh[d] = total - w.padLow[d];
    }
  } else if (autoPad == "VALID") {
    w.padLow.assign(spatial, 0);
    w.padHigh.assign(spatial, 0);
  } else if (autoPad != "NOTSET") {
    (void)ctx.unsupported(node, "auto_pad " + autoPad);
    return failure();
  }
  for (int64_t v : w.strides)
    if (v <= 0) {
      (void)ctx.fail(node, "strides must be positive");
      return failure();
    }
  for (int64_t v : w.dilations)
    if (v <= 0) {
      (void)ctx.fail(node, "dilations must be positive");
      return failure();
    }
  return w;
}

/// frontends::windowOutputSize, its refusal reported against `node`.
FailureOr<OpFoldResult> windowOutputSize(ImportContext &ctx, const onnx::NodeProto &node,
                                         OpFoldResult inSize, WindowAttrs &w, int d) {
  frontends::WindowError kind = frontends::WindowError::None;
  Result<OpFoldResult> out = frontends::windowOutputSize(ctx, inSize, w, d, kind);
  if (out)
    return *out;
  return kind == frontends::WindowError::Unsupported ? ctx.unsupported(node, out.message())
                                                     : ctx.fail(node, out.message());
}

} // namespace turbine::onnx_frontend
