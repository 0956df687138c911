// GpuDevice: a Device whose tensors live in one GPU's memory and whose
// kernels queue work on that GPU's stream (runtime/gpu/gpu_context.h).
//
//   absl::StatusOr<GpuContext*> gpu = GpuDeviceContext(c->device());
//   // in a GPU kernel: (*gpu)->stream(), (*gpu)->cublas()
//
// Made by NewLocalGpuDevices (runtime/gpu/gpu_devices.h). CUDA builds only.
// Thread safety: as Device; the context is thread-safe.
#ifndef WEFT_RUNTIME_GPU_GPU_DEVICE_H_
#define WEFT_RUNTIME_GPU_GPU_DEVICE_H_

#include <memory>

#include "absl/status/statusor.h"
#include "runtime/core/device.h"
#include "runtime/gpu/gpu_context.h"

namespace weft {

class GpuDevice final : public Device {
 public:
  // `context` is process-wide and outlives the device.
  GpuDevice(tensorflow::DeviceAttributes attributes, GpuContext* context,
            std::shared_ptr<ThreadPool> intra_op_pool);
  GpuContext* context() const { return context_; }

 private:
  GpuContext* const context_;
};

// The GPU context of `device`, or INTERNAL naming the device if it is not a
// GpuDevice (a GPU kernel instantiated on another device type).
absl::StatusOr<GpuContext*> GpuDeviceContext(Device* device);

}  // namespace weft

#endif  // WEFT_RUNTIME_GPU_GPU_DEVICE_H_
