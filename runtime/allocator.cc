#include "runtime/allocator.h"

#include <cstdlib>

namespace weft {
namespace {

void RaiseTo(std::atomic<int64_t>& target, int64_t value) {
  int64_t seen = target.load(std::memory_order_relaxed);
  while (value > seen &&
         !target.compare_exchange_weak(seen, value, std::memory_order_relaxed)) {
  }
}

}  // namespace

void* TrackingCpuAllocator::Allocate(size_t alignment, size_t num_bytes) {
  // aligned_alloc needs a size that is a multiple of the alignment.
  size_t rounded = (num_bytes + alignment - 1) / alignment * alignment;
  if (rounded == 0) rounded = alignment;
  void* ptr = std::aligned_alloc(alignment, rounded);
  if (ptr == nullptr) return nullptr;
  num_allocs_.fetch_add(1, std::memory_order_relaxed);
  int64_t in_use =
      bytes_in_use_.fetch_add(num_bytes, std::memory_order_relaxed) + num_bytes;
  RaiseTo(peak_bytes_in_use_, in_use);
  RaiseTo(largest_alloc_size_, static_cast<int64_t>(num_bytes));
  return ptr;
}

void TrackingCpuAllocator::Deallocate(void* ptr, size_t num_bytes) {
  if (ptr == nullptr) return;
  bytes_in_use_.fetch_sub(num_bytes, std::memory_order_relaxed);
  std::free(ptr);
}

AllocatorStats TrackingCpuAllocator::GetStats() const {
  AllocatorStats stats;
  stats.num_allocs = num_allocs_.load(std::memory_order_relaxed);
  stats.bytes_in_use = bytes_in_use_.load(std::memory_order_relaxed);
  stats.peak_bytes_in_use = peak_bytes_in_use_.load(std::memory_order_relaxed);
  stats.largest_alloc_size = largest_alloc_size_.load(std::memory_order_relaxed);
  return stats;
}

Allocator* CpuAllocator() {
  static Allocator* const allocator = new TrackingCpuAllocator;
  return allocator;
}

}  // namespace weft
