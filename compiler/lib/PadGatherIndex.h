//===- PadGatherIndex.h - Reading a pad gather's source indices -----------===//
//
// Internal to the compiler library: the strategies that rewrite pad gathers
// (LowerPads.h) for the network's stem (ClampedMaxPooling.cpp,
// ChannelsLastInputGather.cpp) read back, per source index, which loop
// drives it and by how much it is shifted.
//===----------------------------------------------------------------------===//
#ifndef TURBINE_COMPILER_LIB_PADGATHERINDEX_H
#define TURBINE_COMPILER_LIB_PADGATHERINDEX_H

#include "mlir/IR/Value.h"

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

} // namespace turbine::compiler

#endif // TURBINE_COMPILER_LIB_PADGATHERINDEX_H
