#include "runtime/core/device_memory.h"

#include <atomic>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"

namespace weft {
namespace {

// Append-only: device allocators live as long as the process.
struct Registry {
  absl::Mutex mu;
  std::vector<DeviceMemoryAllocator*> allocators ABSL_GUARDED_BY(mu);
  std::atomic<int> count{0};
};

Registry& GlobalRegistry() {
  static Registry* const registry = new Registry;
  return *registry;
}

}  // namespace

bool BlockRanges::Contains(const void* ptr) const {
  const uintptr_t p = reinterpret_cast<uintptr_t>(ptr);
  auto it = blocks_.upper_bound(p);
  if (it == blocks_.begin()) return false;
  --it;
  return p < it->first + it->second;
}

void RegisterDeviceMemory(DeviceMemoryAllocator* allocator) {
  Registry& r = GlobalRegistry();
  absl::MutexLock lock(&r.mu);
  r.allocators.push_back(allocator);
  r.count.store(static_cast<int>(r.allocators.size()),
                std::memory_order_release);
}

DeviceMemoryAllocator* DeviceMemoryOwner(const void* ptr) {
  Registry& r = GlobalRegistry();
  if (ptr == nullptr || r.count.load(std::memory_order_acquire) == 0) {
    return nullptr;
  }
  absl::MutexLock lock(&r.mu);
  for (DeviceMemoryAllocator* a : r.allocators) {
    if (a->Owns(ptr)) return a;
  }
  return nullptr;
}

DeviceMemoryAllocator* AsDeviceMemory(Allocator* allocator) {
  if (allocator == nullptr || allocator == CpuAllocator()) return nullptr;
  return dynamic_cast<DeviceMemoryAllocator*>(allocator);
}

bool InHostMemory(const Tensor& t) {
  return DeviceMemoryOwner(t.raw_data()) == nullptr;
}

absl::StatusOr<Tensor> CopyTensorToAllocator(const Tensor& value,
                                             Allocator* dst) {
  DeviceMemoryAllocator* from = DeviceMemoryOwner(value.raw_data());
  DeviceMemoryAllocator* to = AsDeviceMemory(dst);
  if (from == to || DataTypeIsObject(value.dtype()) ||
      value.NumElements() == 0) {
    return value;
  }
  const size_t bytes = value.TotalBytes();
  // Device to device goes through the host: simple, and rare in the graphs
  // Weft places (one GPU per process is the common case).
  Tensor host = value;
  if (from != nullptr) {
    absl::StatusOr<Tensor> staged =
        Tensor::Allocate(CpuAllocator(), value.dtype(), value.shape());
    if (!staged.ok()) return staged.status();
    absl::Status s = from->CopyToHost(value.raw_data(), staged->raw_data(), bytes);
    if (!s.ok()) {
      return absl::Status(s.code(), absl::StrCat("copying ", bytes,
                                                 " bytes from ", from->Name(),
                                                 " to the host: ", s.message()));
    }
    host = *std::move(staged);
  }
  if (to == nullptr) return host;
  absl::StatusOr<Tensor> out = Tensor::Allocate(to, value.dtype(), value.shape());
  if (!out.ok()) return out.status();
  absl::Status s = to->CopyFromHost(host.raw_data(), out->raw_data(), bytes);
  if (!s.ok()) {
    return absl::Status(s.code(), absl::StrCat("copying ", bytes,
                                               " bytes from the host to ",
                                               to->Name(), ": ", s.message()));
  }
  return out;
}

}  // namespace weft
