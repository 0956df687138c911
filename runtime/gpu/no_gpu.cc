// GPU devices in a CPU-only build (no CUDA toolkit found, or --config=nocuda):
// there are none, and the note says how to get them.
#include "runtime/gpu/gpu_devices.h"

namespace weft {
namespace {
constexpr char kWhy[] =
    "this build has no CUDA (the build uses the toolkit at $CUDA_PATH or "
    "/usr/local/cuda when it finds one, unless --config=nocuda; "
    "--config=cuda requires it; see README 'GPUs')";
}  // namespace

GpuDevices NewLocalGpuDevices(absl::string_view, int, int, int max_gpus) {
  GpuDevices out;
  if (max_gpus != 0) out.note = std::string("no GPU: ") + kWhy;
  return out;
}

std::string GpuAvailability() { return std::string("GPUs: none (") + kWhy + ")"; }

}  // namespace weft
