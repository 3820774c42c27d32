//===- PaddedResults.h - Producers that write their result padded ---------===//
//
// Internal to the compiler library (dispatch formation, codegen): a pad
// gather in front of a full NHWC convolution is replaced by its producer
// writing its result into the interior of a zero-bordered tensor
// (PaddedResults.cpp).
//===----------------------------------------------------------------------===//
#ifndef TURBINE_COMPILER_LIB_PADDEDRESULTS_H
#define TURBINE_COMPILER_LIB_PADDEDRESULTS_H

#include "mlir/IR/Operation.h"
#include "mlir/IR/Value.h"
#include "mlir/Support/LLVM.h"

namespace turbine::compiler {

/// Host side, before regions form: if `padGather` (isPadGather) pads the
/// result x of a linalg op in its block, rewrites
///   pad(x)  ->  tensor.insert_slice x into fill(pad value, empty(padded))
/// (marked isPaddedResult, joins x's dispatch) and every other use of x to
/// read tensor.extract_slice(padded) (cloned into the consumers' kernels, a
/// view of the padded tensor). Returns whether it rewrote.
bool writePadInProducer(mlir::Operation *padGather);

/// The insert_slice writePadInProducer makes.
bool isPaddedResult(mlir::Operation *op);

/// The interior view writePadInProducer gives x's other consumers.
bool isPaddedResultInterior(mlir::Operation *op);

/// Kernel side, after outlining: the marked insert_slice `paddedResult`
/// becomes the producer writing its result straight into the interior of
/// `output` (the kernel's output binding, a memref) (its destination an extract_slice of it) and the border
/// written by fills of its strips, sized to nothing except in the workgroup
/// whose ids `workgroupIds` are all zero (the border is written once, the
/// interior by the tiles). Fails, leaving the IR as it was, if the producer's
/// destination is not an empty tensor or a fill of one. Returns the new
/// padded value.
mlir::FailureOr<mlir::Value> writePaddedResultInPlace(mlir::Operation *paddedResult,
                                                      mlir::Value output,
                                                      mlir::ValueRange workgroupIds);

} // namespace turbine::compiler

#endif // TURBINE_COMPILER_LIB_PADDEDRESULTS_H
