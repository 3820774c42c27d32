//===- KernelCodegen.cpp - Tile, vectorize and bufferize every kernel -----===//
//
// Per kernel function (on tensors, as dispatch formation left it):
//  1. Workgroup level: tile the op producing the kernel's first result with
//     the kernel's workgroup tiles and fuse its producers (fill, matmul, ...)
//     into the tile loops; the loops then stride over workgroups
//     (lb + id * step, step * count), so one call computes one workgroup's
//     tiles.
//  2. Vector level, per op inside the workgroup tile (the strategies in
//     MatmulCodegen.cpp and ConvolutionCodegen.cpp, CodegenStrategies.h):
//       matmul / batch_matmul / packed matmul (MatmulDataTiling.h): K tiled
//       by 256, rows split at the last multiple of 8; the full rows get an
//       8x32x1 register tile whose M and N loops are peeled so full tiles
//       are static; those are vectorized to vector.contract (lowered to
//       outer products = FMAs); leftover rows (small or dynamic batch, GEMV)
//       go one row at a time, 1x128x1 then 1x32x1; partial tiles (N = 10)
//       are vectorized with masks;
//       bf16 matmuls on a CPU with AVX512-BF16: 8x32 register tiles over
//       the whole K tile written with vdpbf16ps (Bf16MatmulCodegen.cpp);
//       group-quantized matmuls (turbine-quantize-weights): the same row
//       split and register tiles, written as vector code that dequantizes
//       the int8 / int4 weights in registers (QuantizedMatmulCodegen.cpp);
//       NHWC convolutions and pooling: register tiles of 8 pixels x 32
//       channels (16 x 16 for narrow layers), decomposed to 1-D and
//       vectorized; packed-filter convolutions (ConvolutionFilterPacking.cpp)
//       become one such convolution per 32-channel tile; those with large
//       filter slices and small images (ConvolutionReductionBlocking.h)
//       first get their reduction tiled into blocks outside the register
//       tiles, accumulate in a scratch tile and prefetch filter blocks; a
//       max pooling whose pad joined its kernel reads the unpadded source at
//       clamped indices (ClampedMaxPooling.h), one pixel x 32 channels at a
//       time; the padded NHWC copy of a few-channel NCHW image is built by
//       rows with shuffles (ChannelsLastInputGather.h);
//       everything else: inner loop tiled by 64, outer loops by 1, vectorized
//       with masks for partial tiles (elementwise, broadcast, transpose,
//       reductions, pads); other gathers stay scalar for now.
//     Loop-carried tiles are then hoisted into iter_args on tensors, so the
//     matmul accumulator stays in registers across K.
//  3. One-shot bufferization writing results in place into output bindings,
//     vector lowering, and lowering to the LLVM dialect.
// Each step is a pass of the CPU target's codegen pipeline (CpuTarget.cpp):
// turbine-cpu-tile-and-vectorize (1, 2), turbine-cpu-lower-vector-masks,
// turbine-cpu-bufferize and turbine-cpu-lower-vectors (3).
//===----------------------------------------------------------------------===//
#include "targets/cpu/CodegenStrategies.h"
#include "targets/cpu/ChannelsLastInputGather.h"
#include "targets/cpu/ClampedMaxPooling.h"
#include "targets/cpu/ConvolutionFilterPacking.h"
#include "targets/cpu/ConvolutionReductionBlocking.h"
#include "global-opt/LowerPads.h"
#include "global-opt/GgufWeights.h"
#include "global-opt/WeightQuantization.h"
#include "targets/cpu/MatmulDataTiling.h"
#include "targets/cpu/MatmulEpilogueInPlace.h"
#include "targets/cpu/MatmulKernelPacking.h"
#include "dispatch/PaddedResults.h"
#include "dispatch/SliceUpdates.h"
#include "dispatch/WorkgroupTiling.h"
#include "targets/cpu/CpuFeatures.h"
#include "targets/cpu/CpuWorkgroupTiling.h"

#include "targets/cpu/VectorReductions.h"

#include "turbine/compiler/Dialect/TurbineDialect.h"
#include "turbine/compiler/Passes.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/OneShotAnalysis.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/Transforms.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Hoisting.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/MemRef/Transforms/Transforms.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/X86Vector/X86VectorDialect.h"
#include "mlir/Dialect/SCF/Transforms/TileUsingInterface.h"
#include "mlir/Dialect/SCF/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tensor/Transforms/Transforms.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Dialect/Vector/Transforms/LoweringPatterns.h"
#include "mlir/Dialect/Vector/Transforms/VectorRewritePatterns.h"
#include "mlir/Interfaces/ValueBoundsOpInterface.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "mlir/Transforms/LoopInvariantCodeMotionUtils.h"
#include "mlir/Transforms/Passes.h"

#include <functional>

using namespace mlir;

