// Device memory: tensor elements that live where the host cannot read them
// (an accelerator's memory), and the copies that move them.
//
// The rule, stated once for all of Weft: a Tensor's elements are in host
// memory unless its buffer came from a DeviceMemoryAllocator. Only kernels
// of that allocator's device may touch device elements; everything else
// (fetches, feeds, Const values, printing, CPU kernels) sees host tensors,
// because the only way a value crosses between devices is a _Send/_Recv pair
// and the _Recv copies it into its own device's memory
// (CopyTensorToAllocator). The local session checks that every fetched
// tensor is in host memory; Tensor::DebugString prints no values of a device
// tensor, and Tensor::DeepCopy of one makes a host copy.
//
//   // In a _Recv on device `dst`:
//   absl::StatusOr<Tensor> local = CopyTensorToAllocator(value, dst->allocator());
//
// How memory is recognised: every DeviceMemoryAllocator registers itself
// (RegisterDeviceMemory) and answers Owns(ptr) for the blocks it handed out,
// so InHostMemory(tensor) needs nothing stored in the Tensor. With no device
// allocator registered (a CPU-only process) the test costs one atomic load.
//
// A TensorBuffer's header always lives in host memory; with a device
// allocator only the elements come from it (runtime/core/tensor.cc).
//
// Thread safety: all functions are thread-safe. Device allocators are
// registered for the life of the process (like CpuAllocator(), they are
// never destroyed).
#ifndef WEFT_RUNTIME_CORE_DEVICE_MEMORY_H_
#define WEFT_RUNTIME_CORE_DEVICE_MEMORY_H_

#include <cstddef>
#include <cstdint>
#include <map>

#include "absl/status/statusor.h"
#include "runtime/core/allocator.h"
#include "runtime/core/tensor.h"

namespace weft {

// An allocator of memory the host cannot dereference. Copies are complete
// when the call returns (they wait for the device's pending work on the
// memory, so a kernel queued before the copy has finished writing it).
class DeviceMemoryAllocator : public Allocator {
 public:
  // True if `ptr` points into a block this allocator handed out.
  virtual bool Owns(const void* ptr) const = 0;
  virtual absl::Status CopyToHost(const void* device_src, void* host_dst,
                                  size_t num_bytes) = 0;
  virtual absl::Status CopyFromHost(const void* host_src, void* device_dst,
                                    size_t num_bytes) = 0;
};

// The blocks an allocator has handed out, by address, so that Owns() can
// answer for pointers into a block's middle (slices). Not thread-safe: the
// allocator guards it with its own lock.
class BlockRanges {
 public:
  void Add(const void* base, size_t num_bytes) {
    blocks_[reinterpret_cast<uintptr_t>(base)] = num_bytes;
  }
  void Remove(const void* base) { blocks_.erase(reinterpret_cast<uintptr_t>(base)); }
  bool Contains(const void* ptr) const;

 private:
  std::map<uintptr_t, size_t> blocks_;  // base -> size
};

// Makes `allocator` known to DeviceMemoryOwner; it must live until the
// process ends.
void RegisterDeviceMemory(DeviceMemoryAllocator* allocator);

// The registered allocator whose memory holds `ptr`; null for host memory.
DeviceMemoryAllocator* DeviceMemoryOwner(const void* ptr);

// `allocator` as a device allocator, or null if it hands out host memory.
DeviceMemoryAllocator* AsDeviceMemory(Allocator* allocator);

// True if the host may read `t`'s elements (also for empty tensors).
bool InHostMemory(const Tensor& t);

// `value` as a tensor whose elements `dst` can use: `value` itself when it
// already lives in memory of that kind (host for a host allocator, the same
// device allocator), otherwise a copy allocated from `dst` (host to device,
// device to host, or device to another device through the host). Object
// dtypes (string, resource) never live in device memory.
absl::StatusOr<Tensor> CopyTensorToAllocator(const Tensor& value,
                                             Allocator* dst);

}  // namespace weft

#endif  // WEFT_RUNTIME_CORE_DEVICE_MEMORY_H_
