//===- WorkgroupTiling.h - A kernel's workgroup tiles, kept on the kernel -===//
//
// Dispatch formation asks the target for each region's workgroup tiles
// (Target::workgroupTiling), derives the host's workgroup count from them
// and records them on the kernel function; codegen tiles accordingly.
//===----------------------------------------------------------------------===//
#ifndef TURBINE_COMPILER_DISPATCH_WORKGROUPTILING_H
#define TURBINE_COMPILER_DISPATCH_WORKGROUPTILING_H

#include "turbine/compiler/Target.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace turbine::compiler {

void setWorkgroupTiling(mlir::func::FuncOp kernel, const WorkgroupTiling &t);
WorkgroupTiling getWorkgroupTiling(mlir::func::FuncOp kernel);

} // namespace turbine::compiler

#endif // TURBINE_COMPILER_DISPATCH_WORKGROUPTILING_H
