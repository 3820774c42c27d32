//===- GlobalOptPhase.cpp - Whole-program simplification and fusion -------===//
//
// Moves NCHW convolutions and pooling to NHWC and keeps residual streams NHWC
// (ChannelsLastConvolutions.cpp), lowers tensor.pad to gathering generics
// (LowerPads.cpp) that read arguments through their transposes
// (TransposeElimination.cpp), generalizes elementwise-like named linalg ops
// (so they can fuse), folds constant transposes/broadcasts, fuses chains of
// elementwise linalg.generic ops into single generics (a producer fuses when
// it has one use), resolves tensor.dim of intermediate values to dims of the
// function arguments, packs matmul right-hand sides into panels
// (MatmulDataTiling.cpp) and constant convolution filters channel-tile-major
// (ConvolutionFilterPacking.cpp), and cleans up. Contractions, convolutions
// and pooling stay named: codegen picks strategies by their kind.
//===----------------------------------------------------------------------===//
#include "ConvolutionFilterPacking.h"
#include "MatmulDataTiling.h"
#include "Phases.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/MemRef/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

namespace turbine::compiler {

/// Named ops that are elementwise, broadcasts or transposes: generic is the
/// better form for fusion. Contractions, convolutions, pooling and fill keep
/// their names (their codegen differs).
static bool shouldGeneralize(linalg::LinalgOp op) {
  if (isa<linalg::GenericOp, linalg::FillOp>(op))
    return false;
  if (linalg::isaContractionOpInterface(op) ||
      linalg::isaConvolutionOpInterface(op) ||
      isa<linalg::PoolingNchwMaxOp, linalg::PoolingNchwSumOp,
          linalg::PoolingNhwcMaxOp, linalg::PoolingNhwcSumOp>(op))
    return false;
  return true;
}

static void generalizeElementwiseNamedOps(ModuleOp module) {
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

LogicalResult runGlobalOptPhase(ModuleOp module) {
  MLIRContext *context = module.getContext();
  convertConvolutionsToChannelsLast(module);
  if (failed(lowerPadsToGathers(module)))
    return failure();
  generalizeElementwiseNamedOps(module);

  RewritePatternSet patterns(context);
  linalg::ControlFusionFn singleUseProducer = [](OpOperand *operand) {
    Operation *producer = operand->get().getDefiningOp();
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
    return type && type.hasStaticShape() && type.getNumElements() <= (1 << 24);
  };
  linalg::populateConstantFoldLinalgOperations(patterns, smallConstants);
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
  dataTileMatmuls(module);

  auto pm = PassManager::on<ModuleOp>(context);
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  if (failed(pm.run(module)))
    return failure();
  // Last, after fusion: constant convolution filters repacked
  // channel-tile-major (ConvolutionFilterPacking.cpp).
  packConvolutionFilters(module);
  return success();
}

} // namespace turbine::compiler
