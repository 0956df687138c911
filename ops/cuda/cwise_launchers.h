// Launchers for the element-wise CUDA kernels (cwise_kernels.cu), float32.
// Each queues one kernel on `stream` and returns the launch error (a fault
// inside the kernel shows up at the next synchronisation). Zero elements
// launch nothing. Pointers are device memory.
//
//   BroadcastPlan plan;  // from MakeBroadcastPlan (cwise_gpu_kernels.cc)
//   cudaError_t e = LaunchBinary(BinaryOp::kAdd, plan, a, b, out, stream);
//
// Compiled by nvcc and included by host code: plain types only.
#ifndef WEFT_OPS_CUDA_CWISE_LAUNCHERS_H_
#define WEFT_OPS_CUDA_CWISE_LAUNCHERS_H_

#include <cstdint>

#include <cuda_runtime_api.h>

namespace weft {
namespace cuda {

enum class BinaryOp { kAdd, kSub, kMul };

// Output element i, written in row-major coordinates c[0..rank), reads
// a[sum c[d] * a_strides[d]] and b[sum c[d] * b_strides[d]]; a stride is 0
// on a dimension the input broadcasts.
inline constexpr int kMaxBroadcastRank = 6;
struct BroadcastPlan {
  int rank = 0;
  int64_t num_elements = 0;
  int64_t dims[kMaxBroadcastRank] = {};
  int64_t a_strides[kMaxBroadcastRank] = {};
  int64_t b_strides[kMaxBroadcastRank] = {};
  bool same_shape = false;  // a, b and out have equal shapes: no indexing
};

cudaError_t LaunchBinary(BinaryOp op, const BroadcastPlan& plan, const float* a,
                         const float* b, float* out, cudaStream_t stream);
// y = max(x, 0)
cudaError_t LaunchRelu(const float* x, float* y, int64_t n, cudaStream_t stream);
// y = features > 0 ? gradients : 0
cudaError_t LaunchReluGrad(const float* gradients, const float* features, float* y,
                           int64_t n, cudaStream_t stream);
// y[i] = x[i] + bias[i % channels] (bias over the last dimension, NHWC)
cudaError_t LaunchBiasAdd(const float* x, const float* bias, float* y, int64_t n,
                          int64_t channels, cudaStream_t stream);

}  // namespace cuda
}  // namespace weft

#endif  // WEFT_OPS_CUDA_CWISE_LAUNCHERS_H_
