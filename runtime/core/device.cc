#include "runtime/core/device.h"

#include <algorithm>
#include <random>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "runtime/core/cpu_isa.h"
#include "runtime/core/file_policy.h"
#include "runtime/core/local_device_mgr.h"
#include "runtime/core/status.h"

namespace weft {

std::string FullDeviceName(absl::string_view job, int replica, int task,
                           absl::string_view type, int id) {
  return absl::StrCat("/job:", job, "/replica:", replica, "/task:", task,
                      "/device:", type, ":", id);
}

Device::Device(tensorflow::DeviceAttributes attributes, Allocator* allocator,
               std::shared_ptr<ThreadPool> intra_op_pool)
    : attributes_(std::move(attributes)),
      allocator_(allocator),
      intra_op_pool_(std::move(intra_op_pool)),
      file_policy_(FilePolicy::Unrestricted()) {}

Device::~Device() = default;

namespace {

uint64_t NewIncarnation() {
  std::random_device rd;
  uint64_t v = 0;
  while (v == 0) v = (static_cast<uint64_t>(rd()) << 32) ^ rd();
  return v;
}

// "/cpu:1" and "/device:CPU:1" and "CPU:1" all become "CPU:1".
std::string ShortName(absl::string_view name) {
  std::string s(name);
  const size_t pos = s.rfind("/");
  if (pos != std::string::npos) s = s.substr(pos + 1);
  if (absl::StartsWith(s, "device:")) s = s.substr(7);
  const size_t colon = s.find(':');
  if (colon == std::string::npos) return s;
  return absl::AsciiStrToUpper(s.substr(0, colon)) + s.substr(colon);
}

}  // namespace

absl::StatusOr<std::unique_ptr<DeviceMgr>> DeviceMgr::NewLocal(
    const LocalDeviceOptions& options) {
  return NewLocalDeviceMgr(options, {});
}

absl::StatusOr<std::unique_ptr<DeviceMgr>> NewLocalDeviceMgr(
    const LocalDeviceOptions& options,
    std::vector<std::unique_ptr<Device>> accelerators) {
  // Callers check the bounds (LocalSession reports them); clamped here too
  // so that no caller can start an unbounded number of devices or threads.
  const int num_cpus = std::clamp(options.num_cpus, 1, kMaxLocalCpuDevices);
  const int threads =
      options.intra_op_threads > 0
          ? std::min(options.intra_op_threads, kMaxPoolThreads)
          : DefaultThreadCount();
  // One pool for all the CPU devices (see the header): they share the cores.
  absl::StatusOr<std::unique_ptr<ThreadPool>> pool =
      ThreadPool::Create("cpu_intra_op", threads);
  if (!pool.ok()) {
    return WithContext(pool.status(),
                       "the CPU devices' intra-op pool "
                       "(ConfigProto.intra_op_parallelism_threads)");
  }
  std::shared_ptr<ThreadPool> intra_op_pool = *std::move(pool);
  LimitedAllocator* limited =
      options.host_memory_limit_bytes > 0
          ? LimitedAllocator::New(CpuAllocator(),
                                  options.host_memory_limit_bytes)
          : nullptr;
  Allocator* host = limited != nullptr ? limited : CpuAllocator();
  std::vector<std::unique_ptr<Device>> devices;
  for (int i = 0; i < num_cpus; ++i) {
    tensorflow::DeviceAttributes attrs;
    attrs.set_name(FullDeviceName(options.job, options.replica, options.task,
                                  kDeviceTypeCpu, i));
    attrs.set_device_type(kDeviceTypeCpu);
    attrs.set_memory_limit(options.host_memory_limit_bytes > 0
                               ? options.host_memory_limit_bytes
                               : int64_t{1} << 32);
    attrs.set_incarnation(NewIncarnation());
    attrs.set_physical_device_desc(absl::StrCat(
        "host CPU (Eigen; ", simd::CpuIsaName(simd::ActiveCpuIsa()),
        " SIMD kernels)"));
    devices.push_back(std::make_unique<Device>(std::move(attrs), host,
                                               intra_op_pool));
  }
  for (auto& d : accelerators) devices.push_back(std::move(d));
  if (options.file_policy != nullptr) {
    for (auto& d : devices) d->set_file_policy(options.file_policy);
  }
  return std::make_unique<DeviceMgr>(std::move(devices), limited);
}

DeviceMgr::DeviceMgr(std::vector<std::unique_ptr<Device>> devices)
    : DeviceMgr(std::move(devices), nullptr) {}

DeviceMgr::DeviceMgr(std::vector<std::unique_ptr<Device>> devices,
                     LimitedAllocator* host_allocator)
    : host_allocator_(host_allocator), devices_(std::move(devices)) {
  for (auto& d : devices_) device_ptrs_.push_back(d.get());
}

absl::StatusOr<Device*> DeviceMgr::Lookup(absl::string_view name) const {
  for (Device* d : device_ptrs_) {
    if (d->name() == name) return d;
  }
  const std::string wanted = ShortName(name);
  for (Device* d : device_ptrs_) {
    if (ShortName(d->name()) == wanted) return d;
  }
  std::vector<std::string> names;
  for (Device* d : device_ptrs_) names.push_back(d->name());
  return absl::NotFoundError(absl::StrCat("no device '", name,
                                          "' in this process; devices are: ",
                                          absl::StrJoin(names, ", ")));
}

}  // namespace weft
