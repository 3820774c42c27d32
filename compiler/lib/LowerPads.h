//===- LowerPads.h - Recognizing the gathers LowerPads.cpp makes ----------===//
//
// Internal to the compiler library: dispatch formation fuses the pad gathers
// in front of NHWC convolutions and pooling into their dispatch, codegen
// vectorizes them (a pad's gather is contiguous along the innermost dim).
//===----------------------------------------------------------------------===//
#ifndef TURBINE_COMPILER_LIB_LOWERPADS_H
#define TURBINE_COMPILER_LIB_LOWERPADS_H

#include "mlir/IR/Operation.h"

namespace turbine::compiler {

/// True for a linalg.generic that lowerPadsToGathers made of a tensor.pad: no
/// inputs, yields select(in bounds, tensor.extract(source, clamped indices),
/// pad value).
bool isPadGather(mlir::Operation *op);

} // namespace turbine::compiler

#endif // TURBINE_COMPILER_LIB_LOWERPADS_H
