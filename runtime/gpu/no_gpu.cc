// GPU devices in a CPU-only build (the default; CUDA is opt-in): there are none, and the
// note says how to get them.
#include "runtime/gpu/gpu_devices.h"

namespace weft {
namespace {
constexpr char kWhy[] =
    "this build has no CUDA (build with --config=cuda, which needs the "
    "toolkit at $CUDA_PATH or /usr/local/cuda; see README 'GPUs')";
}  // namespace

GpuDevices NewLocalGpuDevices(absl::string_view, int, int, int max_gpus) {
  GpuDevices out;
  if (max_gpus != 0) out.note = std::string("no GPU: ") + kWhy;
  return out;
}

std::string GpuAvailability() { return std::string("GPUs: none (") + kWhy + ")"; }

}  // namespace weft
