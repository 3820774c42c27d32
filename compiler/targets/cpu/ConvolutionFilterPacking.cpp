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
// (what ONNX Runtime's MLAS does with its NCHWc filter layout):
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

/// HWCF filter values -> [F/32][KH][KW][C][32].
std::vector<float> packValues(ArrayRef<float> hwcf, ArrayRef<int64_t> shape) {
  int64_t kh = shape[0], kw = shape[1], c = shape[2], f = shape[3];
  std::vector<float> packed(hwcf.size());
  size_t out = 0;
  for (int64_t fo = 0; fo < f / kTile; ++fo)
    for (int64_t h = 0; h < kh; ++h)
      for (int64_t w = 0; w < kw; ++w)
        for (int64_t ci = 0; ci < c; ++ci)
          for (int64_t fi = 0; fi < kTile; ++fi)
            packed[out++] = hwcf[((h * kw + w) * c + ci) * f + fo * kTile + fi];
  return packed;
}

/// Indexing maps of a packed convolution, loops (n, oh, ow, f, kh, kw, c).
SmallVector<AffineMap> packedMaps(MLIRContext *ctx, ArrayRef<int64_t> strides,
                                  ArrayRef<int64_t> dilations) {
  AffineExpr n, oh, ow, f, kh, kw, c;
  bindDims(ctx, n, oh, ow, f, kh, kw, c);
  return {AffineMap::get(7, 0,
                         {n, oh * strides[0] + kh * dilations[0],
                          ow * strides[1] + kw * dilations[1], c},
                         ctx),
          AffineMap::get(7, 0, {f.floorDiv(kTile), kh, kw, c, f % kTile}, ctx),
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

/// Rewrites `conv` into a packed convolution if its filter qualifies.
void packConvolution(IRRewriter &rewriter, linalg::Conv2DNhwcHwcfOp conv) {
  Value filter = conv.getDpsInputs()[1];
  auto filterType = cast<RankedTensorType>(filter.getType());
  if (!filterType.hasStaticShape() ||
      !llvm::all_of(conv->getOperandTypes(),
                    [](Type t) { return getElementTypeOrSelf(t).isF32(); }))
    return;
  ArrayRef<int64_t> shape = filterType.getShape();
  if (shape[3] <= kTile || shape[3] % kTile != 0)
    return;
  Attribute attr;
  if (!matchPattern(filter, m_Constant(&attr)))
    return;
  auto packedType =
      RankedTensorType::get({shape[3] / kTile, shape[0], shape[1], shape[2], kTile},
                            filterType.getElementType());
  DenseElementsAttr packed;
  if (auto dense = dyn_cast<DenseElementsAttr>(attr); dense && dense.isSplat()) {
    packed = DenseElementsAttr::get(packedType, dense.getSplatValue<Attribute>());
  } else {
    std::optional<std::vector<float>> values = readFloats(attr, filterType.getNumElements());
    if (!values)
      return;
    packed = DenseElementsAttr::get(packedType,
                                    ArrayRef<float>(packValues(*values, shape)));
  }
  SmallVector<int64_t> strides(conv.getStrides().getValues<int64_t>());
  SmallVector<int64_t> dilations(conv.getDilations().getValues<int64_t>());
  rewriter.setInsertionPoint(conv);
  Location loc = conv.getLoc();
  Value packedFilter = arith::ConstantOp::create(rewriter, loc, packed);
  SmallVector<utils::IteratorType> iterators(4, utils::IteratorType::parallel);
  iterators.append(3, utils::IteratorType::reduction);
  auto generic = linalg::GenericOp::create(
      rewriter, loc, conv->getResultTypes(),
      ValueRange{conv.getDpsInputs()[0], packedFilter}, conv.getDpsInits(),
      packedMaps(rewriter.getContext(), strides, dilations), iterators,
      [](OpBuilder &b, Location loc, ValueRange args) {
        Value product = arith::MulFOp::create(b, loc, args[0], args[1]);
        Value sum = arith::AddFOp::create(b, loc, args[2], product);
        linalg::YieldOp::create(b, loc, sum);
      });
  rewriter.replaceOp(conv, generic->getResults());
  if (Operation *original = filter.getDefiningOp(); original && original->use_empty())
    rewriter.eraseOp(original);
}

/// Tiles the output channels (loop 3) of `op` by 32; returns the tile op.
Operation *tileOutputChannels(RewriterBase &rewriter, TilingInterface op) {
  SmallVector<int64_t> tiles = {0, 0, 0, kTile, 0, 0, 0};
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

namespace {

struct PackConvolutionFiltersPass : impl::PackConvolutionFiltersBase<PackConvolutionFiltersPass> {
  void runOnOperation() override {
    SmallVector<linalg::Conv2DNhwcHwcfOp> convs;
    getOperation().walk([&](linalg::Conv2DNhwcHwcfOp op) {
      if (op.hasPureTensorSemantics())
        convs.push_back(op);
    });
    IRRewriter rewriter(&getContext());
    for (linalg::Conv2DNhwcHwcfOp conv : convs)
      packConvolution(rewriter, conv);
  }
};

} // namespace

bool isPackedConvolution(Operation *op) {
  auto generic = dyn_cast_or_null<linalg::GenericOp>(op);
  if (!generic || generic.getNumDpsInputs() != 2 || generic.getNumDpsInits() != 1 ||
      generic.getNumLoops() != 7 || generic.getNumParallelLoops() != 4)
    return false;
  SmallVector<utils::IteratorType> iterators = generic.getIteratorTypesArray();
  for (unsigned i = 0; i < 7; ++i)
    if ((iterators[i] == utils::IteratorType::parallel) != (i < 4))
      return false;
  auto filterType = dyn_cast<RankedTensorType>(generic.getDpsInputs()[1].getType());
  if (!filterType || filterType.getRank() != 5 || filterType.getDimSize(4) != kTile)
    return false;
  SmallVector<AffineMap> maps = generic.getIndexingMapsArray();
  SmallVector<int64_t> strides, dilations;
  windowOf(maps[0], strides, dilations);
  if (maps != packedMaps(op->getContext(), strides, dilations))
    return false;
  // Body: out + in * filter.
  Block &body = generic.getRegion().front();
  if (body.getOperations().size() != 3)
    return false;
  auto mul = dyn_cast<arith::MulFOp>(body.front());
  auto add = dyn_cast<arith::AddFOp>(*std::next(body.begin()));
  return mul && add && mul.getLhs() == body.getArgument(0) &&
         mul.getRhs() == body.getArgument(1) && add.getLhs() == body.getArgument(2) &&
         add.getRhs() == mul.getResult();
}

SmallVector<Operation *> lowerPackedConvolutionTiles(RewriterBase &rewriter,
                                                     Operation *op) {
  if (!isPackedConvolution(op))
    return {};
  auto linalgOp = cast<linalg::LinalgOp>(op);
  SmallVector<int64_t> ranges = linalgOp.getStaticLoopRanges();
  if (ShapedType::isDynamic(ranges[3]) || ranges[3] % kTile != 0)
    return {};
  Operation *tile = op;
  if (ranges[3] > kTile)
    tile = tileOutputChannels(rewriter, cast<TilingInterface>(op));
  if (!tile)
    return {};
  auto generic = cast<linalg::GenericOp>(tile);
  // The tile's filter operand is [1][KH][KW][C][32] at offset
  // (f0 floordiv 32, 0, 0, 0, f0 mod 32) with f0 a multiple of 32: take it
  // as the [KH][KW][C][32] filter of a named convolution.
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
