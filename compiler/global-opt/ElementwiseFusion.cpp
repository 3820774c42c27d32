//===- ElementwiseFusion.cpp - Generalization and elementwise fusion ------===//
//
// Two passes of the global-opt phase: turbine-generalize-elementwise turns
// elementwise-like named linalg ops into linalg.generic (so they can fuse);
// turbine-fuse-elementwise folds constant transposes/broadcasts (also of
// one slice of a constant: ConstantSlicing.h; transposes on their bytes:
// ConstantTransposes.h), fuses
// chains of elementwise linalg.generic ops into single generics (a producer
// fuses when it has one use, unless it is a concatenation: ConcatSlices.h), reads arguments through transposes
// (TransposeElimination.h) and resolves tensor.dim of intermediate values to
// dims of the function arguments. Contractions, convolutions and pooling
// stay named: codegen picks strategies by their kind.
//===----------------------------------------------------------------------===//
#include "dispatch/ConcatSlices.h"
#include "global-opt/ChannelsLastConvolutions.h"
#include "global-opt/ConstantSlicing.h"
#include "global-opt/ConstantTransposes.h"
#include "global-opt/TransposeElimination.h"

#include "turbine/compiler/Passes.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

namespace turbine::compiler {

#define GEN_PASS_DEF_GENERALIZEELEMENTWISE
#define GEN_PASS_DEF_FUSEELEMENTWISE
#include "turbine/compiler/Passes.h.inc"

namespace {

/// Constants of at most this many elements are folded at compile time
/// (transposes, slices, other constant linalg ops).
constexpr int64_t kMaxFoldedElements = int64_t(1) << 24;

/// Named ops that are elementwise, broadcasts or transposes: generic is the
/// better form for fusion. Contractions, convolutions, pooling and fill keep
/// their names (their codegen differs).
bool shouldGeneralize(linalg::LinalgOp op) {
  if (isa<linalg::GenericOp, linalg::FillOp>(op))
    return false;
  if (linalg::isaContractionOpInterface(op) ||
      linalg::isaConvolutionOpInterface(op) ||
      isa<linalg::PoolingNchwMaxOp, linalg::PoolingNchwSumOp,
          linalg::PoolingNhwcMaxOp, linalg::PoolingNhwcSumOp>(op))
    return false;
  return true;
}

void generalizeElementwiseNamedOps(ModuleOp module) {
  IRRewriter rewriter(module.getContext());
  SmallVector<linalg::LinalgOp> ops;
  module.walk([&](linalg::LinalgOp op) {
    if (shouldGeneralize(op))
      ops.push_back(op);
  });
  for (linalg::LinalgOp op : ops) {
    rewriter.setInsertionPoint(op);
    (void)linalg::generalizeNamedOp(rewriter, op);
  }
}

/// True when `op`'s body has math dialect ops (exp, tanh, erf, ...) or
/// divisions: work worth not repeating.
bool computesTranscendentals(Operation *op) {
  auto generic = dyn_cast<linalg::GenericOp>(op);
  if (!generic)
    return false;
  WalkResult found = generic.getBody()->walk([](Operation *inner) {
    return isa<math::MathDialect>(inner->getDialect()) || isa<arith::DivFOp>(inner)
               ? WalkResult::interrupt()
               : WalkResult::advance();
  });
  return found.wasInterrupted();
}

/// True when `consumer` reads `operand` through a map that leaves out some
/// of its loops (each element read for many iterations).
bool isBroadcastRead(linalg::GenericOp consumer, OpOperand *operand) {
  AffineMap map = consumer.getMatchingIndexingMap(operand);
  for (unsigned d = 0; d < map.getNumDims(); ++d)
    if (!map.isFunctionOfDim(d))
      return true;
  return false;
}

struct GeneralizeElementwisePass : impl::GeneralizeElementwiseBase<GeneralizeElementwisePass> {
  void runOnOperation() override { generalizeElementwiseNamedOps(getOperation()); }
};

struct FuseElementwisePass : impl::FuseElementwiseBase<FuseElementwisePass> {
  void runOnOperation() override;
};

void FuseElementwisePass::runOnOperation() {
  ModuleOp module = getOperation();
  MLIRContext *context = module.getContext();
  RewritePatternSet patterns(context);
  // Grouped NHWC convolutions are generics, but codegen picks a convolution
  // strategy for them by their form (ChannelsLastConvolutions.h): nothing
  // fuses into them (their pad, their filter's transpose), as into named
  // convolutions.
  linalg::ControlFusionFn singleUseProducer = [](OpOperand *operand) {
    Operation *producer = operand->get().getDefiningOp();
    auto consumer = dyn_cast<linalg::GenericOp>(operand->getOwner());
    if (consumer && matchGroupedChannelsLast(consumer))
      return false;
    // A concatenation stays a concatenation: dispatch formation writes it
    // in place, slice by slice (ConcatSlices.h); its consumer reads it.
    if (producer && matchConcatGather(producer))
      return false;
    // A producer with transcendental math read through a broadcast (an SE
    // block's sigmoid gate, 144 values, scaling a 56x56x144 tensor) would be
    // recomputed for every element of the consumer: it stays its own op
    // (then the epilogue of its producer's kernel).
    if (producer && consumer && computesTranscendentals(producer) &&
        isBroadcastRead(consumer, operand))
      return false;
    return producer && producer->hasOneUse();
  };
  linalg::populateElementwiseOpsFusionPatterns(patterns, singleUseProducer);
  populateTransposeEliminationPatterns(patterns);
  // A matmul on flattened rows whose result is reshaped back (ONNX MatMul of
  // a ?x128x256 activation) and then biased/activated/added: the elementwise
  // op is collapsed to the matmul's 2-D shape, so dispatch formation fuses it
  // into the matmul's epilogue instead of giving it its own kernel.
  linalg::ControlFusionFn expandedContraction = [](OpOperand *operand) {
    auto expand = operand->get().getDefiningOp<tensor::ExpandShapeOp>();
    if (!expand)
      return false;
    auto producer = expand.getSrc().getDefiningOp<linalg::LinalgOp>();
    return producer && linalg::isaContractionOpInterface(producer);
  };
  linalg::populateFoldReshapeOpsByCollapsingPatterns(patterns, expandedContraction);
  linalg::ControlFusionFn smallConstants = [](OpOperand *operand) {
    auto type = dyn_cast<ShapedType>(operand->get().getType());
    return type && type.hasStaticShape() && type.getNumElements() <= kMaxFoldedElements;
  };
  populateConstantTransposeFoldingPatterns(patterns, kMaxFoldedElements);
  linalg::populateConstantFoldLinalgOperations(patterns, smallConstants);
  populateConstantSlicingPatterns(patterns, kMaxFoldedElements);
  memref::populateResolveRankedShapedTypeResultDimsPatterns(patterns);
  memref::populateResolveShapedTypeResultDimsPatterns(patterns);
  linalg::FillOp::getCanonicalizationPatterns(patterns, context);
  linalg::GenericOp::getCanonicalizationPatterns(patterns, context);
  tensor::DimOp::getCanonicalizationPatterns(patterns, context);
  tensor::EmptyOp::getCanonicalizationPatterns(patterns, context);
  // Large graphs can need more than the default 10 sweeps; the IR is valid
  // after every rewrite, so stopping at the bound is safe either way.
  GreedyRewriteConfig config;
  config.setMaxIterations(GreedyRewriteConfig::kNoLimit);
  config.setMaxNumRewrites(1 << 22);
  (void)applyPatternsGreedily(module, std::move(patterns), config);
}

} // namespace

} // namespace turbine::compiler
