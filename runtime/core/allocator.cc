#include "runtime/core/allocator.h"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <deque>
#include <iterator>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"

#include <malloc.h>
#include <unistd.h>

namespace weft {
namespace {

void RaiseTo(std::atomic<int64_t>& target, int64_t value) {
  int64_t seen = target.load(std::memory_order_relaxed);
  while (value > seen &&
         !target.compare_exchange_weak(seen, value, std::memory_order_relaxed)) {
  }
}

// A request above the machine's memory cannot succeed: refuse it outright
// (the caller reports RESOURCE_EXHAUSTED) rather than ask malloc, which may
// overcommit, or under a sanitizer abort the process.
size_t LargestPossibleAllocation() {
  static const size_t limit = [] {
    const long pages = sysconf(_SC_PHYS_PAGES);
    const long page_size = sysconf(_SC_PAGESIZE);
    if (pages <= 0 || page_size <= 0) return size_t{1} << 40;
    return static_cast<size_t>(pages) * static_cast<size_t>(page_size);
  }();
  return limit;
}

#if defined(__SANITIZE_ADDRESS__)
constexpr bool kKeepLargeBlocks = false;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool kKeepLargeBlocks = false;
#else
constexpr bool kKeepLargeBlocks = true;
#endif
#else
constexpr bool kKeepLargeBlocks = true;
#endif

// From this size on a block is large: malloc's per-thread caches serve the
// smaller ones well, and a mutex costs nothing next to touching 1 MiB.
constexpr size_t kLargeBlock = size_t{1} << 20;
// Room for any alignment up to a page, and the block header, in a large
// block (so that its size class follows from num_bytes alone).
constexpr size_t kLargeAlignment = 4096;
constexpr size_t kLargeHeader = kLargeAlignment + sizeof(void*);

// The size a large block of `num_bytes` is allocated with: rounded up to an
// eighth of the power of two below it (at most 12.5% more).
size_t LargeClass(size_t num_bytes) {
  const size_t n = num_bytes + kLargeHeader;
  size_t top = size_t{1} << (63 - __builtin_clzll(n));
  const size_t step = top / 8;
  return (n + step - 1) / step * step;
}

// Freed large blocks by size class, for the next request of that class.
// Oldest released first when the bytes kept would pass the limit.
class LargeBlockCache {
 public:
  static LargeBlockCache& Get() {
    static LargeBlockCache* const cache = new LargeBlockCache;
    return *cache;
  }

  // A kept block of exactly `bytes`, or nullptr.
  void* Take(size_t bytes) {
    absl::MutexLock lock(&mu_);
    for (auto it = kept_.rbegin(); it != kept_.rend(); ++it) {
      if (it->bytes != bytes) continue;
      void* raw = it->raw;
      kept_bytes_ -= bytes;
      kept_.erase(std::next(it).base());
      return raw;
    }
    return nullptr;
  }

  // Keeps `raw` (a malloc block of `bytes`) or frees it; frees the oldest
  // kept blocks beyond the limit.
  void Keep(void* raw, size_t bytes) {
    std::vector<void*> release;
    {
      absl::MutexLock lock(&mu_);
      if (bytes > limit_) {
        release.push_back(raw);
      } else {
        kept_.push_back({raw, bytes});
        kept_bytes_ += bytes;
        while (kept_bytes_ > limit_ || kept_.size() > kMaxBlocks) {
          release.push_back(kept_.front().raw);
          kept_bytes_ -= kept_.front().bytes;
          kept_.pop_front();
        }
      }
    }
    for (void* r : release) std::free(r);  // unlocked
  }

 private:
  static constexpr size_t kMaxBlocks = 256;
  struct Block {
    void* raw;
    size_t bytes;
  };

  LargeBlockCache() {
    const size_t eighth = LargestPossibleAllocation() / 8;
    limit_ = std::min<size_t>(eighth, size_t{2} << 30);
  }

