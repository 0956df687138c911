// Memory for tensor buffers.
//
// An Allocator hands out aligned blocks and keeps statistics. Devices own
// their allocator; CpuAllocator() is the process-wide host allocator.
// All methods are thread-safe.
#ifndef WEFT_RUNTIME_ALLOCATOR_H_
#define WEFT_RUNTIME_ALLOCATOR_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>

namespace weft {

// Alignment of every tensor buffer: enough for AVX-512 loads.
inline constexpr size_t kTensorAlignment = 64;

struct AllocatorStats {
  int64_t num_allocs = 0;
  int64_t bytes_in_use = 0;
  int64_t peak_bytes_in_use = 0;
  int64_t largest_alloc_size = 0;
};

class Allocator {
 public:
  virtual ~Allocator() = default;
  virtual std::string Name() const = 0;
  // Returns nullptr when out of memory (callers turn it into a Status).
  virtual void* Allocate(size_t alignment, size_t num_bytes) = 0;
  virtual void Deallocate(void* ptr, size_t num_bytes) = 0;
  virtual AllocatorStats GetStats() const = 0;
};

// Host memory from the C library, with counters. Thread-safe, lock-free.
class TrackingCpuAllocator final : public Allocator {
 public:
  std::string Name() const override { return "cpu"; }
  void* Allocate(size_t alignment, size_t num_bytes) override;
  void Deallocate(void* ptr, size_t num_bytes) override;
  AllocatorStats GetStats() const override;

 private:
  std::atomic<int64_t> num_allocs_{0};
  std::atomic<int64_t> bytes_in_use_{0};
  std::atomic<int64_t> peak_bytes_in_use_{0};
  std::atomic<int64_t> largest_alloc_size_{0};
};

// The process-wide host allocator. Never destroyed.
Allocator* CpuAllocator();

}  // namespace weft

#endif  // WEFT_RUNTIME_ALLOCATOR_H_
