//===- TextOps.cpp - ONNX TfIdfVectorizer on integer tokens -> linalg -----===//
//
// TfIdfVectorizer (opset 9) over int32/int64 token ids (pool_int64s; string
// pools are refused: string tensors exist only for the host string ops of
// StringOps.cpp). The n-gram pool is
// an attribute, so it becomes constant tables: per pool n-gram its tokens,
// length and output index. Counting follows ONNX Runtime: for every skip
// distance d in 1..max_skip_count+1 and start i, the tokens x[i], x[i+d],
// ..., x[i+(n-1)d] within the row form an n-gram of each length n in
// [min_gram_length, max_gram_length]; unigrams are counted once (not per
// distance). One generic over (row, n-gram, start) counts every pool n-gram
// (the distances and token positions unrolled at import time), a second
// sums the counts into the output positions given by ngram_indexes and
// applies the mode (TF: count, IDF: weight where count > 0, TFIDF:
// count * weight).
//===----------------------------------------------------------------------===//
#include "ImportContext.h"

using namespace mlir;

namespace turbine::onnx_frontend {
namespace {

/// Largest max_skip_count accepted (the distances are unrolled per n-gram).
constexpr int64_t kMaxSkipCount = 64;

LogicalResult convertTfIdfVectorizer(ImportContext &ctx, const onnx::NodeProto &node) {
  using P = arith::CmpIPredicate;
  if (ctx.attr(node, "pool_strings"))
    return ctx.unsupported(node, "pool_strings (string tensors only run in the host string ops; "
                                 "only integer token ids with pool_int64s)");
  auto x = ctx.getTensor(node, node.input(0));
  if (failed(x))
    return failure();
  auto xType = cast<RankedTensorType>(x->getType());
  if (!isa<IntegerType>(xType.getElementType()))
    return ctx.unsupported(node, "input X must hold int32 or int64 token ids (string input is not supported)");
  if (xType.getRank() != 1 && xType.getRank() != 2)
    return ctx.fail(node, "X must be 1-D [C] or 2-D [N, C]");
  std::string mode = ctx.stringAttr(node, "mode", "");
  if (mode != "TF" && mode != "IDF" && mode != "TFIDF")
    return ctx.fail(node, "mode must be TF, IDF or TFIDF, got '" + mode + "'");
  int64_t minGram = ctx.intAttr(node, "min_gram_length", 0), maxGram = ctx.intAttr(node, "max_gram_length", 0);
  int64_t maxSkip = ctx.intAttr(node, "max_skip_count", 0);
  if (minGram < 1 || maxGram < minGram)
    return ctx.fail(node, "needs 1 <= min_gram_length <= max_gram_length");
  if (maxSkip < 0 || maxSkip > kMaxSkipCount)
    return ctx.unsupported(node, "max_skip_count must lie in [0, " + std::to_string(kMaxSkipCount) + "]");
  std::vector<int64_t> counts = ctx.intsAttr(node, "ngram_counts").value_or(std::vector<int64_t>{});
  std::vector<int64_t> indexes = ctx.intsAttr(node, "ngram_indexes").value_or(std::vector<int64_t>{});
  std::vector<int64_t> pool = ctx.intsAttr(node, "pool_int64s").value_or(std::vector<int64_t>{});
  std::vector<double> weights;
  if (const onnx::AttributeProto *w = ctx.attr(node, "weights"))
    weights.assign(w->floats().begin(), w->floats().end());

  // The pool's n-grams: ngram_counts[k] is where the (k+1)-grams start.
  struct Gram {
    std::vector<int64_t> tokens;
    int64_t output;
    double weight;
  };
  std::vector<Gram> grams;
  int64_t outputSize = 0;
  size_t gramNumber = 0;
  for (size_t k = 0; k < counts.size(); ++k) {
    int64_t n = (int64_t)k + 1;
    int64_t begin = counts[k], end = k + 1 < counts.size() ? counts[k + 1] : (int64_t)pool.size();
    if (begin < 0 || end < begin || end > (int64_t)pool.size() || (end - begin) % n != 0)
      return ctx.fail(node, "ngram_counts does not split pool_int64s into n-grams");
    for (int64_t start = begin; start < end; start += n, ++gramNumber) {
      if (gramNumber >= indexes.size())
        return ctx.fail(node, "ngram_indexes has fewer entries than the pool has n-grams");
      int64_t output = indexes[gramNumber];
      if (output < 0)
        return ctx.fail(node, "ngram_indexes must be non-negative");
      outputSize = std::max(outputSize, output + 1);
      if (!weights.empty() && gramNumber >= weights.size())
        return ctx.fail(node, "weights has fewer entries than the pool has n-grams");
      double weight = weights.empty() ? 1.0 : weights[gramNumber];
      if (n >= minGram && n <= maxGram)
        grams.push_back({std::vector<int64_t>(pool.begin() + start, pool.begin() + start + n), output, weight});
    }
  }

  // The output has max(ngram_indexes) + 1 entries, counting entries past the
  // pool's n-grams too (ONNX's reference; found by the onnx fuzzer: 7
  // indexes for 6 n-grams).
  for (int64_t index : indexes)
    outputSize = std::max(outputSize, index + 1);

  OpBuilder &b = ctx.builder;
  Location loc = ctx.loc;
  MLIRContext *mc = &ctx.context;
  Value rows = *x;
  bool oneD = xType.getRank() == 1;
  if (oneD)
    rows = ctx.reshape(rows, {b.getIndexAttr(1), ctx.dim(rows, 0)});
  OpFoldResult batch = ctx.dim(rows, 0), rowLength = ctx.dim(rows, 1);
  Type f32 = b.getF32Type(), i64 = b.getI64Type();
  SmallVector<OpFoldResult> outSizes{batch, b.getIndexAttr(outputSize)};
  Value result;
  if (grams.empty() || outputSize == 0) {
    result = ctx.filled(outSizes, ctx.scalarConstant(f32, 0));
  } else {
    int64_t numGrams = grams.size();
    // Tables: tokens [G, maxGram] (padded), lengths [G].
    std::vector<int64_t> tokenTable(numGrams * maxGram, 0), lengthTable(numGrams);
    for (int64_t g = 0; g < numGrams; ++g) {
      lengthTable[g] = grams[g].tokens.size();
      for (size_t k = 0; k < grams[g].tokens.size(); ++k)
        tokenTable[g * maxGram + k] = grams[g].tokens[k];
    }
    Value tokens = arith::ConstantOp::create(
        b, loc, DenseElementsAttr::get(RankedTensorType::get({numGrams, maxGram}, i64), ArrayRef<int64_t>(tokenTable)));
    Value lengths = arith::ConstantOp::create(
        b, loc, DenseElementsAttr::get(RankedTensorType::get({numGrams}, i64), ArrayRef<int64_t>(lengthTable)));
    Value rowLengthValue = ctx.toIndexValue(rowLength);
    bool xUnsigned = ctx.isUnsigned(node.input(0));
    // counts[row, g] = occurrences of n-gram g in the row.
    SmallVector<OpFoldResult> countSizes{batch, b.getIndexAttr(numGrams)};
    Value countInit = ctx.filled(countSizes, ctx.scalarConstant(f32, 0));
    auto d = [&](unsigned i) { return b.getAffineDimExpr(i); };
    using IT = utils::IteratorType;
    Value countsTensor =
        linalg::GenericOp::create(
            b, loc, TypeRange{countInit.getType()}, ValueRange{rows, lengths}, ValueRange{countInit},
            SmallVector<AffineMap>{AffineMap::get(3, 0, {d(0), d(2)}, mc), AffineMap::get(3, 0, {d(1)}, mc),
                                   AffineMap::get(3, 0, {d(0), d(1)}, mc)},
            SmallVector<IT>{IT::parallel, IT::parallel, IT::reduction},
            [&](OpBuilder &nb, Location l, ValueRange a) {
              Value row = linalg::IndexOp::create(nb, l, 0), g = linalg::IndexOp::create(nb, l, 1);
              Value start = linalg::IndexOp::create(nb, l, 2);
              Value length = a[1];
              auto idx = [&](int64_t v) -> Value { return arith::ConstantIndexOp::create(nb, l, v); };
              auto i64c = [&](int64_t v) -> Value { return arith::ConstantOp::create(nb, l, nb.getI64IntegerAttr(v)); };
              SmallVector<Value> gramTokens;
              for (int64_t k = 0; k < maxGram; ++k)
                gramTokens.push_back(tensor::ExtractOp::create(nb, l, tokens, ValueRange{g, idx(k)}));
              Value isUnigram = arith::CmpIOp::create(nb, l, P::eq, length, i64c(1));
              Value total = arith::ConstantOp::create(nb, l, nb.getF32FloatAttr(0));
              for (int64_t distance = 1; distance <= maxSkip + 1; ++distance) {
                // match: every token k < length equals x[row, start + k * distance] (in the row).
                Value match = arith::ConstantOp::create(nb, l, nb.getBoolAttr(true));
                for (int64_t k = 0; k < maxGram; ++k) {
                  Value position = arith::AddIOp::create(nb, l, start, idx(k * distance));
                  Value inRow = arith::CmpIOp::create(nb, l, P::slt, position, rowLengthValue);
                  Value safe = arith::SelectOp::create(nb, l, inRow, position, idx(0));
                  Value token = convertScalar(nb, l, tensor::ExtractOp::create(nb, l, rows, ValueRange{row, safe}), i64,
                                              xUnsigned);
                  Value same = arith::AndIOp::create(nb, l, inRow,
                                                     arith::CmpIOp::create(nb, l, P::eq, token, gramTokens[k]));
                  Value needed = arith::CmpIOp::create(nb, l, P::slt, i64c(k), length);
                  match = arith::AndIOp::create(
                      nb, l, match, arith::OrIOp::create(nb, l, same, arith::XOrIOp::create(nb, l, needed,
                                                                                          arith::ConstantOp::create(nb, l, nb.getBoolAttr(true)))));
                }
                if (distance > 1) // unigrams count once, not per distance
                  match = arith::AndIOp::create(
                      nb, l, match,
                      arith::XOrIOp::create(nb, l, isUnigram, arith::ConstantOp::create(nb, l, nb.getBoolAttr(true))));
                total = arith::AddFOp::create(nb, l, total, arith::UIToFPOp::create(nb, l, nb.getF32Type(), match));
              }
              linalg::YieldOp::create(nb, l, (Value)arith::AddFOp::create(nb, l, a[2], total));
            })
            .getResult(0);
    ctx.recordDims(countsTensor, countSizes);
    // out[row, o] = sum over n-grams g with output index o of the mode's value.
    std::vector<int64_t> outputTable;
    std::vector<float> weightTable;
    for (const Gram &gram : grams) {
      outputTable.push_back(gram.output);
      weightTable.push_back((float)gram.weight);
    }
    Value outputs = arith::ConstantOp::create(
        b, loc, DenseElementsAttr::get(RankedTensorType::get({numGrams}, i64), ArrayRef<int64_t>(outputTable)));
    Value gramWeights = arith::ConstantOp::create(
        b, loc, DenseElementsAttr::get(RankedTensorType::get({numGrams}, f32), ArrayRef<float>(weightTable)));
    Value outInit = ctx.filled(outSizes, ctx.scalarConstant(f32, 0));
    result = linalg::GenericOp::create(
                 b, loc, TypeRange{outInit.getType()}, ValueRange{countsTensor, outputs, gramWeights},
                 ValueRange{outInit},
                 SmallVector<AffineMap>{AffineMap::get(3, 0, {d(0), d(2)}, mc), AffineMap::get(3, 0, {d(2)}, mc),
                                        AffineMap::get(3, 0, {d(2)}, mc), AffineMap::get(3, 0, {d(0), d(1)}, mc)},
                 SmallVector<IT>{IT::parallel, IT::parallel, IT::reduction},
                 [&](OpBuilder &nb, Location l, ValueRange a) {
                   Value o = arith::IndexCastOp::create(nb, l, i64, linalg::IndexOp::create(nb, l, 1));
                   Value count = a[0], weight = a[2];
                   Value zero = arith::ConstantOp::create(nb, l, nb.getF32FloatAttr(0));
                   Value v = count;
                   if (mode == "IDF")
                     v = arith::SelectOp::create(nb, l, arith::CmpFOp::create(nb, l, arith::CmpFPredicate::OGT, count, zero),
                                                 weight, zero);
                   else if (mode == "TFIDF")
                     v = arith::MulFOp::create(nb, l, count, weight);
                   Value mine = arith::CmpIOp::create(nb, l, P::eq, a[1], o);
                   v = arith::SelectOp::create(nb, l, mine, v, zero);
                   linalg::YieldOp::create(nb, l, (Value)arith::AddFOp::create(nb, l, a[3], v));
                 })
                 .getResult(0);
  }
  ctx.recordDims(result, outSizes);
  if (oneD)
    result = ctx.reshape(result, {b.getIndexAttr(outputSize)});
  ctx.setValue(node.output(0), result);
  return success();
}

} // namespace

void registerTextOps(OpRegistry &r) { r.add("TfIdfVectorizer", convertTfIdfVectorizer, 9); }

} // namespace turbine::onnx_frontend
