//===- TurbineDialect.cpp - Registration and verifiers of turbine ops ----===//
#include "turbine/compiler/Dialect/TurbineDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "mlir/IR/OpImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace turbine::compiler;

#include "turbine/compiler/Dialect/TurbineOpsDialect.cpp.inc"

#define GET_TYPEDEF_CLASSES
#include "turbine/compiler/Dialect/TurbineOpsTypes.cpp.inc"

void TurbineDialect::initialize() {
  addTypes<
#define GET_TYPEDEF_LIST
#include "turbine/compiler/Dialect/TurbineOpsTypes.cpp.inc"
      >();
  addOperations<
#define GET_OP_LIST
#include "turbine/compiler/Dialect/TurbineOps.cpp.inc"
      >();
}

LogicalResult DispatchOp::verify() {
  if (getWorkgroups().size() != 3)
    return emitOpError("expects 3 workgroup counts (x, y, z), got ")
           << getWorkgroups().size();
  int64_t dynamicDims = 0;
  for (Type t : getResultTypes())
    dynamicDims += cast<RankedTensorType>(t).getNumDynamicDims();
  if (dynamicDims != static_cast<int64_t>(getResultDims().size()))
    return emitOpError("results have ")
           << dynamicDims << " dynamic dims but " << getResultDims().size()
           << " result_dims were given";
  return success();
}

LogicalResult BindingOp::verify() {
  auto type = cast<MemRefType>(getType());
  if (type.getNumDynamicDims() != static_cast<int64_t>(getDynamicDims().size()))
    return emitOpError("memref has ")
           << type.getNumDynamicDims() << " dynamic dims but "
           << getDynamicDims().size() << " dims were given";
  if (!type.getLayout().isIdentity())
    return emitOpError("bindings are dense row-major: expected identity layout");
  return success();
}

LogicalResult StringNormalizeOp::verify() {
  StringRef action = getCaseChange();
  if (action != "NONE" && action != "LOWER" && action != "UPPER")
    return emitOpError("case_change must be NONE, LOWER or UPPER, got '")
           << action << "'";
  auto in = cast<RankedTensorType>(getInput().getType());
  auto out = cast<RankedTensorType>(getResult().getType());
  if (in.getRank() != out.getRank() || (in.getRank() != 1 && in.getRank() != 2))
    return emitOpError("takes and gives [C] or [1, C] string tensors");
  if (in.getRank() == 2 && (in.getDimSize(0) > 1 || out.getDimSize(0) > 1))
    return emitOpError("a 2-D input must be [1, C]");
  return success();
}

#define GET_OP_CLASSES
#include "turbine/compiler/Dialect/TurbineOps.cpp.inc"
