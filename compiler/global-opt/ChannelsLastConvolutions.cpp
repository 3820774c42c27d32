//===- ChannelsLastConvolutions.cpp - NCHW convolutions and pooling to NHWC ===//
//
// ONNX and PyTorch convolutions are NCHW, but CPU kernels want the channels
// innermost: with NHWC data a convolution's register tile is a small matmul
// (output pixels x output channels, one input channel at a time) and pooling
// vectorizes over channels. Like IREE's global optimization, this rewrites
//   conv_2d_nchw_fchw(x, w, acc)  ->  T(conv_2d_nhwc_hwcf(T(x), T(w), T(acc)))
//   pooling_nchw_{max,sum}(x, win, acc) -> T(pooling_nhwc_{max,sum}(T(x), win, T(acc)))
//   depthwise generic (groups = channels) -> T(depthwise_conv_2d_nhwc_hwc(T(x), w', T(acc)))
//   grouped generic (Cg, Fg channels per group) -> T(grouped NHWC generic(T(x), T(w), T(acc)))
// with linalg.transpose ops (a tensor.pad of the input moves after its
// transpose). A constant filter's transpose folds at compile
// time; the other transposes are generalized and fused by global-opt, which
// composes a transpose back to NCHW with the elementwise ops after it and the
// transpose to NHWC of the next convolution or pooling into identity maps, so
// conv-bn-relu-pool-conv chains stay in NHWC and only the graph's edges pay
// for a layout change.
//===----------------------------------------------------------------------===//
#include "global-opt/ChannelsLastConvolutions.h"

#include "turbine/compiler/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/AffineMap.h"
#include "mlir/IR/PatternMatch.h"

#include <optional>
#include <utility>

using namespace mlir;