namespace turbine::compiler {

#define GEN_PASS_DEF_CPUTILEANDVECTORIZE
#define GEN_PASS_DEF_CPULOWERVECTORMASKS
#define GEN_PASS_DEF_CPUBUFFERIZE
#define GEN_PASS_DEF_CPULOWERVECTORS
#include "turbine/compiler/Passes.h.inc"

/// Tiles `op` with `tileSizes` (scf.for loops, no fusion). Returns the tiled
/// op, or null if tiling failed (the op is left as it was).
Operation *tileOp(RewriterBase &rewriter, TilingInterface op,
                  ArrayRef<int64_t> tileSizes) {
  if (llvm::all_of(tileSizes, [](int64_t t) { return t == 0; }))
    return op;
  scf::SCFTilingOptions options;
  options.setTileSizes(getAsIndexOpFoldResult(op.getContext(), tileSizes));
  rewriter.setInsertionPoint(op);
  FailureOr<scf::SCFTilingResult> tiled =
      scf::tileUsingSCF(rewriter, op, options);
  if (failed(tiled) || tiled->tiledOps.empty())
    return nullptr;
  rewriter.replaceOp(op, tiled->replacements);
  return tiled->tiledOps.front();
}

bool isMatmulLike(Operation *op) {
  return isa<linalg::MatmulOp, linalg::BatchMatmulOp>(op) || isPackedMatmul(op);
}

/// Vectorizes `op` with the given vector sizes (masked where its shape is
/// dynamic). Leaves the op alone if the vectorizer cannot handle it (returns
/// false then; true once `op` is replaced and erased).
bool vectorizeOp(RewriterBase &rewriter, Operation *op,
                 ArrayRef<int64_t> vectorSizes) {
  rewriter.setInsertionPoint(op);
  // One flag per vector dim: the vectorizer indexes them unchecked.
  SmallVector<bool> scalableDims(vectorSizes.size(), false);
  FailureOr<linalg::VectorizationResult> result = linalg::vectorize(
      rewriter, op, vectorSizes, scalableDims,
      /*vectorizeNDExtract=*/true, /*flatten1DDepthwiseConv=*/false,
      /*assumeDynamicDimsMatchVecSizes=*/false,
      /*createNamedContraction=*/isMatmulLike(op));
  if (failed(result))
    return false;
  if (op->getNumResults() == 0)
    rewriter.eraseOp(op);
  else
    rewriter.replaceOp(op, result->replacements);
  return true;
}

bool hasI1Operand(Operation *op) {
  return llvm::any_of(op->getOperandTypes(), [](Type t) {
    auto shaped = dyn_cast<ShapedType>(t);
    return shaped && shaped.getElementType().isInteger(1);
  });
}

namespace {

/// Static upper bounds of `op`'s loops: its static extents, or for a dynamic
/// extent the tile size it was tiled with (partial tiles are smaller).
std::optional<SmallVector<int64_t>>
boundedLoopRanges(linalg::LinalgOp op, ArrayRef<int64_t> tileSizes) {
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  SmallVector<int64_t> bounds;
  for (auto [i, r] : llvm::enumerate(ranges)) {
    if (!ShapedType::isDynamic(r)) {
      bounds.push_back(r);
      continue;
    }
    if (i < tileSizes.size() && tileSizes[i] > 0) {
      bounds.push_back(tileSizes[i]);
      continue;
    }
    return std::nullopt;
  }
  return bounds;
}

/// Ops the generic vector strategy handles well: fills and generics whose
/// operands are read through projected permutations (elementwise, broadcast,
/// transpose, reductions) with no gathers except pads. Convolutions, pooling
/// and other gather-style generics stay scalar for now (tiled, lowered to
/// loops).
bool isVectorizableByGenericStrategy(linalg::LinalgOp op) {
  // Vectors of i1 are bit-packed in memory while tensors of i1 hold a byte
  // per element: ops touching i1 buffers stay scalar.
  if (hasI1Operand(op))
    return false;
  if (isa<linalg::FillOp>(op))
    return true;
  auto generic = dyn_cast<linalg::GenericOp>(op.getOperation());
  if (!generic)
    return false;
  if (!llvm::all_of(generic.getIndexingMapsArray(),
                    [](AffineMap map) { return map.isProjectedPermutation(); }))
    return false;
  // The vector runs along the innermost loop. An operand that has that loop
  // but not as its innermost dim (a transpose: NCHW -> NHWC, a channel
  // shuffle, attention heads; a reduction over W of an NHWC tensor) would be
  // read or written one strided lane at a time, with a mask per lane for
  // partial tiles: much slower than the scalar loops LLVM makes of it (a
  // 232x14x14 transpose: 0.42 ms vs 0.015 ms; a 7x7x1280 NHWC sum over H
  // and W: 0.028 ms vs 0.0043 ms). Those stay scalar.
  unsigned innermost = generic.getNumLoops() - 1;
  if (llvm::any_of(generic.getIndexingMapsArray(), [&](AffineMap map) {
        return map.getNumResults() > 0 &&
               map.getResultPosition(getAffineDimExpr(innermost, map.getContext())) &&
               !map.getResult(map.getNumResults() - 1).isFunctionOfDim(innermost);
      }))
    return false;
  bool hasGather = false;
  generic.getBody()->walk([&](Operation *inner) {
    if (isa<tensor::ExtractOp, linalg::IndexOp>(inner))
      hasGather = true;
  });
  // A pad's gather reads the source at clamped indices whose innermost one
  // is the innermost loop's: the vectorizer turns that into contiguous loads
  // (NHWC pads in front of convolutions, vectorized over channels).
  return !hasGather || isPadGather(generic);
}

/// A reduction that reads its input through a transpose whose innermost dim
/// is a parallel loop (an SE block's global pool of an NHWC tensor, loops
/// (n, c, h, w), reads x[n, h, w, c]): the generic strategy vectorizes along
/// the innermost loop, w, which is strided in memory, so it stayed scalar.
/// Interchanged to the input's order, (n, h, w, c), the vectors run along
/// c, contiguous, and each (h, w) step adds one vector to the result's
/// channels. Only when every operand then reads the innermost loop as its
/// innermost dim (or not at all). Returns the op, interchanged or not.
linalg::LinalgOp interchangeReductionToInputOrder(RewriterBase &rewriter, linalg::LinalgOp op) {
  auto generic = dyn_cast<linalg::GenericOp>(op.getOperation());
  if (!generic || generic.getNumReductionLoops() == 0 || generic.getNumDpsInputs() == 0)
    return op;
  unsigned numLoops = generic.getNumLoops();
  AffineMap inputMap = generic.getMatchingIndexingMap(generic.getDpsInputOperand(0));
  if (!inputMap.isPermutation() || inputMap.isIdentity())
    return op;
  unsigned newInnermost = inputMap.getDimPosition(numLoops - 1);
  if (generic.getIteratorTypesArray()[newInnermost] != utils::IteratorType::parallel)
    return op;
  SmallVector<unsigned> order;
  for (unsigned i = 0; i < numLoops; ++i)
    order.push_back(inputMap.getDimPosition(i));
  // New loop i is old loop order[i] (the input's dim i): an operand's map
  // in the new loops is its map composed with the input map's inverse.
  AffineMap newToOld = inversePermutation(inputMap);
  for (AffineMap map : generic.getIndexingMapsArray()) {
    if (!map.isProjectedPermutation())
      return op;
    AffineMap permuted = map.compose(newToOld);
    unsigned innermost = numLoops - 1;
    if (permuted.getNumResults() > 0 &&
        permuted.getResultPosition(getAffineDimExpr(innermost, map.getContext())) &&
        !permuted.getResult(permuted.getNumResults() - 1).isFunctionOfDim(innermost))
      return op;
  }
  bool usesIndices = false;
  generic.getBody()->walk([&](linalg::IndexOp) { usesIndices = true; });
  if (usesIndices)
    return op;
  FailureOr<linalg::GenericOp> interchanged =
      linalg::interchangeGenericOp(rewriter, generic, order);
  if (failed(interchanged))
    return op;
  return cast<linalg::LinalgOp>(interchanged->getOperation());
}

/// vector.step's lane i as the constant i where it is read at a static
/// position (or the step has one lane): the vectorizer writes linalg.index
/// of a unit or scalar loop that way, and the index arithmetic built on it
/// only folds once it is a constant.
struct FoldStepLanes : OpRewritePattern<vector::StepOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(vector::StepOp step, PatternRewriter &rewriter) const override {
    if (step.getType().getNumElements() == 1) {
      rewriter.replaceOpWithNewOp<arith::ConstantOp>(
          step, DenseElementsAttr::get(step.getType(), rewriter.getIndexAttr(0)));
      return success();
    }
    bool changed = false;
    for (Operation *user : llvm::make_early_inc_range(step->getUsers())) {
      auto extract = dyn_cast<vector::ExtractOp>(user);
      if (!extract || !extract.getDynamicPosition().empty() ||
          extract.getStaticPosition().size() != 1)
        continue;
      rewriter.setInsertionPoint(extract);
      rewriter.replaceOpWithNewOp<arith::ConstantIndexOp>(extract, extract.getStaticPosition()[0]);
      changed = true;
    }
    return success(changed);
  }
};

} // namespace

