// BiasAdd and BiasAddGrad. The channel dim is the last one (NHWC), or dim 1
// for NCHW inputs of rank 3 or more (a rank-2 NCHW input has its channels
// last, as in TensorFlow's kernel). Integer sums wrap as TensorFlow's do
// (wrapping.h, through functor::Add and SumReducer).
#include <vector>

#include "absl/strings/str_cat.h"
#include "ops/cpu/cwise_functors.h"
#include "ops/cpu/cwise_ops.h"
#include "ops/cpu/nn_register.h"
#include "ops/cpu/reduction_ops.h"

namespace weft {
namespace {

absl::StatusOr<bool> ReadNchw(OpKernelConstruction* c) {
  std::string format;
  WEFT_RETURN_IF_ERROR(c->GetAttr("data_format", &format));
  if (format != "NHWC" && format != "NCHW") {
    return absl::InvalidArgumentError(
        absl::StrCat("data_format must be NHWC or NCHW, got '", format, "'"));
  }
  return format == "NCHW";
}

absl::Status CheckAtLeast2D(const Tensor& t) {
  if (t.dims() >= 2) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(
      "Input tensor must be at least 2D: ", t.shape().DebugString()));
}

int ChannelDim(const Tensor& t, bool nchw) {
  return nchw && t.dims() >= 3 ? 1 : t.dims() - 1;
}

template <typename T>
class BiasAddOp : public OpKernel {
 public:
  explicit BiasAddOp(OpKernelConstruction* c) : OpKernel(c) {
    absl::StatusOr<bool> nchw = ReadNchw(c);
    c->SetStatus(nchw.status());
    nchw_ = nchw.value_or(false);
  }

  void Compute(OpKernelContext* c) override {
    const Tensor& value = c->input(0);
    const Tensor& bias = c->input(1);
    OP_REQUIRES_OK(c, CheckAtLeast2D(value));
    OP_REQUIRES(c, bias.dims() == 1,
                absl::InvalidArgumentError(absl::StrCat(
                    "Biases must be 1D: ", bias.shape().DebugString())));
    const int channel = ChannelDim(value, nchw_);
    OP_REQUIRES(c, bias.dim_size(0) == value.dim_size(channel),
                absl::InvalidArgumentError(absl::StrCat(
                    "Must provide as many biases as the ",
                    channel == value.dims() - 1 ? "last" : "channel",
                    " dimension of the input tensor: ",
                    bias.shape().DebugString(), " vs. ",
                    value.shape().DebugString())));
    Tensor* out = nullptr;
    OP_REQUIRES_OK(c, ForwardOrAllocateOutput(c, {0}, value.shape(), &out));
    if (value.NumElements() == 0) return;
    // The bias as a shape that broadcasts along the channel dim: [C] or
    // [C, 1, ..., 1].
    TensorShape bias_shape({bias.dim_size(0)});
    for (int i = channel + 1; i < value.dims(); ++i) bias_shape.AddDim(1);
    absl::StatusOr<BroadcastPlan> plan =
        MakeBroadcastPlan(value.shape(), bias_shape);
    OP_REQUIRES_OK(c, plan.status());
    BinaryBroadcast<functor::Add>(c, *plan, value.data<T>(), bias.data<T>(),
                                  out->data<T>());
  }

 private:
  bool nchw_ = false;
};

// The sum of out_backprop over every dim but the channel dim.
template <typename T>
class BiasAddGradOp : public OpKernel {
 public:
  explicit BiasAddGradOp(OpKernelConstruction* c) : OpKernel(c) {
    absl::StatusOr<bool> nchw = ReadNchw(c);
    c->SetStatus(nchw.status());
    nchw_ = nchw.value_or(false);
  }

  void Compute(OpKernelContext* c) override {
    const Tensor& grad = c->input(0);
    OP_REQUIRES_OK(c, CheckAtLeast2D(grad));
    const int channel = ChannelDim(grad, nchw_);
    std::vector<bool> reduce(grad.dims(), true);
    reduce[channel] = false;
    const ReductionPlan plan =
        MakeReductionPlanFromMask(grad.shape(), reduce, /*keep_dims=*/false);
    Tensor* out = nullptr;
    OP_REQUIRES_OK(c, c->allocate_output(0, plan.out_shape, &out));
    OP_REQUIRES_OK(c, ReduceWithPlan<SumReducer>(c, plan, grad.data<T>(),
                                                 out->data<T>()));
  }

 private:
  bool nchw_ = false;
};

template <typename T>
void RegisterBias(KernelRegistry* r) {
  RegisterCpuKernel<BiasAddOp<T>, T>(r, "BiasAdd");
  RegisterCpuKernel<BiasAddGradOp<T>, T>(r, "BiasAddGrad");
}

}  // namespace

void RegisterBiasKernels(KernelRegistry* r) {
  RegisterBias<float>(r);
  RegisterBias<double>(r);
  RegisterBias<int32_t>(r);
  RegisterBias<int64_t>(r);
  RegisterBias<int8_t>(r);
  RegisterBias<int16_t>(r);
  RegisterBias<uint8_t>(r);
  RegisterBias<uint16_t>(r);
  RegisterBias<uint32_t>(r);
  RegisterBias<uint64_t>(r);
  RegisterBias<Complex64>(r);
  RegisterBias<Complex128>(r);
}

}  // namespace weft
