// GPUs as Weft devices: how a process finds its GPUs and makes a Device for
// each. This header is CUDA-free; a CPU-only build (no toolkit, see
// third_party/cuda/cuda_configure.bzl) links no_gpu.cc, which finds none.
//
//   GpuDevices gpus = NewLocalGpuDevices("localhost", 0, 0, /*max_gpus=*/-1);
//   if (gpus.devices.empty()) std::fprintf(stderr, "%s\n", gpus.note.c_str());
//   auto devices = NewLocalDeviceMgr(cpu_options, std::move(gpus.devices));
//
// A GPU device's tensors hold device memory: see runtime/core/device_memory.h for
// the rule that keeps the host from reading them. Each GPU has one CUDA
// stream, shared by all its kernels and copies, so work on one GPU runs in
// the order the executor issues it (runtime/gpu/gpu_context.h).
//
// Thread safety: both functions may be called from any thread; the devices
// probe the CUDA runtime once per process.
#ifndef WEFT_RUNTIME_GPU_GPU_DEVICES_H_
#define WEFT_RUNTIME_GPU_GPU_DEVICES_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "runtime/core/device.h"

namespace weft {

struct GpuDevices {
  // "/job:J/replica:R/task:T/device:GPU:i", in ordinal order.
  std::vector<std::unique_ptr<Device>> devices;
  // Why a GPU the machine has, or any GPU at all, is missing from `devices`
  // ("no GPU: this build has no CUDA ...", "no GPU: CUDA runtime: ..."), or
  // empty when every GPU asked for is there.
  std::string note;
};

// Devices for the first `max_gpus` GPUs of this machine (all of them if
// negative, none if 0: ConfigProto.device_count["GPU"]).
GpuDevices NewLocalGpuDevices(absl::string_view job, int replica, int task,
                              int max_gpus);

// One line for device listings: "GPUs: 1 (GPU:0 NVIDIA H200, compute
// capability 9.0, 139.8 GiB)" or "GPUs: none (<why>)".
std::string GpuAvailability();

}  // namespace weft

#endif  // WEFT_RUNTIME_GPU_GPU_DEVICES_H_
