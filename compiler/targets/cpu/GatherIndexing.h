//===- GatherIndexing.h - Where a gathering generic reads its source ------===//
//
// Internal to the compiler library: the strategies for the network's stem
// (ClampedMaxPooling.cpp, ChannelsLastInputGather.cpp, KernelCodegen.cpp)
// read back, per source index of a pad gather (LowerPads.h), which loop
// drives it and by how much it is shifted, and evaluate a gathering
// generic's index arithmetic at a given iteration to emit vector reads.
//===----------------------------------------------------------------------===//
#ifndef TURBINE_COMPILER_GATHERINDEXING_H
#define TURBINE_COMPILER_GATHERINDEXING_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/Value.h"
#include "llvm/ADT/SmallVector.h"

#include <cstdint>
#include <optional>

namespace turbine::compiler {

/// One source index of a pad gather: linalg.index `loop` shifted by `-low`
/// and clamped to the source (clamped), or linalg.index `loop` as it is.
struct PadGatherIndex {
  int64_t loop = 0;
  int64_t low = 0;
  bool clamped = false;
};

/// `index` as LowerPads.cpp builds it: min(max(linalg.index d - low, 0),
/// last) with a constant `low` (canonicalization drops a zero low and may
/// drop the max), or linalg.index d; nullopt for anything else.
std::optional<PadGatherIndex> matchPadGatherIndex(mlir::Value index);

/// The values the body of `generic` (a linalg.generic) computes for `wanted`
/// (values of its body, e.g. a tensor.extract's indices) at the iteration
/// `position` (one index per loop, replacing linalg.index): clones at `b`
/// the body's ops those values depend on. None of `wanted` may depend on a
/// block argument (an operand's element).
llvm::SmallVector<mlir::Value> evaluateAt(mlir::OpBuilder &b, mlir::Operation *generic,
                                          mlir::ValueRange wanted, mlir::ValueRange position);

} // namespace turbine::compiler

#endif // TURBINE_COMPILER_GATHERINDEXING_H
