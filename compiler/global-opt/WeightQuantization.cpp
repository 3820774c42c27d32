//===- WeightQuantization.cpp - Group-quantized int8 / int4 matmul weights ===//
//
// turbine-quantize-weights (Passes.td): a matmul by a constant f32 weight
// multiplies by a group-quantized copy of it, like iree-turbine's
// mm_group_quant, in one fused linalg.generic (layout and semantics in
// WeightQuantization.h) that dequantizes each weight in its body, so the
// kernel reads 1 byte (int8) or half a byte (int4) per weight plus one f32
// scale per group of G elements of K, never an f32 copy of B.
//
//   int8  symmetric, s = max |w| / 127, q = round(w / s), |q| <= 127 (int8
//         loses nothing by having no zero point);
//   int4  symmetric like llama.cpp's Q4_0: s = m / -8 for the group's value
//         m of largest magnitude, q = clamp(round(w / s), -8, 7), two per
//         byte. Symmetric because the weights of trained layers are centred
//         on zero, the kernel then needs no zero-point term, and the result
//         compares directly with llama.cpp's Q4_0 on the same weights.
//
// An all-zero group has scale 0 and q 0. A K that is not a multiple of G
// gets zero rows in q (its last group is shorter) and the activations are
// zero-padded to whole groups (a pad gather, its own small dispatch). A
// weight whose parameter name (ParameterNames.h) matches `exclude` stays
// f32. (Grouping K in the shapes keeps every indexing map a projected
// permutation: a `k floordiv G` map does not survive tiling, whose tiles
// need not start on a group.) The quantized constants become i8 and f32
// parameters of the artifact.
//===----------------------------------------------------------------------===//
#include "global-opt/WeightQuantization.h"

#include "global-opt/LowerPads.h"
#include "global-opt/ParameterNames.h"
#include "turbine/compiler/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/Support/Regex.h"

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
  if (!dense || !cast<ShapedType>(dense.getType()).hasStaticShape() ||
      cast<ShapedType>(dense.getType()).getNumElements() == 0)
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

/// Quantizes B (shape [batch..., K, N]) to int4 in groups of `group`
/// (even) along K, as llama.cpp's Q4_0 does: symmetric, the scale
/// d = m / -8 where m is the group's value of largest magnitude (so m maps
/// to -8 and all 16 levels are used), q = clamp(round(w / d), -8, 7). `q`
/// holds the packed bytes [batch..., groups, group/2, N]: k = 2i in the low
/// nibble, k = 2i + 1 in the high one; `scales` [batch..., groups, N].
void quantizeInt4(DenseElementsAttr b, int64_t group, std::vector<int8_t> &q,
                  std::vector<float> &scales, int64_t &groups) {
  auto type = cast<RankedTensorType>(b.getType());
  int64_t rank = type.getRank();
  int64_t k = type.getDimSize(rank - 2), n = type.getDimSize(rank - 1);
  int64_t batch = k * n == 0 ? 0 : type.getNumElements() / (k * n);
  groups = (k + group - 1) / group;
  const int64_t half = group / 2;
  std::vector<float> w(b.getValues<float>().begin(), b.getValues<float>().end());
  q.assign(batch * groups * half * n, 0);
  scales.assign(batch * groups * n, 0.0f);
  for (int64_t bi = 0; bi < batch; ++bi)
    for (int64_t g = 0; g < groups; ++g) {
      int64_t k0 = g * group, k1 = std::min(k, k0 + group);
      for (int64_t j = 0; j < n; ++j) {
        float amax = 0, m = 0;
        for (int64_t i = k0; i < k1; ++i) {
          float v = w[(bi * k + i) * n + j];
          if (std::fabs(v) > amax) {
            amax = std::fabs(v);
            m = v;
          }
        }
        float scale = m / -8.0f;
        float inverse = scale != 0 ? 1.0f / scale : 0.0f;
        scales[(bi * groups + g) * n + j] = scale;
        for (int64_t i = k0; i < k1; ++i) {
          float v = std::round(w[(bi * k + i) * n + j] * inverse); // half away from zero
          unsigned nibble = static_cast<unsigned>(static_cast<int>(std::clamp(v, -8.0f, 7.0f))) & 0xF;
          int64_t local = i - k0;
          int8_t &byte = q[((bi * groups + g) * half + local / 2) * n + j];
          unsigned bits = static_cast<uint8_t>(byte);
          bits = local % 2 == 0 ? (bits & 0xF0) | nibble : (bits & 0x0F) | (nibble << 4);
          byte = static_cast<int8_t>(static_cast<uint8_t>(bits));
        }
      }
    }
}