/// Marks the tiles tileAndVectorizeGeneric peeled (their vector sizes).
constexpr llvm::StringLiteral kPeeledTileAttr = "turbine.peeled_tile";

/// Everything but matmul inside a workgroup tile: the innermost loop tiled by
/// 64 (or equal chunks of a multiple of 8, below) and the others by 1, then
/// vectorized with masks for partial tiles.
void tileAndVectorizeGeneric(RewriterBase &rewriter, linalg::LinalgOp op) {
  op = interchangeReductionToInputOrder(rewriter, op);
  unsigned numLoops = op.getNumLoops();
  if (numLoops == 0)
    return;
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  SmallVector<int64_t> tiles(numLoops, 1);
  int64_t inner = ranges.back();
  tiles.back() = (!ShapedType::isDynamic(inner) && inner <= kVectorWidth)
                     ? 0
                     : kVectorWidth;
  // A pad's gather or a reduction (a global pool, a depthwise window summed
  // as a generic) over more channels than one vector and not a multiple of
  // it (MobileNetV2's and EfficientNet's 144, 240, 672): equal static chunks
  // of a multiple of 8 (3 x 48), where 64 + 64 + 16 would mask every
  // transfer (a reduction accumulates through masked loads and stores: an
  // SE block's global pool over 56x56x144 took 3x, a 5x5 depthwise over
  // 28x28x240 2x the time). Plain elementwise ops keep 64 (measured no
  // better in chunks).
  auto generic = dyn_cast<linalg::GenericOp>(op.getOperation());
  const bool padGather = generic && isPadGather(generic);
  if ((padGather || op.getNumReductionLoops() > 0) && !ShapedType::isDynamic(inner) &&
      inner > kVectorWidth && inner % kVectorWidth != 0)
    for (int64_t chunk = kVectorWidth; chunk >= 8; chunk -= 8)
      if (inner % chunk == 0) {
        tiles.back() = chunk;
        break;
      }
  for (unsigned i = 0; i + 1 < numLoops; ++i)
    if (ranges[i] == 1)
      tiles[i] = 0;
  Operation *current = tileOp(rewriter, cast<TilingInterface>(*op), tiles);
  if (!current)
    return;
  auto tiled = cast<linalg::LinalgOp>(current);
  if (!isVectorizableByGenericStrategy(tiled))
    return;
  std::optional<SmallVector<int64_t>> bounds = boundedLoopRanges(tiled, tiles);
  if (!bounds)
    return;
  auto loop = dyn_cast<scf::ForOp>(tiled->getParentOp());
  // A static innermost extent the tile does not divide (ViT's 197 keys,
  // EfficientNet's 144, 240 and 672 channels in elementwise ops): every
  // tile's size is min(64, extent - offset), so the vectorizer masked every
  // tile, full ones included: with AVX2 a masked store is vmaskmovps
  // (microcoded on AMD), and a masked maximumf reduction became a branch
  // per lane (ViT's softmax rows: 7 ns per element). The innermost loop is
  // peeled instead: full tiles and the remainder both get static sizes from
  // canonicalization and are vectorized unmasked (vectorizePeeledTiles).
  if (!padGather && loop && tiles.back() > 0 && !ShapedType::isDynamic(inner) &&
      inner % tiles.back() != 0) {
    tiled->setAttr(kPeeledTileAttr, rewriter.getDenseI64ArrayAttr(*bounds));
    scf::ForOp remainder;
    if (succeeded(scf::peelForLoopAndSimplifyBounds(rewriter, loop, remainder)))
      return;
    tiled->removeAttr(kPeeledTileAttr);
  }
  if (!vectorizeOp(rewriter, tiled, *bounds) || !padGather || !loop)
    return;
  // The vectorizer computes the gather's indices and in-bounds condition,
  // which depend on the pixel only, as vectors of one index per channel
  // lane (broadcasts of scalars): with AVX-512's mask registers that is
  // cheap, on AVX2 LLVM builds each i1 lane by byte inserts (a 56x56x144
  // depthwise convolution spent most of its time there). Elementwise ops
  // of broadcasts become broadcasts of scalar ops, so the condition is one
  // i1 and the select one blend.
  RewritePatternSet patterns(op.getContext());
  patterns.add<FoldStepLanes>(op.getContext());
  vector::populateSinkVectorOpsPatterns(patterns);
  (void)applyPatternsGreedily(loop, std::move(patterns));
}

void vectorizePeeledTiles(RewriterBase &rewriter, func::FuncOp kernel) {
  SmallVector<linalg::LinalgOp> peeled;
  kernel.walk([&](linalg::LinalgOp op) {
    if (op->hasAttr(kPeeledTileAttr) && op.hasPureTensorSemantics())
      peeled.push_back(op);
  });
  for (linalg::LinalgOp op : peeled) {
    // The tile's sizes where canonicalization left a size dynamic (masked).
    auto tileSizes = cast<DenseI64ArrayAttr>(op->getAttr(kPeeledTileAttr)).asArrayRef();
    op->removeAttr(kPeeledTileAttr);
    SmallVector<int64_t> sizes = op.getStaticLoopRanges();
    for (auto [size, tile] : llvm::zip(sizes, tileSizes))
      if (ShapedType::isDynamic(size))
        size = tile;
    vectorizeOp(rewriter, op, sizes);
  }
}

