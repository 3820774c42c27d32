//===- WorkgroupTiling.cpp - Workgroup tile size heuristics ---------------===//
#include "WorkgroupTiling.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"

using namespace mlir;

namespace turbine::compiler {

static constexpr llvm::StringLiteral kTileSizesAttr = "turbine.workgroup_tiles";
static constexpr llvm::StringLiteral kGridDimsAttr = "turbine.workgroup_dims";

WorkgroupTiling chooseWorkgroupTiling(Value result, bool hasContraction) {
  auto type = cast<RankedTensorType>(result.getType());
  int64_t rank = type.getRank();
  WorkgroupTiling tiling;
  tiling.tileSizes.assign(rank, 0);
  bool reduces = false;
  if (auto linalgOp = result.getDefiningOp<linalg::LinalgOp>())
    reduces = linalgOp.getNumReductionLoops() > 0 && !hasContraction;

  // Preferred tiles for the innermost three dims, innermost first.
  int64_t preferred[3];
  if (hasContraction) {
    preferred[0] = 128; // N
    preferred[1] = 64;  // M
    preferred[2] = 1;   // batch
  } else if (reduces) {
    preferred[0] = 16;
    preferred[1] = 1;
    preferred[2] = 1;
  } else {
    preferred[0] = 256;
    preferred[1] = 8;
    preferred[2] = 1;
  }
  for (int axis = 0; axis < 3 && axis < rank; ++axis) {
    int64_t dim = rank - 1 - axis;
    int64_t tile = preferred[axis];
    if (!type.isDynamicDim(dim))
      tile = std::min(tile, std::max<int64_t>(type.getDimSize(dim), 1));
    tiling.tileSizes[dim] = tile;
    tiling.gridDims[axis] = dim;
  }
  return tiling;
}

void setWorkgroupTiling(func::FuncOp kernel, const WorkgroupTiling &t) {
  Builder b(kernel.getContext());
  kernel->setAttr(kTileSizesAttr, b.getDenseI64ArrayAttr(t.tileSizes));
  kernel->setAttr(kGridDimsAttr,
                  b.getDenseI64ArrayAttr({t.gridDims[0], t.gridDims[1],
                                          t.gridDims[2]}));
}

WorkgroupTiling getWorkgroupTiling(func::FuncOp kernel) {
  WorkgroupTiling t;
  if (auto tiles = kernel->getAttrOfType<DenseI64ArrayAttr>(kTileSizesAttr))
    t.tileSizes.assign(tiles.asArrayRef().begin(), tiles.asArrayRef().end());
  if (auto dims = kernel->getAttrOfType<DenseI64ArrayAttr>(kGridDimsAttr))
    for (int i = 0; i < 3 && i < static_cast<int>(dims.size()); ++i)
      t.gridDims[i] = dims[i];
  return t;
}

} // namespace turbine::compiler
