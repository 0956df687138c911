// A process's local devices: its CPU devices (DeviceMgr::NewLocal) followed
// by accelerator devices made elsewhere (runtime/gpu/gpu_devices.h), in one
// DeviceMgr.
//
//   GpuDevices gpus = NewLocalGpuDevices("localhost", 0, 0, /*max_gpus=*/-1);
//   absl::StatusOr<std::unique_ptr<DeviceMgr>> devices =
//       NewLocalDeviceMgr({.num_cpus = 2}, std::move(gpus.devices));
//   // CPU:0, CPU:1, then GPU:0, ...
//
// Kept out of device.h (which every kernel includes) so that device.h need
// not know about accelerators. Defined in device.cc, beside NewLocal.
#ifndef WEFT_RUNTIME_CORE_LOCAL_DEVICE_MGR_H_
#define WEFT_RUNTIME_CORE_LOCAL_DEVICE_MGR_H_

#include <memory>
#include <vector>

#include "runtime/core/device.h"

namespace weft {

// Upper bounds on what a config may ask of one process. The counts come from
// users and peers (ConfigProto.device_count, *_parallelism_threads), and each
// unit is a device or a thread: beyond these a process would fail to start
// them rather than run faster, so sessions refuse such configs up front and
// NewLocalDeviceMgr clamps to them.
inline constexpr int kMaxLocalCpuDevices = 1024;
inline constexpr int kMaxPoolThreads = 4096;

// The CPU devices of `options`, then `accelerators` in their order. The CPU
// devices come first, so CPU:0 stays the default device. RESOURCE_EXHAUSTED
// (naming the pool) when the intra-op pool's threads cannot start.
absl::StatusOr<std::unique_ptr<DeviceMgr>> NewLocalDeviceMgr(
    const LocalDeviceOptions& options,
    std::vector<std::unique_ptr<Device>> accelerators);

}  // namespace weft

#endif  // WEFT_RUNTIME_CORE_LOCAL_DEVICE_MGR_H_
