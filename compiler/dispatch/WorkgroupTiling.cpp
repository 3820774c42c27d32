//===- WorkgroupTiling.cpp - Workgroup tiles as kernel attributes ---------===//
#include "dispatch/WorkgroupTiling.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"

using namespace mlir;

namespace turbine::compiler {

static constexpr llvm::StringLiteral kTileSizesAttr = "turbine.workgroup_tiles";
static constexpr llvm::StringLiteral kGridDimsAttr = "turbine.workgroup_dims";

void setWorkgroupTiling(func::FuncOp kernel, const WorkgroupTiling &t) {
  Builder b(kernel.getContext());
  kernel->setAttr(kTileSizesAttr, b.getDenseI64ArrayAttr(t.tileSizes));
  kernel->setAttr(kGridDimsAttr,
                  b.getDenseI64ArrayAttr({t.gridDims[0], t.gridDims[1], t.gridDims[2]}));
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
