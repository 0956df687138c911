// Host side of the element-wise GPU kernels: input checks and the
// broadcast plan, then the launch (gpu_kernel_util.h allocates the output
// and reports errors); the arithmetic is in cwise_kernels.cu.
#include <algorithm>
#include <vector>

#include "ops/cuda/cwise_launchers.h"
#include "ops/cuda/gpu_kernel_util.h"
#include "ops/cuda/gpu_kernels.h"
#include "ops/framework/kernel_checks.h"
#include "runtime/core/device_memory.h"

namespace weft {
namespace {

using cuda::BinaryOp;
using cuda::BroadcastPlan;

// NumPy broadcasting of `x` and `y` into `plan` (strides in elements of each
// input, 0 on broadcast dims) and the output shape. INVALID_ARGUMENT in
// TensorFlow's words when they do not broadcast or the rank is above
// kMaxBroadcastRank.
absl::Status MakePlan(const TensorShape& x, const TensorShape& y, BroadcastPlan* plan,
                      TensorShape* out) {
  const int rank = std::max(x.dims(), y.dims());
  if (rank > cuda::kMaxBroadcastRank) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the GPU kernel broadcasts up to rank ", cuda::kMaxBroadcastRank, ", got ",
        x.DebugString(), " and ", y.DebugString(), "; place the node on the CPU"));
  }
  std::vector<int64_t> dims(rank);
  for (int d = 0; d < rank; ++d) {
    const int dx = d - (rank - x.dims()), dy = d - (rank - y.dims());
    const int64_t sx = dx >= 0 ? x.dim_size(dx) : 1;
    const int64_t sy = dy >= 0 ? y.dim_size(dy) : 1;
    if (sx != sy && sx != 1 && sy != 1) {
      return absl::InvalidArgumentError(absl::StrCat(
          "Incompatible shapes: ", x.DebugString(), " vs. ", y.DebugString()));
    }
    dims[d] = sx == 1 ? sy : sx;
  }
  *out = TensorShape(dims);
  plan->rank = rank;
  plan->num_elements = out->num_elements();
  plan->same_shape = x == y;
  int64_t stride_x = 1, stride_y = 1;
  for (int d = rank - 1; d >= 0; --d) {
    const int dx = d - (rank - x.dims()), dy = d - (rank - y.dims());
    const int64_t sx = dx >= 0 ? x.dim_size(dx) : 1;
    const int64_t sy = dy >= 0 ? y.dim_size(dy) : 1;
    plan->dims[d] = dims[d];
    plan->a_strides[d] = sx == 1 ? 0 : stride_x;
    plan->b_strides[d] = sy == 1 ? 0 : stride_y;
    stride_x *= sx;
    stride_y *= sy;
  }
  return absl::OkStatus();
}

template <BinaryOp op>
class BinaryGpuOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* c) override {
    const Tensor& x = c->input(0);
    const Tensor& y = c->input(1);
    BroadcastPlan plan;
    TensorShape shape;
    OP_REQUIRES_OK(c, MakePlan(x.shape(), y.shape(), &plan, &shape));
    LaunchOnGpu(*this, c, shape, [&](cudaStream_t stream, float* out) {
      return cuda::LaunchBinary(op, plan, x.data<float>(), y.data<float>(), out, stream);
    });
  }
};

class ReluGpuOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* c) override {
    const Tensor& x = c->input(0);
    LaunchOnGpu(*this, c, x.shape(), [&](cudaStream_t stream, float* out) {
      return cuda::LaunchRelu(x.data<float>(), out, x.NumElements(), stream);
    });
  }
};

class ReluGradGpuOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* c) override {
    const Tensor& g = c->input(0);
    const Tensor& f = c->input(1);
    OP_REQUIRES_OK(c, CheckSameShape("gradients", g, "features", f));
    LaunchOnGpu(*this, c, g.shape(), [&](cudaStream_t stream, float* out) {
      return cuda::LaunchReluGrad(g.data<float>(), f.data<float>(), out,
                                  g.NumElements(), stream);
    });
  }
};

