// Devices: where kernels run and tensors live.
//
// A Device has a TensorFlow-style full name
// ("/job:localhost/replica:0/task:0/device:CPU:0"), an allocator, a
// ResourceMgr for its variables and an intra-op thread pool that kernels use
// to parallelise one op. A DeviceMgr owns the devices of one process; its
// CPU devices share one intra-op pool sized to the cores, as TensorFlow's
// do: with K devices each having cores / K threads of its own, a kernel
// could use only its share of the machine while the other devices' threads
// sat idle (and with one thread per device none of them parallelised at all).
//
//   WEFT_ASSIGN_OR_RETURN(std::unique_ptr<DeviceMgr> devices,
//                         DeviceMgr::NewLocal({.num_cpus = 2}));
//   Device* cpu1 = devices->Lookup("/device:CPU:1").value();
//
// Thread safety: Device and DeviceMgr are immutable after construction, apart
// from the thread-safe members they hand out (allocator, ResourceMgr, pool).
#ifndef WEFT_RUNTIME_CORE_DEVICE_H_
#define WEFT_RUNTIME_CORE_DEVICE_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "proto/device_attributes.pb.h"
#include "runtime/core/allocator.h"
#include "runtime/core/resource_mgr.h"
#include "runtime/core/thread_pool.h"

namespace weft {

class FilePolicy;  // file_policy.h

inline constexpr char kDeviceTypeCpu[] = "CPU";
inline constexpr char kDeviceTypeGpu[] = "GPU";

// "/job:J/replica:R/task:T/device:TYPE:N"
std::string FullDeviceName(absl::string_view job, int replica, int task,
                           absl::string_view type, int id);

class Device {
 public:
  // `allocator` must outlive the device; the intra-op pool may be shared
  // with other devices (it lives as long as any of them).
  Device(tensorflow::DeviceAttributes attributes, Allocator* allocator,
         std::shared_ptr<ThreadPool> intra_op_pool);
  virtual ~Device();
  Device(const Device&) = delete;
  Device& operator=(const Device&) = delete;

  const std::string& name() const { return attributes_.name(); }
  const std::string& device_type() const { return attributes_.device_type(); }
  const tensorflow::DeviceAttributes& attributes() const { return attributes_; }
  Allocator* allocator() const { return allocator_; }
  ResourceMgr* resource_manager() { return &resource_mgr_; }
  ThreadPool* intra_op_pool() { return intra_op_pool_.get(); }
  // The host paths its kernels may open (file_policy.h): unrestricted
  // unless the process confines them (a server's --file-root).
  const FilePolicy& file_policy() const { return *file_policy_; }
  // Before the device is shared (NewLocalDeviceMgr does it).
  void set_file_policy(std::shared_ptr<const FilePolicy> policy) {
    file_policy_ = std::move(policy);
  }

 private:
  tensorflow::DeviceAttributes attributes_;
  Allocator* const allocator_;
  ResourceMgr resource_mgr_;
  const std::shared_ptr<ThreadPool> intra_op_pool_;
  std::shared_ptr<const FilePolicy> file_policy_;
};

struct LocalDeviceOptions {
  std::string job = "localhost";
  int replica = 0;
  int task = 0;
  int num_cpus = 1;
  // Threads of the intra-op pool the CPU devices share; 0 = the cores.
  int intra_op_threads = 0;
  // Bytes of host memory the CPU devices' tensors may hold at once (a
  // LimitedAllocator shared by them); 0 = no limit beyond the machine's.
  int64_t host_memory_limit_bytes = 0;
  // What the devices' kernels may open (file_policy.h); null: any path.
  std::shared_ptr<const FilePolicy> file_policy;
};

class DeviceMgr {
 public:
  // RESOURCE_EXHAUSTED when the intra-op pool's threads cannot start.
  static absl::StatusOr<std::unique_ptr<DeviceMgr>> NewLocal(
      const LocalDeviceOptions& options);
  explicit DeviceMgr(std::vector<std::unique_ptr<Device>> devices);
  // As above, also holding a reference to `host_allocator` (which the CPU
  // devices allocate from) and dropping it after the devices are gone.
  DeviceMgr(std::vector<std::unique_ptr<Device>> devices,
            LimitedAllocator* host_allocator);

  const std::vector<Device*>& devices() const { return device_ptrs_; }
  // Accepts the full name or a short one ("/device:CPU:1", "/cpu:1", "CPU:1").
  absl::StatusOr<Device*> Lookup(absl::string_view name) const;
  Device* default_device() const { return device_ptrs_.front(); }

 private:
  struct UnrefAllocator {
    void operator()(LimitedAllocator* a) const { a->Unref(); }
  };
  // Declared first so that it outlives the devices (their variables free
  // into it); blocks still out in fetched tensors keep it alive after that.
  std::unique_ptr<LimitedAllocator, UnrefAllocator> host_allocator_;
  std::vector<std::unique_ptr<Device>> devices_;
  std::vector<Device*> device_ptrs_;
};

}  // namespace weft

#endif  // WEFT_RUNTIME_CORE_DEVICE_H_