/// Tiles `epilogue` by `options` with `root` (a convolution or matmul whose
/// result it reads) and the fill of root's accumulator fused into each
/// tile, then erases the untiled ops. Loop bounds that were read off the
/// untiled results (tensor.dim) are read off the tensor root's chain of
/// destinations starts from (its tensor.empty, or the output it writes).
/// On failure the IR is as it was.
FailureOr<scf::SCFTileAndFuseResult>
tileEpilogueWithProducers(RewriterBase &rewriter, linalg::GenericOp epilogue,
                          linalg::LinalgOp root, const scf::SCFTileAndFuseOptions &options) {
  rewriter.setInsertionPoint(epilogue);
  FailureOr<scf::SCFTileAndFuseResult> result = scf::tileConsumerAndFuseProducersUsingSCF(
      rewriter, cast<TilingInterface>(epilogue.getOperation()), options);
  if (failed(result))
    return failure();
  for (auto [original, replacement] : result->replacements)
    rewriter.replaceAllUsesWith(original, replacement);
  Value shapeSource = root.getDpsInits()[0];
  while (auto dps = shapeSource.getDefiningOp<DestinationStyleOpInterface>())
    shapeSource = dps.getDpsInits()[cast<OpResult>(shapeSource).getResultNumber()];
  for (Operation *untiled : {epilogue.getOperation(), root.getOperation()})
    for (Operation *user : llvm::make_early_inc_range(untiled->getResult(0).getUsers()))
      if (auto dim = dyn_cast<tensor::DimOp>(user)) {
        rewriter.setInsertionPoint(dim);
        rewriter.replaceOpWithNewOp<tensor::DimOp>(dim, shapeSource, dim.getIndex());
      }
  for (Operation *dead : {epilogue.getOperation(), root.getOperation(),
                          root.getDpsInits()[0].getDefiningOp()})
    if (dead && isa<linalg::LinalgOp>(dead) && dead->use_empty())
      rewriter.eraseOp(dead);
  return result;
}

Value readVector(OpBuilder &b, Location loc, Value source, ArrayRef<Value> indices,
                 VectorType type) {
  unsigned rank = cast<ShapedType>(source.getType()).getRank();
  AffineMap map = AffineMap::getMinorIdentityMap(rank, type.getRank(), b.getContext());
  Type element = type.getElementType();
  Value padding = isa<FloatType>(element)
                      ? arith::ConstantOp::create(b, loc, b.getFloatAttr(element, 0.0))
                      : arith::ConstantOp::create(b, loc, b.getIntegerAttr(element, 0));
  return vector::TransferReadOp::create(b, loc, type, source, indices, AffineMapAttr::get(map),
                                        padding, Value(),
                                        b.getBoolArrayAttr(SmallVector<bool>(type.getRank(), true)));
}

Value writeVector(OpBuilder &b, Location loc, Value value, Value dest, ArrayRef<Value> indices) {
  unsigned rank = cast<ShapedType>(dest.getType()).getRank();
  auto type = cast<VectorType>(value.getType());
  AffineMap map = AffineMap::getMinorIdentityMap(rank, type.getRank(), b.getContext());
  return vector::TransferWriteOp::create(
             b, loc, value, dest, indices, AffineMapAttr::get(map), Value(),
             b.getBoolArrayAttr(SmallVector<bool>(type.getRank(), true)))
      .getResult();
}

/// Static upper bound of each of `op`'s loops (its extent where static, a
/// power of two at least the largest value of a dynamic extent), or nullopt
/// if some dynamic extent has none.
std::optional<SmallVector<int64_t>> loopUpperBounds(linalg::LinalgOp op) {
  SmallVector<int64_t> bounds = op.getStaticLoopRanges();
  for (auto [dim, bound] : llvm::enumerate(bounds)) {
    if (!ShapedType::isDynamic(bound))
      continue;
    Value operand;
    unsigned operandDim;
    if (failed(op.mapIterationSpaceDimToOperandDim(dim, operand, operandDim)))
      return std::nullopt;
    FailureOr<int64_t> upper = ValueBoundsConstraintSet::computeConstantBound(
        presburger::BoundType::UB,
        ValueBoundsConstraintSet::Variable(operand, operandDim),
        /*stopCondition=*/nullptr, /*closedUB=*/true);
    if (failed(upper))
      return std::nullopt;
    // A power of two (the tile size, not its remainder 31): other vector
    // widths split into several narrower operations.
    bound = static_cast<int64_t>(llvm::PowerOf2Ceil(*upper));
  }
  return bounds;
}