namespace turbine::compiler {

#define GEN_PASS_DEF_CONVERTTOCHANNELSLAST
#include "turbine/compiler/Passes.h.inc"
namespace {

/// A generic on tensors with two inputs and one init over 7 loops, the
/// first 4 parallel and the last 3 reductions: the frontends' convolution
/// generics (grouped and depthwise, NCHW or NHWC).
bool isConvolutionLoopNest(linalg::GenericOp op) {
  if (!op.hasPureTensorSemantics() || op.getNumDpsInputs() != 2 || op.getNumDpsInits() != 1 ||
      op.getNumLoops() != 7 || op.getNumParallelLoops() != 4)
    return false;
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  for (unsigned i = 0; i < 7; ++i)
    if ((iterators[i] == utils::IteratorType::parallel) != (i < 4))
      return false;
  return true;
}

/// `acc + x * w` over the body's arguments (x, w, acc), as the frontends'
/// convolution generics compute it.
bool isMultiplyAccumulate(Block &body) {
  if (body.getOperations().size() != 3)
    return false;
  auto mul = dyn_cast<arith::MulFOp>(body.front());
  auto add = dyn_cast<arith::AddFOp>(*std::next(body.begin()));
  return mul && add && mul.getLhs() == body.getArgument(0) &&
         mul.getRhs() == body.getArgument(1) && add.getLhs() == body.getArgument(2) &&
         add.getRhs() == mul.getResult();
}

constexpr int64_t kToChannelsLast[] = {0, 2, 3, 1};  // NCHW -> NHWC
constexpr int64_t kToChannelsFirst[] = {0, 3, 1, 2}; // NHWC -> NCHW
constexpr int64_t kFilterToHwcf[] = {2, 3, 1, 0};    // FCHW -> HWCF

/// linalg.transpose of `value`: dim i of the result is dim perm[i] of `value`.
Value transpose(OpBuilder &b, Location loc, Value value, ArrayRef<int64_t> perm) {
  auto type = cast<RankedTensorType>(value.getType());
  SmallVector<OpFoldResult> sizes;
  for (int64_t d : perm)
    sizes.push_back(tensor::getMixedSize(b, loc, value, d));
  Value init = tensor::EmptyOp::create(b, loc, sizes, type.getElementType());
  return linalg::TransposeOp::create(b, loc, value, init, perm)->getResult(0);
}

/// The input in NHWC. A padded input is padded after the transpose instead
/// (pad(T(x)) rather than T(pad(x))), so T(x) can fuse with the ops that
/// produce x.
Value channelsLastInput(OpBuilder &b, Location loc, Value input) {
  auto pad = input.getDefiningOp<tensor::PadOp>();
  Value padValue = pad ? pad.getConstantPaddingValue() : Value();
  if (!padValue)
    return transpose(b, loc, input, kToChannelsLast);
  Value source = transpose(b, loc, pad.getSource(), kToChannelsLast);
  SmallVector<OpFoldResult> low, high;
  for (int64_t d : kToChannelsLast) {
    low.push_back(pad.getMixedLowPad()[d]);
    high.push_back(pad.getMixedHighPad()[d]);
  }
  return tensor::PadOp::create(b, loc, Type(), source, low, high, padValue)->getResult(0);
}

/// An empty tensor with `value`'s sizes in NHWC order.
Value emptyChannelsLast(OpBuilder &b, Location loc, Value value) {
  SmallVector<OpFoldResult> sizes;
  for (int64_t d : kToChannelsLast)
    sizes.push_back(tensor::getMixedSize(b, loc, value, d));
  return tensor::EmptyOp::create(b, loc, sizes, getElementTypeOrSelf(value.getType()));
}

/// The accumulator in NHWC: a fill is made anew (so it stays a fill, which
/// dispatch formation puts into the consumer's kernel), anything else is
/// transposed.
Value channelsLastInit(OpBuilder &b, Location loc, Value init) {
  auto fill = init.getDefiningOp<linalg::FillOp>();
  if (!fill)
    return transpose(b, loc, init, kToChannelsLast);
  return linalg::FillOp::create(b, loc, fill.getDpsInputs()[0], emptyChannelsLast(b, loc, init))
      ->getResult(0);
}

SmallVector<NamedAttribute> windowAttributes(OpBuilder &b, Operation *op) {
  SmallVector<NamedAttribute> attrs;
  for (StringRef name : {"strides", "dilations"})
    if (Attribute attr = op->getAttr(name))
      attrs.push_back(b.getNamedAttr(name, attr));
  return attrs;
}

/// Replaces `op` (NCHW, inputs {x, second}) with `NhwcOp` on transposed
/// operands; `second` is transposed with `secondPerm` (empty: kept).
template <typename NhwcOp>
void rewriteToChannelsLast(IRRewriter &rewriter, linalg::LinalgOp op,
                           ArrayRef<int64_t> secondPerm) {
  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPoint(op);
  Location loc = op.getLoc();
  Value x = channelsLastInput(rewriter, loc, op.getDpsInputs()[0]);
  Value second = op.getDpsInputs()[1];
  if (!secondPerm.empty())
    second = transpose(rewriter, loc, second, secondPerm);
  Value acc = channelsLastInit(rewriter, loc, op.getDpsInits()[0]);
  auto nhwc = NhwcOp::create(rewriter, loc, TypeRange{acc.getType()}, ValueRange{x, second},
                             ValueRange{acc}, windowAttributes(rewriter, op));
  rewriter.replaceOp(op, transpose(rewriter, loc, nhwc->getResult(0), kToChannelsFirst));
}

/// Strides and dilations (h, w) of a depthwise convolution in the frontends'
/// NCHW generic form, or nullopt: loops (n, c, oh, ow, g, kh, kw) with
///   out[n, c, oh, ow] += x[n, c + g, oh*sh + kh*dh, ow*sw + kw*dw] * w[c, g, kh, kw]
/// and one channel per group (w is [C][1][KH][KW], so g is always 0).
std::optional<std::pair<SmallVector<int64_t>, SmallVector<int64_t>>>
matchDepthwiseNchw(linalg::GenericOp op) {
  if (!isConvolutionLoopNest(op))
    return std::nullopt;
  auto filterType = dyn_cast<RankedTensorType>(op.getDpsInputs()[1].getType());
  auto outType = dyn_cast<RankedTensorType>(op.getResult(0).getType());
  if (!filterType || !outType || filterType.getRank() != 4 || filterType.getDimSize(1) != 1 ||
      filterType.isDynamicDim(0) || outType.isDynamicDim(1) ||
      filterType.getDimSize(0) != outType.getDimSize(1))
    return std::nullopt;
  // Strides and dilations from the input map, then the maps must be exactly
  // these.
  MLIRContext *ctx = op.getContext();
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  auto coefficient = [&](AffineExpr e, unsigned dim) -> int64_t {
    SmallVector<AffineExpr> values;
    for (unsigned d = 0; d < 7; ++d)
      values.push_back(getAffineConstantExpr(d == dim ? 1 : 0, ctx));
    auto c = dyn_cast<AffineConstantExpr>(e.replaceDims(values));
    return c ? c.getValue() : 0;
  };
  if (maps[0].getNumResults() != 4)
    return std::nullopt;
  SmallVector<int64_t> strides = {coefficient(maps[0].getResult(2), 2),
                                  coefficient(maps[0].getResult(3), 3)};
  SmallVector<int64_t> dilations = {coefficient(maps[0].getResult(2), 5),
                                    coefficient(maps[0].getResult(3), 6)};
  AffineExpr n, c, oh, ow, g, kh, kw;
  bindDims(ctx, n, c, oh, ow, g, kh, kw);
  SmallVector<AffineMap> expected = {
      AffineMap::get(7, 0,
                     {n, c + g, oh * strides[0] + kh * dilations[0],
                      ow * strides[1] + kw * dilations[1]},
                     ctx),
      AffineMap::get(7, 0, {c, g, kh, kw}, ctx), AffineMap::get(7, 0, {n, c, oh, ow}, ctx)};
  if (maps != expected)
    return std::nullopt;
  if (!isMultiplyAccumulate(op.getRegion().front()))
    return std::nullopt;
  return std::make_pair(strides, dilations);
}

/// A depthwise NCHW generic (matchDepthwiseNchw) as
///   T^-1(depthwise_conv_2d_nhwc_hwc(T(x), w as [KH][KW][C], T(acc)))
/// which codegen tiles like the other NHWC windows (vectorized over
/// channels) instead of running the generic scalar.
void rewriteDepthwiseToChannelsLast(IRRewriter &rewriter, linalg::GenericOp op,
                                    ArrayRef<int64_t> strides, ArrayRef<int64_t> dilations) {
  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPoint(op);
  Location loc = op.getLoc();
  Value x = channelsLastInput(rewriter, loc, op.getDpsInputs()[0]);
  // [C][1][KH][KW] -> [KH][KW][1][C] -> [KH][KW][C] (folded for constants).
  Value filter = transpose(rewriter, loc, op.getDpsInputs()[1], kFilterToHwcf);
  auto filterType = cast<RankedTensorType>(filter.getType());
  auto hwcType = RankedTensorType::get(
      {filterType.getDimSize(0), filterType.getDimSize(1), filterType.getDimSize(3)},
      filterType.getElementType());
  filter = tensor::CollapseShapeOp::create(rewriter, loc, hwcType, filter,
                                           SmallVector<ReassociationIndices>{{0}, {1}, {2, 3}});
  Value acc = channelsLastInit(rewriter, loc, op.getDpsInits()[0]);
  SmallVector<NamedAttribute> attrs = {
      rewriter.getNamedAttr("strides", rewriter.getI64TensorAttr(strides)),
      rewriter.getNamedAttr("dilations", rewriter.getI64TensorAttr(dilations))};
  auto nhwc = linalg::DepthwiseConv2DNhwcHwcOp::create(
      rewriter, loc, TypeRange{acc.getType()}, ValueRange{x, filter}, ValueRange{acc}, attrs);
  rewriter.replaceOp(op, transpose(rewriter, loc, nhwc->getResult(0), kToChannelsFirst));
}

/// A grouped NCHW convolution as the frontends emit it (loops n, f, oh, ow,
/// c, kh, kw; G groups of Cg input and Fg output channels; Cg > 1 or
/// Fg > 1, else it is depthwise):
///   out[n, f, oh, ow] += x[n, (f floordiv Fg)*Cg + c, oh*sh + kh*dh,
///                          ow*sw + kw*dw] * w[f, c, kh, kw]
/// Returns (Fg, strides, dilations), or nullopt.
struct GroupedWindow {
  int64_t filtersPerGroup;
  SmallVector<int64_t> strides, dilations;
};
std::optional<GroupedWindow> matchGroupedNchw(linalg::GenericOp op) {
  if (!isConvolutionLoopNest(op))
    return std::nullopt;
  auto filterType = dyn_cast<RankedTensorType>(op.getDpsInputs()[1].getType());
  auto inType = dyn_cast<RankedTensorType>(op.getDpsInputs()[0].getType());
  auto outType = dyn_cast<RankedTensorType>(op.getResult(0).getType());
  if (!filterType || !inType || !outType || filterType.getRank() != 4 ||
      inType.getRank() != 4 || !filterType.hasStaticShape() || outType.isDynamicDim(1) ||
      inType.isDynamicDim(1) || filterType.getDimSize(0) != outType.getDimSize(1))
    return std::nullopt;
  int64_t filters = filterType.getDimSize(0), channelsPerGroup = filterType.getDimSize(1);
  if (channelsPerGroup <= 0 || inType.getDimSize(1) % channelsPerGroup != 0)
    return std::nullopt;
  int64_t groups = inType.getDimSize(1) / channelsPerGroup;
  if (groups <= 1 || filters % groups != 0)
    return std::nullopt;
  int64_t filtersPerGroup = filters / groups;
  if (channelsPerGroup == 1 && filtersPerGroup == 1)
    return std::nullopt; // depthwise (matchDepthwiseNchw)
  MLIRContext *ctx = op.getContext();
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  if (maps[0].getNumResults() != 4)
    return std::nullopt;
  auto coefficient = [&](AffineExpr e, unsigned dim) -> int64_t {
    SmallVector<AffineExpr> values;
    for (unsigned d = 0; d < 7; ++d)
      values.push_back(getAffineConstantExpr(d == dim ? 1 : 0, ctx));
    auto c = dyn_cast<AffineConstantExpr>(e.replaceDims(values));
    return c ? c.getValue() : 0;
  };
  GroupedWindow window;
  window.filtersPerGroup = filtersPerGroup;
  window.strides = {coefficient(maps[0].getResult(2), 2), coefficient(maps[0].getResult(3), 3)};
  window.dilations = {coefficient(maps[0].getResult(2), 5),
                      coefficient(maps[0].getResult(3), 6)};
  AffineExpr n, f, oh, ow, c, kh, kw;
  bindDims(ctx, n, f, oh, ow, c, kh, kw);
  SmallVector<AffineMap> expected = {
      AffineMap::get(7, 0,
                     {n, f.floorDiv(filtersPerGroup) * channelsPerGroup + c,
                      oh * window.strides[0] + kh * window.dilations[0],
                      ow * window.strides[1] + kw * window.dilations[1]},
                     ctx),
      AffineMap::get(7, 0, {f, c, kh, kw}, ctx), AffineMap::get(7, 0, {n, f, oh, ow}, ctx)};
  if (maps != expected)
    return std::nullopt;
  if (!isMultiplyAccumulate(op.getRegion().front()))
    return std::nullopt;
  return window;
}

/// A grouped NCHW generic (matchGroupedNchw) as
///   T^-1(grouped NHWC generic(T(x), w as [KH][KW][Cg][F], T(acc)))
/// with loops (n, oh, ow, f, kh, kw, c):
///   out[n, oh, ow, f] += x[n, oh*sh + kh*dh, ow*sw + kw*dw,
///                          (f floordiv Fg)*Cg + c] * w[kh, kw, c, f]
/// so the layout change cancels against its neighbours' and its epilogue
/// fuses like a convolution's; turbine-pack-convolution-filters then packs
/// a constant filter per group (ConvolutionFilterPacking.cpp), which codegen
/// runs as one small NHWC convolution per group.
void rewriteGroupedToChannelsLast(IRRewriter &rewriter, linalg::GenericOp op,
                                  const GroupedWindow &window) {
  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPoint(op);
  Location loc = op.getLoc();
  Value x = channelsLastInput(rewriter, loc, op.getDpsInputs()[0]);
  Value filter = transpose(rewriter, loc, op.getDpsInputs()[1], kFilterToHwcf);
  int64_t channelsPerGroup = cast<RankedTensorType>(filter.getType()).getDimSize(2);
  Value acc = channelsLastInit(rewriter, loc, op.getDpsInits()[0]);
  MLIRContext *ctx = op.getContext();
  AffineExpr n, oh, ow, f, kh, kw, c;
  bindDims(ctx, n, oh, ow, f, kh, kw, c);
  SmallVector<AffineMap> maps = {
      AffineMap::get(7, 0,
                     {n, oh * window.strides[0] + kh * window.dilations[0],
                      ow * window.strides[1] + kw * window.dilations[1],
                      f.floorDiv(window.filtersPerGroup) * channelsPerGroup + c},
                     ctx),
      AffineMap::get(7, 0, {kh, kw, c, f}, ctx), AffineMap::get(7, 0, {n, oh, ow, f}, ctx)};
  SmallVector<utils::IteratorType> iterators(4, utils::IteratorType::parallel);
  iterators.append(3, utils::IteratorType::reduction);
  auto nhwc = linalg::GenericOp::create(
      rewriter, loc, TypeRange{acc.getType()}, ValueRange{x, filter}, ValueRange{acc}, maps,
      iterators, [](OpBuilder &b, Location l, ValueRange args) {
        Value product = arith::MulFOp::create(b, l, args[0], args[1]);
        linalg::YieldOp::create(b, l, (Value)arith::AddFOp::create(b, l, args[2], product));
      });
  rewriter.replaceOp(op, transpose(rewriter, loc, nhwc->getResult(0), kToChannelsFirst));
}

/// The source of `value` if it is a linalg.transpose by `perm`, else null.
Value transposedFrom(Value value, ArrayRef<int64_t> perm) {
  auto t = value.getDefiningOp<linalg::TransposeOp>();
  if (t && t.getPermutation() == perm)
    return t.getInput();
  return Value();
}

/// `value` (NCHW) in NHWC: T(T^-1(y)) is y, anything else gets a transpose.
Value toChannelsLast(OpBuilder &b, Location loc, Value value) {
  if (Value source = transposedFrom(value, kToChannelsFirst))
    return source;
  return transpose(b, loc, value, kToChannelsLast);
}

/// A rank-4, all-parallel, single-result linalg.generic that writes its
/// result with the identity map, does not read its destination and does not
/// ask for its indices: an elementwise op (possibly broadcasting) whose
/// iteration space can be permuted freely.
bool isPermutableElementwise(Operation *op) {
  auto generic = dyn_cast_or_null<linalg::GenericOp>(op);
  if (!generic || !generic.hasPureTensorSemantics() || generic.getNumResults() != 1 ||
      generic.getNumLoops() != 4 || generic.getNumParallelLoops() != 4 ||
      !generic.getMatchingIndexingMap(generic.getDpsInitOperand(0)).isIdentity() ||
      !generic.getRegionOutputArgs()[0].use_empty())
    return false;
  bool usesIndices = false;
  generic.getBody()->walk([&](linalg::IndexOp) { usesIndices = true; });
  return !usesIndices;
}

void replaceWithChannelsLast(IRRewriter &rewriter, linalg::GenericOp op, linalg::GenericOp nhwc,
                             SmallVectorImpl<linalg::TransposeOp> &worklist);

/// Rewrites the NCHW elementwise `op` to compute in NHWC. Inputs read
/// element for element are read through T(input) (queued on `worklist` so
/// the layout change moves further up); other inputs (broadcast bias, ...)
/// keep their operand with a permuted indexing map. A transpose to NHWC of
/// the result becomes the new op (and leaves `worklist`); every other use
/// reads T^-1(new op).
void rewriteElementwiseToChannelsLast(IRRewriter &rewriter, linalg::GenericOp op,
                                      SmallVectorImpl<linalg::TransposeOp> &worklist) {
  Location loc = op.getLoc();
  rewriter.setInsertionPoint(op);
  MLIRContext *ctx = op.getContext();
  // New iteration dims are NHWC; old dim kToChannelsLast[i] is new dim i.
  AffineMap newToOld = AffineMap::getPermutationMap(kToChannelsFirst, ctx);
  SmallVector<Value> inputs;
  SmallVector<AffineMap> maps;
  for (OpOperand *input : op.getDpsInputOperands()) {
    AffineMap map = op.getMatchingIndexingMap(input);
    if (map.isIdentity()) {
      Value nhwc = toChannelsLast(rewriter, loc, input->get());
      if (auto t = nhwc.getDefiningOp<linalg::TransposeOp>())
        worklist.push_back(t);
      inputs.push_back(nhwc);
      maps.push_back(map);
    } else {
      inputs.push_back(input->get());
      maps.push_back(map.compose(newToOld));
    }
  }
  Value init = emptyChannelsLast(rewriter, loc, op.getDpsInits()[0]);
  maps.push_back(AffineMap::getMultiDimIdentityMap(4, ctx));
  auto nhwc = linalg::GenericOp::create(rewriter, loc, TypeRange{init.getType()}, inputs,
                                        ValueRange{init}, maps, op.getIteratorTypesArray());
  rewriter.inlineRegionBefore(op.getRegion(), nhwc.getRegion(), nhwc.getRegion().end());
  replaceWithChannelsLast(rewriter, op, nhwc, worklist);
}

/// A rank-4, all-parallel generic without inputs that gathers from rank-4
/// tensors with tensor.extract (a pad lowered to a gather, as the
/// TorchScript frontend emits it): out[i] = f(i, src[g(i)], ...). Its
/// iteration space can be permuted like an elementwise op's, the sources
/// read through their transposes.
bool isPermutableGather(Operation *op) {
  auto generic = dyn_cast_or_null<linalg::GenericOp>(op);
  if (!generic || !generic.hasPureTensorSemantics() || generic.getNumDpsInputs() != 0 ||
      generic.getNumResults() != 1 || generic.getNumLoops() != 4 ||
      generic.getNumParallelLoops() != 4 ||
      !generic.getMatchingIndexingMap(generic.getDpsInitOperand(0)).isIdentity() ||
      !generic.getRegionOutputArgs()[0].use_empty())
    return false;
  bool gathers = false, other = false;
  generic.getBody()->walk([&](Operation *inner) {
    if (auto extract = dyn_cast<tensor::ExtractOp>(inner)) {
      gathers = true;
      other |= extract.getTensor().getType().getRank() != 4 ||
               generic->isAncestor(extract.getTensor().getParentBlock()->getParentOp());
    } else if (inner->getNumRegions() != 0) {
      other = true;
    }
  });
  return gathers && !other;
}

/// The NCHW gather `op` (isPermutableGather) computed in NHWC: its indices
/// are permuted and it reads T(src) for every source src (queued on
/// `worklist`).
void rewriteGatherToChannelsLast(IRRewriter &rewriter, linalg::GenericOp op,
                                 SmallVectorImpl<linalg::TransposeOp> &worklist) {
  Location loc = op.getLoc();
  rewriter.setInsertionPoint(op);
  SmallVector<tensor::ExtractOp> extracts;
  op.getBody()->walk([&](tensor::ExtractOp e) { extracts.push_back(e); });
  DenseMap<Value, Value> channelsLastSources;
  for (tensor::ExtractOp e : extracts) {
    Value source = e.getTensor();
    if (channelsLastSources.count(source))
      continue;
    Value nhwc = toChannelsLast(rewriter, loc, source);
    if (auto t = nhwc.getDefiningOp<linalg::TransposeOp>())
      worklist.push_back(t);
    channelsLastSources[source] = nhwc;
  }
  Value init = emptyChannelsLast(rewriter, loc, op.getDpsInits()[0]);
  auto nhwc = linalg::GenericOp::create(
      rewriter, loc, TypeRange{init.getType()}, ValueRange{}, ValueRange{init},
      SmallVector<AffineMap>{AffineMap::getMultiDimIdentityMap(4, op.getContext())},
      op.getIteratorTypesArray());
  rewriter.inlineRegionBefore(op.getRegion(), nhwc.getRegion(), nhwc.getRegion().end());
  // Old loop d is new loop kToChannelsFirst[d]; sources are read in NHWC.
  nhwc.getBody()->walk([&](linalg::IndexOp index) {
    rewriter.modifyOpInPlace(index, [&] {
      index.setDim(static_cast<uint64_t>(kToChannelsFirst[index.getDim()]));
    });
  });
  for (tensor::ExtractOp e : extracts) {
    rewriter.setInsertionPoint(e);
    SmallVector<Value> indices;
    for (int64_t d : kToChannelsLast)
      indices.push_back(e.getIndices()[d]);
    rewriter.replaceOpWithNewOp<tensor::ExtractOp>(e, channelsLastSources[e.getTensor()],
                                                   indices);
  }
  replaceWithChannelsLast(rewriter, op, nhwc, worklist);
}

/// Replaces the NCHW result of `op` by `nhwc`, the same values in NHWC.
/// Transposes to NHWC of the result read `nhwc` (and leave `worklist`);
/// other uses get their own transpose back (one use each, so each can fuse
/// into its consumer). Erases `op`.
void replaceWithChannelsLast(IRRewriter &rewriter, linalg::GenericOp op, linalg::GenericOp nhwc,
                             SmallVectorImpl<linalg::TransposeOp> &worklist) {
  Location loc = op.getLoc();
  SmallVector<OpOperand *> uses;
  for (OpOperand &use : op->getResult(0).getUses())
    uses.push_back(&use);
  for (OpOperand *use : uses) {
    auto t = dyn_cast<linalg::TransposeOp>(use->getOwner());
    if (t && t.getPermutation() == ArrayRef<int64_t>(kToChannelsLast)) {
      llvm::erase(worklist, t);
      rewriter.replaceOp(t, nhwc->getResult(0));
      continue;
    }
    rewriter.setInsertionPointAfter(nhwc);
    Value back = transpose(rewriter, loc, nhwc->getResult(0), kToChannelsFirst);
    rewriter.modifyOpInPlace(use->getOwner(), [&] { use->set(back); });
  }
  rewriter.eraseOp(op);
}

/// Moves the layout change up through elementwise ops (and gathers such as
/// lowered pads): every transpose to
/// NHWC of an elementwise op's result (a convolution or pooling input)
/// turns that op into an NHWC one, whose element-for-element inputs are in
/// turn transposed, and so on up to the previous convolution's T^-1, which
/// cancels. A residual network's skip connections (a block's output read by
/// the next block's convolution and by its residual add) then stay NHWC
/// too, and the residual add reads the convolution's result with the
/// identity map (so dispatch formation fuses it into the convolution).
void propagateChannelsLastThroughElementwise(IRRewriter &rewriter, ModuleOp module) {
  SmallVector<linalg::TransposeOp> worklist;
  module.walk([&](linalg::TransposeOp t) {
    if (t.getPermutation() == ArrayRef<int64_t>(kToChannelsLast))
      worklist.push_back(t);
  });
  while (!worklist.empty()) {
    linalg::TransposeOp t = worklist.pop_back_val();
    Operation *producer = t.getInput().getDefiningOp();
    if (isPermutableElementwise(producer))
      rewriteElementwiseToChannelsLast(rewriter, cast<linalg::GenericOp>(producer), worklist);
    else if (isPermutableGather(producer))
      rewriteGatherToChannelsLast(rewriter, cast<linalg::GenericOp>(producer), worklist);
  }
}

void convertConvolutionsToChannelsLast(ModuleOp module) {
  SmallVector<linalg::LinalgOp> ops;
  SmallVector<linalg::GenericOp> depthwise, grouped;
  module.walk([&](linalg::LinalgOp op) {
    if (op.hasPureTensorSemantics() &&
        isa<linalg::Conv2DNchwFchwOp, linalg::PoolingNchwMaxOp, linalg::PoolingNchwSumOp>(
            op.getOperation()))
      ops.push_back(op);
    if (auto generic = dyn_cast<linalg::GenericOp>(op.getOperation());
        generic && matchDepthwiseNchw(generic))
      depthwise.push_back(generic);
    else if (generic && matchGroupedNchw(generic))
      grouped.push_back(generic);
  });
  IRRewriter rewriter(module.getContext());
  for (linalg::GenericOp op : depthwise) {
    auto [strides, dilations] = *matchDepthwiseNchw(op);
    rewriteDepthwiseToChannelsLast(rewriter, op, strides, dilations);
  }
  for (linalg::GenericOp op : grouped)
    rewriteGroupedToChannelsLast(rewriter, op, *matchGroupedNchw(op));
  for (linalg::LinalgOp op : ops) {
    if (isa<linalg::Conv2DNchwFchwOp>(op.getOperation()))
      rewriteToChannelsLast<linalg::Conv2DNhwcHwcfOp>(rewriter, op, kFilterToHwcf);
    else if (isa<linalg::PoolingNchwMaxOp>(op.getOperation()))
      rewriteToChannelsLast<linalg::PoolingNhwcMaxOp>(rewriter, op, {});
    else
      rewriteToChannelsLast<linalg::PoolingNhwcSumOp>(rewriter, op, {});
  }
  propagateChannelsLastThroughElementwise(rewriter, module);
}

struct ConvertToChannelsLastPass : impl::ConvertToChannelsLastBase<ConvertToChannelsLastPass> {
  void runOnOperation() override { convertConvolutionsToChannelsLast(getOperation()); }
};

} // namespace

std::optional<GroupedConvolution> matchGroupedChannelsLast(linalg::GenericOp op) {
  if (!isConvolutionLoopNest(op))
    return std::nullopt;
  auto filterType = dyn_cast<RankedTensorType>(op.getDpsInputs()[1].getType());
  if (!filterType || filterType.getRank() != 4 || !filterType.hasStaticShape())
    return std::nullopt;
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  if (maps[0].getNumResults() != 4)
    return std::nullopt;
  MLIRContext *ctx = op.getContext();
  auto coefficient = [&](AffineExpr e, unsigned dim) -> int64_t {
    SmallVector<AffineExpr> values;
    for (unsigned d = 0; d < 7; ++d)
      values.push_back(getAffineConstantExpr(d == dim ? 1 : 0, ctx));
    auto c = dyn_cast<AffineConstantExpr>(e.replaceDims(values));
    return c ? c.getValue() : 0;
  };
  GroupedConvolution conv;
  conv.strides = {coefficient(maps[0].getResult(1), 1), coefficient(maps[0].getResult(2), 2)};
  conv.dilations = {coefficient(maps[0].getResult(1), 4), coefficient(maps[0].getResult(2), 5)};
  int64_t channelsPerGroup = filterType.getDimSize(2), filters = filterType.getDimSize(3);
  // Fg from the input map's channel expression (f floordiv Fg) * Cg + c:
  // its coefficient of f is 0 unless Fg is 1.
  AffineExpr n, oh, ow, f, kh, kw, c;
  bindDims(ctx, n, oh, ow, f, kh, kw, c);
  for (int64_t fg = 1; fg <= filters; ++fg) {
    if (filters % fg != 0)
      continue;
    SmallVector<AffineMap> expected = {
        AffineMap::get(7, 0,
                       {n, oh * conv.strides[0] + kh * conv.dilations[0],
                        ow * conv.strides[1] + kw * conv.dilations[1],
                        f.floorDiv(fg) * channelsPerGroup + c},
                       ctx),
        AffineMap::get(7, 0, {kh, kw, c, f}, ctx), AffineMap::get(7, 0, {n, oh, ow, f}, ctx)};
    if (maps != expected)
      continue;
    conv.filtersPerGroup = fg;
    Block &body = op.getRegion().front();
    if (body.getOperations().size() != 3)
      return std::nullopt;
    auto mul = dyn_cast<arith::MulFOp>(body.front());
    auto add = dyn_cast<arith::AddFOp>(*std::next(body.begin()));
    if (!mul || !add || mul.getLhs() != body.getArgument(0) ||
        mul.getRhs() != body.getArgument(1) || add.getLhs() != body.getArgument(2) ||
        add.getRhs() != mul.getResult())
      return std::nullopt;
    return conv;
  }
  return std::nullopt;
}

} // namespace turbine::compiler
