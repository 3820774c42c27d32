//===- PadGatherIndex.cpp - Reading a pad gather's source indices ---------===//
//
// See PadGatherIndex.h.
//===----------------------------------------------------------------------===//
#include "PadGatherIndex.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/Matchers.h"

using namespace mlir;

namespace turbine::compiler {

std::optional<PadGatherIndex> matchPadGatherIndex(Value index) {
  if (auto loop = index.getDefiningOp<linalg::IndexOp>())
    return PadGatherIndex{static_cast<int64_t>(loop.getDim()), 0, false};
  auto min = index.getDefiningOp<arith::MinSIOp>();
  if (!min)
    return std::nullopt;
  Value shifted = min.getLhs();
  if (auto max = shifted.getDefiningOp<arith::MaxSIOp>()) {
    if (!matchPattern(max.getRhs(), m_Zero()))
      return std::nullopt;
    shifted = max.getLhs();
  }
  if (auto loop = shifted.getDefiningOp<linalg::IndexOp>())
    return PadGatherIndex{static_cast<int64_t>(loop.getDim()), 0, true};
  auto sub = shifted.getDefiningOp<arith::SubIOp>();
  APInt low;
  if (!sub || !matchPattern(sub.getRhs(), m_ConstantInt(&low)))
    return std::nullopt;
  auto loop = sub.getLhs().getDefiningOp<linalg::IndexOp>();
  if (!loop)
    return std::nullopt;
  return PadGatherIndex{static_cast<int64_t>(loop.getDim()), low.getSExtValue(), true};
}

} // namespace turbine::compiler
