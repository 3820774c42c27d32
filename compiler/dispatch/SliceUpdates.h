//===- SliceUpdates.h - Slice updates written in place --------------------===//
//
// A host `tensor.insert_slice` (a KV-cache step: `cache[:, :, pos:pos+t] =
// k`) becomes one kernel that writes only the slice, into the storage of
// the tensor it updates:
//
//  * Host side (the pass turbine-update-slices-in-place, before regions
//    form): bounds asserts for run-time offsets, then
//      %u = tensor.insert_slice %src into %dest[...]
//    becomes
//      %r = linalg.generic {identity} ins(%src) outs(tensor.empty)
//      %u = tensor.insert_slice %r into %dest[...] {turbine.slice_update}
//    where %dest is the global's load itself when the global can be updated
//    in place (see Passes.td), else a fresh copy. Dispatch formation keeps
//    the insert in %r's region and makes its result the dispatch's
//    `in_place` result, bound to %dest's storage.
//  * Kernel side (after outlining): %r's destination becomes the slice of
//    the output binding (writeSliceUpdateInPlace), so its tiles write the
//    slice and the insert bufferizes to nothing.
//===----------------------------------------------------------------------===//
#ifndef TURBINE_COMPILER_DISPATCH_SLICEUPDATES_H
#define TURBINE_COMPILER_DISPATCH_SLICEUPDATES_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/Operation.h"
#include "mlir/IR/Value.h"
#include "llvm/ADT/StringRef.h"

#include <string>

namespace turbine::compiler {

/// Unit attribute on the tensor.insert_slice of a slice update.
inline constexpr llvm::StringLiteral kSliceUpdateAttr = "turbine.slice_update";
/// Unit attribute on an ml_program.global_load whose value is only the
/// destination of an in-place slice update (it reads nothing observable).
inline constexpr llvm::StringLiteral kUpdateOnlyAttr = "turbine.update_only";

/// An identity linalg.generic copying `source` into a new tensor (the source
/// of a slice update that is not written by its producer).
mlir::Value identityCopy(mlir::OpBuilder &b, mlir::Location loc, mlir::Value source);

/// True for the tensor.insert_slice of a slice update.
bool isSliceUpdate(mlir::Operation *op);

/// Kernel side: `insert` is a slice update whose destination is the output
/// binding viewed as a writable tensor; the op computing its source gets the
/// slice of that tensor as its destination, so it writes the slice in place.
mlir::LogicalResult writeSliceUpdateInPlace(mlir::Operation *insert);

/// A kernel name for a region holding slice update `insert`:
/// `update_<global>` (the updated global's name, as an identifier) or
/// `update_slice`, then the slice's extents and element type.
std::string describeSliceUpdate(mlir::Operation *insert);

} // namespace turbine::compiler

#endif // TURBINE_COMPILER_DISPATCH_SLICEUPDATES_H
