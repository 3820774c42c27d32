//===- PaddedResults.h - Producers that write their result padded ---------===//
//
// Internal to the compiler library (dispatch formation, codegen): a pad
// gather in front of a full NHWC convolution is replaced by its producer
// writing its result into the interior of a zero-bordered tensor
// (PaddedResults.cpp, the pass turbine-write-pads-in-producers); a pad that
// only feeds a channel-local window op joins that op's kernel instead.
//===----------------------------------------------------------------------===//
#ifndef TURBINE_COMPILER_PADDEDRESULTS_H
#define TURBINE_COMPILER_PADDEDRESULTS_H

#include "mlir/IR/Operation.h"
#include "mlir/IR/Value.h"
#include "mlir/Support/LLVM.h"

namespace turbine::compiler {

/// NHWC pooling and depthwise convolution: each output channel reads only
/// its own input channel, so a workgroup tile of channels reads the window
/// of just those channels and the padded input it computes on the fly is no
/// bigger than its share of a separately padded tensor (plus the halo rows).
/// Full convolutions read every input channel per output channel tile: with
/// the pad fused, each channel tile recomputed the whole padded window, which
/// measured slower than the separate pad kernel (ResNet-18: +50-80 us per 3x3
/// convolution against 3-40 us per pad kernel), so their pads are written by
/// the producer of what they pad instead.
bool isChannelLocalWindow(mlir::Operation *op);

/// A pad gather whose only use is the input of a channel-local window op in
/// the same block: it joins that op's region instead of forming its own.
bool padsOnlyAWindowInput(mlir::Operation *op);

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

#endif // TURBINE_COMPILER_PADDEDRESULTS_H
