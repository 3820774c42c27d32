//===- ChannelBias.cpp - A per-channel bias added to an NC... tensor -------===//
#include "turbine/frontends/ChannelBias.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"

using namespace mlir;

namespace turbine::frontends {

Value addChannelBias(TensorBuilder &ctx, Value x, Value bias) {
  SmallVector<OpFoldResult> sizes = ctx.dims(x);
  int64_t rank = sizes.size();
  Value init = ctx.empty(sizes, cast<RankedTensorType>(x.getType()).getElementType());
  SmallVector<AffineMap> maps{
      ctx.builder.getMultiDimIdentityMap(rank),
      AffineMap::get(rank, 0, {ctx.builder.getAffineDimExpr(1)}, ctx.builder.getContext()),
      ctx.builder.getMultiDimIdentityMap(rank)};
  SmallVector<utils::IteratorType> iterators(rank, utils::IteratorType::parallel);
  auto g = linalg::GenericOp::create(ctx.builder, ctx.loc, TypeRange{init.getType()},
                                     ValueRange{x, bias}, ValueRange{init}, maps, iterators,
                                     [](OpBuilder &b, Location l, ValueRange args) {
                                       linalg::YieldOp::create(
                                           b, l, (Value)arith::AddFOp::create(b, l, args[0], args[1]));
                                     });
  ctx.recordDims(g.getResult(0), sizes);
  return g.getResult(0);
}

} // namespace turbine::frontends
