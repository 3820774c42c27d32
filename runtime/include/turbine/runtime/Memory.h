//===- Memory.h - The runtime's limit on tensor memory --------------------===//
//
// Every byte of tensor storage the runtime allocates (Tensor::allocate,
// zeros, fromBytes, clone, the buffers a host program allocates, including
// those its buffer pool keeps for reuse) is counted against one process-wide
// limit. A request that would take the total past it fails with a Status
// naming the tensor, the request and the limit, before anything is
// allocated: a model whose tensors cannot fit, or a corrupt file whose header
// claims a 10 GB tensor, gets a clear error instead of an allocation that the
// kernel's OOM killer ends later. Memory the caller wraps (Tensor::wrap) and
// memory kernels allocate themselves are not counted.
//
// The default limit is the machine's physical memory; $TURBINE_MEMORY_LIMIT
// (bytes, or with a K/M/G/T suffix: "512M", "8G") sets it at start-up, and
// setMemoryLimit() at any time.
//===----------------------------------------------------------------------===//
#ifndef TURBINE_RUNTIME_MEMORY_H
#define TURBINE_RUNTIME_MEMORY_H

#include <cstdint>

namespace turbine::runtime {

/// The current limit in bytes.
uint64_t memoryLimit();
/// Sets the limit; 0 restores the default (physical memory, or
/// $TURBINE_MEMORY_LIMIT). Allocations already made are unaffected.
void setMemoryLimit(uint64_t bytes);
/// Bytes of counted tensor storage allocated now.
uint64_t memoryInUse();

} // namespace turbine::runtime

#endif // TURBINE_RUNTIME_MEMORY_H
