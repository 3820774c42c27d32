//===- CpuWorkgroupTiling.cpp - The CPU target's workgroup tile sizes -----===//
//
// A region is classified by what dominates its work (contraction, packed
// contraction, NCHW convolution, NHWC window, panel pack, elementwise or
// reduction), which selects its tile shape.
//===----------------------------------------------------------------------===//
#include "targets/cpu/CpuWorkgroupTiling.h"

#include "dispatch/DispatchNames.h"

#include "targets/cpu/CodegenStrategies.h"
#include "targets/cpu/ConvolutionFilterPacking.h"
#include "targets/cpu/ConvolutionReductionBlocking.h"
#include "targets/cpu/MatmulDataTiling.h"
#include "targets/cpu/MatmulKernelPacking.h"
#include "global-opt/GgufWeights.h"
#include "global-opt/WeightQuantization.h"

#include <algorithm>
#include <array>
#include <cctype>

#include "turbine/compiler/Dialect/TurbineDialect.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"

using namespace mlir;

namespace turbine::compiler {
namespace {

/// Channels up to which a depthwise convolution or pooling workgroup takes
/// all of them (ChannelsLastWindow tiles).
constexpr int64_t kChannelLocalMaxChannels = 2048;
/// Fewest workgroups a channel-local window is split into (channels split
/// for small images).
constexpr int64_t kChannelLocalMinWorkgroups = 8;
/// Output pixels of an NHWC convolution's image that a workgroup takes
/// whole on a 16-register CPU (7 x 7; chooseWorkgroupTiling), and the
/// fewest channel tiles (workgroups) it takes for that.
constexpr int64_t kWholeSmallImagePixels = 64;
constexpr int64_t kWholeImageMinWorkgroups = 8;

/// Query rows per workgroup of a fused attention.
constexpr int64_t kAttentionRowTile = 16;

/// Most output channels per workgroup of a plain NHWC convolution whose
/// channels codegen splits into segments (splitChannelsWorkgroupTile).
constexpr int64_t kSplitChannelsMaxTile = 256;

/// What a dispatch region's root is, for tile size choices. Convolution is an
/// NCHW convolution; ChannelsLastWindow an NHWC convolution or pooling;
/// PackedContraction a matmul on a packed B, PanelPack the run-time pack of
/// that B (MatmulDataTiling.h).
enum class RegionKind {
  Elementwise,
  Contraction,
  Convolution,
  ChannelsLastWindow,
  PackedContraction,
  PanelPack,
  QuantizedContraction
};

RegionKind classify(llvm::ArrayRef<Operation *> regionOps) {
  RegionKind kind = RegionKind::Elementwise;
  for (Operation *op : regionOps) {
    if (isa<linalg::Conv2DNchwFchwOp>(op))
      kind = RegionKind::Convolution;
    else if (isPackedConvolution(op) || isa<linalg::DepthwiseConv2DNhwcHwcOp>(op))
      kind = RegionKind::ChannelsLastWindow;
    else if (isa<linalg::Conv2DNhwcHwcfOp, linalg::PoolingNhwcMaxOp,
                 linalg::PoolingNhwcSumOp>(op))
      kind = RegionKind::ChannelsLastWindow;
    else if (isPackedMatmul(op))
      kind = RegionKind::PackedContraction;
    else if (isPanelPack(op))
      kind = RegionKind::PanelPack;
    else if (matchQuantizedMatmul(op) || matchGgufMatmul(op))
      kind = RegionKind::QuantizedContraction;
    else if (auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
             linalgOp && linalg::isaContractionOpInterface(linalgOp))
      kind = RegionKind::Contraction;
  }
  return kind;
}

/// Columns per block of the region's group-quantized weights (q's last
/// dim, WeightQuantization.h), or 0 without such a matmul: workgroup tiles
/// must stay inside one block.
int64_t quantizedColumnBlock(llvm::ArrayRef<Operation *> regionOps) {
  for (Operation *op : regionOps)
    if (matchQuantizedMatmul(op)) {
      auto q = cast<RankedTensorType>(cast<linalg::GenericOp>(op).getDpsInputs()[1].getType());
      if (!q.isDynamicDim(q.getRank() - 1))
        return q.getDimSize(q.getRank() - 1);
    }
  return 0;
}

/// True if every window op of the region is channel-local (depthwise
/// convolution, pooling: each output channel reads only its own input
/// channel and the filter is a few KB at most).
bool isChannelLocalRegion(llvm::ArrayRef<Operation *> regionOps) {
  bool any = false;
  for (Operation *op : regionOps) {
    if (isa<linalg::Conv2DNchwFchwOp, linalg::Conv2DNhwcHwcfOp>(op) || isPackedConvolution(op))
      return false;
    if (isa<linalg::DepthwiseConv2DNhwcHwcOp, linalg::PoolingNhwcMaxOp,
            linalg::PoolingNhwcSumOp>(op))
      any = true;
  }
  return any;
}

/// True if the region's window op is a plain NHWC convolution
/// (linalg.conv_2d_nhwc_hwcf: its filter not packed, so F is not a
/// multiple of 32 or the filter is not a constant).
bool isPlainChannelsLastConvolution(llvm::ArrayRef<Operation *> regionOps) {
  return llvm::any_of(regionOps,
                      [](Operation *op) { return isa<linalg::Conv2DNhwcHwcfOp>(op); });
}

WorkgroupTiling chooseWorkgroupTiling(Value result, RegionKind kind, bool channelLocal,
                                      bool plainConvolution, int64_t quantizedColumns,
                                      int64_t vectorRegisters) {
  auto type = cast<RankedTensorType>(result.getType());
  int64_t rank = type.getRank();
  WorkgroupTiling tiling;
  tiling.tileSizes.assign(rank, 0);
  bool reduces = false;
  if (auto linalgOp = result.getDefiningOp<linalg::LinalgOp>())
    reduces = linalgOp.getNumReductionLoops() > 0 &&
              kind == RegionKind::Elementwise;

  // Packed matmul results (M, N/32, 32): 256 rows x 4 panels (128 columns),
  // the panel width untiled; x walks the panels, y the rows. Per 256-deep K
  // tile a workgroup keeps 256 KiB of A and 128 KiB of panels in L2, and B is
  // streamed once per 256 rows (64-row tiles streamed a 2048x2048 B from
  // memory 32 times: 0.77-0.83 of OpenBLAS at 2048^3 against 0.87-0.92).
  if (kind == RegionKind::PackedContraction && rank == 3) {
    tiling.tileSizes = {256, 4, 0};
    for (int64_t dim = 0; dim < 2; ++dim)
      if (!type.isDynamicDim(dim))
        tiling.tileSizes[dim] = std::min(tiling.tileSizes[dim],
                                         std::max<int64_t>(type.getDimSize(dim), 1));
    tiling.gridDims[0] = 1;
    tiling.gridDims[1] = 0;
    return tiling;
  }
  // Matmuls packing their B in the kernel (MatmulKernelPacking.h): up to 128
  // rows (all of a small M, so B is streamed from memory once) x up to 128
  // columns, a multiple of 32 dividing N (full, static column tiles: the
  // scratch panels); x walks the columns, y the rows. A workgroup packs a
  // 256 x 128 block of B (128 KiB) per K tile and uses it for all its rows.
  if (kind == RegionKind::Contraction && rank == 2 &&
      !type.isDynamicDim(1) && type.getDimSize(1) % kPackedPanelWidth == 0 &&
      comesFromMatmulPackingBInKernel(result)) {
    int64_t panels = type.getDimSize(1) / kPackedPanelWidth;
    tiling.tileSizes = {kKernelPackRows,
                        kPackedPanelWidth *
                            largestDivisorAtMost(panels, kKernelPackMaxColumns /
                                                             kPackedPanelWidth)};
    if (!type.isDynamicDim(0))
      tiling.tileSizes[0] =
          std::min(tiling.tileSizes[0], std::max<int64_t>(type.getDimSize(0), 1));
    tiling.gridDims[0] = 1;
    tiling.gridDims[1] = 0;
    return tiling;
  }
  // Panel packs (N/32, K, 32): 8 rows of B across up to 64 panels per
  // workgroup, so that a workgroup reads whole rows (a few pages) instead of
  // one 128-byte piece from each of 8 pages.
  if (kind == RegionKind::PanelPack && rank == 3 && !type.isDynamicDim(0)) {
    tiling.tileSizes = {std::min<int64_t>(type.getDimSize(0), 64), 8, 0};
    tiling.gridDims[0] = 1;
    tiling.gridDims[1] = 0;
    return tiling;
  }

  // Preferred tiles for the innermost three dims, innermost first.
  int64_t preferred[3];
  if (kind == RegionKind::Contraction || kind == RegionKind::QuantizedContraction) {
    // Group-quantized matmuls (WeightQuantization.h) too: 128 columns are
    // one GEMV register strip (QuantizedMatmulCodegen.cpp); their weights'
    // column block (the target's GEMV tile, 64 with 16 registers) if
    // narrower.
    preferred[0] = 128; // N
    if (quantizedColumns > 0 && quantizedColumns < 128)
      preferred[0] = quantizedColumns;
    preferred[1] = 64;  // M
    preferred[2] = 1;   // batch
  } else if (kind == RegionKind::Convolution) {
    preferred[0] = 1024; // output width: whole rows
    preferred[1] = 2;    // output height
    preferred[2] = 16;   // output channels (NCHW)
  } else if (kind == RegionKind::ChannelsLastWindow) {
    preferred[0] = 32;   // output channels (NHWC): one register tile wide
    preferred[1] = 1024; // output width: whole rows
    preferred[2] = 2;    // output height
  } else if (reduces) {
    preferred[0] = 16;
    preferred[1] = 1;
    preferred[2] = 1;
  } else {
    preferred[0] = 256;
    preferred[1] = 8;
    preferred[2] = 1;
    // A narrow innermost dim (NHWC images with 3 channels) gets wider tiles
    // of the next dim, so a workgroup still covers about 2048 elements: 8 x 3
    // elements per workgroup made the first pad of ResNet-18 6612 tiny
    // workgroups (170 us for 630 KB).
    if (rank >= 2 && !type.isDynamicDim(rank - 1) && type.getDimSize(rank - 1) > 0 &&
        type.getDimSize(rank - 1) < preferred[0])
      preferred[1] = std::max<int64_t>(preferred[1], 2048 / type.getDimSize(rank - 1));
  }
  for (int axis = 0; axis < 3 && axis < rank; ++axis) {
    int64_t dim = rank - 1 - axis;
    int64_t tile = preferred[axis];
    if (!type.isDynamicDim(dim)) {
      int64_t extent = std::max<int64_t>(type.getDimSize(dim), 1);
      // Convolution tiles must divide the output so every tile is static
      // (what the convolution vectorizer needs).
      bool window = kind == RegionKind::Convolution ||
                    kind == RegionKind::ChannelsLastWindow;
      tile = window ? largestDivisorAtMost(extent, tile) : std::min(tile, extent);
      // Elementwise and reduction regions: an innermost tile that divides
      // the extent where one from half the preferred width up does (a
      // multiple of 8: 200 of 1000 channels, 224 of 672), so that every
      // workgroup's innermost extent is static; the last of 256-wide tiles
      // was dynamic (min(256, extent - offset)) and the vectorizer masked
      // every transfer of the kernel, which on AVX2 is vmaskmovps
      // (microcoded on AMD): DenseNet-121's batch norm + ReLU over 28 x 28
      // x 416 ran at 2.1 ns per element (875 -> 215 us; its 61 such kernels
      // 11.8 -> 5.5 ms), SqueezeNet's global pool over 13 x 13 x 1000 at
      // 1.8 (230 -> 118 us).
      if (kind == RegionKind::Elementwise && axis == 0 && extent % tile != 0)
        for (int64_t divisor = tile / 8 * 8; divisor >= tile / 2; divisor -= 8)
          if (extent % divisor == 0) {
            tile = divisor;
            break;
          }
      // NHWC channels: a power of two, as the register tile's vectors need.
      if (kind == RegionKind::ChannelsLastWindow && axis == 0) {
        tile = largestPowerOfTwoDivisorAtMost(extent, preferred[0]);
        // A packed convolution's tiles are its filter tiles (32, or 40 of
        // 1000 channels: filterTileChannels), so each reads one contiguous
        // filter slice; a grouped one's hold whole groups or parts of one
        // group (lowerPackedConvolutionTiles): with Fg not a power of two
        // (24), a power of two dividing Fg.
        if (Operation *packed = packedConvolutionBehind(result)) {
          int64_t filterTile = packedConvolutionTile(packed);
          if (!isGroupedPackedConvolution(packed))
            tile = filterTile;
          else if (tile % filterTile != 0 && filterTile % tile != 0)
            tile = largestPowerOfTwoDivisorAtMost(filterTile, preferred[0]);
        }
        // Channel-local windows: every channel of the tile's pixels, so a
        // workgroup reads and writes whole pixels (contiguous rows) and its
        // register tiles walk the channels of a pixel run one after the
        // other; a 16-channel tile read 64 bytes of every 576-byte pixel of
        // a 144-channel image, a strided stream that ran at ~12 GB/s.
        if (channelLocal && extent <= kChannelLocalMaxChannels)
          tile = extent;
        // Plain convolutions with F a multiple of 8 but not of 16 (24,
        // 40, 72, 1000): several channel tiles per workgroup, which codegen
        // splits into 32-wide register tiles and a 16 / 8 remainder; the
        // power of two dividing F (8 for 1000) gave 8-channel (ymm) tiles.
        if (plainConvolution && !channelLocal) {
          if (int64_t split = splitChannelsWorkgroupTile(extent))
            tile = split;
        }
      }
    }
    tiling.tileSizes[dim] = tile;
    tiling.gridDims[axis] = dim;
  }
  // Channel-local windows over small images (7x7, 14x14): whole channels
  // would leave a handful of workgroups for the workers; split the channels
  // (in multiples of the register tile's) until there are
  // kChannelLocalMinWorkgroups.
  if (channelLocal && kind == RegionKind::ChannelsLastWindow && rank == 4 &&
      !type.isDynamicDim(1) && !type.isDynamicDim(2) && !type.isDynamicDim(3) &&
      tiling.tileSizes[3] == type.getDimSize(3)) {
    int64_t pixelGroups = (type.getDimSize(1) / std::max<int64_t>(tiling.tileSizes[1], 1)) *
                          (type.getDimSize(2) / std::max<int64_t>(tiling.tileSizes[2], 1));
    int64_t extent = type.getDimSize(3);
    int64_t units = extent / largestPowerOfTwoDivisorAtMost(extent, preferred[0]);
    for (int64_t parts = 1; parts <= units; ++parts)
      if (units % parts == 0 && (pixelGroups * parts >= kChannelLocalMinWorkgroups || parts == units)) {
        tiling.tileSizes[3] = extent / parts;
        break;
      }
  }
  // NHWC windows: walk the grid pixels first (x = width, y = height) and
  // channel tiles last, so consecutive workgroups reuse one channel tile's
  // filter slice from cache (late ResNet stages stream megabytes of filter
  // for a handful of pixels).
  // Channel-local windows (depthwise, pooling) have no filter slice to
  // reuse: they walk the channel tiles first (x = channels, y = width,
  // z = height), so consecutive workgroups read the other channels of the
  // same pixels' cache lines while they are in cache. Channel tiles last,
  // each tile sweeping the image, read 64 bytes of every 576-byte pixel of
  // a 144-channel image per sweep (MobileNetV2's 56x56x144 depthwise
  // convolution: ~2.5x ORT's time).
  if (kind == RegionKind::ChannelsLastWindow && rank == 4 && !channelLocal)
    std::copy_n(std::array<int64_t, 3>{2, 1, 3}.begin(), 3, tiling.gridDims);
  // Small images on a 16-register CPU (AVX2): the whole image per
  // workgroup when the channel tiles alone make enough workgroups, so that
  // the pixels a row's widest register tiles leave (7 x 7: 6 x 16 tiles
  // and 1 left) are tiled across all its rows (7 x 1 x 8) rather than as
  // a 1 x 1 x 16 tile per row (ConvolutionCodegen.cpp, pixelSegments; the
  // 7 x 7 convolutions of ResNet-50 and MobileNetV2: 0.75-0.9x the time).
  if (vectorRegisters <= 16 && kind == RegionKind::ChannelsLastWindow && rank == 4 &&
      !channelLocal && !type.isDynamicDim(1) && !type.isDynamicDim(2) &&
      !type.isDynamicDim(3) &&
      type.getDimSize(1) * type.getDimSize(2) <= kWholeSmallImagePixels &&
      type.getDimSize(3) / std::max<int64_t>(tiling.tileSizes[3], 1) >= kWholeImageMinWorkgroups)
    tiling.tileSizes[1] = std::max<int64_t>(type.getDimSize(1), 1);
  // Late, small images with large filter slices: the whole image of one
  // channel tile per workgroup, whose reduction codegen blocks so that each
  // block of filter serves every pixel from L1
  // (ConvolutionReductionBlocking.h).
  if (kind == RegionKind::ChannelsLastWindow && rank == 4 && !type.isDynamicDim(1) &&
      blocksConvolutionReduction(packedConvolutionBehind(result)))
    tiling.tileSizes[1] = std::max<int64_t>(type.getDimSize(1), 1);
  return tiling;
}

} // namespace

WorkgroupTiling cpuWorkgroupTiling(llvm::ArrayRef<Operation *> regionOps, Value tiled,
                                   const RegisterTiles &registers) {
  // Fused attention [B, H, T, D]: one head x up to 16 query rows per
  // workgroup (each row walks all keys; rows of one head share K / V rows
  // in cache); x walks heads, y row tiles, z the batch
  // (AttentionCodegen.cpp's loops).
  if (llvm::any_of(regionOps, [](Operation *op) { return isa<AttentionOp>(op); })) {
    auto type = cast<RankedTensorType>(tiled.getType());
    WorkgroupTiling tiling;
    int64_t rows = type.isDynamicDim(2) ? kAttentionRowTile
                                        : std::clamp<int64_t>(type.getDimSize(2), 1,
                                                              kAttentionRowTile);
    tiling.tileSizes = {1, 1, rows, 0};
    tiling.gridDims[0] = 1;
    tiling.gridDims[1] = 2;
    tiling.gridDims[2] = 0;
    return tiling;
  }
  return chooseWorkgroupTiling(tiled, classify(regionOps), isChannelLocalRegion(regionOps),
                               isPlainChannelsLastConvolution(regionOps),
                               quantizedColumnBlock(regionOps), registers.registers);
}

namespace {

/// matmul_MxNxK_WEIGHTS (batch_matmul_BxMxNxK_WEIGHTS) for a matmul-like
/// generic whose loops are `batchDims` batch loops, M, N, then K's.
std::string weightMatmulName(linalg::LinalgOp op, unsigned batchDims, const std::string &weights) {
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  auto product = [&](size_t from, size_t to) {
    int64_t result = 1;
    for (size_t d = from; d < to; ++d) {
      if (ShapedType::isDynamic(ranges[d]))
        return ShapedType::kDynamic;
      result *= ranges[d];
    }
    return result;
  };
  std::string mnk = formatExtents({ranges[batchDims], ranges[batchDims + 1],
                                   product(batchDims + 2, ranges.size())});
  if (batchDims)
    return "batch_matmul_" + formatExtents(product(0, batchDims)) + "x" + mnk + "_" + weights;
  return "matmul_" + mnk + "_" + weights;
}

} // namespace

std::string describeCpuKernelRoot(Operation *op) {
  std::string type = resultElementTypeName(op);
  // Matmuls by GGUF or group-quantized weights: named by the weights' type
  // (their results are f32), not as the reductions their generics are.
  if (std::optional<GgufMatmul> gguf = matchGgufMatmul(op)) {
    std::string weights = ggmlTypeName(gguf->ggmlType);
    std::transform(weights.begin(), weights.end(), weights.begin(), ::tolower);
    return weightMatmulName(cast<linalg::LinalgOp>(op), 0, weights);
  }
  if (std::optional<QuantizedMatmul> quantized = matchQuantizedMatmul(op))
    return weightMatmulName(cast<linalg::LinalgOp>(op), quantized->batchDims,
                            "int" + std::to_string(quantized->bits));
  if (isPanelPack(op))
    return "pack_matmul_b_" +
           formatExtents(cast<ShapedType>(op->getResult(0).getType()).getShape()) + "_" + type;
  if (!isPackedConvolution(op))
    return "";
  auto generic = cast<linalg::GenericOp>(op);
  // Filter [F/32][KH][KW][C][32], output (N, OH, OW, F), loops
  // (n, oh, ow, f, kh, kw, c); the input map's second result is
  // oh * stride + kh * dilation.
  ArrayRef<int64_t> filter = cast<ShapedType>(generic.getDpsInputs()[1].getType()).getShape();
  ArrayRef<int64_t> output = cast<ShapedType>(op->getResult(0).getType()).getShape();
  AffineExpr row = generic.getIndexingMapsArray()[0].getResult(1);
  SmallVector<AffineExpr> onlyOh(7, getAffineConstantExpr(0, op->getContext()));
  onlyOh[1] = getAffineConstantExpr(1, op->getContext());
  auto stride = dyn_cast<AffineConstantExpr>(row.replaceDims(onlyOh));
  // Grouped: "g" and the number of groups after the output channels.
  std::string groups =
      isGroupedPackedConvolution(op) ? "g" + std::to_string(filter[0]) : std::string();
  return "conv2d_" + formatExtents(filter.slice(1, 2)) + "s" +
         std::to_string(stride ? stride.getValue() : 1) + "_" +
         formatExtents(output.slice(1, 2)) + "x" + formatExtents(filter[3]) + "x" +
         formatExtents(output[3]) + groups + "_" + type;
}

int64_t splitChannelsWorkgroupTile(int64_t channels) {
  // Only where the power of two dividing F is 8 or less: a multiple of 16
  // already gets full-width 16-channel (zmm) register tiles, and a wider
  // workgroup would only stream more filter per workgroup.
  if (channels < 24 || channels % 16 == 0)
    return 0;
  // Not a multiple of 8 (ShuffleNet's 58 and 116: register tiles of 2 and
  // 4 channels): all of them, up to 256.
  if (channels % 8 != 0)
    return channels <= kSplitChannelsMaxTile ? channels : 0;
  // The smallest divisor from 40 (32 + 8) up, so that a workgroup's filter
  // slice stays small (1000 -> 40); else the largest (24).
  for (int64_t tile = 40; tile <= std::min(channels, kSplitChannelsMaxTile); tile += 8)
    if (channels % tile == 0)
      return tile;
  for (int64_t tile = std::min(channels, kSplitChannelsMaxTile); tile >= 24; tile -= 8)
    if (channels % tile == 0)
      return tile;
  return 0;
}

int64_t largestPowerOfTwoDivisorAtMost(int64_t extent, int64_t limit) {
  int64_t d = 1;
  while (2 * d <= limit && extent % (2 * d) == 0)
    d *= 2;
  return d;
}

int64_t largestDivisorAtMost(int64_t extent, int64_t limit) {
  for (int64_t d = std::min(extent, limit); d > 1; --d)
    if (extent % d == 0)
      return d;
  return 1;
}

} // namespace turbine::compiler