namespace {

/// Keeps loop-carried vector tiles in registers: a transfer_read/write pair
/// of an accumulator inside a loop (the matmul's C tile across K) becomes a
/// vector iter_arg. Done on tensors, where the pair is visibly a subset of
/// the loop's own iter_arg and no aliasing question arises.
void hoistAccumulators(RewriterBase &rewriter, func::FuncOp kernel) {
  // Each round peels one level: first the tile's extract/insert_slice pair,
  // then the vector transfers on the tile now carried by the loop.
  for (int round = 0; round < 3; ++round) {
    SmallVector<LoopLikeOpInterface> loops;
    kernel.walk([&](LoopLikeOpInterface loop) { loops.push_back(loop); });
    for (LoopLikeOpInterface loop : loops) // Innermost first (post-order).
      (void)hoistLoopInvariantSubsets(rewriter, loop);
  }
}

/// Gives every use of a tensor.empty its own copy, so that destinations are
/// not shared between ops (which would force bufferization to copy).
void uniquifyEmptyTensors(RewriterBase &rewriter, func::FuncOp kernel) {
  SmallVector<tensor::EmptyOp> empties;
  kernel.walk([&](tensor::EmptyOp op) { empties.push_back(op); });
  for (tensor::EmptyOp empty : empties) {
    SmallVector<OpOperand *> uses;
    for (OpOperand &use : empty->getUses())
      uses.push_back(&use);
    for (size_t i = 1; i < uses.size(); ++i) {
      rewriter.setInsertionPoint(empty);
      Operation *copy = rewriter.clone(*empty);
      rewriter.modifyOpInPlace(uses[i]->getOwner(),
                               [&] { uses[i]->set(copy->getResult(0)); });
    }
  }
}

/// Strides `loop` over workgroups along `axis`:
///   for i = lb + id*step to ub step step*count.
void distributeLoop(RewriterBase &rewriter, scf::ForOp loop, Value state,
                    Value workgroupId, int64_t axis) {
  rewriter.setInsertionPoint(loop);
  Location loc = loop.getLoc();
  Value count = WorkgroupCountOp::create(rewriter, loc, rewriter.getIndexType(), state, axis);
  Value offset =
      arith::MulIOp::create(rewriter, loc, workgroupId, loop.getStep());
  Value lb =
      arith::AddIOp::create(rewriter, loc, loop.getLowerBound(), offset);
  Value step = arith::MulIOp::create(rewriter, loc, loop.getStep(), count);
  rewriter.modifyOpInPlace(loop, [&] {
    loop.setLowerBound(lb);
    loop.setStep(step);
  });
}

/// Fuses producers that tile-and-fuse left outside the loops (the fill or
/// copy initializing a fused op's destination) into the innermost loop.
void fuseRemainingProducers(RewriterBase &rewriter,
                            MutableArrayRef<LoopLikeOpInterface> loops) {
  if (loops.empty())
    return;
  Operation *innermost = loops.back().getOperation();
  SmallVector<tensor::ExtractSliceOp> candidates;
  innermost->walk([&](tensor::ExtractSliceOp slice) {
    Operation *producer = slice.getSource().getDefiningOp();
    if (isa_and_nonnull<linalg::FillOp, linalg::CopyOp>(producer) &&
        !innermost->isAncestor(producer))
      candidates.push_back(slice);
  });
  for (tensor::ExtractSliceOp slice : candidates) {
    rewriter.setInsertionPoint(slice);
    std::optional<scf::SCFFuseProducerOfSliceResult> fused =
        scf::tileAndFuseProducerOfSlice(rewriter, slice, loops);
    if (fused)
      rewriter.replaceAllUsesWith(slice.getResult(),
                                  fused->tiledAndFusedProducer);
  }
}

/// The op that computes the first output of `kernel` (what gets tiled; for a
/// padded result, its interior).
TilingInterface findRootToTile(func::FuncOp kernel) {
  TilingInterface root;
  kernel.walk([&](bufferization::MaterializeInDestinationOp store) {
    Value source = store.getSource();
    // A padded result (PaddedResults.h) or a slice update (SliceUpdates.h):
    // the op writing its interior / the slice.
    if (auto insert = source.getDefiningOp<tensor::InsertSliceOp>();
        insert && (isPaddedResult(insert) || isSliceUpdate(insert)))
      source = insert.getSource();
    if (!root)
      root = source.getDefiningOp<TilingInterface>();
  });
  return root;
}

/// `reference`: the workgroup level only, every op left to become scalar
/// loops (plain reference kernels, CompileOptions::referenceKernels).
/// `features`: the target CPU's optional instructions the strategies may use.
LogicalResult codegenKernel(func::FuncOp kernel, bool reference, const CpuFeatures &features) {
  IRRewriter rewriter(kernel.getContext());
  if (!reference) {
    // Before workgroup tiling: no padded scratch tile for a padded max
    // pooling; the NCHW image's padded NHWC copy recognized while its index
    // arithmetic is still plain.
    rewritePaddedMaxPoolings(rewriter, kernel);
    markChannelsLastInputGathers(kernel);
    // A matmul's elementwise epilogue updates the matmul's result in place:
    // the matmul accumulates into the output tile, no temporary tile.
    makeMatmulEpiloguesInPlace(rewriter, kernel);
  }
  TilingInterface root = findRootToTile(kernel);
  if (!root)
    return success(); // Nothing computed (e.g. a constant): bufferize as is.
  WorkgroupTiling tiling = getWorkgroupTiling(kernel);
  // Decided on the untiled convolution, as dispatch formation did for its
  // workgroup tiles: reduction blocks, the epilogue after the last block.
  bool blockReduction =
      !reference && root->getNumResults() > 0 &&
      blocksConvolutionReduction(packedConvolutionBehind(root->getResult(0)));
  if (blockReduction) {
    auto conv = cast<linalg::LinalgOp>(packedConvolutionBehind(root->getResult(0)));
    int64_t channels = conv.getStaticLoopRanges()[6];
    kernel->setAttr(kFilterPrefetchAttr,
                    rewriter.getI64IntegerAttr(
                        filterPrefetchDistance(reductionBlockChannels(channels))));
  }
  Value state = kernel.getArgument(0);
  uniquifyEmptyTensors(rewriter, kernel);

  // Map result-dim tiles onto loop tiles.
  SmallVector<int64_t> loopTiles(root.getLoopIteratorTypes().size(), 0);
  SmallVector<int64_t> loopAxis(loopTiles.size(), -1);
  auto linalgRoot = dyn_cast<linalg::LinalgOp>(root.getOperation());
  if (linalgRoot && !tiling.tileSizes.empty()) {
    AffineMap map = linalgRoot.getIndexingMapMatchingResult(
        cast<OpResult>(linalgRoot->getResult(0)));
    for (auto [dim, tile] : llvm::enumerate(tiling.tileSizes)) {
      auto expr = dyn_cast<AffineDimExpr>(map.getResult(dim));
      if (!expr || tile <= 0)
        continue;
      loopTiles[expr.getPosition()] = tile;
      for (int axis = 0; axis < 3; ++axis)
        if (tiling.gridDims[axis] == static_cast<int64_t>(dim))
          loopAxis[expr.getPosition()] = axis;
    }
  }

  if (llvm::any_of(loopTiles, [](int64_t t) { return t > 0; })) {
    scf::SCFTileAndFuseOptions options;
    options.tilingOptions.setTileSizes(
        getAsIndexOpFoldResult(kernel.getContext(), loopTiles));
    rewriter.setInsertionPoint(root);
    FailureOr<scf::SCFTileAndFuseResult> result =
        scf::tileConsumerAndFuseProducersUsingSCF(rewriter, root, options);
    if (failed(result))
      return root->emitError("codegen: workgroup tiling failed");
    for (auto [original, replacement] : result->replacements)
      rewriter.replaceAllUsesWith(original, replacement);
    fuseRemainingProducers(rewriter, result->loops);
    // Loops come outermost first, one per tiled loop dimension.
    SmallVector<int64_t> tiledDims;
    for (auto [i, t] : llvm::enumerate(loopTiles))
      if (t > 0)
        tiledDims.push_back(i);
    for (auto [loop, dim] : llvm::zip(result->loops, tiledDims)) {
      int64_t axis = loopAxis[dim];
      auto forOp = dyn_cast<scf::ForOp>(loop.getOperation());
      if (!forOp || axis < 0)
        continue;
      distributeLoop(rewriter, forOp, state, kernel.getArgument(1 + axis),
                     axis);
    }
  }

  // Clean up the untiled originals before the vector level; slices of
  // tensor.empty become tile-sized empties (tile-sized temporaries).
  {
    RewritePatternSet patterns(kernel.getContext());
    tensor::populateFoldTensorEmptyPatterns(patterns);
    // tensor.dim of the untiled ops (loop bounds) would keep them alive.
    memref::populateResolveRankedShapedTypeResultDimsPatterns(patterns);
    tensor::DimOp::getCanonicalizationPatterns(patterns, kernel.getContext());
    if (failed(applyPatternsGreedily(kernel, std::move(patterns))))
      return failure();
  }
  if (reference)
    return success();
  const RegisterTiles registers = registerTiles(features);
  // Convolutions with an elementwise epilogue first: tiled together.
  DenseSet<Operation *> registerTiled;
  {
    SmallVector<std::pair<linalg::GenericOp, linalg::LinalgOp>> withEpilogue;
    kernel.walk([&](linalg::GenericOp op) {
      linalg::LinalgOp conv = convolutionBeforeEpilogue(op);
      if (conv && !(blockReduction && isPackedConvolution(conv)))
        withEpilogue.push_back({op, conv});
    });
    for (auto [epilogue, conv] : withEpilogue)
      for (Operation *tiled : tileConvolutionWithEpilogue(rewriter, epilogue, conv, registers))
        registerTiled.insert(tiled);
    // Matmuls whose in-place epilogue fits one register-tile pass, likewise.
    SmallVector<std::pair<linalg::GenericOp, linalg::LinalgOp>> matmulsWithEpilogue;
    kernel.walk([&](linalg::GenericOp op) {
      // (bf16 matmuls with AVX512-BF16 take their own register tiles.)
      if (linalg::LinalgOp matmul = matmulBeforeRegisterEpilogue(op, registers);
          matmul && !takesBf16DotProducts(matmul, features))
        matmulsWithEpilogue.push_back({op, matmul});
    });
    for (auto [epilogue, matmul] : matmulsWithEpilogue)
      for (Operation *tiled : tileMatmulWithEpilogue(rewriter, epilogue, matmul, registers))
        registerTiled.insert(tiled);
    SmallVector<linalg::LinalgOp> clampedPoolings;
    kernel.walk([&](linalg::LinalgOp op) {
      if (isClampedMaxPooling(op))
        clampedPoolings.push_back(op);
    });
    for (linalg::LinalgOp pooling : clampedPoolings)
      for (Operation *tiled : tileClampedMaxPooling(rewriter, pooling, registers))
        registerTiled.insert(tiled);
  }
  SmallVector<linalg::LinalgOp> linalgOps;
  kernel.walk([&](linalg::LinalgOp op) {
    if (!registerTiled.contains(op))
      linalgOps.push_back(op);
  });
  for (linalg::LinalgOp op : linalgOps) {
    if (lowerChannelsLastInputGather(rewriter, op))
      continue;
    if (isMatmulLike(op))
      tileMatmul(rewriter, op, features);
    else if (matchQuantizedMatmul(op))
      tileQuantizedMatmul(rewriter, op, features);
    else if (matchGgufMatmul(op))
      tileGgufMatmul(rewriter, op, features);
    else if (auto conv = dyn_cast<linalg::Conv2DNchwFchwOp>(op.getOperation()))
      tileConvolution(rewriter, conv);
    else if (isa<linalg::Conv2DNhwcHwcfOp, linalg::DepthwiseConv2DNhwcHwcOp,
                 linalg::PoolingNhwcMaxOp, linalg::PoolingNhwcSumOp>(op.getOperation()))
      tileChannelsLastWindow(rewriter, op, registers);
    else if (isPackedConvolution(op))
      tilePackedConvolution(rewriter, op, blockReduction, registers);
    else
      tileAndVectorizeGeneric(rewriter, op);
  }
  // Peeled full tiles get static shapes from canonicalization.
  auto pm = PassManager::on<func::FuncOp>(kernel.getContext());
  pm.addPass(createCanonicalizerPass());
  if (failed(pm.run(kernel)))
    return failure();
  vectorizeBf16Matmuls(rewriter, kernel);
  vectorizeMatmulTiles(rewriter, kernel, registers);
  vectorizeQuantizedMatmuls(rewriter, kernel, features);
  vectorizeGgufMatmuls(rewriter, kernel, features);
  vectorizeRegisterEpilogues(rewriter, kernel);
  vectorizePeeledTiles(rewriter, kernel);
  vectorizeConvolutions(rewriter, kernel);
  // Unify the transfers' constant indices so read/write pairs match.
  auto cleanup = PassManager::on<func::FuncOp>(kernel.getContext());
  cleanup.addPass(createCanonicalizerPass());
  cleanup.addPass(createCSEPass());
  if (failed(cleanup.run(kernel)))
    return failure();
  hoistAccumulators(rewriter, kernel);
  // Without AVX512-BF16, LLVM rounds f32 to bf16 by a call to compiler-rt's
  // __truncsfbf2 (EmitLibrary.cpp links it for what is left): round inline
  // in integer arithmetic instead (to nearest even, as the instruction does). Without
  // folding: the kernel's IR is otherwise the same on every CPU (folding
  // forwards stores to loads, which the CPUs with AVX512-BF16 would not get
  // here; LLVM forwards them later on every CPU).
  if (!features.avx512bf16) {
    RewritePatternSet patterns(kernel.getContext());
    arith::populateExpandBFloat16Patterns(patterns);
    if (failed(applyPatternsGreedily(kernel, std::move(patterns),
                                     GreedyRewriteConfig().enableFolding(false))))
      return failure();
  }
  return success();
}

LogicalResult bufferizeKernels(ModuleOp kernels) {
  IRRewriter rewriter(kernels.getContext());
  if (failed(bufferization::eliminateEmptyTensors(rewriter, kernels)))
    return kernels.emitError("codegen: empty tensor elimination failed");
  bufferization::OneShotBufferizationOptions options;
  options.bufferizeFunctionBoundaries = false;
  options.allowReturnAllocsFromLoops = true;
  options.memCpyFn = [](OpBuilder &b, Location loc, Value from,
                        Value to) -> LogicalResult {
    linalg::CopyOp::create(b, loc, from, to);
    return success();
  };
  bufferization::BufferizationState state;
  if (failed(bufferization::runOneShotBufferize(kernels, options, state)))
    return kernels.emitError("codegen: bufferization failed");
  return success();
}

/// Folds vector.mask regions around transfers into masked transfers, before
/// any other vector rewrite can touch the mask bodies.
LogicalResult lowerMasks(ModuleOp kernels) {
  RewritePatternSet patterns(kernels.getContext());
  vector::populateVectorMaskLoweringPatternsForSideEffectingOps(patterns);
  if (failed(applyPatternsGreedily(kernels, std::move(patterns))))
    return kernels.emitError("codegen: mask lowering did not converge");
  return success();
}

namespace {

/// A contraction of f16/bf16 operands into an f32 accumulator (a matmul
/// turbine-accumulate-in-f32 widened) reads its operands extended: the
/// outer-product lowering takes one element type (a masked contract:
/// extended before its vector.mask).
struct ExtendContractOperands : OpRewritePattern<vector::ContractionOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(vector::ContractionOp op,
                                PatternRewriter &rewriter) const override {
    auto accType = dyn_cast<VectorType>(op.getAccType());
    if (!accType || !isa<FloatType>(accType.getElementType()))
      return failure();
    Type wide = accType.getElementType();
    // A masked contract (a partial tile) is the only op of its vector.mask
    // region: the extensions go before the mask.
    if (auto mask = dyn_cast<vector::MaskOp>(op->getParentOp()))
      rewriter.setInsertionPoint(mask);
    auto extend = [&](Value v) -> Value {
      auto type = cast<VectorType>(v.getType());
      auto narrow = dyn_cast<FloatType>(type.getElementType());
      if (!narrow || narrow.getWidth() >= cast<FloatType>(wide).getWidth())
        return v;
      return arith::ExtFOp::create(rewriter, op.getLoc(), type.clone(wide), v);
    };
    Value lhs = extend(op.getLhs()), rhs = extend(op.getRhs());
    if (lhs == op.getLhs() && rhs == op.getRhs())
      return failure();
    rewriter.modifyOpInPlace(op, [&] {
      op.getLhsMutable().assign(lhs);
      op.getRhsMutable().assign(rhs);
    });
    return success();
  }
};

/// A byte dot product as buildUnsignedSignedDot (QuantizedMatmulCodegen.cpp)
/// writes it: acc + sum over the 4 bytes of each i32 lane of u8(x) * s8(y),
/// marked for `instruction`; its byte operands as [lanes, 4] vectors.
struct ByteDotForm {
  Value unsignedBytes, signedBytes;
  int64_t lanes;
};
std::optional<ByteDotForm> matchByteDot(vector::MultiDimReductionOp op, StringRef instruction) {
  auto mark = op->getAttrOfType<StringAttr>(kByteDotAttr);
  auto type = dyn_cast<VectorType>(op.getSourceVectorType());
  if (!mark || mark.getValue() != instruction || op.getKind() != vector::CombiningKind::ADD ||
      !type || type.getRank() != 2 || type.getDimSize(1) != 4 ||
      !type.getElementType().isInteger(32) || op.getReductionDims() != ArrayRef<int64_t>{1})
    return std::nullopt;
  auto mul = op.getSource().getDefiningOp<arith::MulIOp>();
  if (!mul)
    return std::nullopt;
  for (auto [l, r] : {std::pair(mul.getLhs(), mul.getRhs()), std::pair(mul.getRhs(), mul.getLhs())}) {
    auto zext = l.getDefiningOp<arith::ExtUIOp>();
    auto sext = r.getDefiningOp<arith::ExtSIOp>();
    if (zext && sext && getElementTypeOrSelf(zext.getIn()).isInteger(8) &&
        getElementTypeOrSelf(sext.getIn()).isInteger(8))
      return ByteDotForm{zext.getIn(), sext.getIn(), type.getDimSize(0)};
  }
  return std::nullopt;
}

/// The [lanes, 4] bytes of a ByteDotForm as one flat vector<4 lanes x i8>.
Value flatBytes(PatternRewriter &rewriter, Location loc, Value bytes, int64_t lanes) {
  return vector::ShapeCastOp::create(rewriter, loc,
                                     VectorType::get({4 * lanes}, rewriter.getI8Type()), bytes);
}

/// A byte dot product of 16 lanes marked "vpdpbusd" (the strategies mark it
/// so only for a CPU with AVX512-VNNI) becomes vpdpbusd
/// (llvm.x86.avx512.vpdpbusd.512; its sum does not saturate, like the i32
/// arithmetic it replaces). After bufferization, because the intrinsic
/// call has unknown memory effects.
struct ByteDotToVnni : OpRewritePattern<vector::MultiDimReductionOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(vector::MultiDimReductionOp op,
                                PatternRewriter &rewriter) const override {
    std::optional<ByteDotForm> form = matchByteDot(op, "vpdpbusd");
    if (!form || form->lanes != 16)
      return failure();
    Location loc = op.getLoc();
    Value dot = LLVM::CallIntrinsicOp::create(
                    rewriter, loc, op.getDestType(),
                    rewriter.getStringAttr("llvm.x86.avx512.vpdpbusd.512"),
                    ValueRange{op.getAcc(), flatBytes(rewriter, loc, form->unsignedBytes, 16),
                               flatBytes(rewriter, loc, form->signedBytes, 16)})
                    .getResult(0);
    rewriter.replaceOp(op, dot);
    return success();
  }
};

