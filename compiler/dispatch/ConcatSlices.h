//===- ConcatSlices.h - Concatenations written in place by their producers ===//
//
// Internal to the compiler library (dispatch formation): both frontends
// import a concatenation (ONNX Concat, aten::cat) as a gather
// linalg.generic that, per output element, extracts from every operand and
// picks one with a chain of selects on the position along the axis. As a
// kernel that is a scalar gather with a select per element (DenseNet-121:
// 55 % of its time). The pass turbine-write-concats-in-producers
// (ConcatSlices.cpp) replaces it by a chain of slice updates
// (SliceUpdates.h) into one tensor:
//
//   %c = gather(%a, %b)   ->   %0 = tensor.empty
//                              %1 = tensor.insert_slice %a into %0[.., 0]
//                              %2 = tensor.insert_slice %b into %1[.., A]
//
// each marked turbine.slice_update and turbine.concat. Dispatch formation
// keeps each insert in the region of the op computing its source, which
// then writes its tiles straight into its slice of the concatenation; the
// first region's result is the (new) concatenated tensor, the others update
// it in place. An operand that cannot be written by its producer (used by
// anything else, a function argument, a constant, a producer in another
// block, a producer whose destination is not fresh) is copied into its slice
// by an identity linalg.generic: a plain vectorized copy kernel. A
// concatenation with an operand read with permuted indices (another layout)
// stays the gather (transposing copies measured slower, ShuffleNetV2).
// Concatenations each of whose operands are the first of the next
// (DenseNet's [x0, x1], [x0, x1, x2], ...) become one chain for the largest,
// the others views of its prefix (ConcatSlices.cpp, writeConcatFamily).
//===----------------------------------------------------------------------===//
#ifndef TURBINE_COMPILER_DISPATCH_CONCATSLICES_H
#define TURBINE_COMPILER_DISPATCH_CONCATSLICES_H

#include "mlir/IR/Operation.h"
#include "mlir/IR/Value.h"
#include "llvm/ADT/SmallVector.h"

#include <optional>

namespace turbine::compiler {

/// One operand of a concatenation and where it goes along the axis.
struct ConcatPart {
  mlir::Value source;
  int64_t offset = 0;
  int64_t size = 0;
  /// The output dim each of the source's dims is read at: the identity, or
  /// a permutation (an operand a layout pass left in its old layout, such
  /// as an NCHW model input read by a channels-last concatenation).
  llvm::SmallVector<int64_t> dims;
};

/// A concatenation gather as the frontends import it.
struct ConcatGatherInfo {
  int64_t axis = 0;
  llvm::SmallVector<ConcatPart> parts;
};

/// Matches the gather linalg.generic of a concatenation: no inputs, a
/// tensor.empty destination, a body yielding
///   select(i_axis < E0, extract(p0, ..), select(i_axis < E1, extract(p1, ..), .. extract(pn)))
/// where each extract reads its operand at the output's indices (in any
/// order) except along the axis, there at i_axis - start (possibly clamped to the operand's
/// extent), the operands' extents along the axis are static and tile the
/// output's exactly. At least two operands.
std::optional<ConcatGatherInfo> matchConcatGather(mlir::Operation *op);

/// Rewrites a matched concatenation `op` into the chain of slice updates the
/// file comment shows. Returns false, leaving the IR unchanged, when the
/// slices' sizes cannot be expressed (an operand dim dynamic where the
/// output's is static).
bool writeConcatInProducers(mlir::Operation *op);

/// An index constant that dispatch formation passes to kernels as a push
/// constant instead of cloning it in (a copy's offset in its concatenation).
bool isKernelOperandConstant(mlir::Operation *op);

/// A slice update made by writeConcatInProducers.
bool isConcatSlice(mlir::Operation *op);

/// The extract_slice a concatenation became when it is the prefix of a
/// larger one written in place (a DenseNet block's): a view of that one's
/// tensor, which dispatch formation clones into its readers' kernels.
bool isConcatPrefix(mlir::Operation *op);

} // namespace turbine::compiler

#endif // TURBINE_COMPILER_DISPATCH_CONCATSLICES_H