  absl::Mutex mu_;
  std::deque<Block> kept_ ABSL_GUARDED_BY(mu_);  // oldest first
  size_t kept_bytes_ ABSL_GUARDED_BY(mu_) = 0;
  size_t limit_ = 0;  // fixed at construction
};

}  // namespace

void* TrackingCpuAllocator::Allocate(size_t alignment, size_t num_bytes) {
  if (num_bytes > LargestPossibleAllocation()) return nullptr;
  // malloc and align by hand, keeping malloc's pointer just before the
  // block: glibc's aligned_alloc carves every block out of a larger chunk
  // (about 100 ns), while small mallocs come from a per-thread cache. Graphs
  // of scalar ops allocate once per node, so this is the hot path.
  if (alignment < 2 * sizeof(void*)) alignment = 2 * sizeof(void*);
  const bool large = num_bytes >= kLargeBlock;
  if (large && alignment > kLargeAlignment) return nullptr;  // see header
  const size_t bytes =
      large ? LargeClass(num_bytes) : num_bytes + alignment + sizeof(void*);
  void* raw = large && kKeepLargeBlocks ? LargeBlockCache::Get().Take(bytes)
                                        : nullptr;
  if (raw == nullptr) raw = std::malloc(bytes);
  if (raw == nullptr) return nullptr;
  const uintptr_t start = reinterpret_cast<uintptr_t>(raw) + sizeof(void*);
  // `alignment` is a power of two.
  void* ptr =
      reinterpret_cast<void*>((start + alignment - 1) & ~(alignment - 1));
  static_cast<void**>(ptr)[-1] = raw;
  const int64_t n = static_cast<int64_t>(num_bytes);
  counters_.Record(
      n, counters_.bytes_in_use.fetch_add(n, std::memory_order_relaxed) + n);
  return ptr;
}

void TrackingCpuAllocator::Deallocate(void* ptr, size_t num_bytes) {
  if (ptr == nullptr) return;
  counters_.bytes_in_use.fetch_sub(static_cast<int64_t>(num_bytes),
                                   std::memory_order_relaxed);
  void* raw = static_cast<void**>(ptr)[-1];
  if (kKeepLargeBlocks && num_bytes >= kLargeBlock) {
    LargeBlockCache::Get().Keep(raw, LargeClass(num_bytes));
  } else {
    std::free(raw);
  }
}

AllocatorStats TrackingCpuAllocator::GetStats() const { return counters_.Read(); }

namespace allocator_internal {

void Counters::Record(int64_t bytes, int64_t in_use) {
  num_allocs.fetch_add(1, std::memory_order_relaxed);
  RaiseTo(peak_bytes_in_use, in_use);
  RaiseTo(largest_alloc_size, bytes);
}

AllocatorStats Counters::Read() const {
  AllocatorStats stats;
  stats.num_allocs = num_allocs.load(std::memory_order_relaxed);
  stats.bytes_in_use = bytes_in_use.load(std::memory_order_relaxed);
  stats.peak_bytes_in_use = peak_bytes_in_use.load(std::memory_order_relaxed);
  stats.largest_alloc_size = largest_alloc_size.load(std::memory_order_relaxed);
  return stats;
}

}  // namespace allocator_internal

// glibc hands blocks above its mmap threshold straight back to the kernel, so
// a step that allocates a large tensor would fault in (and the kernel zero)
// fresh pages every time. Training steps allocate the same sizes over and
// over: keeping freed memory in the heap lets the next step reuse it hot.
//
// One arena, for the same reason: glibc gives threads arenas of their own,
// made of 64 MiB heaps that it unmaps as soon as one is empty. gRPC's
// threads hold a whole message while it arrives (256 MiB for a 256 MiB
// tensor), so every such message faulted its pages in anew: 5,000 to 14,000
// page faults a step on the receiving task, 105-110 ms a 256 MiB RecvTensor
// step against 89-93 ms with one arena (2-core Xeon). Blocks up to 1 KiB
// still come from each thread's own cache without a lock. MALLOC_ARENA_MAX
// in the environment, where set, is left to decide.
void SetHostMallocPolicy() {
  static const bool once = [] {
    mallopt(M_MMAP_THRESHOLD, 256 << 20);
    mallopt(M_TRIM_THRESHOLD, 512 << 20);
    if (std::getenv("MALLOC_ARENA_MAX") == nullptr) mallopt(M_ARENA_MAX, 1);
    return true;
  }();
  (void)once;
}

Allocator* CpuAllocator() {
  static Allocator* const allocator = [] {
    SetHostMallocPolicy();
    return new TrackingCpuAllocator;
  }();
  return allocator;
}

LimitedAllocator* LimitedAllocator::New(Allocator* base, int64_t limit_bytes) {
  return new LimitedAllocator(base, limit_bytes);
}

void LimitedAllocator::Unref() {
  if (refs_.fetch_sub(1, std::memory_order_acq_rel) == 1) delete this;
}

std::string LimitedAllocator::Name() const {
  return absl::StrCat(base_->Name(), " (session memory limit ", limit_bytes_,
                      " bytes, ",
                      counters_.bytes_in_use.load(std::memory_order_relaxed),
                      " in use; raise SessionOptions.memory_limit_bytes)");
}

void* LimitedAllocator::Allocate(size_t alignment, size_t num_bytes) {
  if (num_bytes > static_cast<size_t>(limit_bytes_)) return nullptr;
  const int64_t n = static_cast<int64_t>(num_bytes);
  // Reserve first, so that concurrent requests cannot together pass the
  // limit; give the reservation back if it does not fit or malloc fails.
  std::atomic<int64_t>& bytes_in_use = counters_.bytes_in_use;
  const int64_t in_use = bytes_in_use.fetch_add(n, std::memory_order_relaxed) + n;
  if (in_use > limit_bytes_) {
    bytes_in_use.fetch_sub(n, std::memory_order_relaxed);
    return nullptr;
  }
  void* ptr = base_->Allocate(alignment, num_bytes);
  if (ptr == nullptr) {
    bytes_in_use.fetch_sub(n, std::memory_order_relaxed);
    return nullptr;
  }
  refs_.fetch_add(1, std::memory_order_relaxed);
  counters_.Record(n, in_use);
  return ptr;
}

void LimitedAllocator::Deallocate(void* ptr, size_t num_bytes) {
  if (ptr == nullptr) return;
  base_->Deallocate(ptr, num_bytes);
  counters_.bytes_in_use.fetch_sub(static_cast<int64_t>(num_bytes),
                                   std::memory_order_relaxed);
  Unref();
}

AllocatorStats LimitedAllocator::GetStats() const { return counters_.Read(); }

}  // namespace weft