/// The indexing maps of the fused generic (WeightQuantization.h) for
/// `batchDims` batch loops and column blocks of `block`: A', q, s, C.
SmallVector<AffineMap> quantizedMatmulMaps(MLIRContext *ctx, unsigned batchDims, int bits,
                                           int64_t block) {
  unsigned loops = batchDims + (bits == 8 ? 4 : 5);
  auto d = [&](unsigned i) { return getAffineDimExpr(i, ctx); };
  SmallVector<AffineExpr> batch;
  for (unsigned i = 0; i < batchDims; ++i)
    batch.push_back(d(i));
  unsigned m = batchDims, n = batchDims + 1, g = batchDims + 2, i = batchDims + 3;
  auto with = [&](std::initializer_list<AffineExpr> tail) {
    SmallVector<AffineExpr> exprs(batch);
    exprs.append(tail.begin(), tail.end());
    return AffineMap::get(loops, 0, exprs, ctx);
  };
  AffineMap aMap = bits == 8 ? with({d(m), d(g), d(i)}) : with({d(m), d(g), d(i), d(i + 1)});
  AffineMap qMap = with({d(n).floorDiv(block), d(g), d(i), d(n) % block});
  return {aMap, qMap, with({d(g), d(n)}), with({d(m), d(n)})};
}

/// `q` [batch][groups][rows][n] repacked column-block-major:
/// [batch][ceil(n / block)][groups][rows][block], the columns past n zero.
std::vector<int8_t> blockColumns(const std::vector<int8_t> &q, int64_t batch, int64_t groups,
                                 int64_t rows, int64_t n, int64_t block) {
  int64_t blocks = (n + block - 1) / block;
  std::vector<int8_t> out(batch * blocks * groups * rows * block, 0);
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t g = 0; g < groups; ++g)
      for (int64_t r = 0; r < rows; ++r)
        for (int64_t j = 0; j < n; ++j)
          out[(((b * blocks + j / block) * groups + g) * rows + r) * block + j % block] =
              q[((b * groups + g) * rows + r) * n + j];
  return out;
}