// NHWC only (the channels are the last dimension): an NCHW BiasAdd fails at
// construction, naming the node, so a graph asking for one on the GPU is
// told to place it on the CPU.
class BiasAddGpuOp : public OpKernel {
 public:
  explicit BiasAddGpuOp(OpKernelConstruction* c) : OpKernel(c) {
    std::string format = "NHWC";
    (void)c->GetAttr("data_format", &format);
    if (format != "NHWC") {
      c->SetStatus(absl::UnimplementedError(absl::StrCat(
          "BiasAdd node '", c->def().name(), "': the GPU kernel supports ",
          "data_format NHWC only, not '", format, "'; place the node on the CPU")));
    }
  }
  void Compute(OpKernelContext* c) override {
    const Tensor& value = c->input(0);
    const Tensor& bias = c->input(1);
    OP_REQUIRES(c, value.dims() >= 2 && bias.dims() == 1 &&
                       bias.dim_size(0) == value.dim_size(value.dims() - 1),
                absl::InvalidArgumentError(absl::StrCat(
                    "BiasAdd node '", name(), "' needs a value of rank >= 2 and a ",
                    "bias as long as its last dimension, got ",
                    value.shape().DebugString(), " and ", bias.shape().DebugString())));
    LaunchOnGpu(*this, c, value.shape(), [&](cudaStream_t stream, float* out) {
      return cuda::LaunchBiasAdd(value.data<float>(), bias.data<float>(), out,
                                 value.NumElements(), bias.dim_size(0), stream);
    });
  }
};

// A float Const: its value is copied to the GPU once, when the kernel is
// made, and shared by every step (consumers never write their inputs).
// Partitioning needs it: a control edge leaving a GPU is carried by an
// empty float Const on that GPU.
class ConstGpuOp : public OpKernel {
 public:
  explicit ConstGpuOp(OpKernelConstruction* c) : OpKernel(c) {
    Tensor host;
    absl::Status s = c->GetAttr("value", &host);
    if (s.ok() && host.dtype() != DT_FLOAT) {
      s = absl::InvalidArgumentError(absl::StrCat(
          "Const node '", c->def().name(), "' on the GPU: value is ",
          DataTypeString(host.dtype()), ", not float"));
    }
    if (s.ok()) {
      absl::StatusOr<Tensor> device =
          CopyTensorToAllocator(host, c->device()->allocator());
      s = device.status();
      if (s.ok()) value_ = *std::move(device);
    }
    c->SetStatus(s);
  }
  void Compute(OpKernelContext* c) override { c->set_output(0, value_); }

 private:
  Tensor value_;  // in device memory
};

// Passes the device tensor on: no copy, no kernel.
class IdentityGpuOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* c) override { c->set_output(0, c->input(0)); }
};

}  // namespace

void RegisterCwiseGpuKernels(KernelRegistry* r) {
  auto def = [](const char* op) {
    return KernelDef(op, kDeviceTypeGpu).TypeConstraint("T", DT_FLOAT);
  };
  r->Register(def("Add"), MakeKernel<BinaryGpuOp<BinaryOp::kAdd>>);
  r->Register(def("AddV2"), MakeKernel<BinaryGpuOp<BinaryOp::kAdd>>);
  r->Register(def("Sub"), MakeKernel<BinaryGpuOp<BinaryOp::kSub>>);
  r->Register(def("Mul"), MakeKernel<BinaryGpuOp<BinaryOp::kMul>>);
  r->Register(def("Relu"), MakeKernel<ReluGpuOp>);
  r->Register(def("ReluGrad"), MakeKernel<ReluGradGpuOp>);
  r->Register(def("BiasAdd"), MakeKernel<BiasAddGpuOp>);
  r->Register(def("Identity"), MakeKernel<IdentityGpuOp>);
  r->Register(KernelDef("Const", kDeviceTypeGpu).TypeConstraint("dtype", DT_FLOAT),
              MakeKernel<ConstGpuOp>);
}

}  // namespace weft
