//===- LowerPads.cpp - tensor.pad as a gathering linalg.generic -----------===//
//
// Frontends pad with upstream tensor.pad (ONNX Conv/pool pads and Pad,
// TOSA's tosa-to-linalg). Global-opt first lets layout rewrites see the pads
// (ChannelsLastConvolutions.cpp moves a pad to the other side of a
// transpose), then turns every tensor.pad with a constant padding value into
// one linalg.generic over the padded shape: element i reads the source at
// clamp(i - low) and selects the padding value outside. Dispatch formation
// and codegen handle that like any gathering generic.
//===----------------------------------------------------------------------===//
#include "LowerPads.h"
#include "Phases.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/PatternMatch.h"

using namespace mlir;

namespace turbine::compiler {
namespace {

LogicalResult lowerPad(IRRewriter &rewriter, tensor::PadOp pad) {
  Value padValue = pad.getConstantPaddingValue();
  if (!padValue)
    return pad.emitError("tensor.pad whose padding value is not constant");
  rewriter.setInsertionPoint(pad);
  Location loc = pad.getLoc();
  Value source = pad.getSource();
  auto type = cast<RankedTensorType>(pad.getResultType());
  int64_t rank = type.getRank();
  SmallVector<OpFoldResult> low = pad.getMixedLowPad(), high = pad.getMixedHighPad();
  SmallVector<OpFoldResult> sizes;
  SmallVector<Value> sourceSizes, lowValues;
  for (int64_t d = 0; d < rank; ++d) {
    lowValues.push_back(getValueOrCreateConstantIndexOp(rewriter, loc, low[d]));
    sourceSizes.push_back(getValueOrCreateConstantIndexOp(
        rewriter, loc, tensor::getMixedSize(rewriter, loc, source, d)));
    if (!type.isDynamicDim(d)) {
      sizes.push_back(rewriter.getIndexAttr(type.getDimSize(d)));
      continue;
    }
    Value highValue = getValueOrCreateConstantIndexOp(rewriter, loc, high[d]);
    Value grown = arith::AddIOp::create(rewriter, loc, sourceSizes[d], lowValues[d]);
    sizes.push_back(arith::AddIOp::create(rewriter, loc, grown, highValue).getResult());
  }
  Value init = tensor::EmptyOp::create(rewriter, loc, sizes, type.getElementType());
  SmallVector<AffineMap> maps{rewriter.getMultiDimIdentityMap(rank)};
  SmallVector<utils::IteratorType> iterators(rank, utils::IteratorType::parallel);
  auto padded = [&](int64_t d) {
    return !isConstantIntValue(low[d], 0) || !isConstantIntValue(high[d], 0);
  };
  auto generic = linalg::GenericOp::create(
      rewriter, loc, TypeRange{type}, ValueRange{}, ValueRange{init}, maps, iterators,
      [&](OpBuilder &b, Location l, ValueRange) {
        SmallVector<Value> indices;
        Value inside;
        Value zero = arith::ConstantIndexOp::create(b, l, 0);
        Value one = arith::ConstantIndexOp::create(b, l, 1);
        for (int64_t d = 0; d < rank; ++d) {
          Value i = linalg::IndexOp::create(b, l, d);
          if (!padded(d)) {
            indices.push_back(i);
            continue;
          }
          Value shifted = arith::SubIOp::create(b, l, i, lowValues[d]);
          Value geZero = arith::CmpIOp::create(b, l, arith::CmpIPredicate::sge, shifted, zero);
          Value ltSize =
              arith::CmpIOp::create(b, l, arith::CmpIPredicate::slt, shifted, sourceSizes[d]);
          Value ok = arith::AndIOp::create(b, l, geZero, ltSize);
          inside = inside ? arith::AndIOp::create(b, l, inside, ok).getResult() : ok;
          Value last = arith::SubIOp::create(b, l, sourceSizes[d], one);
          indices.push_back(arith::MinSIOp::create(
              b, l, arith::MaxSIOp::create(b, l, shifted, zero), last));
        }
        Value v = tensor::ExtractOp::create(b, l, source, indices);
        if (inside)
          v = arith::SelectOp::create(b, l, inside, v, padValue);
        linalg::YieldOp::create(b, l, v);
      });
  rewriter.replaceOp(pad, generic.getResult(0));
  return success();
}

} // namespace

bool isPadGather(Operation *op) {
  auto generic = dyn_cast<linalg::GenericOp>(op);
  if (!generic || generic.getNumDpsInputs() != 0 || generic.getNumDpsInits() != 1)
    return false;
  auto yield = cast<linalg::YieldOp>(generic.getBody()->getTerminator());
  auto select = yield.getOperand(0).getDefiningOp<arith::SelectOp>();
  if (!select || !select.getTrueValue().getDefiningOp<tensor::ExtractOp>())
    return false;
  Operation *padValue = select.getFalseValue().getDefiningOp();
  return !padValue || !generic.getBody()->findAncestorOpInBlock(*padValue);
}

LogicalResult lowerPadsToGathers(ModuleOp module) {
  SmallVector<tensor::PadOp> pads;
  module.walk([&](tensor::PadOp pad) { pads.push_back(pad); });
  IRRewriter rewriter(module.getContext());
  for (tensor::PadOp pad : pads)
    if (failed(lowerPad(rewriter, pad)))
      return failure();
  return success();
}

} // namespace turbine::compiler