/// Rewrites `op` (C = A * B, B the constant `b`) into the fused
/// group-quantized matmul generic of WeightQuantization.h.
LogicalResult rewrite(linalg::LinalgOp op, arith::ConstantOp constant, DenseElementsAttr b,
                      int64_t group, int bits, int64_t columnBlock) {
  std::vector<int8_t> q;
  std::vector<float> scales;
  int64_t groups = 0;
  if (bits == 8)
    quantize(b, group, q, scales, groups);
  else
    quantizeInt4(b, group, q, scales, groups);

  IRRewriter rewriter(op.getContext());
  rewriter.setInsertionPoint(op);
  Location loc = op.getLoc();
  MLIRContext *ctx = op.getContext();
  auto type = cast<RankedTensorType>(b.getType());
  const int64_t rank = type.getRank(); // batch dims + (K, N)
  const unsigned batchDims = rank - 2;
  ArrayRef<int64_t> shape = type.getShape();
  const int64_t k = shape[rank - 2], n = shape[rank - 1];
  const int64_t rows = bits == 8 ? group : group / 2; // q rows per group

  // Column blocks of `columnBlock`: a workgroup's strip of columns is one
  // contiguous stream over all of K.
  const int64_t block = std::min<int64_t>(n, columnBlock);
  const int64_t blocks = (n + block - 1) / block;
  const int64_t batch = type.getNumElements() / std::max<int64_t>(k * n, 1);
  q = blockColumns(q, k * n == 0 ? 0 : batch, groups, rows, n, block);
  SmallVector<int64_t> qShape(shape.begin(), shape.end() - 2);
  qShape.append({blocks, groups, rows, block});
  SmallVector<int64_t> scaleShape(shape.begin(), shape.end() - 2);
  scaleShape.append({groups, n});
  auto qType = RankedTensorType::get(qShape, IntegerType::get(ctx, 8));
  auto scaleType = RankedTensorType::get(scaleShape, rewriter.getF32Type());

  // A [batch..., M, K] -> zero-padded to groups * G -> [batch..., M, groups, G]
  // (int4: [..., groups, G/2, 2]).
  Value a = op.getDpsInputs()[0];
  auto aType = cast<RankedTensorType>(a.getType());
  const int64_t paddedK = groups * group;
  SmallVector<int64_t> paddedShape(aType.getShape());
  paddedShape.back() = paddedK;
  if (paddedK != k) {
    SmallVector<OpFoldResult> low(rank, rewriter.getIndexAttr(0)), high = low;
    high[rank - 1] = rewriter.getIndexAttr(paddedK - k);
    auto paddedType = RankedTensorType::get(paddedShape, aType.getElementType());
    Value zero = arith::ConstantOp::create(rewriter, loc, rewriter.getF32FloatAttr(0.0f));
    auto pad = tensor::PadOp::create(rewriter, loc, paddedType, a, low, high, zero);
    // turbine-lower-pads ran before this pass: lower this pad the same way.
    FailureOr<Value> gathered = lowerPad(rewriter, pad);
    if (failed(gathered))
      return failure();
    a = *gathered;
    rewriter.setInsertionPoint(op);
  }
  SmallVector<int64_t> groupedShape(paddedShape.begin(), paddedShape.end() - 1);
  groupedShape.push_back(groups);
  if (bits == 8)
    groupedShape.push_back(group);
  else
    groupedShape.append({group / 2, 2});
  SmallVector<ReassociationIndices> reassociation;
  for (int64_t d = 0; d + 1 < rank; ++d)
    reassociation.push_back({d});
  ReassociationIndices last;
  for (int64_t d = rank - 1; d < static_cast<int64_t>(groupedShape.size()); ++d)
    last.push_back(d);
  reassociation.push_back(last);
  SmallVector<OpFoldResult> outputShape;
  for (auto [d, size] : llvm::enumerate(groupedShape))
    outputShape.push_back(ShapedType::isDynamic(size)
                              ? tensor::getMixedSize(rewriter, loc, a, d)
                              : rewriter.getIndexAttr(size));
  auto groupedType = RankedTensorType::get(groupedShape, aType.getElementType());
  Value grouped = tensor::ExpandShapeOp::create(rewriter, loc, groupedType, a, reassociation,
                                                outputShape);

  Value qValue = arith::ConstantOp::create(
      rewriter, constant.getLoc(), DenseElementsAttr::get(qType, llvm::ArrayRef<int8_t>(q)));
  Value scaleValue = arith::ConstantOp::create(
      rewriter, constant.getLoc(),
      DenseElementsAttr::get(scaleType, llvm::ArrayRef<float>(scales)));

  SmallVector<AffineMap> maps = quantizedMatmulMaps(ctx, batchDims, bits, block);
  unsigned loops = maps.front().getNumDims();
  SmallVector<utils::IteratorType> iterators(loops, utils::IteratorType::reduction);
  for (unsigned d = 0; d < batchDims + 2; ++d)
    iterators[d] = utils::IteratorType::parallel;
  Value init = op.getDpsInits()[0];
  auto fused = linalg::GenericOp::create(
      rewriter, loc, TypeRange{init.getType()}, ValueRange{grouped, qValue, scaleValue},
      ValueRange{init}, maps, iterators,
      [&](OpBuilder &builder, Location l, ValueRange args) {
        Value weight = args[1];
        if (bits == 4) {
          // The nibble of k = 2i + h: h = 0 the low one, 1 the high one,
          // sign-extended by an arithmetic shift.
          Value four = arith::ConstantOp::create(builder, l, builder.getI8IntegerAttr(4));
          Value low = arith::ShRSIOp::create(
              builder, l, arith::ShLIOp::create(builder, l, weight, four), four);
          Value high = arith::ShRSIOp::create(builder, l, weight, four);
          Value h = linalg::IndexOp::create(builder, l, loops - 1);
          Value zero = arith::ConstantIndexOp::create(builder, l, 0);
          Value isHigh = arith::CmpIOp::create(builder, l, arith::CmpIPredicate::ne, h, zero);
          weight = arith::SelectOp::create(builder, l, isHigh, high, low);
        }
        Value x = arith::SIToFPOp::create(builder, l, builder.getF32Type(), weight);
        Value w = arith::MulFOp::create(builder, l, x, args[2]);
        Value product = arith::MulFOp::create(builder, l, args[0], w);
        Value sum = arith::AddFOp::create(builder, l, args[3], product);
        linalg::YieldOp::create(builder, l, sum);
      });
  rewriter.replaceOp(op, fused.getResults());
  if (constant->use_empty())
    rewriter.eraseOp(constant);
  return success();
}

