//===- VectorReductions.cpp - Inner reductions as vector.reduction -------===//
//
// The generic strategy vectorizes a reduction over the innermost dim (a
// softmax's row max, a layernorm's mean) into vector.multi_reduction ops
// whose only non-unit dim is the reduced one: vector<1x..x64> -> vector<1x..>.
// The InnerParallel multi-reduction lowering that codegen uses (right for
// pooling and outer reductions) turns such a reduction into 64 extracts and a
// chain of 64 scalar ops; for maximumf each is an llvm.maximum with NaN
// handling, which made the transformer's softmax max 20x slower than its sum.
// For kinds whose result does not depend on the order of evaluation (min, max,
// integer add/mul/and/or/xor) this rewrites them into one vector.reduction,
// which LLVM lowers to a log2(n) shuffle tree. Floating add and mul keep
// their sequential order (changing it would change results).
//===----------------------------------------------------------------------===//
#include "targets/cpu/VectorReductions.h"

#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/PatternMatch.h"

using namespace mlir;

namespace turbine::compiler {
namespace {

bool isOrderIndependent(vector::CombiningKind kind) {
  using K = vector::CombiningKind;
  switch (kind) {
  case K::MINUI:
  case K::MINSI:
  case K::MINNUMF:
  case K::MAXUI:
  case K::MAXSI:
  case K::MAXNUMF:
  case K::AND:
  case K::OR:
  case K::XOR:
  case K::MINIMUMF:
  case K::MAXIMUMF:
    return true;
  case K::ADD:
  case K::MUL:
    return false; // integer add/mul would be fine, float ones are not
  }
  return false;
}

struct InnerReductionToVectorReduction
    : OpRewritePattern<vector::MultiDimReductionOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(vector::MultiDimReductionOp op,
                                PatternRewriter &rewriter) const override {
    if (op->getParentOfType<vector::MaskOp>())
      return failure();
    VectorType sourceType = op.getSourceVectorType();
    Type elementType = sourceType.getElementType();
    bool exact = isOrderIndependent(op.getKind()) ||
                 (isa<IntegerType>(elementType) &&
                  (op.getKind() == vector::CombiningKind::ADD ||
                   op.getKind() == vector::CombiningKind::MUL));
    if (!exact || sourceType.isScalable())
      return failure();
    // Exactly one non-unit dim, and it is the one reduced (the others may be
    // reduced or kept: they are all of size 1).
    ArrayRef<int64_t> shape = sourceType.getShape();
    int64_t wide = -1;
    for (int64_t d = 0; d < sourceType.getRank(); ++d) {
      if (shape[d] == 1)
        continue;
      if (wide >= 0)
        return failure();
      wide = d;
    }
    if (wide < 0 || !op.isReducedDim(wide))
      return failure();

    Location loc = op.getLoc();
    auto flatType = VectorType::get({shape[wide]}, elementType);
    Value flat = vector::ShapeCastOp::create(rewriter, loc, flatType, op.getSource());
    Value acc = op.getAcc();
    Value accScalar = acc;
    if (auto accVector = dyn_cast<VectorType>(acc.getType())) {
      SmallVector<int64_t> zeros(accVector.getRank(), 0);
      accScalar = vector::ExtractOp::create(rewriter, loc, acc, zeros);
    }
    Value reduced = vector::ReductionOp::create(rewriter, loc, op.getKind(), flat,
                                                accScalar);
    if (auto resultVector = dyn_cast<VectorType>(op.getType()))
      reduced = vector::BroadcastOp::create(rewriter, loc, resultVector, reduced);
    rewriter.replaceOp(op, reduced);
    return success();
  }
};

} // namespace

void populateInnerReductionPatterns(RewritePatternSet &patterns) {
  patterns.add<InnerReductionToVectorReduction>(patterns.getContext(),
                                                /*benefit=*/2);
}

} // namespace turbine::compiler
