// GpuAllocator: device memory of one GPU, from cudaMalloc, with a cache.
//
// Training steps allocate the same sizes step after step; cudaMalloc and
// cudaFree are slow and cudaFree waits for the whole device. So freed
// blocks go to a free list keyed by their (rounded) size and the next
// request of that size takes one. When cudaMalloc runs out, the cache is
// released and the request retried once.
//
// Reusing a block at once is safe because every kernel and copy on the GPU
// runs on its one stream (runtime/gpu/gpu_context.h): work that used the
// block was queued before whatever reuses it.
//
// Stats count bytes handed out (rounded sizes), not the cache.
//
// Thread safety: all methods are thread-safe. Never destroyed (registered
// device memory lives as long as the process, runtime/core/device_memory.h).
#ifndef WEFT_RUNTIME_GPU_GPU_ALLOCATOR_H_
#define WEFT_RUNTIME_GPU_GPU_ALLOCATOR_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"
#include "runtime/core/device_memory.h"

namespace weft {

class GpuContext;

class GpuAllocator final : public DeviceMemoryAllocator {
 public:
  // `context` (its GPU and stream) must outlive the allocator.
  explicit GpuAllocator(GpuContext* context);
  GpuAllocator(const GpuAllocator&) = delete;
  GpuAllocator& operator=(const GpuAllocator&) = delete;

  std::string Name() const override;  // "gpu:0"
  void* Allocate(size_t alignment, size_t num_bytes) override;
  void Deallocate(void* ptr, size_t num_bytes) override;
  AllocatorStats GetStats() const override;
  bool Owns(const void* ptr) const override;
  absl::Status CopyToHost(const void* device_src, void* host_dst,
                          size_t num_bytes) override;
  absl::Status CopyFromHost(const void* host_src, void* device_dst,
                            size_t num_bytes) override;

  // Bytes held in free lists, for tests.
  int64_t cached_bytes() const;

 private:
  void ReleaseCacheLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  GpuContext* const context_;
  mutable absl::Mutex mu_;
  // Every block cudaMalloc gave us, in use or cached.
  BlockRanges blocks_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<size_t, std::vector<void*>> free_ ABSL_GUARDED_BY(mu_);
  int64_t cached_bytes_ ABSL_GUARDED_BY(mu_) = 0;
  AllocatorStats stats_ ABSL_GUARDED_BY(mu_);
};

}  // namespace weft

#endif  // WEFT_RUNTIME_GPU_GPU_ALLOCATOR_H_