struct QuantizeWeightsPass : impl::QuantizeWeightsBase<QuantizeWeightsPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (weights == "none")
      return;
    if (weights != "int8" && weights != "int4") {
      module.emitError() << "quantize-weights: '" << weights
                         << "' is not supported (none, int8 or int4)";
      return signalPassFailure();
    }
    const int bits = weights == "int8" ? 8 : 4;
    if (groupSize <= 0) {
      module.emitError() << "quantize-weights: group size " << static_cast<int64_t>(groupSize)
                         << " must be positive";
      return signalPassFailure();
    }
    if (bits == 4 && groupSize % 2 != 0) {
      module.emitError() << "quantize-weights: int4 packs two weights of K per byte, so the "
                            "group size must be even (got "
                         << static_cast<int64_t>(groupSize) << ")";
      return signalPassFailure();
    }
    if (columnBlock <= 0 || columnBlock % 32 != 0) {
      module.emitError() << "quantize-weights: column block " << static_cast<int64_t>(columnBlock)
                         << " must be a positive multiple of 32";
      return signalPassFailure();
    }
    llvm::Regex excludeRegex(exclude);
    std::string regexError;
    if (!exclude.empty() && !excludeRegex.isValid(regexError)) {
      module.emitError() << "quantize-exclude: '" << exclude
                         << "' is not a valid regular expression: " << regexError;
      return signalPassFailure();
    }
    SmallVector<std::pair<linalg::LinalgOp, arith::ConstantOp>> targets;
    module.walk([&](linalg::LinalgOp op) {
      arith::ConstantOp constant;
      if (!quantizableB(op, constant))
        return;
      if (!exclude.empty())
        if (auto name = constant->getAttrOfType<StringAttr>(kParamNameAttr);
            name && excludeRegex.match(name.getValue()))
          return;
      targets.emplace_back(op, constant);
    });
    for (auto [op, constant] : targets) {
      // Several matmuls may share one constant: quantize it once per use
      // (each matmul gets its own quantized copy; CSE merges constants).
      auto b = cast<DenseElementsAttr>(constant.getValue());
      if (failed(rewrite(op, constant, b, static_cast<int64_t>(groupSize), bits,
                         static_cast<int64_t>(columnBlock))))
        return signalPassFailure();
    }
  }
};

} // namespace

std::optional<QuantizedMatmul> matchQuantizedMatmul(Operation *op) {
  auto generic = dyn_cast_or_null<linalg::GenericOp>(op);
  if (!generic || generic.getNumDpsInputs() != 3 || generic.getNumDpsInits() != 1 ||
      generic->getNumResults() > 1)
    return std::nullopt;
  SmallVector<utils::IteratorType> iterators = generic.getIteratorTypesArray();
  unsigned reductions = generic.getNumReductionLoops();
  if (reductions != 2 && reductions != 3)
    return std::nullopt;
  QuantizedMatmul info;
  info.bits = reductions == 2 ? 8 : 4;
  unsigned loops = iterators.size();
  if (loops < reductions + 2)
    return std::nullopt;
  info.batchDims = loops - reductions - 2;
  for (unsigned d = 0; d < loops; ++d)
    if ((d < info.batchDims + 2) != (iterators[d] == utils::IteratorType::parallel))
      return std::nullopt;
  // The column block P from q's map (its last result is n mod P; a tile's
  // q may have a dynamic last dim).
  AffineMap qMap = generic.getIndexingMapsArray()[1];
  if (qMap.getNumResults() != info.batchDims + 4)
    return std::nullopt;
  // (P = 1, N = 1: n floordiv 1 folds to n and n mod 1 to 0.)
  AffineExpr last = qMap.getResult(qMap.getNumResults() - 1);
  int64_t block = 1;
  if (auto mod = dyn_cast<AffineBinaryOpExpr>(last)) {
    auto rhs = dyn_cast<AffineConstantExpr>(mod.getRHS());
    if (mod.getKind() != AffineExprKind::Mod || !rhs || rhs.getValue() <= 0)
      return std::nullopt;
    block = rhs.getValue();
  }
  if (generic.getIndexingMapsArray() !=
      quantizedMatmulMaps(op->getContext(), info.batchDims, info.bits, block))
    return std::nullopt;
  auto elementType = [&](Value v) { return getElementTypeOrSelf(v.getType()); };
  if (!elementType(generic.getDpsInputs()[0]).isF32() ||
      !elementType(generic.getDpsInputs()[1]).isInteger(8) ||
      !elementType(generic.getDpsInputs()[2]).isF32() ||
      !elementType(generic.getDpsInits()[0]).isF32())
    return std::nullopt;
  // yield(c + a * (sitofp(weight) * s)); weight is q (int8) or a nibble of it.
  Block *body = generic.getBody();
  auto yield = cast<linalg::YieldOp>(body->getTerminator());
  auto sum = yield.getValues()[0].getDefiningOp<arith::AddFOp>();
  if (!sum || sum.getLhs() != body->getArgument(3))
    return std::nullopt;
  auto product = sum.getRhs().getDefiningOp<arith::MulFOp>();
  if (!product || product.getLhs() != body->getArgument(0))
    return std::nullopt;
  auto dequantized = product.getRhs().getDefiningOp<arith::MulFOp>();
  if (!dequantized || dequantized.getRhs() != body->getArgument(2))
    return std::nullopt;
  auto convert = dequantized.getLhs().getDefiningOp<arith::SIToFPOp>();
  if (!convert)
    return std::nullopt;
  if (info.bits == 8)
    return convert.getIn() == body->getArgument(1) ? std::optional(info) : std::nullopt;
  auto select = convert.getIn().getDefiningOp<arith::SelectOp>();
  return select ? std::optional(info) : std::nullopt;
}

} // namespace turbine::compiler
