//===- BufferPool.h - Caching allocator for host-program buffers ---------===//
//
// The storage of every buffer a host program allocates (dispatch results,
// tensor.empty) comes from a module's BufferPool. A buffer's storage goes back
// to the pool when its last reference is dropped: the interpreter drops a
// register right after its last use (BufferReleasePlan.h), the caller drops a
// result whenever it likes. Blocks are reused by size, most recently returned
// first, so consecutive dispatches write into memory that is already mapped
// and usually still in cache, instead of fresh pages from the kernel (a
// ResNet-18 call page-faulted ~10 MB per call before). This is the runtime
// side of what ORT's arena and IREE's stream allocation do; a block is
// reused only once nothing references it, so results held by a caller are
// never overwritten.
//===----------------------------------------------------------------------===//
#ifndef TURBINE_RUNTIME_SRC_BUFFERPOOL_H
#define TURBINE_RUNTIME_SRC_BUFFERPOOL_H

#include "turbine/runtime/Tensor.h"

#include <cstddef>
#include <map>
#include <memory>
#include <mutex>

namespace turbine::runtime::detail {

/// Thread-safe; shared by every call of a module's functions. Tensors it
/// hands out keep it alive, so they may outlive the module.
class BufferPool : public std::enable_shared_from_this<BufferPool> {
public:
  /// Bytes of free blocks kept for reuse at most; a block returned beyond
  /// this is freed.
  static constexpr size_t kDefaultCacheLimit = size_t(512) << 20;

  static std::shared_ptr<BufferPool> create(size_t cacheLimit = kDefaultCacheLimit);
  ~BufferPool();
  BufferPool(const BufferPool &) = delete;
  BufferPool &operator=(const BufferPool &) = delete;

  /// An uninitialized, kTensorAlignment-aligned, writable tensor; its
  /// storage returns to this pool when the last view of it is dropped.
  Result<Tensor> allocate(DType dtype, std::vector<int64_t> shape);

  struct Stats {
    size_t hits = 0;         // allocations served by a cached block
    size_t misses = 0;       // allocations that needed new memory
    size_t cachedBytes = 0;  // bytes of free blocks held now
    size_t cachedBlocks = 0;
  };
  Stats stats() const;
  /// Frees every cached block (blocks in use are unaffected).
  void trim();

private:
  explicit BufferPool(size_t cacheLimit) : cacheLimit_(cacheLimit) {}
  void release(void *block, size_t bytes);

  const size_t cacheLimit_;
  mutable std::mutex mutex_;
  /// Free blocks by byte size; equal sizes in return order (the last one
  /// returned is reused first).
  std::multimap<size_t, void *> free_;
  Stats stats_;
};

} // namespace turbine::runtime::detail

#endif // TURBINE_RUNTIME_SRC_BUFFERPOOL_H
