//===- GatherIndexing.cpp - Where a gathering generic reads its source ----===//
//
// See GatherIndexing.h.
//===----------------------------------------------------------------------===//
#include "targets/cpu/GatherIndexing.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/SetVector.h"

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

SmallVector<Value> evaluateAt(OpBuilder &b, Operation *generic, ValueRange wanted,
                              ValueRange position) {
  Block *body = &generic->getRegion(0).front();
  // The body ops `wanted` depends on, in block order.
  llvm::SetVector<Operation *> needed;
  SmallVector<Value> worklist(wanted.begin(), wanted.end());
  while (!worklist.empty()) {
    Operation *def = worklist.pop_back_val().getDefiningOp();
    if (!def || def->getBlock() != body || !needed.insert(def))
      continue;
    worklist.append(def->operand_begin(), def->operand_end());
  }
  IRMapping mapping;
  for (Operation &op : body->without_terminator()) {
    if (!needed.contains(&op))
      continue;
    if (auto index = dyn_cast<linalg::IndexOp>(op)) {
      mapping.map(index.getResult(), position[index.getDim()]);
      continue;
    }
    b.clone(op, mapping);
  }
  SmallVector<Value> values;
  for (Value v : wanted)
    values.push_back(mapping.lookupOrDefault(v));
  return values;
}

} // namespace turbine::compiler