/// A byte dot product of a multiple of 8 lanes marked "vpmaddubsw" (for a
/// CPU with AVX2; the strategy guarantees that no two adjacent products sum
/// past an i16, ByteDot) becomes, per 8 lanes (32 bytes), vpmaddubsw
/// (llvm.x86.avx2.pmadd.ub.sw: u8 x s8, adjacent pairs summed into i16)
/// then vpmaddwd by ones (llvm.x86.avx2.pmadd.wd: adjacent i16 into i32),
/// added to the accumulator.
struct ByteDotToPairSums : OpRewritePattern<vector::MultiDimReductionOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(vector::MultiDimReductionOp op,
                                PatternRewriter &rewriter) const override {
    std::optional<ByteDotForm> form = matchByteDot(op, "vpmaddubsw");
    if (!form || form->lanes % 8 != 0)
      return failure();
    Location loc = op.getLoc();
    auto words16 = VectorType::get({16}, rewriter.getI16Type());
    auto dwords8 = VectorType::get({8}, rewriter.getI32Type());
    Value x = flatBytes(rewriter, loc, form->unsignedBytes, form->lanes);
    Value y = flatBytes(rewriter, loc, form->signedBytes, form->lanes);
    Value ones = arith::ConstantOp::create(
        rewriter, loc, DenseElementsAttr::get(words16, rewriter.getI16IntegerAttr(1)));
    // Elements [first, first + count) of v, and v followed by w.
    auto slice = [&](Value v, int64_t first, int64_t count) -> Value {
      return vector::ShuffleOp::create(rewriter, loc, v, v,
                                       llvm::to_vector(llvm::seq<int64_t>(first, first + count)));
    };
    auto concat = [&](Value v, Value w) -> Value {
      int64_t n = cast<VectorType>(v.getType()).getDimSize(0) +
                  cast<VectorType>(w.getType()).getDimSize(0);
      return vector::ShuffleOp::create(rewriter, loc, v, w,
                                       llvm::to_vector(llvm::seq<int64_t>(0, n)));
    };
    Value dots;
    for (int64_t first = 0; first < form->lanes; first += 8) {
      Value pairs = LLVM::CallIntrinsicOp::create(
                        rewriter, loc, words16, rewriter.getStringAttr("llvm.x86.avx2.pmadd.ub.sw"),
                        ValueRange{slice(x, 4 * first, 32), slice(y, 4 * first, 32)})
                        .getResult(0);
      Value quads = LLVM::CallIntrinsicOp::create(rewriter, loc, dwords8,
                                                  rewriter.getStringAttr("llvm.x86.avx2.pmadd.wd"),
                                                  ValueRange{pairs, ones})
                        .getResult(0);
      dots = dots ? concat(dots, quads) : quads;
    }
    Value sum = arith::AddIOp::create(rewriter, loc, op.getAcc(), dots);
    rewriter.replaceOp(op, sum);
    return success();
  }
};

