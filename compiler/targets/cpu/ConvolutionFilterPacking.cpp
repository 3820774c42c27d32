//===- ConvolutionFilterPacking.cpp - Channel-tile-major conv filters -----===//
//
// An NHWC convolution's register tile (ConvolutionCodegen.cpp) is 8 output pixels
// by 32 output channels, one input channel at a time: per step it reads 32
// filter values w[kh][kw][c][f0 .. f0+31]. In HWCF order consecutive steps
// are F floats apart, so a tile of a 3x3x512x512 filter reads 128 bytes out
// of every 2 KB of a 9.4 MB constant: poor for the prefetchers and the TLB
// once the weights no longer fit the caches (ResNet's last stages). This
// stores such filters channel tile by channel tile, [F/32][KH][KW][C][32], at
// compile time, so each tile streams one contiguous [KH][KW][C][32] slice
// (what ONNX Runtime's MLAS does with its NCHWc filter layout). F not a
// multiple of 32 (SqueezeNet's 1000 classes, RegNet's 440) is packed in
// tiles of its workgroups' channels instead (40, 24 or 16:
// filterTileChannels), which codegen splits into register tiles like a
// plain convolution's channel segments:
//
//   conv_2d_nhwc_hwcf(x, W)  ->  linalg.generic "packed convolution"
//     out[n, oh, ow, f] += x[n, oh*sh + kh*dh, ow*sw + kw*dw, c]
//                          * P[f floordiv 32, kh, kw, c, f mod 32]
//
// It is the last step of global-opt, after fusion, so nothing fuses into the
// generic; dispatch formation tiles it like an NHWC convolution, and codegen
// turns each 32-channel tile back into a named convolution over that tile's
// contiguous filter slice (lowerPackedConvolutionTiles).
//===----------------------------------------------------------------------===//
#include "targets/cpu/ConvolutionFilterPacking.h"
#include "global-opt/ChannelsLastConvolutions.h"
#include "targets/cpu/CpuWorkgroupTiling.h"

#include "turbine/compiler/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/Transforms/TileUsingInterface.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/AffineMap.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/Matchers.h"

#include <cstring>
#include <optional>
#include <vector>

using namespace mlir;

