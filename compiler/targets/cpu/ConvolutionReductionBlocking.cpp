//===- ConvolutionReductionBlocking.cpp - Blocked reductions of late convs ===//
//
// See ConvolutionReductionBlocking.h: which packed convolutions get
// whole-image workgroup tiles and reduction blocks, and the block tiling.
//===----------------------------------------------------------------------===//
#include "targets/cpu/ConvolutionReductionBlocking.h"

#include "targets/cpu/ConvolutionFilterPacking.h"
#include "dispatch/WorkgroupTiling.h"
#include "targets/cpu/CpuWorkgroupTiling.h"

#include "turbine/compiler/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/Transforms/TileUsingInterface.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;

namespace turbine::compiler {

#define GEN_PASS_DEF_CPUPREFETCHFILTERBLOCKS
#include "turbine/compiler/Passes.h.inc"

namespace {
/// Filter bytes per 32-channel tile from which the reduction is blocked:
/// a quarter of L2; the 14x14 x 256 convolutions (295 KB) have 196 pixels
/// per image and reach peak without.
constexpr int64_t kBlockedSliceBytes = 256 * 1024;
/// Output pixels per image up to which it is one workgroup tile: the
/// accumulators (8 KB for 64 pixels x 32 channels) stay in L1.
constexpr int64_t kBlockedMaxPixels = 64;
/// Input channels per reduction block: 8 KB of filter, which every pixel
/// row of the image reads from L1. Measured on six 7x7 x 512 convolutions
/// in a row (weights from memory; 1 thread, Zen 5, user CPU time per call
/// / 6, loaded machine): 64 channels with a one-block prefetch ~1000 us per
/// convolution, 128 or 32 channels ~1080-1110, one block per kernel
/// position (512) ~1060-1140, a two-block prefetch ~1060-1090, 64 channels
/// without prefetch ~1580, unblocked ~1130-1190.
constexpr int64_t kBlockChannels = 64;
} // namespace

Operation *packedConvolutionBehind(Value result) {
  Operation *def = result.getDefiningOp();
  if (!def)
    return nullptr;
  if (isPackedConvolution(def))
    return def;
  auto generic = dyn_cast<linalg::GenericOp>(def);
  if (!generic || generic.getNumReductionLoops() != 0)
    return nullptr;
  for (Value input : generic.getDpsInputs())
    if (Operation *producer = input.getDefiningOp(); producer && isPackedConvolution(producer))
      return producer;
  return nullptr;
}

bool blocksConvolutionReduction(Operation *op) {
  // Grouped convolutions have small per-group filter slices; the blocks'
  // prefetches (insertFilterPrefetches) know 32-channel filter tiles.
  if (!op || packedConvolutionTile(op) != kFilterTileChannels ||
      isGroupedPackedConvolution(op))
    return false;
  // Loops: n, oh, ow, f, kh, kw, c.
  SmallVector<int64_t> ranges = cast<linalg::LinalgOp>(op).getStaticLoopRanges();
  if (llvm::any_of(ArrayRef<int64_t>(ranges).drop_front(), ShapedType::isDynamic))
    return false;
  int64_t sliceBytes = ranges[4] * ranges[5] * ranges[6] * kFilterTileChannels * 4;
  return sliceBytes >= kBlockedSliceBytes && ranges[1] * ranges[2] <= kBlockedMaxPixels;
}

int64_t reductionBlockChannels(int64_t channels) {
  int64_t block = largestDivisorAtMost(channels, kBlockChannels);
  return block < 16 ? channels : block;
}

Operation *tileReductionBlocks(RewriterBase &rewriter, Operation *op) {
  auto conv = dyn_cast<linalg::Conv2DNhwcHwcfOp>(op);
  if (!conv)
    return nullptr;
  // Loops: n, oh, ow, f, kh, kw, c.
  SmallVector<int64_t> ranges = cast<linalg::LinalgOp>(op).getStaticLoopRanges();
  if (ShapedType::isDynamic(ranges[6]))
    return nullptr;
  SmallVector<int64_t> tiles = {1, 0, 0, 0, 1, 1, reductionBlockChannels(ranges[6])};
  scf::SCFTilingOptions options;
  options.setTileSizes(getAsIndexOpFoldResult(op->getContext(), tiles));
  rewriter.setInsertionPoint(op);
  FailureOr<scf::SCFTilingResult> tiled =
      scf::tileUsingSCF(rewriter, cast<TilingInterface>(op), options);
  if (failed(tiled) || tiled->tiledOps.size() != 1)
    return nullptr;
  rewriter.replaceOp(op, tiled->replacements);
  return tiled->tiledOps.front();
}

int64_t filterPrefetchDistance(int64_t blockChannels) {
  return blockChannels * kFilterTileChannels;
}

namespace {

/// The memref `value` is a view of through memref.subview ops.
Value rootOfSubviews(Value value) {
  while (auto subview = value.getDefiningOp<memref::SubViewOp>())
    value = subview.getSource();
  return value;
}

bool isPackedFilterMemref(Value value) {
  auto type = dyn_cast<MemRefType>(value.getType());
  return type && type.getRank() == 5 && type.hasStaticShape() &&
         type.getDimSize(4) == kFilterTileChannels && type.getLayout().isIdentity() &&
         type.getElementType().isF32();
}

/// Prefetches, for the filter read `read`, the cache lines `distance`
/// elements further on in its filter `root` (clamped to the last element).
void prefetchAhead(OpBuilder &b, vector::TransferReadOp read, Value root, int64_t distance) {
  Location loc = read.getLoc();
  auto rootType = cast<MemRefType>(root.getType());
  int64_t total = rootType.getNumElements();
  auto metadata = memref::ExtractStridedMetadataOp::create(b, loc, read.getBase());
  Value linear = metadata.getOffset();
  for (auto [index, stride] : llvm::zip(read.getIndices(), metadata.getStrides()))
    linear = arith::AddIOp::create(b, loc, linear,
                                   arith::MulIOp::create(b, loc, index, stride));
  auto flatType = MemRefType::get({total}, rootType.getElementType());
  Value flat = memref::ReinterpretCastOp::create(
      b, loc, flatType, metadata.getBaseBuffer(), b.getIndexAttr(0),
      {b.getIndexAttr(total)}, {b.getIndexAttr(1)});
  Value last = arith::ConstantIndexOp::create(b, loc, total - 1);
  int64_t elements = cast<VectorType>(read.getVectorType()).getNumElements();
  // One prefetch per 64-byte line the read covers.
  for (int64_t line = 0; line < elements; line += 16) {
    Value ahead = arith::AddIOp::create(
        b, loc, linear, arith::ConstantIndexOp::create(b, loc, distance + line));
    Value clamped = arith::MinUIOp::create(b, loc, ahead, last);
    memref::PrefetchOp::create(b, loc, flat, ValueRange{clamped}, /*isWrite=*/false,
                               /*localityHint=*/3, /*isDataCache=*/true);
  }
}

} // namespace

namespace {

struct CpuPrefetchFilterBlocksPass
    : impl::CpuPrefetchFilterBlocksBase<CpuPrefetchFilterBlocksPass> {
  void runOnOperation() override { insertFilterPrefetches(getOperation()); }
};

} // namespace

void insertFilterPrefetches(ModuleOp kernels) {
  for (auto kernel : kernels.getOps<func::FuncOp>()) {
    auto distance = kernel->getAttrOfType<IntegerAttr>(kFilterPrefetchAttr);
    if (!distance)
      continue;
    SmallVector<std::pair<vector::TransferReadOp, Value>> reads;
    kernel.walk([&](vector::TransferReadOp read) {
      if (!isa<MemRefType>(read.getBase().getType()))
        return;
      Value root = rootOfSubviews(read.getBase());
      if (isPackedFilterMemref(root))
        reads.push_back({read, root});
    });
    for (auto [read, root] : reads) {
      OpBuilder b(read);
      prefetchAhead(b, read, root, distance.getInt());
    }
  }
}

} // namespace turbine::compiler
