//===- WeightQuantization.cpp - Group-quantized int8 matmul weights -------===//
//
// turbine-quantize-weights (Passes.td): a matmul by a constant f32 weight
// reads it as int8 with one f32 scale per group of K elements, like
// iree-turbine's mm_group_quant. For B [..., K, N] and group size G:
//
//   q      [..., K/G, G, N] i8   q = round(w / s), |q| <= 127
//   scales [..., K/G, N]    f32  s = max |w| over the group / 127
//   B'     = linalg.generic (..., g, i, n): sitofp(q[..., g, i, n]) * scales[..., g, n]
//
// and the matmul reads B' collapsed to [..., K, N]. (Grouping K in the
// shapes keeps every indexing map a projected permutation: a `k floordiv G`
// map does not survive tiling, whose tiles need not start on a group.) Symmetric quantization with no zero point (int8
// loses nothing by it); an all-zero group has scale 0 and q 0. A K that is
// not a multiple of G is padded with zero rows to whole groups (its last
// group is shorter) and the dequantized B' sliced back to K rows. This is the correct
// first step: the dequantization is an elementwise computation of its own
// (its own dispatch, f32 B' written each call); a fused dequantize-and-
// multiply kernel is future work. The quantized constants become i8 and
// f32 parameters of the artifact.
//===----------------------------------------------------------------------===//
#include "turbine/compiler/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"

#include <algorithm>
#include <cmath>
#include <vector>

using namespace mlir;

