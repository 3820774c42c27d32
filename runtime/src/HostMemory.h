//===- HostMemory.h - Counted, aligned allocation of tensor storage -------===//
//
// Private to the runtime: the one place tensor storage is allocated and
// freed, so that the limit of Memory.h holds for all of it.
//===----------------------------------------------------------------------===//
#ifndef TURBINE_RUNTIME_SRC_HOSTMEMORY_H
#define TURBINE_RUNTIME_SRC_HOSTMEMORY_H

#include "turbine/runtime/Status.h"

#include <cstddef>
#include <string>

namespace turbine::runtime::detail {

/// Reserves `bytes` against the limit; an error naming `what` (e.g. "a
/// 4x4xf32 tensor") when the total would exceed it.
Status reserveMemory(size_t bytes, const std::string &what);
/// Returns a reservation.
void releaseMemory(size_t bytes);

/// kTensorAlignment-aligned storage of `bytes` (> 0, a multiple of the
/// alignment), reserved against the limit; free with freeAligned(p, bytes).
Result<void *> allocateAligned(size_t bytes, const std::string &what);
void freeAligned(void *p, size_t bytes);

} // namespace turbine::runtime::detail

#endif // TURBINE_RUNTIME_SRC_HOSTMEMORY_H
