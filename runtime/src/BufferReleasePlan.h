//===- BufferReleasePlan.h - When a host program may drop each buffer ----===//
//
// Liveness of buffer registers in a function's host program (loop-aware:
// a register live around a loop's back edge is dropped when the loop exits):
// for each instruction, the registers whose last use it is. The interpreter
// drops those registers right after the instruction, so a buffer's storage
// goes back to the module's BufferPool as soon as no register, view or result
// references it (views made by Reshape keep their storage alive by reference
// count, so the plan only has to be right about registers). Registers that
// are returned are never dropped. Computed once per function when a module
// loads.
//===----------------------------------------------------------------------===//
#ifndef TURBINE_RUNTIME_SRC_BUFFERRELEASEPLAN_H
#define TURBINE_RUNTIME_SRC_BUFFERRELEASEPLAN_H

#include "turbine/artifact/Module.h"

#include <cstdint>
#include <vector>

namespace turbine::runtime::detail {

struct BufferReleasePlan {
  /// Registers to drop after instruction `pc` are
  /// registers[begin[pc] .. begin[pc + 1]). Empty `begin`: drop nothing (the
  /// program uses an opcode whose buffer operands the plan does not know, so
  /// every buffer lives until the function returns).
  std::vector<uint32_t> begin;
  std::vector<int32_t> registers;

  bool empty() const { return begin.empty(); }
};

BufferReleasePlan planBufferReleases(const artifact::Function &function);

} // namespace turbine::runtime::detail

#endif // TURBINE_RUNTIME_SRC_BUFFERRELEASEPLAN_H
