//===- MatmulEpilogueInPlace.cpp - Matmul epilogues on the result in place ===//
//
// See MatmulEpilogueInPlace.h. Before: the matmul accumulates into a
// tensor.empty (a malloc'd tile once bufferized) and the epilogue reads it
// and writes the output. After: the epilogue's destination is the matmul's
// result, so both write one buffer, the output's.
//===----------------------------------------------------------------------===//
#include "targets/cpu/MatmulEpilogueInPlace.h"
#include "targets/cpu/MatmulDataTiling.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/IRMapping.h"

using namespace mlir;

namespace turbine::compiler {
namespace {

bool isMatmulProducer(Operation *op) {
  return isa_and_nonnull<linalg::MatmulOp, linalg::BatchMatmulOp>(op) ||
         (op && isPackedMatmul(op));
}

/// The input operand of `epilogue` that can become its destination, or null.
OpOperand *matmulOperandToWriteInPlace(linalg::GenericOp epilogue) {
  if (!epilogue.hasPureTensorSemantics() || epilogue.getNumResults() != 1 ||
      epilogue.getNumParallelLoops() != epilogue.getNumLoops())
    return nullptr;
  OpOperand *init = epilogue.getDpsInitOperand(0);
  if (!epilogue.getMatchingIndexingMap(init).isIdentity() ||
      epilogue.payloadUsesValueFromOperand(init))
    return nullptr;
  for (OpOperand *input : epilogue.getDpsInputOperands()) {
    Value value = input->get();
    if (!isMatmulProducer(value.getDefiningOp()) || !value.hasOneUse() ||
        value.getType() != init->get().getType() ||
        !epilogue.getMatchingIndexingMap(input).isIdentity())
      continue;
    return input;
  }
  return nullptr;
}

} // namespace

int makeMatmulEpiloguesInPlace(RewriterBase &rewriter, func::FuncOp kernel) {
  SmallVector<std::pair<linalg::GenericOp, OpOperand *>> candidates;
  kernel.walk([&](linalg::GenericOp op) {
    if (OpOperand *operand = matmulOperandToWriteInPlace(op))
      candidates.push_back({op, operand});
  });
  for (auto [epilogue, matmulOperand] : candidates) {
    unsigned matmulInput = matmulOperand->getOperandNumber();
    Value matmulResult = matmulOperand->get();
    SmallVector<Value> inputs;
    SmallVector<AffineMap> maps;
    for (OpOperand *input : epilogue.getDpsInputOperands()) {
      if (input->getOperandNumber() == matmulInput)
        continue;
      inputs.push_back(input->get());
      maps.push_back(epilogue.getMatchingIndexingMap(input));
    }
    maps.push_back(epilogue.getMatchingIndexingMap(epilogue.getDpsInitOperand(0)));
    rewriter.setInsertionPoint(epilogue);
    auto inPlace = linalg::GenericOp::create(
        rewriter, epilogue.getLoc(), epilogue.getResultTypes(), inputs,
        ValueRange{matmulResult}, maps, epilogue.getIteratorTypesArray());
    inPlace->setDiscardableAttrs(epilogue->getDiscardableAttrDictionary());
    // The body: the matmul's block argument becomes the destination's.
    Block *oldBody = epilogue.getBody();
    SmallVector<Type> argTypes;
    SmallVector<Location> argLocs;
    for (BlockArgument arg : oldBody->getArguments())
      if (arg.getArgNumber() != matmulInput) {
        argTypes.push_back(arg.getType());
        argLocs.push_back(arg.getLoc());
      }
    Block *body = rewriter.createBlock(&inPlace.getRegion(), {}, argTypes, argLocs);
    IRMapping mapping;
    unsigned next = 0;
    for (BlockArgument arg : oldBody->getArguments())
      if (arg.getArgNumber() != matmulInput)
        mapping.map(arg, body->getArgument(next++));
    mapping.map(oldBody->getArgument(matmulInput), body->getArguments().back());
    rewriter.setInsertionPointToStart(body);
    for (Operation &op : *oldBody)
      rewriter.clone(op, mapping);
    rewriter.replaceOp(epilogue, inPlace->getResults());
  }
  return static_cast<int>(candidates.size());
}

} // namespace turbine::compiler