namespace turbine::compiler {

#define GEN_PASS_DEF_PACKCONVOLUTIONFILTERS
#include "turbine/compiler/Passes.h.inc"
namespace {

constexpr int64_t kTile = kFilterTileChannels;

/// The f32 values of a constant, in row-major order; nullopt when they
/// cannot be read (an elided resource, another element type).
std::optional<std::vector<float>> readFloats(Attribute attr, int64_t count) {
  if (auto dense = dyn_cast<DenseElementsAttr>(attr)) {
    if (!dense.getElementType().isF32())
      return std::nullopt;
    auto values = dense.getValues<float>();
    return std::vector<float>(values.begin(), values.end());
  }
  if (auto resource = dyn_cast<DenseResourceElementsAttr>(attr)) {
    AsmResourceBlob *blob = resource.getRawHandle().getBlob();
    if (!blob || !resource.getElementType().isF32() ||
        blob->getData().size() != static_cast<size_t>(count) * sizeof(float))
      return std::nullopt;
    std::vector<float> values(count);
    std::memcpy(values.data(), blob->getData().data(), count * sizeof(float));
    return values;
  }
  return std::nullopt;
}

/// HWCF filter values -> [F/tile][KH][KW][C][tile].
std::vector<float> packValues(ArrayRef<float> hwcf, ArrayRef<int64_t> shape,
                              int64_t tile) {
  int64_t kh = shape[0], kw = shape[1], c = shape[2], f = shape[3];
  std::vector<float> packed(hwcf.size());
  size_t out = 0;
  for (int64_t fo = 0; fo < f / tile; ++fo)
    for (int64_t h = 0; h < kh; ++h)
      for (int64_t w = 0; w < kw; ++w)
        for (int64_t ci = 0; ci < c; ++ci)
          for (int64_t fi = 0; fi < tile; ++fi)
            packed[out++] = hwcf[((h * kw + w) * c + ci) * f + fo * tile + fi];
  return packed;
}

/// Indexing maps of a packed convolution, loops (n, oh, ow, f, kh, kw, c),
/// with `tile` output channels per filter tile. A grouped one
/// (`groupChannels` = Cg > 0, one filter tile per group) reads input channel
/// (f floordiv tile) * Cg + c instead of c.
SmallVector<AffineMap> packedMaps(MLIRContext *ctx, ArrayRef<int64_t> strides,
                                  ArrayRef<int64_t> dilations, int64_t tile,
                                  int64_t groupChannels = 0) {
  AffineExpr n, oh, ow, f, kh, kw, c;
  bindDims(ctx, n, oh, ow, f, kh, kw, c);
  AffineExpr channel = groupChannels > 0 ? f.floorDiv(tile) * groupChannels + c : c;
  return {AffineMap::get(7, 0,
                         {n, oh * strides[0] + kh * dilations[0],
                          ow * strides[1] + kw * dilations[1], channel},
                         ctx),
          AffineMap::get(7, 0, {f.floorDiv(tile), kh, kw, c, f % tile}, ctx),
          AffineMap::get(7, 0, {n, oh, ow, f}, ctx)};
}

/// The coefficient of dim `dim` in the linear expression `expr`.
int64_t coefficient(AffineExpr expr, unsigned dim, unsigned numDims) {
  SmallVector<AffineExpr> values;
  for (unsigned d = 0; d < numDims; ++d)
    values.push_back(getAffineConstantExpr(d == dim ? 1 : 0, expr.getContext()));
  AffineExpr at = expr.replaceDims(values);
  auto constant = dyn_cast<AffineConstantExpr>(at);
  return constant ? constant.getValue() : 0;
}

/// Strides and dilations (h, w) read off a packed convolution's input map.
void windowOf(AffineMap inputMap, SmallVectorImpl<int64_t> &strides,
              SmallVectorImpl<int64_t> &dilations) {
  strides.assign({coefficient(inputMap.getResult(1), 1, 7),
                  coefficient(inputMap.getResult(2), 2, 7)});
  dilations.assign({coefficient(inputMap.getResult(1), 4, 7),
                    coefficient(inputMap.getResult(2), 5, 7)});
}

/// Rewrites `conv` into a packed convolution if its filter qualifies: a
/// linalg.conv_2d_nhwc_hwcf with more output channels than one filter tile
/// (filterTileChannels), or a grouped NHWC generic
/// (matchGroupedChannelsLast; one tile per group).
void packConvolution(IRRewriter &rewriter, linalg::LinalgOp conv) {
  int64_t tile = 0, groupChannels = 0;
  SmallVector<int64_t> strides, dilations;
  if (auto named = dyn_cast<linalg::Conv2DNhwcHwcfOp>(conv.getOperation())) {
    strides.assign(named.getStrides().getValues<int64_t>().begin(),
                   named.getStrides().getValues<int64_t>().end());
    dilations.assign(named.getDilations().getValues<int64_t>().begin(),
                     named.getDilations().getValues<int64_t>().end());
  } else {
    auto generic = dyn_cast<linalg::GenericOp>(conv.getOperation());
    std::optional<GroupedConvolution> grouped =
        generic ? matchGroupedChannelsLast(generic) : std::nullopt;
    if (!grouped)
      return;
    tile = grouped->filtersPerGroup;
    strides = grouped->strides;
    dilations = grouped->dilations;
    groupChannels = cast<RankedTensorType>(generic.getDpsInputs()[1].getType()).getDimSize(2);
  }
  Value filter = conv.getDpsInputs()[1];
  auto filterType = cast<RankedTensorType>(filter.getType());
  if (!filterType.hasStaticShape() ||
      !llvm::all_of(conv->getOperandTypes(),
                    [](Type t) { return getElementTypeOrSelf(t).isF32(); }))
    return;
  ArrayRef<int64_t> shape = filterType.getShape();
  if (!groupChannels)
    tile = filterTileChannels(shape[3]);
  if (tile == 0)
    return;
  Attribute attr;
  if (!matchPattern(filter, m_Constant(&attr)))
    return;
  auto packedType =
      RankedTensorType::get({shape[3] / tile, shape[0], shape[1], shape[2], tile},
                            filterType.getElementType());
  DenseElementsAttr packed;
  if (auto dense = dyn_cast<DenseElementsAttr>(attr); dense && dense.isSplat()) {
    packed = DenseElementsAttr::get(packedType, dense.getSplatValue<Attribute>());
  } else {
    std::optional<std::vector<float>> values = readFloats(attr, filterType.getNumElements());
    if (!values)
      return;
    packed = DenseElementsAttr::get(packedType,
                                    ArrayRef<float>(packValues(*values, shape, tile)));
  }
  rewriter.setInsertionPoint(conv);
  Location loc = conv.getLoc();
  Value packedFilter = arith::ConstantOp::create(rewriter, loc, packed);
  SmallVector<utils::IteratorType> iterators(4, utils::IteratorType::parallel);
  iterators.append(3, utils::IteratorType::reduction);
  auto generic = linalg::GenericOp::create(
      rewriter, loc, conv->getResultTypes(),
      ValueRange{conv.getDpsInputs()[0], packedFilter}, conv.getDpsInits(),
      packedMaps(rewriter.getContext(), strides, dilations, tile, groupChannels), iterators,
      [](OpBuilder &b, Location loc, ValueRange args) {
        Value product = arith::MulFOp::create(b, loc, args[0], args[1]);
        Value sum = arith::AddFOp::create(b, loc, args[2], product);
        linalg::YieldOp::create(b, loc, sum);
      });
  rewriter.replaceOp(conv, generic->getResults());
  if (Operation *original = filter.getDefiningOp(); original && original->use_empty())
    rewriter.eraseOp(original);
}

/// Tiles the output channels (loop 3) of `op` by `tile`; returns the tile op.
Operation *tileOutputChannels(RewriterBase &rewriter, TilingInterface op, int64_t tile) {
  SmallVector<int64_t> tiles = {0, 0, 0, tile, 0, 0, 0};
  scf::SCFTilingOptions options;
  options.setTileSizes(getAsIndexOpFoldResult(op->getContext(), tiles));
  rewriter.setInsertionPoint(op);
  FailureOr<scf::SCFTilingResult> tiled = scf::tileUsingSCF(rewriter, op, options);
  if (failed(tiled) || tiled->tiledOps.size() != 1)
    return nullptr;
  rewriter.replaceOp(op, tiled->replacements);
  return tiled->tiledOps.front();
}

} // namespace

int64_t filterTileChannels(int64_t channels) {
  int64_t tile = 0;
  if (channels % kTile == 0)
    tile = kTile;
  else if (channels % 8 == 0)
    tile = splitChannelsWorkgroupTile(channels);
  if (tile == 0 && channels % 16 == 0)
    tile = 16;
  // A multiple of 8 that no multiple of 8 from 24 to 256 divides
  // (ShuffleNetV2 x2.0's 488 = 8 x 61): 8-channel tiles (ymm register
  // tiles either way), so that a workgroup reads its filter slice as one
  // contiguous block rather than 32 bytes of every 1952-byte filter row.
  if (tile == 0 && channels % 8 == 0)
    tile = 8;
  return channels > tile ? tile : 0;
}

namespace {

struct PackConvolutionFiltersPass : impl::PackConvolutionFiltersBase<PackConvolutionFiltersPass> {
  void runOnOperation() override {
    SmallVector<linalg::LinalgOp> convs;
    getOperation().walk([&](linalg::LinalgOp op) {
      if (op.hasPureTensorSemantics() &&
          isa<linalg::Conv2DNhwcHwcfOp, linalg::GenericOp>(op.getOperation()))
        convs.push_back(op);
    });
    IRRewriter rewriter(&getContext());
    for (linalg::LinalgOp conv : convs)
      packConvolution(rewriter, conv);
  }
};

} // namespace

int64_t packedConvolutionTile(Operation *op) {
  auto generic = dyn_cast_or_null<linalg::GenericOp>(op);
  if (!generic || generic.getNumDpsInputs() != 2 || generic.getNumDpsInits() != 1 ||
      generic.getNumLoops() != 7 || generic.getNumParallelLoops() != 4)
    return 0;
  SmallVector<utils::IteratorType> iterators = generic.getIteratorTypesArray();
  for (unsigned i = 0; i < 7; ++i)
    if ((iterators[i] == utils::IteratorType::parallel) != (i < 4))
      return 0;
  auto filterType = dyn_cast<RankedTensorType>(generic.getDpsInputs()[1].getType());
  if (!filterType || filterType.getRank() != 5 || !filterType.hasStaticShape())
    return 0;
  SmallVector<AffineMap> maps = generic.getIndexingMapsArray();
  if (maps[0].getNumResults() != 4 || maps[1].getNumResults() != 5)
    return 0;
  // The filter tile T from the filter map's first result, f floordiv T (f
  // alone for T = 1): a tile of the op may hold a part of one filter tile
  // (a power of two of a group of 24, a channel segment of 40), so the
  // filter's last dim can be smaller than T.
  int64_t tile = 0;
  AffineExpr first = maps[1].getResult(0);
  if (auto div = dyn_cast<AffineBinaryOpExpr>(first);
      div && div.getKind() == AffineExprKind::FloorDiv)
    if (auto rhs = dyn_cast<AffineConstantExpr>(div.getRHS()))
      tile = rhs.getValue();
  if (auto dim = dyn_cast<AffineDimExpr>(first); dim && dim.getPosition() == 3)
    tile = 1;
  if (tile <= 0 || tile < filterType.getDimSize(4))
    return 0;
  SmallVector<int64_t> strides, dilations;
  windowOf(maps[0], strides, dilations);
  bool grouped =
      maps == packedMaps(op->getContext(), strides, dilations, tile, filterType.getDimSize(3));
  if (!grouped && maps != packedMaps(op->getContext(), strides, dilations, tile))
    return 0;
  // Body: out + in * filter.
  Block &body = generic.getRegion().front();
  if (body.getOperations().size() != 3)
    return 0;
  auto mul = dyn_cast<arith::MulFOp>(body.front());
  auto add = dyn_cast<arith::AddFOp>(*std::next(body.begin()));
  bool matches = mul && add && mul.getLhs() == body.getArgument(0) &&
                 mul.getRhs() == body.getArgument(1) && add.getLhs() == body.getArgument(2) &&
                 add.getRhs() == mul.getResult();
  return matches ? tile : 0;
}

bool isPackedConvolution(Operation *op) { return packedConvolutionTile(op) != 0; }

bool isGroupedPackedConvolution(Operation *op) {
  int64_t tile = packedConvolutionTile(op);
  if (!tile)
    return false;
  auto generic = cast<linalg::GenericOp>(op);
  auto filterType = cast<RankedTensorType>(generic.getDpsInputs()[1].getType());
  SmallVector<AffineMap> maps = generic.getIndexingMapsArray();
  SmallVector<int64_t> strides, dilations;
  windowOf(maps[0], strides, dilations);
  return maps ==
         packedMaps(op->getContext(), strides, dilations, tile, filterType.getDimSize(3));
}

int64_t packedConvolutionRegisterChannels(Operation *op) {
  int64_t tile = packedConvolutionTile(op);
  if (!tile)
    return 0;
  int64_t channels = 1;
  while (2 * channels <= kTile && tile % (2 * channels) == 0)
    channels *= 2;
  return channels;
}

SmallVector<Operation *> lowerPackedConvolutionTiles(RewriterBase &rewriter,
                                                     Operation *op) {
  int64_t filterTile = packedConvolutionTile(op);
  if (!filterTile)
    return {};
  auto linalgOp = cast<linalg::LinalgOp>(op);
  SmallVector<int64_t> ranges = linalgOp.getStaticLoopRanges();
  // Whole filter tiles, or a part of one (a register tile or channel
  // segment of a filter tile, a part of one group's): its filter operand
  // is then a static slice of one filter tile, checked below.
  if (ShapedType::isDynamic(ranges[3]) ||
      (ranges[3] > filterTile && ranges[3] % filterTile != 0))
    return {};
  Operation *tile = op;
  if (ranges[3] > filterTile)
    tile = tileOutputChannels(rewriter, cast<TilingInterface>(op), filterTile);
  if (!tile)
    return {};
  auto generic = cast<linalg::GenericOp>(tile);
  // The tile's filter operand is [1][KH][KW][C][T] at offset
  // (f0 floordiv T, 0, 0, 0, f0 mod T), T the channels of the tile (32, a
  // group's or a part of one group's): take it as the [KH][KW][C][T] filter
  // of a named convolution. A grouped one's input operand is already the
  // slice of that group's Cg channels.
  Value filter = generic.getDpsInputs()[1];
  auto filterType = cast<RankedTensorType>(filter.getType());
  if (!filterType.hasStaticShape() || filterType.getDimSize(0) != 1)
    return {};
  Location loc = generic.getLoc();
  rewriter.setInsertionPoint(generic);
  auto sliceType = RankedTensorType::get(filterType.getShape().drop_front(),
                                         filterType.getElementType());
  SmallVector<OpFoldResult> offsets(5, rewriter.getIndexAttr(0));
  SmallVector<OpFoldResult> sizes, unitStrides(5, rewriter.getIndexAttr(1));
  for (int64_t size : filterType.getShape())
    sizes.push_back(rewriter.getIndexAttr(size));
  Value slice = tensor::ExtractSliceOp::create(rewriter, loc, sliceType, filter, offsets,
                                               sizes, unitStrides);
  SmallVector<int64_t> strides, dilations;
  windowOf(generic.getIndexingMapsArray()[0], strides, dilations);
  SmallVector<NamedAttribute> attrs = {
      rewriter.getNamedAttr("strides", rewriter.getI64TensorAttr(strides)),
      rewriter.getNamedAttr("dilations", rewriter.getI64TensorAttr(dilations))};
  auto conv = linalg::Conv2DNhwcHwcfOp::create(
      rewriter, loc, generic->getResultTypes(),
      ValueRange{generic.getDpsInputs()[0], slice}, generic.getDpsInits(), attrs);
  rewriter.replaceOp(generic, conv->getResults());
  return {conv.getOperation()};
}

} // namespace turbine::compiler
