//===- MatmulOps.cpp - ONNX Gemm/MatMul/Einsum/Det -> linalg -------------===//
//
// Contractions: Gemm and MatMul become linalg.matmul / linalg.batch_matmul
// (constant B operands are transposed at import time so no runtime transpose
// is needed; N-d operands broadcast their batch dims), Einsum a
// linalg.generic over its index letters, Det an LU factorization in a
// generic.
//===----------------------------------------------------------------------===//
#include "ImportContext.h"

#include <algorithm>
#include <cctype>
#include <limits>
#include <map>

using namespace mlir;

namespace turbine::onnx_frontend {
namespace {

RankedTensorType tensorType(Value v) { return cast<RankedTensorType>(v.getType()); }

/// Transposes a 2-D constant at import time.
DenseElementsAttr transposeConstant2D(DenseElementsAttr attr) {
  auto type = attr.getType();
  int64_t rows = type.getDimSize(0), cols = type.getDimSize(1);
  auto newType = RankedTensorType::get({cols, rows}, type.getElementType());
  if (attr.isSplat())
    return DenseElementsAttr::get(newType, attr.getSplatValue<Attribute>());
  if (type.getElementType().isInteger(1)) {
    SmallVector<bool> src(attr.getValues<bool>()), dst(src.size());
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t c = 0; c < cols; ++c)
        dst[c * rows + r] = src[r * cols + c];
    return DenseElementsAttr::get(newType, dst);
  }
  ArrayRef<char> raw = attr.getRawData();
  size_t width = type.getElementType().getIntOrFloatBitWidth() / 8;
  std::vector<char> out(raw.size());
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c)
      std::memcpy(&out[(c * rows + r) * width], &raw[(r * cols + c) * width], width);
  return DenseElementsAttr::getFromRawBuffer(newType, ArrayRef<char>(out.data(), out.size()));
}

/// Zero of the element type of `v`.
Value zeroOf(ImportContext &ctx, Type elementType) { return ctx.scalarConstant(elementType, 0); }

/// linalg.matmul of 2-D a [M,K] and b [K,N] into a zero-filled init.
Value matmul2D(ImportContext &ctx, Value a, Value b) {
  Type et = tensorType(a).getElementType();
  SmallVector<OpFoldResult> sizes{ctx.dim(a, 0), ctx.dim(b, 1)};
  Value init = ctx.filled(sizes, zeroOf(ctx, et));
  Value r = linalg::MatmulOp::create(ctx.builder, ctx.loc, ValueRange{a, b}, ValueRange{init})
                .getResult(0);
  ctx.recordDims(r, sizes);
  return r;
}

LogicalResult convertGemm(ImportContext &ctx, const onnx::NodeProto &node) {
  if (node.input_size() < 2)
    return ctx.fail(node, "expects at least 2 inputs");
  float alpha = ctx.floatAttr(node, "alpha", 1.0f), beta = ctx.floatAttr(node, "beta", 1.0f);
  bool transA = ctx.intAttr(node, "transA", 0), transB = ctx.intAttr(node, "transB", 0);
  auto a = ctx.getTensor(node, node.input(0));
  if (failed(a))
    return failure();
  Value bValue;
  if (auto constB = ctx.getConstant(node.input(1)); constB && transB && constB->getType().getRank() == 2) {
    bValue = arith::ConstantOp::create(ctx.builder, ctx.loc, transposeConstant2D(*constB));
    transB = false;
  } else {
    auto b = ctx.getTensor(node, node.input(1));
    if (failed(b))
      return failure();
    bValue = *b;
  }
  if (tensorType(*a).getRank() != 2 || tensorType(bValue).getRank() != 2)
    return ctx.fail(node, "A and B must be 2-D");
  if (!isa<FloatType>(tensorType(*a).getElementType()))
    return ctx.unsupported(node, "only floating-point Gemm is supported");
  if (tensorType(bValue).getElementType() != tensorType(*a).getElementType())
    return ctx.fail(node, "A and B must have one element type");
  Value aValue = transA ? ctx.transpose(*a, {1, 0}) : *a;
  if (transB)
    bValue = ctx.transpose(bValue, {1, 0});
  // One K (regress-gemm-k-mismatch; checked at run time when dynamic).
  if (failed(ctx.check(node, ctx.compare(arith::CmpIPredicate::eq, ctx.dim(aValue, 1), ctx.dim(bValue, 0)),
                       "A's K must equal B's K")))
    return failure();
  Value acc = matmul2D(ctx, aValue, bValue);
  bool hasC = ImportContext::hasInput(node, 2) && beta != 0.0f;
  if (!hasC && alpha == 1.0f) {
    ctx.setValue(node.output(0), acc);
    return success();
  }
  SmallVector<Value> operands{acc};
  if (hasC) {
    auto c = ctx.getTensor(node, node.input(2));
    if (failed(c))
      return failure();
    // Another type made IR that did not verify (found by the onnx fuzzer:
    // fuzz/corpus/onnx/regress-gemm-c-type).
    if (tensorType(*c).getElementType() != tensorType(*a).getElementType())
      return ctx.fail(node, "C must have A's element type");
    operands.push_back(*c);
  }
  Type et = tensorType(acc).getElementType();
  auto r = ctx.elementwise(node, operands, et, [&](OpBuilder &b, Location l, ValueRange args) {
    Value v = args[0];
    if (alpha != 1.0f)
      v = arith::MulFOp::create(b, l, v, arith::ConstantOp::create(b, l, b.getFloatAttr(et, alpha)));
    if (args.size() > 1) {
      Value c = args[1];
      if (beta != 1.0f)
        c = arith::MulFOp::create(b, l, c, arith::ConstantOp::create(b, l, b.getFloatAttr(et, beta)));
      v = arith::AddFOp::create(b, l, v, c);
    }
    return v;
  });
  if (failed(r))
    return failure();
  ctx.setValue(node.output(0), *r);
  return success();
}

