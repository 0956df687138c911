#include "runtime/gpu/gpu_device.h"

#include <algorithm>
#include <random>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "runtime/gpu/gpu_devices.h"

namespace weft {

GpuDevice::GpuDevice(tensorflow::DeviceAttributes attributes, GpuContext* context,
                     std::shared_ptr<ThreadPool> intra_op_pool)
    : Device(std::move(attributes), context->allocator(), std::move(intra_op_pool)),
      context_(context) {}

absl::StatusOr<GpuContext*> GpuDeviceContext(Device* device) {
  auto* gpu = dynamic_cast<GpuDevice*>(device);
  if (gpu == nullptr) {
    return absl::InternalError(absl::StrCat(
        "a GPU kernel ran on '", device->name(), "', which is not a GPU device"));
  }
  return gpu->context();
}

namespace {

// "NVIDIA H200, compute capability 9.0, 139.8 GiB"
std::string Describe(const GpuContext& gpu) {
  const cudaDeviceProp& p = gpu.properties();
  return absl::StrFormat("%s, compute capability %d.%d, %.1f GiB", p.name, p.major,
                         p.minor, p.totalGlobalMem / double{1 << 30});
}

// "CUDA runtime: cudaGetDeviceCount: CUDA error 35 (...)"
std::string Why(const absl::Status& why) {
  return absl::StrCat("CUDA runtime: ", why.message());
}

}  // namespace

GpuDevices NewLocalGpuDevices(absl::string_view job, int replica, int task,
                              int max_gpus) {
  GpuDevices out;
  if (max_gpus == 0) return out;
  absl::StatusOr<int> count = GpuContext::DeviceCount();
  if (!count.ok()) {
    out.note = absl::StrCat("no GPU: ", Why(count.status()));
    return out;
  }
  const int n = max_gpus < 0 ? *count : std::min(*count, max_gpus);
  if (n == 0) out.note = "no GPU: the CUDA runtime sees no device";
  // GPU kernels queue work and return: the intra-op pool is only there
  // because every Device has one.
  absl::StatusOr<std::unique_ptr<ThreadPool>> started =
      ThreadPool::Create("gpu_intra_op", 1);
  if (!started.ok()) {
    out.note = absl::StrCat("no GPU: ", started.status().message());
    return out;
  }
  std::shared_ptr<ThreadPool> pool = *std::move(started);
  std::random_device rd;
  for (int i = 0; i < n; ++i) {
    absl::StatusOr<GpuContext*> gpu = GpuContext::Get(i);
    if (!gpu.ok()) {
      absl::StrAppend(&out.note, out.note.empty() ? "" : "; ", "GPU:", i,
                      " left out: ", gpu.status().message());
      continue;
    }
    tensorflow::DeviceAttributes attrs;
    attrs.set_name(FullDeviceName(job, replica, task, kDeviceTypeGpu, i));
    attrs.set_device_type(kDeviceTypeGpu);
    attrs.set_memory_limit(static_cast<int64_t>((*gpu)->properties().totalGlobalMem));
    attrs.set_incarnation((static_cast<uint64_t>(rd()) << 32) ^ rd() ^ 1);
    attrs.set_physical_device_desc(
        absl::StrCat("device: ", i, ", name: ", Describe(**gpu)));
    out.devices.push_back(std::make_unique<GpuDevice>(std::move(attrs), *gpu, pool));
  }
  return out;
}

std::string GpuAvailability() {
  absl::StatusOr<int> count = GpuContext::DeviceCount();
  if (!count.ok()) return absl::StrCat("GPUs: none (", Why(count.status()), ")");
  if (*count == 0) return "GPUs: none (the CUDA runtime sees no device)";
  std::vector<std::string> parts;
  for (int i = 0; i < *count; ++i) {
    absl::StatusOr<GpuContext*> gpu = GpuContext::Get(i);
    parts.push_back(gpu.ok() ? absl::StrCat("GPU:", i, " ", Describe(**gpu))
                             : absl::StrCat("GPU:", i, " unusable: ",
                                            gpu.status().message()));
  }
  return absl::StrCat("GPUs: ", *count, " (", absl::StrJoin(parts, "; "), ")");
}

}  // namespace weft
