//===- BufferPool.cpp - Caching allocator for host-program buffers -------===//
//
// Free blocks are kept in a multimap by size. A request takes the smallest
// free block that fits and wastes at most a quarter of it (so a 3 MB block
// does not end up holding a 64-byte tensor), preferring among equal sizes the
// one returned last (the warmest in cache); otherwise it allocates.
//===----------------------------------------------------------------------===//
#include "BufferPool.h"

#include "HostMemory.h"

#include <cstdlib>
#include <limits>
#include <string>

namespace turbine::runtime::detail {

std::shared_ptr<BufferPool> BufferPool::create(size_t cacheLimit) {
  return std::shared_ptr<BufferPool>(new BufferPool(cacheLimit));
}

BufferPool::~BufferPool() { trim(); }

Result<Tensor> BufferPool::allocate(DType dtype, std::vector<int64_t> shape) {
  // String tensors own std::string objects, not raw bytes: never pooled.
  if (dtypeIsString(dtype))
    return Tensor::allocate(dtype, std::move(shape));
  Result<int64_t> count = elementCountOf(shape);
  if (!count)
    return count.status();
  const size_t elementSize = dtypeSize(dtype);
  if (static_cast<uint64_t>(*count) >
      std::numeric_limits<size_t>::max() / 2 / elementSize)
    return Status::error("tensor is too large (byte size overflows)");
  size_t bytes = static_cast<size_t>(*count) * elementSize;
  size_t rounded = (bytes + kTensorAlignment - 1) / kTensorAlignment * kTensorAlignment;
  if (rounded == 0)
    rounded = kTensorAlignment;

  void *block = nullptr;
  size_t blockBytes = rounded;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = free_.lower_bound(rounded);
    if (it != free_.end() && it->first - rounded <= it->first / 4) {
      // The last of the equal-sized blocks is the one returned last.
      auto last = free_.upper_bound(it->first);
      --last;
      block = last->second;
      blockBytes = last->first;
      free_.erase(last);
      stats_.cachedBytes -= blockBytes;
      --stats_.cachedBlocks;
      ++stats_.hits;
    } else {
      ++stats_.misses;
    }
  }
  if (!block) {
    Result<void *> fresh =
        allocateAligned(rounded, "a " + formatTensorType(dtype, shape) + " tensor");
    if (!fresh) {
      // Cached blocks count against the limit too: give them back and retry.
      trim();
      fresh = allocateAligned(rounded, "a " + formatTensorType(dtype, shape) + " tensor");
      if (!fresh)
        return fresh.status();
    }
    block = *fresh;
  }
  std::shared_ptr<BufferPool> self = shared_from_this();
  std::shared_ptr<const void> storage(
      block, [self, blockBytes](const void *p) {
        self->release(const_cast<void *>(p), blockBytes);
      });
  return Tensor::wrap(dtype, std::move(shape), block, std::move(storage));
}

void BufferPool::release(void *block, size_t bytes) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (stats_.cachedBytes + bytes <= cacheLimit_) {
      free_.emplace_hint(free_.upper_bound(bytes), bytes, block);
      stats_.cachedBytes += bytes;
      ++stats_.cachedBlocks;
      return;
    }
  }
  freeAligned(block, bytes);
}

BufferPool::Stats BufferPool::stats() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return stats_;
}

void BufferPool::trim() {
  std::multimap<size_t, void *> blocks;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    blocks.swap(free_);
    stats_.cachedBytes = 0;
    stats_.cachedBlocks = 0;
  }
  for (auto &[bytes, block] : blocks)
    freeAligned(block, bytes);
}

} // namespace turbine::runtime::detail