/// Broadcasts `input` to `sizes` (NumPy rules) with a generic.
Value broadcastTensor(ImportContext &ctx, Value input, ArrayRef<OpFoldResult> sizes) {
  auto type = tensorType(input);
  int64_t rank = sizes.size();
  SmallVector<AffineExpr> exprs;
  bool needed = type.getRank() != rank;
  for (int64_t k = 0; k < type.getRank(); ++k) {
    int64_t d = k + rank - type.getRank();
    bool one = !type.isDynamicDim(k) && type.getDimSize(k) == 1 &&
               ctx.toSymDim(sizes[d]) != SymDim::of(1);
    needed |= one;
    exprs.push_back(one ? ctx.builder.getAffineConstantExpr(0) : ctx.builder.getAffineDimExpr(d));
  }
  if (!needed)
    return input;
  Value init = ctx.empty(sizes, type.getElementType());
  SmallVector<AffineMap> maps{AffineMap::get(rank, 0, exprs, &ctx.context),
                              ctx.builder.getMultiDimIdentityMap(rank)};
  SmallVector<utils::IteratorType> iterators(rank, utils::IteratorType::parallel);
  auto g = linalg::GenericOp::create(ctx.builder, ctx.loc, TypeRange{init.getType()},
                                     ValueRange{input}, ValueRange{init}, maps, iterators,
                                     [](OpBuilder &b, Location l, ValueRange args) {
                                       linalg::YieldOp::create(b, l, args[0]);
                                     });
  ctx.recordDims(g.getResult(0), sizes);
  return g.getResult(0);
}

