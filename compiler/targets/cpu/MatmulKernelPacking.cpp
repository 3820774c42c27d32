//===- MatmulKernelPacking.cpp - Pack a matmul's B block inside its kernel -===//
//
// See MatmulKernelPacking.h. The scratch is one memref.alloca at the kernel's
// entry (static size: nt/32 x 256 x 32 floats, 128 KiB at most, so a fixed
// part of the kernel's stack frame), seen on tensors through a restrict,
// writable bufferization.to_tensor (one per K tile) so that bufferization
// writes the pack into it in place. Each K tile overwrites it: the pack's generic reads B's rows
// (k outermost, so each row's nt floats are read contiguously) and writes
// them to panel rows.
//===----------------------------------------------------------------------===//
#include "targets/cpu/MatmulKernelPacking.h"
#include "targets/cpu/MatmulDataTiling.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;

namespace turbine::compiler {

Value panelScratchAt(RewriterBase &rewriter, Operation *op, Type elementType,
                     int64_t panels, OpFoldResult depth) {
  auto kernel = op->getParentOfType<func::FuncOp>();
  if (!kernel || panels * kPackedPanelWidth > kKernelPackMaxColumns)
    return {};
  Location loc = op->getLoc();
  // The scratch: Bp[panels][256][32], 64-byte aligned (zmm rows).
  SmallVector<int64_t> scratchShape{panels, kKernelPackMaxDepth,
                                    kPackedPanelWidth};
  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPointToStart(&kernel.front());
  Value scratchBuffer = memref::AllocaOp::create(
      rewriter, loc, MemRefType::get(scratchShape, elementType), ValueRange{},
      rewriter.getI64IntegerAttr(64));

  // This tile's part of it: Bp[panels][depth][32]. The tensor is taken here,
  // in the K loop, not at the alloca: a tensor from outside the loop written
  // in each iteration would look (to bufferization) like a value that later
  // iterations still read, and get copied into a new buffer every time.
  rewriter.setInsertionPoint(op);
  Value scratch = bufferization::ToTensorOp::create(
      rewriter, loc, RankedTensorType::get(scratchShape, elementType),
      scratchBuffer, /*restrict=*/true, /*writable=*/true);
  SmallVector<OpFoldResult> zeros(3, rewriter.getIndexAttr(0));
  SmallVector<OpFoldResult> ones(3, rewriter.getIndexAttr(1));
  SmallVector<OpFoldResult> sizes{rewriter.getIndexAttr(panels), depth,
                                  rewriter.getIndexAttr(kPackedPanelWidth)};
  return tensor::ExtractSliceOp::create(rewriter, loc, scratch, zeros, sizes,
                                        ones);
}

KernelPackedMatmul packMatmulBInKernel(RewriterBase &rewriter,
                                       Operation *op) {
  auto matmul = dyn_cast<linalg::MatmulOp>(op);
  if (!matmul || !matmul.hasPureTensorSemantics())
    return {};
  Value a = matmul.getInputs()[0], b = matmul.getInputs()[1];
  Value init = matmul.getOutputs()[0];
  auto bType = cast<RankedTensorType>(b.getType());
  int64_t depth = bType.getDimSize(0), columns = bType.getDimSize(1);
  if (ShapedType::isDynamic(columns) || columns % kPackedPanelWidth != 0 ||
      columns > kKernelPackMaxColumns ||
      (!ShapedType::isDynamic(depth) && depth > kKernelPackMaxDepth))
    return {};
  Location loc = op->getLoc();
  Type f32 = bType.getElementType();
  int64_t panels = columns / kPackedPanelWidth;
  rewriter.setInsertionPoint(op);
  Value destination = panelScratchAt(rewriter, op, f32, panels,
                                     tensor::getMixedSize(rewriter, loc, b, 0));
  if (!destination)
    return {};

  // B viewed (depth, panels, 32), copied to (panels, depth, 32); loops
  // (k, panel, column).
  auto viewType = RankedTensorType::get({depth, panels, kPackedPanelWidth}, f32);
  Value view = tensor::ExpandShapeOp::create(
      rewriter, loc, viewType, b, SmallVector<ReassociationIndices>{{0}, {1, 2}});
  MLIRContext *ctx = rewriter.getContext();
  AffineExpr k, panel, column;
  bindDims(ctx, k, panel, column);
  SmallVector<AffineMap> maps{AffineMap::get(3, 0, {k, panel, column}, ctx),
                              AffineMap::get(3, 0, {panel, k, column}, ctx)};
  SmallVector<utils::IteratorType> iterators(3, utils::IteratorType::parallel);
  auto pack = linalg::GenericOp::create(
      rewriter, loc, TypeRange{destination.getType()}, ValueRange{view},
      ValueRange{destination}, maps, iterators,
      [](OpBuilder &builder, Location bodyLoc, ValueRange args) {
        linalg::YieldOp::create(builder, bodyLoc, args[0]);
      });

  Operation *contract = nullptr;
  Value result = createPackedMatmul(rewriter, loc, a, pack->getResult(0), init,
                                    &contract);
  rewriter.replaceOp(op, result);
  return {pack, contract};
}

} // namespace turbine::compiler
