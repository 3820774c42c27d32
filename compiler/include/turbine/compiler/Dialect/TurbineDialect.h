//===- TurbineDialect.h - The turbine dialect (dispatch + kernel ABI) -----===//
//
// C++ side of TurbineOps.td. Included by compiler sources and by the ONNX
// frontend (for !turbine.string and the host string ops): it pulls in MLIR
// headers.
//===----------------------------------------------------------------------===//
#ifndef TURBINE_COMPILER_DIALECT_TURBINEDIALECT_H
#define TURBINE_COMPILER_DIALECT_TURBINEDIALECT_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/Dialect/LLVMIR/LLVMTypes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/Interfaces/DestinationStyleOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "turbine/compiler/Dialect/TurbineOpsDialect.h.inc"

#define GET_TYPEDEF_CLASSES
#include "turbine/compiler/Dialect/TurbineOpsTypes.h.inc"

#define GET_OP_CLASSES
#include "turbine/compiler/Dialect/TurbineOps.h.inc"

#endif // TURBINE_COMPILER_DIALECT_TURBINEDIALECT_H