LogicalResult convertMatMul(ImportContext &ctx, const onnx::NodeProto &node) {
  if (node.input_size() != 2)
    return ctx.fail(node, "expects 2 inputs");
  auto a = ctx.getTensor(node, node.input(0));
  auto b = ctx.getTensor(node, node.input(1));
  if (failed(a) || failed(b))
    return failure();
  Value lhs = *a, rhs = *b;
  Type et = tensorType(lhs).getElementType();
  if (!isa<FloatType>(et) || tensorType(rhs).getElementType() != et)
    return ctx.unsupported(node, "only floating-point operands of one type are supported");
  int64_t ra = tensorType(lhs).getRank(), rb = tensorType(rhs).getRank();
  if (ra == 0 || rb == 0)
    return ctx.fail(node, "operands must have rank >= 1");
  // 1-D operands are promoted to matrices and the unit dim removed after.
  bool squeezeM = false, squeezeN = false;
  if (ra == 1) {
    lhs = ctx.reshape(lhs, {ctx.builder.getIndexAttr(1), ctx.dim(lhs, 0)});
    squeezeM = true;
    ra = 2;
  }
  if (rb == 1) {
    rhs = ctx.reshape(rhs, {ctx.dim(rhs, 0), ctx.builder.getIndexAttr(1)});
    squeezeN = true;
    rb = 2;
  }
  SmallVector<OpFoldResult> aDims = ctx.dims(lhs), bDims = ctx.dims(rhs);
  OpFoldResult m = aDims[ra - 2], k = aDims[ra - 1], n = bDims[rb - 1];
  // One K (checked at run time when dynamic; a static mismatch made IR that
  // did not verify: found by the onnx fuzzer, regress-matmul-k-mismatch).
  if (failed(ctx.check(node, ctx.compare(arith::CmpIPredicate::eq, k, bDims[rb - 2]),
                       "A's last dim (K) must equal B's second-to-last dim")))
    return failure();
  SmallVector<OpFoldResult> aBatch(aDims.begin(), aDims.end() - 2);
  SmallVector<OpFoldResult> bBatch(bDims.begin(), bDims.end() - 2);
  Value result;
  SmallVector<OpFoldResult> outSizes;
  if (rb == 2) {
    // [..., M, K] x [K, N]: fold the batch dims into M and use one matmul.
    SmallVector<OpFoldResult> rows(aBatch);
    rows.push_back(m);
    OpFoldResult flatRows = rows.size() == 1 ? rows[0] : OpFoldResult();
    if (!flatRows) {
      int64_t c = 1;
      Value dyn;
      for (OpFoldResult r : rows) {
        SymDim d = ctx.toSymDim(r);
        if (d.isConstant())
          c *= d.constant;
        else
          dyn = dyn ? (Value)arith::MulIOp::create(ctx.builder, ctx.loc, dyn, d.value) : d.value;
      }
      if (!dyn)
        flatRows = ctx.builder.getIndexAttr(c);
      else
        flatRows = c == 1 ? (OpFoldResult)dyn
                          : (OpFoldResult)(Value)arith::MulIOp::create(ctx.builder, ctx.loc, dyn,
                                                                       ctx.indexConstant(c));
    }
    Value flat = ctx.reshape(lhs, {flatRows, k});
    result = matmul2D(ctx, flat, rhs);
    outSizes = rows;
    outSizes.push_back(n);
    result = ctx.reshape(result, outSizes);
  } else {
    // Broadcast the batch dims, collapse them to one and use batch_matmul.
    int64_t batchRank = std::max(aBatch.size(), bBatch.size());
    SmallVector<OpFoldResult> batch;
    for (int64_t d = 0; d < batchRank; ++d) {
      int64_t ia = d - (batchRank - (int64_t)aBatch.size());
      int64_t ib = d - (batchRank - (int64_t)bBatch.size());
      std::optional<SymDim> da, db;
      if (ia >= 0)
        da = ctx.toSymDim(aBatch[ia]);
      if (ib >= 0)
        db = ctx.toSymDim(bBatch[ib]);
      if (!da || (da->isConstant() && da->constant == 1 && db))
        batch.push_back(ctx.toFoldResult(*db));
      else if (!db || (db->isConstant() && db->constant == 1))
        batch.push_back(ctx.toFoldResult(*da));
      else if (da->isConstant() && db->isConstant() && da->constant != db->constant)
        return ctx.fail(node, "batch dims are not broadcastable");
      else
        batch.push_back(ctx.toFoldResult(da->isConstant() ? *da : *db));
    }
    SmallVector<OpFoldResult> aFull(batch), bFull(batch);
    aFull.append({m, k});
    bFull.append({k, n});
    lhs = broadcastTensor(ctx, lhs, aFull);
    rhs = broadcastTensor(ctx, rhs, bFull);
    int64_t bc = 1;
    Value dyn;
    for (OpFoldResult r : batch) {
      SymDim d = ctx.toSymDim(r);
      if (d.isConstant())
        bc *= d.constant;
      else
        dyn = dyn ? (Value)arith::MulIOp::create(ctx.builder, ctx.loc, dyn, d.value) : d.value;
    }
    OpFoldResult flatBatch =
        !dyn ? (OpFoldResult)ctx.builder.getIndexAttr(bc)
             : (bc == 1 ? (OpFoldResult)dyn
                        : (OpFoldResult)(Value)arith::MulIOp::create(ctx.builder, ctx.loc, dyn,
                                                                     ctx.indexConstant(bc)));
    Value a3 = ctx.reshape(lhs, {flatBatch, m, k});
    Value b3 = ctx.reshape(rhs, {flatBatch, k, n});
    SmallVector<OpFoldResult> sizes3{flatBatch, m, n};
    Value init = ctx.filled(sizes3, zeroOf(ctx, et));
    result = linalg::BatchMatmulOp::create(ctx.builder, ctx.loc, ValueRange{a3, b3},
                                           ValueRange{init})
                 .getResult(0);
    ctx.recordDims(result, sizes3);
    outSizes = batch;
    outSizes.append({m, n});
    result = ctx.reshape(result, outSizes);
  }
  if (squeezeM || squeezeN) {
    SmallVector<OpFoldResult> finalSizes(outSizes.begin(), outSizes.end() - 2);
    if (!squeezeM)
      finalSizes.push_back(outSizes[outSizes.size() - 2]);
    if (!squeezeN)
      finalSizes.push_back(outSizes.back());
    result = ctx.reshape(result, finalSizes);
  }
  ctx.setValue(node.output(0), result);
  return success();
}