/// A 16-lane f32 table lookup, lane i = t[index lane i], written as 16
/// dynamic extracts into one from_elements (decodeQ4BlockByTable,
/// GgufMatmulCodegen.cpp, makes this form only for a CPU with AVX512F, with
/// indices 0..15), becomes vpermps (llvm.x86.avx512.permvar.sf.512, which
/// reads the low 4 bits of each index). LLVM's X86 backend finds the
/// permute by itself in some kernels, not in all (a 16-row panel decode
/// spilled the table and loaded lane by lane).
struct TableLookupToPermute : OpRewritePattern<vector::FromElementsOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(vector::FromElementsOp op,
                                PatternRewriter &rewriter) const override {
    auto type = op.getDest().getType();
    if (type.getShape() != ArrayRef<int64_t>{16} || !type.getElementType().isF32())
      return failure();
    Value table, indices;
    for (auto [lane, element] : llvm::enumerate(op.getElements())) {
      auto lookup = element.getDefiningOp<vector::ExtractOp>();
      if (!lookup || lookup.getSourceVectorType() != type || lookup.getNumIndices() != 1)
        return failure();
      auto cast = dyn_cast_if_present<arith::IndexCastUIOp>(
          lookup.getDynamicPosition().empty() ? nullptr
                                              : lookup.getDynamicPosition()[0].getDefiningOp());
      auto index = cast ? cast.getIn().getDefiningOp<vector::ExtractOp>() : nullptr;
      if (!index || index.getNumIndices() != 1 || !index.getDynamicPosition().empty() ||
          index.getStaticPosition()[0] != int64_t(lane) ||
          index.getSourceVectorType() != VectorType::get({16}, rewriter.getI32Type()))
        return failure();
      if (lane == 0) {
        table = lookup.getSource();
        indices = index.getSource();
      } else if (lookup.getSource() != table || index.getSource() != indices) {
        return failure();
      }
    }
    rewriter.replaceOp(op, LLVM::CallIntrinsicOp::create(
                               rewriter, op.getLoc(), type,
                               rewriter.getStringAttr("llvm.x86.avx512.permvar.sf.512"),
                               ValueRange{table, indices})
                               .getResult(0));
    return success();
  }
};

} // namespace

