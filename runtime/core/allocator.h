// Memory for tensor buffers.
//
// An Allocator hands out aligned blocks and keeps statistics. Devices own
// their allocator; CpuAllocator() is the process-wide host allocator.
// All methods are thread-safe.
#ifndef WEFT_RUNTIME_CORE_ALLOCATOR_H_
#define WEFT_RUNTIME_CORE_ALLOCATOR_H_

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

namespace allocator_internal {
// The statistics both host allocators keep, lock-free.
struct Counters {
  // Counts one block of `bytes` taken when `in_use` bytes are in use (the
  // caller has already added them to bytes_in_use).
  void Record(int64_t bytes, int64_t in_use);
  AllocatorStats Read() const;

  std::atomic<int64_t> num_allocs{0};
  std::atomic<int64_t> bytes_in_use{0};
  std::atomic<int64_t> peak_bytes_in_use{0};
  std::atomic<int64_t> largest_alloc_size{0};
};
}  // namespace allocator_internal

// Host memory from the C library, with counters. Thread-safe.
//
// Blocks of 1 MiB and more are kept for reuse when freed (up to 2 GiB or an
// eighth of the host's memory, whichever is less, oldest released first), in
// size classes an eighth of a power of two apart. Without that, glibc maps
// every block above 64 MiB allocated off the main thread (and every block
// above its mmap threshold) afresh and the kernel faults in and zeroes its
// pages on each use: a step moving a 64 MiB tensor between two tasks spent
// a third of its time in page faults (RecvTensor 0.48 GB/s, 0.8 with reuse;
// doc/benchmarks.md). Small blocks stay lock-free; large ones take one mutex,
// and ask for an alignment of at most 4096 (nullptr otherwise).
// Under AddressSanitizer nothing is kept, so a stale pointer is caught.
class TrackingCpuAllocator final : public Allocator {
 public:
  std::string Name() const override { return "cpu"; }
  void* Allocate(size_t alignment, size_t num_bytes) override;
  void Deallocate(void* ptr, size_t num_bytes) override;
  AllocatorStats GetStats() const override;

 private:
  allocator_internal::Counters counters_;
};

// The process-wide host allocator. Never destroyed.
Allocator* CpuAllocator();

// How this process's malloc keeps memory (allocator.cc says why): large
// blocks stay in the heap when freed, and every thread shares one arena.
// CpuAllocator() sets it; a program calls it first in main(), so that no
// thread has taken an arena of its own before. Idempotent, thread-safe.
void SetHostMallocPolicy();

// Host memory from `base` with a ceiling: a request that would take the bytes
// in use past `limit_bytes` returns nullptr, which Tensor::Allocate reports as
// RESOURCE_EXHAUSTED naming the shape, the dtype and Name() (this limit and
// what is in use), and the kernel's error names its node. A session holds one
// when SessionOptions::memory_limit_bytes is set, so that a hostile or
// mistaken graph fails its step instead of taking the host's memory.
//
// Lifetime: tensors a session hands out (fetched values) may outlive it and
// free their buffers here later, so the allocator is reference counted: its
// creator holds one reference (dropped with Unref()) and every live block
// another; it deletes itself when the last goes. Thread-safe, lock-free.
class LimitedAllocator final : public Allocator {
 public:
  // `base` must outlive every block; `limit_bytes` > 0.
  static LimitedAllocator* New(Allocator* base, int64_t limit_bytes);
  void Unref();

  std::string Name() const override;
  void* Allocate(size_t alignment, size_t num_bytes) override;
  void Deallocate(void* ptr, size_t num_bytes) override;
  AllocatorStats GetStats() const override;
  int64_t limit_bytes() const { return limit_bytes_; }

 private:
  LimitedAllocator(Allocator* base, int64_t limit_bytes)
      : base_(base), limit_bytes_(limit_bytes) {}
  ~LimitedAllocator() override = default;

  Allocator* const base_;
  const int64_t limit_bytes_;
  std::atomic<int64_t> refs_{1};
  allocator_internal::Counters counters_;
};

}  // namespace weft

#endif  // WEFT_RUNTIME_CORE_ALLOCATOR_H_