/// Det (opset 11) of [*, M, M] with static M <= 4: a generic over the batch
/// dims evaluating the Leibniz formula on the M*M extracted elements.
LogicalResult convertDet(ImportContext &ctx, const onnx::NodeProto &node) {
  auto x = ctx.getTensor(node, node.input(0));
  if (failed(x))
    return failure();
  auto type = tensorType(*x);
  int64_t rank = type.getRank();
  Type et = type.getElementType();
  if (!isa<FloatType>(et))
    return ctx.unsupported(node, "only floating-point inputs are supported");
  if (rank < 2 || type.isDynamicDim(rank - 1) || type.isDynamicDim(rank - 2) ||
      type.getDimSize(rank - 1) != type.getDimSize(rank - 2))
    return ctx.fail(node, "input must be [*, M, M] with static M");
  int64_t m = type.getDimSize(rank - 1);
  if (m > 4)
    return ctx.unsupported(node, "matrices larger than 4x4");
  int64_t batchRank = rank - 2;
  SmallVector<OpFoldResult> sizes;
  for (int64_t d = 0; d < batchRank; ++d)
    sizes.push_back(ctx.dim(*x, d));
  Value init = ctx.empty(sizes, et);
  SmallVector<utils::IteratorType> parallel(batchRank, utils::IteratorType::parallel);
  Value source = *x;
  Value result = linalg::GenericOp::create(
                     ctx.builder, ctx.loc, TypeRange{init.getType()}, ValueRange{}, ValueRange{init},
                     SmallVector<AffineMap>{ctx.builder.getMultiDimIdentityMap(batchRank)}, parallel,
                     [&](OpBuilder &b, Location l, ValueRange) {
                       SmallVector<Value> batch;
                       for (int64_t d = 0; d < batchRank; ++d)
                         batch.push_back(linalg::IndexOp::create(b, l, d));
                       auto at = [&](int64_t i, int64_t j) -> Value {
                         SmallVector<Value> idx(batch);
                         idx.push_back(arith::ConstantIndexOp::create(b, l, i));
                         idx.push_back(arith::ConstantIndexOp::create(b, l, j));
                         return tensor::ExtractOp::create(b, l, source, idx);
                       };
                       SmallVector<SmallVector<Value>> a(m);
                       for (int64_t i = 0; i < m; ++i)
                         for (int64_t j = 0; j < m; ++j)
                           a[i].push_back(at(i, j));
                       SmallVector<int64_t> perm;
                       for (int64_t i = 0; i < m; ++i)
                         perm.push_back(i);
                       Value det = arith::ConstantOp::create(b, l, b.getFloatAttr(et, m == 0 ? 1.0 : 0.0));
                       if (m > 0) {
                         do {
                           int64_t inversions = 0;
                           for (int64_t i = 0; i < m; ++i)
                             for (int64_t j = i + 1; j < m; ++j)
                               inversions += perm[i] > perm[j];
                           Value term = a[0][perm[0]];
                           for (int64_t i = 1; i < m; ++i)
                             term = arith::MulFOp::create(b, l, term, a[i][perm[i]]);
                           det = inversions % 2 ? (Value)arith::SubFOp::create(b, l, det, term)
                                                : (Value)arith::AddFOp::create(b, l, det, term);
                         } while (std::next_permutation(perm.begin(), perm.end()));
                       }
                       linalg::YieldOp::create(b, l, det);
                     })
                     .getResult(0);
  ctx.recordDims(result, sizes);
  ctx.setValue(node.output(0), result);
  return success();
}

