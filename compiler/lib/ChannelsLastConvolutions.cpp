//===- ChannelsLastConvolutions.cpp - NCHW convolutions and pooling to NHWC ===//
//
// ONNX and PyTorch convolutions are NCHW, but CPU kernels want the channels
// innermost: with NHWC data a convolution's register tile is a small matmul
// (output pixels x output channels, one input channel at a time) and pooling
// vectorizes over channels. Like IREE's global optimization, this rewrites
//   conv_2d_nchw_fchw(x, w, acc)  ->  T(conv_2d_nhwc_hwcf(T(x), T(w), T(acc)))
//   pooling_nchw_{max,sum}(x, win, acc) -> T(pooling_nhwc_{max,sum}(T(x), win, T(acc)))
// with linalg.transpose ops (a tensor.pad of the input moves after its
// transpose). A constant filter's transpose folds at compile
// time; the other transposes are generalized and fused by global-opt, which
// composes a transpose back to NCHW with the elementwise ops after it and the
// transpose to NHWC of the next convolution or pooling into identity maps, so
// conv-bn-relu-pool-conv chains stay in NHWC and only the graph's edges pay
// for a layout change.
//===----------------------------------------------------------------------===//
#include "Phases.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/PatternMatch.h"

using namespace mlir;

namespace turbine::compiler {
namespace {

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

/// The accumulator in NHWC: a fill is made anew (so it stays a fill, which
/// dispatch formation puts into the consumer's kernel), anything else is
/// transposed.
Value channelsLastInit(OpBuilder &b, Location loc, Value init) {
  auto fill = init.getDefiningOp<linalg::FillOp>();
  if (!fill)
    return transpose(b, loc, init, kToChannelsLast);
  SmallVector<OpFoldResult> sizes;
  for (int64_t d : kToChannelsLast)
    sizes.push_back(tensor::getMixedSize(b, loc, init, d));
  Value empty = tensor::EmptyOp::create(
      b, loc, sizes, cast<RankedTensorType>(init.getType()).getElementType());
  return linalg::FillOp::create(b, loc, fill.getDpsInputs()[0], empty)->getResult(0);
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
  Value oldInit = op.getDpsInits()[0];
  SmallVector<OpFoldResult> sizes;
  for (int64_t d : kToChannelsLast)
    sizes.push_back(tensor::getMixedSize(rewriter, loc, oldInit, d));
  Value init = tensor::EmptyOp::create(rewriter, loc, sizes,
                                       getElementTypeOrSelf(oldInit.getType()));
  maps.push_back(AffineMap::getMultiDimIdentityMap(4, ctx));
  auto nhwc = linalg::GenericOp::create(rewriter, loc, TypeRange{init.getType()}, inputs,
                                        ValueRange{init}, maps, op.getIteratorTypesArray());
  rewriter.inlineRegionBefore(op.getRegion(), nhwc.getRegion(), nhwc.getRegion().end());
  // Transposes to NHWC of the result read the new op; other uses get their
  // own transpose back (one use each, so each can fuse into its consumer).
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

/// Moves the layout change up through elementwise ops: every transpose to
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
  }
}

} // namespace

void convertConvolutionsToChannelsLast(ModuleOp module) {
  SmallVector<linalg::LinalgOp> ops;
  module.walk([&](linalg::LinalgOp op) {
    if (op.hasPureTensorSemantics() &&
        isa<linalg::Conv2DNchwFchwOp, linalg::PoolingNchwMaxOp, linalg::PoolingNchwSumOp>(
            op.getOperation()))
      ops.push_back(op);
  });
  IRRewriter rewriter(module.getContext());
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

} // namespace turbine::compiler
