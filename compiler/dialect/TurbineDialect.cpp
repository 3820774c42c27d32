//===- TurbineDialect.cpp - Registration and verifiers of turbine ops ----===//
#include "turbine/compiler/Dialect/TurbineDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "mlir/IR/OpImplementation.h"
#include "llvm/ADT/Sequence.h"
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
  if (getInPlace().size() > getResults().size())
    return emitOpError("has ") << getInPlace().size() << " in_place operands but only "
                               << getResults().size() << " results";
  for (auto [i, target] : llvm::enumerate(getInPlace()))
    if (target.getType() != getResult(i).getType())
      return emitOpError("result ") << i << " is written in place into a "
                                    << target.getType() << " but has type "
                                    << getResult(i).getType();
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

LogicalResult AttentionOp::verify() {
  auto q = cast<RankedTensorType>(getQuery().getType());
  auto k = cast<RankedTensorType>(getKey().getType());
  auto v = cast<RankedTensorType>(getValue().getType());
  auto compatible = [](int64_t a, int64_t b) {
    return ShapedType::isDynamic(a) || ShapedType::isDynamic(b) || a == b;
  };
  if (!llvm::all_of(llvm::seq<int64_t>(0, 4), [&](int64_t i) {
        return compatible(k.getDimSize(i), v.getDimSize(i));
      }))
    return emitOpError("key ") << k << " and value " << v << " differ in shape";
  if (!compatible(q.getDimSize(0), k.getDimSize(0)))
    return emitOpError("query and key differ in batch: ") << q << " vs " << k;
  if (!compatible(q.getDimSize(3), k.getDimSize(3)))
    return emitOpError("query and key differ in head_dim: ") << q << " vs " << k;
  if (!q.isDynamicDim(1) && !k.isDynamicDim(1) &&
      (k.getDimSize(1) == 0 || q.getDimSize(1) % k.getDimSize(1) != 0))
    return emitOpError("query heads (") << q.getDimSize(1)
                                        << ") are not a multiple of key heads ("
                                        << k.getDimSize(1) << ")";
  auto out = cast<RankedTensorType>(getResult().getType());
  if (!llvm::all_of(llvm::seq<int64_t>(0, 4), [&](int64_t i) {
        return compatible(q.getDimSize(i), out.getDimSize(i));
      }))
    return emitOpError("result ") << out << " does not have the query's shape " << q;
  if (auto m = getMask()) {
    auto mask = cast<RankedTensorType>(m.getType());
    if (!compatible(mask.getDimSize(0), q.getDimSize(2)))
      return emitOpError("mask ") << mask << " does not have the query's " << q.getDimSize(2)
                                  << " rows";
  }
  return success();
}

#define GET_OP_CLASSES
#include "turbine/compiler/Dialect/TurbineOps.cpp.inc"
