//===- TransposeElimination.cpp - Gathers read through argument transposes ===//
//
// A tensor.extract (inside a lowered pad: the graph input's transpose to
// NHWC feeding the first convolution's zero padding) of a transpose of a
// function argument extracts from the argument at permuted indices, so the
// transpose is no longer materialized. A transpose of a computed value is
// left alone: fusion composes it into its producer, which is better.
// (Residual streams are kept NHWC by ChannelsLastConvolutions.cpp.)
//
// A matmul whose rows are a flattened transpose (the last NHWC pooling's
// transpose back to NCHW before Flatten + Linear) by a constant right-hand
// side instead reads the flattened transpose source, with the constant's
// rows permuted to match at compile time, so the transpose kernel goes away.
//===----------------------------------------------------------------------===//
#include "global-opt/TransposeElimination.h"

#include "global-opt/ParameterNames.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/AffineMap.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/PatternMatch.h"

#include <cstring>
#include <vector>

using namespace mlir;

namespace turbine::compiler {
namespace {

bool allParallel(linalg::GenericOp op) {
  return llvm::all_of(op.getIteratorTypesArray(), [](utils::IteratorType t) {
    return t == utils::IteratorType::parallel;
  });
}

/// A generic that only permutes its single input: the permutation (from the
/// iteration space to the input's indices), or null.
AffineMap pureTransposeMap(linalg::GenericOp op) {
  if (op.getNumDpsInputs() != 1 || op.getNumDpsInits() != 1 || !allParallel(op))
    return {};
  Block &body = op.getRegion().front();
  if (body.getOperations().size() != 1)
    return {};
  auto yield = cast<linalg::YieldOp>(body.getTerminator());
  if (yield.getNumOperands() != 1 || yield.getOperand(0) != body.getArgument(0))
    return {};
  AffineMap in = op.getIndexingMapsArray()[0];
  AffineMap out = op.getIndexingMapsArray()[1];
  if (!out.isIdentity() || !in.isPermutation() || in.isIdentity())
    return {};
  return in;
}

/// extract(T(x), i) -> extract(x, toSource(i)) for an argument x.
struct ExtractThroughTranspose : OpRewritePattern<tensor::ExtractOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(tensor::ExtractOp extract,
                                PatternRewriter &rewriter) const override {
    auto transpose = extract.getTensor().getDefiningOp<linalg::GenericOp>();
    if (!transpose)
      return failure();
    AffineMap toSource = pureTransposeMap(transpose);
    if (!toSource || !isa<BlockArgument>(transpose.getDpsInputOperand(0)->get()))
      return failure();
    // Source index k is the extract's index at toSource's k-th result.
    SmallVector<Value> indices;
    for (unsigned k = 0; k < toSource.getNumResults(); ++k)
      indices.push_back(extract.getIndices()[toSource.getDimPosition(k)]);
    rewriter.replaceOpWithNewOp<tensor::ExtractOp>(
        extract, transpose.getDpsInputOperand(0)->get(), indices);
    return success();
  }
};

/// matmul(collapse(T(x)), W) -> matmul(collapse(x), W') for a constant W
/// whose rows W' are permuted like T's non-leading dims, where T keeps dim 0
/// (the rows of the matmul) in place and the collapse flattens the rest.
struct MatmulThroughFlattenedTranspose : OpRewritePattern<linalg::MatmulOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(linalg::MatmulOp matmul,
                                PatternRewriter &rewriter) const override {
    if (matmul.hasUserDefinedMaps())
      return failure();
    auto collapse =
        matmul.getDpsInputOperand(0)->get().getDefiningOp<tensor::CollapseShapeOp>();
    if (!collapse || !collapse->hasOneUse())
      return failure();
    auto transpose = collapse.getSrc().getDefiningOp<linalg::GenericOp>();
    if (!transpose || !transpose->hasOneUse())
      return failure();
    AffineMap toSource = pureTransposeMap(transpose);
    if (!toSource || toSource.getDimPosition(0) != 0)
      return failure();
    SmallVector<ReassociationIndices> groups = collapse.getReassociationIndices();
    unsigned rank = toSource.getNumResults();
    if (groups.size() != 2 || groups[0].size() != 1 || groups[1].size() != rank - 1)
      return failure();
    auto weights = matmul.getDpsInputOperand(1)->get().getDefiningOp<arith::ConstantOp>();
    if (!weights)
      return failure();
    auto dense = dyn_cast<DenseElementsAttr>(weights.getValue());
    auto weightType = dyn_cast<RankedTensorType>(weights.getType());
    if (!dense || dense.isSplat() || !weightType || weightType.getRank() != 2 ||
        weightType.getElementTypeBitWidth() % 8 != 0)
      return failure();
    Value source = transpose.getDpsInputOperand(0)->get();
    auto sourceType = cast<RankedTensorType>(source.getType());
    ArrayRef<int64_t> sourceShape = sourceType.getShape();
    if (ShapedType::isDynamicShape(sourceShape.drop_front()))
      return failure();
    // Transpose result dim p(j) is source dim j.
    SmallVector<int64_t> resultShape(rank);
    for (unsigned j = 0; j < rank; ++j)
      resultShape[toSource.getDimPosition(j)] = sourceShape[j];
    int64_t rows = weightType.getDimSize(0);
    int64_t flat = 1;
    for (unsigned j = 1; j < rank; ++j)
      flat *= sourceShape[j];
    if (flat != rows)
      return failure();

    ArrayRef<char> raw = dense.getRawData();
    int64_t rowBytes = weightType.getDimSize(1) * (weightType.getElementTypeBitWidth() / 8);
    if (static_cast<int64_t>(raw.size()) != rows * rowBytes)
      return failure();
    // Row q of W' (source index order) is row sourceRow[q] of W (result
    // index order).
    std::vector<int64_t> sourceRow(rows);
    SmallVector<int64_t> sourceIndex(rank, 0), resultIndex(rank, 0);
    for (int64_t q = 0; q < rows; ++q) {
      int64_t rest = q;
      for (unsigned j = rank - 1; j >= 1; --j) {
        sourceIndex[j] = rest % sourceShape[j];
        rest /= sourceShape[j];
      }
      for (unsigned j = 1; j < rank; ++j)
        resultIndex[toSource.getDimPosition(j)] = sourceIndex[j];
      int64_t r = 0;
      for (unsigned k = 1; k < rank; ++k)
        r = r * resultShape[k] + resultIndex[k];
      sourceRow[q] = r;
    }
    Location loc = matmul.getLoc();
    Value newRows = tensor::CollapseShapeOp::create(rewriter, loc, source, groups);
    // A transpose that only moves unit dims (an attention output [1, H, 1,
    // D] to [1, 1, H, D]) leaves the rows in order: the weight stays the
    // model's constant under its own name (so that a GGUF or quantized
    // weight still matches it).
    bool rowsInOrder = true;
    for (int64_t q = 0; q < rows; ++q)
      rowsInOrder = rowsInOrder && sourceRow[q] == q;
    if (rowsInOrder) {
      rewriter.modifyOpInPlace(matmul, [&] { matmul.getDpsInputOperand(0)->set(newRows); });
      return success();
    }
    std::vector<char> permuted(raw.size());
    for (int64_t q = 0; q < rows; ++q)
      std::memcpy(permuted.data() + q * rowBytes, raw.data() + sourceRow[q] * rowBytes, rowBytes);
    auto permutedAttr = DenseElementsAttr::getFromRawBuffer(weightType, permuted);
    auto newWeights = arith::ConstantOp::create(rewriter, loc, permutedAttr);
    // As a torch expression: W viewed with the transposed dims, permuted to
    // the source's order, flattened again.
    std::string view, order;
    for (unsigned k = 1; k < rank; ++k) {
      view += std::to_string(resultShape[k]) + ",";
      order += std::to_string(toSource.getDimPosition(k) - 1) + ",";
    }
    std::string n = std::to_string(weightType.getDimSize(1));
    deriveParameterName(weights, newWeights,
                        ".reshape(" + view + n + ").permute(" + order + std::to_string(rank - 1) +
                            ").reshape(" + std::to_string(rows) + "," + n + ")");
    rewriter.modifyOpInPlace(matmul, [&] {
      matmul.getDpsInputOperand(0)->set(newRows);
      matmul.getDpsInputOperand(1)->set(newWeights);
    });
    return success();
  }
};

} // namespace

void populateTransposeEliminationPatterns(RewritePatternSet &patterns) {
  patterns.add<ExtractThroughTranspose, MatmulThroughFlattenedTranspose>(
      patterns.getContext());
}

} // namespace turbine::compiler