LogicalResult lowerVectors(ModuleOp kernels) {
  MLIRContext *ctx = kernels.getContext();
  // Loop-invariant subviews first, so that the accumulator's transfers are
  // seen as invariant and hoisted out of the K loop (kept in registers).
  kernels.walk([](LoopLikeOpInterface loop) { moveLoopInvariantCode(loop); });
  kernels.walk([](func::FuncOp f) {
    linalg::hoistRedundantVectorTransfers(f, /*verifyNonZeroTrip=*/true);
  });
  // Staged, each stage to a fixed point: mixing these pattern sets lets some
  // of them undo each other's rewrites without end.
  using Populate = std::function<void(RewritePatternSet &)>;
  const Populate stages[] = {
      [](RewritePatternSet &p) {
        p.add<ByteDotToVnni, ByteDotToPairSums, TableLookupToPermute>(p.getContext());
        vector::populateCastAwayVectorLeadingOneDimPatterns(p);
      },
      [](RewritePatternSet &p) {
        p.add<ExtendContractOperands>(p.getContext(), /*benefit=*/2);
        vector::populateVectorContractLoweringPatterns(
            p, vector::VectorContractLowering::OuterProduct);
        populateInnerReductionPatterns(p);
        vector::populateVectorMultiReductionLoweringPatterns(
            p, vector::VectorMultiReductionLowering::InnerParallel);
        vector::populateVectorMaskOpLoweringPatterns(p);
      },
      [](RewritePatternSet &p) {
        vector::populateVectorTransferPermutationMapLoweringPatterns(p);
        vector::populateVectorBroadcastLoweringPatterns(p);
        vector::populateVectorShapeCastLoweringPatterns(p);
        vector::populateVectorTransposeLoweringPatterns(
            p, vector::VectorTransposeLowering::EltWise);
        vector::populateVectorTransferLoweringPatterns(p, /*maxRank=*/1);
      },
  };
  GreedyRewriteConfig config;
  config.setMaxNumRewrites(1 << 20); // An error, never a hang.
  for (const Populate &populate : stages) {
    RewritePatternSet patterns(ctx);
    populate(patterns);
    if (failed(applyPatternsGreedily(kernels, std::move(patterns), config)))
      return kernels.emitError("codegen: vector lowering did not converge");
  }
  return success();
}

struct CpuTileAndVectorizePass : impl::CpuTileAndVectorizeBase<CpuTileAndVectorizePass> {
  using Base::Base;
  void runOnOperation() override {
    SmallVector<func::FuncOp> functions(getOperation().getOps<func::FuncOp>());
    CpuFeatures features = cpuFeatures(targetCpu);
    // Byte dot products are used only on activations rounded to int8:
    // without that permission, the strategies see a CPU without them.
    if (!int8Activations)
      features.avx512vnni = features.avx2 = false;
    for (func::FuncOp kernel : functions)
      if (failed(codegenKernel(kernel, reference, features)))
        return signalPassFailure();
  }
};

struct CpuLowerVectorMasksPass : impl::CpuLowerVectorMasksBase<CpuLowerVectorMasksPass> {
  void runOnOperation() override {
    if (failed(lowerMasks(getOperation())))
      signalPassFailure();
  }
};

struct CpuBufferizePass : impl::CpuBufferizeBase<CpuBufferizePass> {
  void runOnOperation() override {
    if (failed(bufferizeKernels(getOperation())))
      signalPassFailure();
  }
};

struct CpuLowerVectorsPass : impl::CpuLowerVectorsBase<CpuLowerVectorsPass> {
  void runOnOperation() override {
    if (failed(lowerVectors(getOperation())))
      signalPassFailure();
  }
};

} // namespace

} // namespace turbine::compiler