/// Einsum (opset 12) as one linalg.generic: one loop per label (ellipsis
/// dims first, then letters in order of appearance), inputs read through
/// their label maps (a repeated label reads a diagonal), product of the
/// inputs accumulated into the zero-filled output; labels absent from the
/// output are reduction loops. Implicit output: ellipsis dims, then the
/// letters appearing exactly once in alphabetical order. Ellipsis dims must
/// have the same count in every operand (no broadcasting of size-1 dims).
LogicalResult convertEinsum(ImportContext &ctx, const onnx::NodeProto &node) {
  std::string equation;
  for (char c : ctx.stringAttr(node, "equation", ""))
    if (c != ' ')
      equation.push_back(c);
  if (equation.empty())
    return ctx.fail(node, "missing equation");
  SmallVector<Value> operands;
  for (int i = 0; i < node.input_size(); ++i) {
    auto v = ctx.getTensor(node, node.input(i));
    if (failed(v))
      return failure();
    operands.push_back(*v);
  }
  if (operands.empty())
    return ctx.fail(node, "expects at least one input");
  Type et = cast<RankedTensorType>(operands[0].getType()).getElementType();
  for (Value v : operands)
    if (cast<RankedTensorType>(v.getType()).getElementType() != et)
      return ctx.fail(node, "inputs must have the same element type");
  if (!isa<FloatType>(et) && !isa<IntegerType>(et))
    return ctx.unsupported(node, "unsupported element type");
  size_t arrow = equation.find("->");
  std::string lhs = equation.substr(0, arrow);
  std::optional<std::string> rhs;
  if (arrow != std::string::npos)
    rhs = equation.substr(arrow + 2);
  SmallVector<std::string> terms;
  {
    std::string cur;
    for (char c : lhs) {
      if (c == ',') {
        terms.push_back(cur);
        cur.clear();
      } else {
        cur.push_back(c);
      }
    }
    terms.push_back(cur);
  }
  if (terms.size() != operands.size())
    return ctx.fail(node, "equation has " + std::to_string(terms.size()) + " operands, node has " +
                              std::to_string(operands.size()));
  // Parses a term into labels: letters, or -1-k for the k-th ellipsis dim.
  int64_t ellipsisCount = -1;
  auto parse = [&](const std::string &term, int64_t rank, SmallVector<int> &labels) -> LogicalResult {
    size_t dots = term.find("...");
    std::string letters = term;
    if (dots != std::string::npos)
      letters.erase(dots, 3);
    for (char c : letters)
      if (!std::isalpha((unsigned char)c))
        return ctx.fail(node, std::string("invalid character '") + c + "' in equation");
    int64_t e = 0;
    if (dots != std::string::npos && rank < 0) {
      e = std::max<int64_t>(ellipsisCount, 0); // the output term
    } else if (dots != std::string::npos) {
      e = rank - (int64_t)letters.size();
      if (e < 0)
        return ctx.fail(node, "term '" + term + "' does not match its input rank");
      if (ellipsisCount >= 0 && ellipsisCount != e)
        return ctx.unsupported(node, "ellipsis with different ranks across operands (broadcasting)");
      ellipsisCount = e;
    } else if ((int64_t)letters.size() != rank && rank >= 0) {
      return ctx.fail(node, "term '" + term + "' does not match its input rank");
    }
    for (size_t k = 0; k < term.size();) {
      if (term.compare(k, 3, "...") == 0) {
        for (int64_t j = 0; j < e; ++j)
          labels.push_back(-1 - (int)j);
        k += 3;
      } else {
        labels.push_back(term[k]);
        ++k;
      }
    }
    return success();
  };
  SmallVector<SmallVector<int>> inLabels(operands.size());
  for (auto [k, term] : llvm::enumerate(terms))
    if (failed(parse(term, cast<RankedTensorType>(operands[k].getType()).getRank(), inLabels[k])))
      return failure();
  SmallVector<int> outLabels;
  if (rhs) {
    if (rhs->find("...") != std::string::npos && ellipsisCount < 0)
      return ctx.fail(node, "output uses '...' but no input does");
    if (failed(parse(*rhs, -1, outLabels)))
      return failure();
  } else {
    for (int64_t j = 0; j < std::max<int64_t>(ellipsisCount, 0); ++j)
      outLabels.push_back(-1 - (int)j);
    std::map<int, int> counts;
    for (auto &ls : inLabels)
      for (int l : ls)
        if (l >= 0)
          ++counts[l];
    for (auto [l, n] : counts)
      if (n == 1)
        outLabels.push_back(l);
  }
  // Loop dims: ellipsis dims, then letters in order of first appearance.
  SmallVector<int> loops;
  for (int64_t j = 0; j < std::max<int64_t>(ellipsisCount, 0); ++j)
    loops.push_back(-1 - (int)j);
  for (auto &ls : inLabels)
    for (int l : ls)
      if (l >= 0 && !llvm::is_contained(loops, l))
        loops.push_back(l);
  auto loopOf = [&](int label) { return (int64_t)(llvm::find(loops, label) - loops.begin()); };
  for (auto [k, l] : llvm::enumerate(outLabels)) {
    if (!llvm::is_contained(loops, l))
      return ctx.fail(node, "output label does not appear in the inputs");
    if (llvm::is_contained(ArrayRef<int>(outLabels).take_front(k), l))
      return ctx.fail(node, "output label repeated");
  }
  // Every occurrence of a label has one size (checked at run time when
  // dynamic; a static mismatch made IR that did not verify:
  // regress-einsum-label-sizes).
  for (int label : loops) {
    OpFoldResult first;
    for (auto [k, ls] : llvm::enumerate(inLabels))
      for (auto [d, l] : llvm::enumerate(ls)) {
        if (l != label)
          continue;
        OpFoldResult size = ctx.dim(operands[k], d);
        if (!first)
          first = size;
        else if (failed(ctx.check(node, ctx.compare(arith::CmpIPredicate::eq, size, first),
                                  "a label's dims must have one size")))
          return failure();
      }
  }
  int64_t numLoops = loops.size();
  SmallVector<AffineMap> maps;
  for (auto &ls : inLabels) {
    SmallVector<AffineExpr> exprs;
    for (int l : ls)
      exprs.push_back(ctx.builder.getAffineDimExpr(loopOf(l)));
    maps.push_back(AffineMap::get(numLoops, 0, exprs, &ctx.context));
  }
  SmallVector<AffineExpr> outExprs;
  SmallVector<OpFoldResult> outSizes;
  for (int l : outLabels) {
    outExprs.push_back(ctx.builder.getAffineDimExpr(loopOf(l)));
    for (auto [k, ls] : llvm::enumerate(inLabels)) {
      auto it = llvm::find(ls, l);
      if (it != ls.end()) {
        outSizes.push_back(ctx.dim(operands[k], it - ls.begin()));
        break;
      }
    }
  }
  maps.push_back(AffineMap::get(numLoops, 0, outExprs, &ctx.context));
  SmallVector<utils::IteratorType> iterators;
  for (int l : loops)
    iterators.push_back(llvm::is_contained(outLabels, l) ? utils::IteratorType::parallel
                                                         : utils::IteratorType::reduction);
  bool isFloat = isa<FloatType>(et);
  Value init = ctx.filled(outSizes, ctx.scalarConstant(et, 0));
  Value result = linalg::GenericOp::create(
                     ctx.builder, ctx.loc, TypeRange{init.getType()}, operands, ValueRange{init}, maps, iterators,
                     [&](OpBuilder &b, Location l, ValueRange a) {
                       Value prod = a[0];
                       for (size_t k = 1; k + 1 < a.size(); ++k)
                         prod = isFloat ? (Value)arith::MulFOp::create(b, l, prod, a[k])
                                        : (Value)arith::MulIOp::create(b, l, prod, a[k]);
                       Value acc = a.back();
                       linalg::YieldOp::create(b, l, isFloat ? (Value)arith::AddFOp::create(b, l, acc, prod)
                                                             : (Value)arith::AddIOp::create(b, l, acc, prod));
                     })
                     .getResult(0);
  ctx.recordDims(result, outSizes);
  ctx.setValue(node.output(0), result);
  return success();
}

} // namespace

void registerMatmulOps(OpRegistry &r) {
  r.add("Gemm", convertGemm);
  r.add("MatMul", convertMatMul);
  r.add("Einsum", convertEinsum, 12);
  r.add("Det", convertDet, 11);
}

} // namespace turbine::onnx_frontend
