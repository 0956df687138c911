#include "runtime/gpu/gpu_allocator.h"

#include <algorithm>

#include <cuda_runtime_api.h>

#include "absl/strings/str_cat.h"
#include "runtime/gpu/cuda_status.h"
#include "runtime/gpu/gpu_context.h"

namespace weft {
namespace {

// cudaMalloc aligns to 256 bytes; rounding sizes to it lets nearby sizes
// share a free list.
constexpr size_t kGranule = 256;

size_t RoundUp(size_t n) { return (std::max<size_t>(n, 1) + kGranule - 1) / kGranule * kGranule; }

}  // namespace

GpuAllocator::GpuAllocator(GpuContext* context) : context_(context) {}

std::string GpuAllocator::Name() const {
  return absl::StrCat("gpu:", context_->ordinal());
}

void* GpuAllocator::Allocate(size_t alignment, size_t num_bytes) {
  // cudaMalloc's 256-byte alignment covers kTensorAlignment.
  (void)alignment;
  const size_t size = RoundUp(num_bytes);
  absl::MutexLock lock(&mu_);
  void* ptr = nullptr;
  auto it = free_.find(size);
  if (it != free_.end() && !it->second.empty()) {
    ptr = it->second.back();
    it->second.pop_back();
    cached_bytes_ -= size;
  } else {
    if (!context_->Activate().ok()) return nullptr;
    if (cudaMalloc(&ptr, size) != cudaSuccess) {
      (void)cudaGetLastError();  // clear the sticky-free error state
      ReleaseCacheLocked();
      if (cudaMalloc(&ptr, size) != cudaSuccess) {
        (void)cudaGetLastError();
        return nullptr;
      }
    }
    blocks_.Add(ptr, size);
  }
  ++stats_.num_allocs;
  stats_.bytes_in_use += size;
  stats_.peak_bytes_in_use = std::max(stats_.peak_bytes_in_use, stats_.bytes_in_use);
  stats_.largest_alloc_size =
      std::max(stats_.largest_alloc_size, static_cast<int64_t>(size));
  return ptr;
}

void GpuAllocator::Deallocate(void* ptr, size_t num_bytes) {
  if (ptr == nullptr) return;
  const size_t size = RoundUp(num_bytes);
  absl::MutexLock lock(&mu_);
  stats_.bytes_in_use -= size;
  free_[size].push_back(ptr);
  cached_bytes_ += size;
}

void GpuAllocator::ReleaseCacheLocked() {
  (void)context_->Activate();
  for (auto& [size, ptrs] : free_) {
    for (void* p : ptrs) {
      blocks_.Remove(p);
      (void)cudaFree(p);  // waits for the device: nothing still uses it
    }
  }
  free_.clear();
  cached_bytes_ = 0;
}

AllocatorStats GpuAllocator::GetStats() const {
  absl::MutexLock lock(&mu_);
  return stats_;
}

int64_t GpuAllocator::cached_bytes() const {
  absl::MutexLock lock(&mu_);
  return cached_bytes_;
}

bool GpuAllocator::Owns(const void* ptr) const {
  absl::MutexLock lock(&mu_);
  return blocks_.Contains(ptr);
}

absl::Status GpuAllocator::CopyToHost(const void* device_src, void* host_dst,
                                      size_t num_bytes) {
  return context_->Copy(host_dst, device_src, num_bytes, cudaMemcpyDeviceToHost);
}

absl::Status GpuAllocator::CopyFromHost(const void* host_src, void* device_dst,
                                        size_t num_bytes) {
  return context_->Copy(device_dst, host_src, num_bytes, cudaMemcpyHostToDevice);
}

}  // namespace weft