namespace turbine::compiler {

#define GEN_PASS_DEF_QUANTIZEWEIGHTS
#include "turbine/compiler/Passes.h.inc"

namespace {

/// The dense f32 constant B of a matmul / batch_matmul that can be
/// quantized, or null.
DenseElementsAttr quantizableB(linalg::LinalgOp op, arith::ConstantOp &constant) {
  if (!op.hasPureTensorSemantics())
    return {};
  if (auto matmul = dyn_cast<linalg::MatmulOp>(op.getOperation())) {
    if (matmul.hasUserDefinedMaps())
      return {};
  } else if (auto batch = dyn_cast<linalg::BatchMatmulOp>(op.getOperation())) {
    if (batch.hasUserDefinedMaps())
      return {};
  } else {
    return {};
  }
  Type f32 = Float32Type::get(op.getContext());
  for (Value v : {op.getDpsInputs()[0], op.getDpsInputs()[1], op.getDpsInits()[0]})
    if (cast<ShapedType>(v.getType()).getElementType() != f32)
      return {};
  constant = op.getDpsInputs()[1].getDefiningOp<arith::ConstantOp>();
  if (!constant)
    return {};
  auto dense = dyn_cast<DenseElementsAttr>(constant.getValue());
  if (!dense || !cast<ShapedType>(dense.getType()).hasStaticShape())
    return {};
  return dense;
}

/// Quantizes B (shape [batch..., K, N]) in groups of `group` along K. `q`
/// is laid out [batch..., groups * group, N] (K padded with zeros to whole
/// groups), `scales` [batch..., groups, N].
void quantize(DenseElementsAttr b, int64_t group, std::vector<int8_t> &q,
              std::vector<float> &scales, int64_t &groups) {
  auto type = cast<RankedTensorType>(b.getType());
  int64_t rank = type.getRank();
  int64_t k = type.getDimSize(rank - 2), n = type.getDimSize(rank - 1);
  int64_t batch = k * n == 0 ? 0 : type.getNumElements() / (k * n);
  groups = (k + group - 1) / group;
  const int64_t paddedK = groups * group;
  std::vector<float> w(b.getValues<float>().begin(), b.getValues<float>().end());
  q.assign(batch * paddedK * n, 0);
  scales.assign(batch * groups * n, 0.0f);
  for (int64_t bi = 0; bi < batch; ++bi)
    for (int64_t g = 0; g < groups; ++g) {
      int64_t k0 = g * group, k1 = std::min(k, k0 + group);
      for (int64_t j = 0; j < n; ++j) {
        float amax = 0;
        for (int64_t i = k0; i < k1; ++i)
          amax = std::max(amax, std::fabs(w[(bi * k + i) * n + j]));
        float scale = amax / 127.0f;
        float inverse = scale != 0 ? 1.0f / scale : 0.0f;
        scales[(bi * groups + g) * n + j] = scale;
        for (int64_t i = k0; i < k1; ++i) {
          float v = std::round(w[(bi * k + i) * n + j] * inverse); // half away from zero
          q[(bi * paddedK + i) * n + j] = static_cast<int8_t>(std::clamp(v, -127.0f, 127.0f));
        }
      }
    }
}

/// Rewrites `op` to read B through the dequantization of its int8 form:
///   q      [..., groups, G, N] i8     scales [..., groups, N] f32
///   B'     [..., groups, G, N] = sitofp(q) * scales   (scales broadcast over G)
///   B      = collapse(B') [..., groups * G, N], sliced to K rows if K % G != 0
/// Every indexing map is a projected permutation, so the dequantization
/// tiles and fuses like any elementwise generic.
void rewrite(linalg::LinalgOp op, arith::ConstantOp constant, DenseElementsAttr b,
             int64_t group) {
  std::vector<int8_t> q;
  std::vector<float> scales;
  int64_t groups = 0;
  quantize(b, group, q, scales, groups);

  OpBuilder builder(op);
  Location loc = constant.getLoc();
  MLIRContext *ctx = op.getContext();
  auto type = cast<RankedTensorType>(b.getType());
  const int64_t rank = type.getRank(); // batch dims + (K, N)
  ArrayRef<int64_t> shape = type.getShape();
  SmallVector<int64_t> groupedShape(shape.begin(), shape.end() - 2);
  groupedShape.append({groups, group, shape[rank - 1]});
  SmallVector<int64_t> scaleShape(shape.begin(), shape.end() - 2);
  scaleShape.append({groups, shape[rank - 1]});
  auto qType = RankedTensorType::get(groupedShape, IntegerType::get(ctx, 8));
  auto scaleType = RankedTensorType::get(scaleShape, builder.getF32Type());
  auto groupedType = RankedTensorType::get(groupedShape, builder.getF32Type());
  Value qValue = arith::ConstantOp::create(
      builder, loc, DenseElementsAttr::get(qType, llvm::ArrayRef<int8_t>(q)));
  Value scaleValue = arith::ConstantOp::create(
      builder, loc, DenseElementsAttr::get(scaleType, llvm::ArrayRef<float>(scales)));

  // (..., g, i, n) -> (..., g, n) for the scales.
  const int64_t groupedRank = rank + 1;
  AffineMap identity = builder.getMultiDimIdentityMap(groupedRank);
  SmallVector<AffineExpr> scaleExprs;
  for (int64_t d = 0; d < groupedRank; ++d)
    if (d != groupedRank - 2)
      scaleExprs.push_back(builder.getAffineDimExpr(d));
  AffineMap scaleMap = AffineMap::get(groupedRank, 0, scaleExprs, ctx);
  Value empty = tensor::EmptyOp::create(builder, loc, groupedShape, builder.getF32Type());
  SmallVector<utils::IteratorType> iterators(groupedRank, utils::IteratorType::parallel);
  auto dequantize = linalg::GenericOp::create(
      builder, loc, TypeRange{groupedType}, ValueRange{qValue, scaleValue}, ValueRange{empty},
      ArrayRef<AffineMap>{identity, scaleMap, identity}, iterators,
      [](OpBuilder &b, Location l, ValueRange args) {
        Value x = arith::SIToFPOp::create(b, l, b.getF32Type(), args[0]);
        Value y = arith::MulFOp::create(b, l, x, args[1]);
        linalg::YieldOp::create(b, l, y);
      });
  SmallVector<ReassociationIndices> reassociation;
  for (int64_t d = 0; d < rank - 2; ++d)
    reassociation.push_back({d});
  reassociation.push_back({rank - 2, rank - 1});
  reassociation.push_back({rank});
  Value dequantized = tensor::CollapseShapeOp::create(builder, loc, dequantize.getResult(0),
                                                      reassociation);
  if (groups * group != shape[rank - 2]) {
    SmallVector<OpFoldResult> offsets(rank, builder.getIndexAttr(0));
    SmallVector<OpFoldResult> sizes, strides(rank, builder.getIndexAttr(1));
    for (int64_t dim : shape)
      sizes.push_back(builder.getIndexAttr(dim));
    dequantized = tensor::ExtractSliceOp::create(builder, loc, type, dequantized, offsets,
                                                 sizes, strides);
  }
  op.getDpsInputOperands()[1]->set(dequantized);
  if (constant->use_empty())
    constant->erase();
}

struct QuantizeWeightsPass : impl::QuantizeWeightsBase<QuantizeWeightsPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (weights == "none")
      return;
    if (weights != "int8") {
      module.emitError() << "quantize-weights: '" << weights
                         << "' is not supported (none or int8; int4 is not implemented yet)";
      return signalPassFailure();
    }
    if (groupSize <= 0) {
      module.emitError() << "quantize-weights: group size " << static_cast<int64_t>(groupSize)
                         << " must be positive";
      return signalPassFailure();
    }
    SmallVector<std::pair<linalg::LinalgOp, arith::ConstantOp>> targets;
    module.walk([&](linalg::LinalgOp op) {
      arith::ConstantOp constant;
      if (quantizableB(op, constant))
        targets.emplace_back(op, constant);
    });
    for (auto [op, constant] : targets) {
      // Several matmuls may share one constant: quantize it once per use
      // (each matmul gets its own dequantization; CSE merges constants).
      auto b = cast<DenseElementsAttr>(constant.getValue());
      rewrite(op, constant, b, static_cast<int64_t>(groupSize));
    }
  }
};

} // namespace

} // namespace turbine::compiler
