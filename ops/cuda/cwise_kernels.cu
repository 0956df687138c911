// Element-wise float32 kernels; see cwise_launchers.h. Grid-stride loops
// over 64-bit indices, so any size runs with a bounded grid.
#include "ops/cuda/cwise_launchers.h"

#include <algorithm>

namespace weft {
namespace cuda {
namespace {

constexpr int kThreads = 256;

int Blocks(int64_t n) {
  return static_cast<int>(std::min<int64_t>((n + kThreads - 1) / kThreads, 4096));
}

template <typename F>
__global__ void Unary(const float* x, float* y, int64_t n, F f) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
       i += int64_t{blockDim.x} * gridDim.x) {
    y[i] = f(x[i]);
  }
}

template <BinaryOp op>
__device__ float Apply(float a, float b) {
  if (op == BinaryOp::kAdd) return a + b;
  if (op == BinaryOp::kSub) return a - b;
  return a * b;
}

template <BinaryOp op>
__global__ void SameShape(const float* a, const float* b, float* out, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
       i += int64_t{blockDim.x} * gridDim.x) {
    out[i] = Apply<op>(a[i], b[i]);
  }
}

template <BinaryOp op>
__global__ void Broadcast(BroadcastPlan plan, const float* a, const float* b,
                          float* out) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x;
       i < plan.num_elements; i += int64_t{blockDim.x} * gridDim.x) {
    int64_t rest = i, ia = 0, ib = 0;
    for (int d = plan.rank - 1; d >= 0; --d) {
      const int64_t c = rest % plan.dims[d];
      rest /= plan.dims[d];
      ia += c * plan.a_strides[d];
      ib += c * plan.b_strides[d];
    }
    out[i] = Apply<op>(a[ia], b[ib]);
  }
}

template <BinaryOp op>
void Launch(const BroadcastPlan& plan, const float* a, const float* b, float* out,
            cudaStream_t stream) {
  const int blocks = Blocks(plan.num_elements);
  if (plan.same_shape) {
    SameShape<op><<<blocks, kThreads, 0, stream>>>(a, b, out, plan.num_elements);
  } else {
    Broadcast<op><<<blocks, kThreads, 0, stream>>>(plan, a, b, out);
  }
}

struct ReluF {
  __device__ float operator()(float x) const { return x > 0.f ? x : 0.f; }
};

__global__ void ReluGradKernel(const float* g, const float* f, float* y, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
       i += int64_t{blockDim.x} * gridDim.x) {
    y[i] = f[i] > 0.f ? g[i] : 0.f;
  }
}

__global__ void BiasAddKernel(const float* x, const float* bias, float* y, int64_t n,
                              int64_t channels) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
       i += int64_t{blockDim.x} * gridDim.x) {
    y[i] = x[i] + bias[i % channels];
  }
}

}  // namespace

cudaError_t LaunchBinary(BinaryOp op, const BroadcastPlan& plan, const float* a,
                         const float* b, float* out, cudaStream_t stream) {
  if (plan.num_elements == 0) return cudaSuccess;
  switch (op) {
    case BinaryOp::kAdd:
      Launch<BinaryOp::kAdd>(plan, a, b, out, stream);
      break;
    case BinaryOp::kSub:
      Launch<BinaryOp::kSub>(plan, a, b, out, stream);
      break;
    case BinaryOp::kMul:
      Launch<BinaryOp::kMul>(plan, a, b, out, stream);
      break;
  }
  return cudaGetLastError();
}

cudaError_t LaunchRelu(const float* x, float* y, int64_t n, cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  Unary<<<Blocks(n), kThreads, 0, stream>>>(x, y, n, ReluF());
  return cudaGetLastError();
}

cudaError_t LaunchReluGrad(const float* gradients, const float* features, float* y,
                           int64_t n, cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  ReluGradKernel<<<Blocks(n), kThreads, 0, stream>>>(gradients, features, y, n);
  return cudaGetLastError();
}

cudaError_t LaunchBiasAdd(const float* x, const float* bias, float* y, int64_t n,
                          int64_t channels, cudaStream_t stream) {
  if (n == 0 || channels == 0) return cudaSuccess;
  BiasAddKernel<<<Blocks(n), kThreads, 0, stream>>>(x, bias, y, n, channels);
  return cudaGetLastError();
}

}  // namespace cuda
}  // namespace weft
