// Kernels on half and bfloat16 that run the op's float kernel: each half or
// bfloat16 input is widened to a float tensor (exactly), the float kernel
// of the same registry computes on them, and each float output is rounded
// once to the node's type. For one operation that is what TensorFlow's
// Eigen::half / bfloat16 kernels compute; its matmuls and convolutions on
// these types accumulate in float too.
//
// One mechanism for every op: the node is re-read with each half or
// bfloat16 type attr (and list(type) entry) set to float, the float kernel
// is built from that node when the narrow one is, and Compute runs it on a
// context of its own whose inputs are the widened tensors. Inputs and
// outputs of other types (labels, ksize, strides) pass through unchanged.
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "ops/cpu/cwise_parallel.h"
#include "ops/cpu/narrow_convert.h"
#include "ops/cpu/nn_register.h"
#include "proto/attr_value.pb.h"
#include "runtime/core/status.h"

namespace weft {
namespace {

bool IsNarrow(DataType t) { return t == DT_HALF || t == DT_BFLOAT16; }

// `node` with every half / bfloat16 type attr and list(type) entry set to
// float.
tensorflow::NodeDef WidenedNode(const tensorflow::NodeDef& node) {
  tensorflow::NodeDef wide = node;
  for (auto& [name, value] : *wide.mutable_attr()) {
    if (value.value_case() == tensorflow::AttrValue::kType) {
      if (IsNarrow(value.type())) value.set_type(DT_FLOAT);
    } else if (value.value_case() == tensorflow::AttrValue::kList) {
      auto* types = value.mutable_list()->mutable_type();
      for (int i = 0; i < types->size(); ++i) {
        if (IsNarrow(static_cast<DataType>(types->Get(i)))) {
          types->Set(i, DT_FLOAT);
        }
      }
    }
  }
  return wide;
}

// Element-wise conversion over the intra-op pool (narrow_convert.h).
template <typename From, typename To>
void ConvertRange(OpKernelContext* c, const From* in, To* out, int64_t n,
                  void (*convert)(const From*, To*, int64_t)) {
  ParallelRange(c, n, 2, [&](int64_t b, int64_t e) {
    convert(in + b, out + b, e - b);
  });
}

Tensor Widen(OpKernelContext* c, const Tensor& t) {
  Tensor wide(DT_FLOAT, t.shape());
  if (!wide.IsInitialized()) return wide;
  if (t.dtype() == DT_HALF) {
    ConvertRange(c, t.data<Half>(), wide.data<float>(), t.NumElements(),
                 HalfToFloatN);
  } else {
    ConvertRange(c, t.data<BFloat16>(), wide.data<float>(), t.NumElements(),
                 BFloat16ToFloatN);
  }
  return wide;
}

absl::Status Narrow(OpKernelContext* c, int i, const Tensor& wide) {
  if (wide.dtype() != DT_FLOAT) {
    return absl::InternalError(absl::StrCat(
        "the float kernel of ", c->op_kernel().type_string(), " gave output ",
        i, " as ", DataTypeString(wide.dtype()), ", not float"));
  }
  Tensor* out = nullptr;
  WEFT_RETURN_IF_ERROR(c->allocate_output(i, wide.shape(), &out));
  if (c->expected_output_dtype(i) == DT_HALF) {
    ConvertRange(c, wide.data<float>(), out->data<Half>(), wide.NumElements(),
                 FloatToHalfN);
  } else {
    ConvertRange(c, wide.data<float>(), out->data<BFloat16>(),
                 wide.NumElements(), FloatToBFloat16N);
  }
  return absl::OkStatus();
}

class ViaFloatKernel : public OpKernel {
 public:
  ViaFloatKernel(OpKernelConstruction* c, const KernelRegistry* registry)
      : OpKernel(c) {
    absl::StatusOr<std::unique_ptr<OpKernel>> inner = registry->CreateKernel(
        WidenedNode(c->def()), c->op_def(), c->device());
    if (!inner.ok()) {
      c->SetStatus(inner.status());
      return;
    }
    float_kernel_ = *std::move(inner);
    if (float_kernel_->IsAsync()) {  // Compute below runs it synchronously
      c->SetStatus(absl::InternalError(absl::StrCat(
          "the float kernel of ", c->def().op(), " is asynchronous")));
      return;
    }
    set_expensive(float_kernel_->IsExpensive());
  }

  void Compute(OpKernelContext* c) override {
    const int n_in = num_inputs();
    std::vector<TensorEntry> inputs(n_in);
    std::vector<TensorEntry> outputs(num_outputs());
    for (int i = 0; i < n_in; ++i) {
      const Tensor& t = c->input(i);
      inputs[i].has_value = true;
      if (!IsNarrow(input_types()[i])) {
        inputs[i].value = t;
        continue;
      }
      inputs[i].value = Widen(c, t);
      OP_REQUIRES(c, inputs[i].value.IsInitialized(),
                  absl::ResourceExhaustedError(absl::StrCat(
                      "widening input ", i, " ", t.shape().DebugString(),
                      " to float")));
    }
    OpKernelContext::Params p;
    p.device = c->device();
    p.kernel = float_kernel_.get();
    p.inputs = inputs.data();
    p.outputs = outputs.data();
    p.step_id = c->step_id();
    p.call_frame = c->call_frame();
    p.rendezvous = c->rendezvous();
    p.collectives = c->collectives();
    p.cancellation = c->cancellation();
    p.resource_mgr = c->resource_manager();
    p.functions = c->functions();
    p.is_input_dead = c->is_input_dead();
    p.frame_id = c->frame_id();
    p.iter_id = c->iter_id();
    OpKernelContext wide(p);
    float_kernel_->Compute(&wide);
    OP_REQUIRES_OK(c, wide.status());
    for (int i = 0; i < num_outputs(); ++i) {
      if (!outputs[i].has_value) continue;
      if (IsNarrow(output_types()[i])) {
        OP_REQUIRES_OK(c, Narrow(c, i, outputs[i].value));
      } else {
        c->set_output(i, std::move(outputs[i].value));
      }
    }
  }

 private:
  std::unique_ptr<OpKernel> float_kernel_;
};

// `op` for each of `types` (half, bfloat16): each attr of `attrs` set to
// that type.
void RegisterViaFloat(KernelRegistry* r, const char* op,
                      std::initializer_list<const char*> attrs = {"T"},
                      DataTypeVector types = {DT_HALF, DT_BFLOAT16}) {
  for (DataType t : types) {
    KernelDef def(op, kDeviceTypeCpu);
    for (const char* attr : attrs) def.TypeConstraint(attr, t);
    r->Register(std::move(def), [r](OpKernelConstruction* c) {
      return std::make_unique<ViaFloatKernel>(c, r);
    });
  }
}

}  // namespace

void RegisterViaFloatKernels(KernelRegistry* r) {
  // Neural-network ops on half and bfloat16.
  for (const char* op :
       {"BiasAdd", "BiasAddGrad", "Relu", "ReluGrad", "Relu6", "Relu6Grad",
        "Elu", "EluGrad", "Selu", "SeluGrad", "LeakyRelu", "LeakyReluGrad",
        "Softplus", "SoftplusGrad", "Softsign", "SoftsignGrad", "Softmax",
        "LogSoftmax", "SoftmaxCrossEntropyWithLogits",
        "SparseSoftmaxCrossEntropyWithLogits", "L2Loss", "MaxPool",
        "MaxPoolV2", "MaxPoolGrad", "MaxPoolGradV2", "MaxPoolGradGrad",
        "MaxPoolGradGradV2", "AvgPool",
        "AvgPoolGrad", "MatMul", "BatchMatMulV2", "Conv2D",
        "Conv2DBackpropInput", "Conv2DBackpropFilter",
        "DepthwiseConv2dNative", "DepthwiseConv2dNativeBackpropInput",
        "DepthwiseConv2dNativeBackpropFilter", "_FusedConv2D",
        "_FusedMatMul"}) {
    RegisterViaFloat(r, op);
  }
  // TensorFlow has BatchMatMulV3 on bfloat16, not on half.
  RegisterViaFloat(r, "BatchMatMulV3", {"Ta", "Tb", "Tout"}, {DT_BFLOAT16});
  // Gradients sum into AddN: a mixed-precision training step needs it.
  RegisterViaFloat(r, "AddN");
  // Element-wise math on bfloat16; half has its own kernels (cwise_kernels_
  // half.cc, math_half_kernels.cc), which round where Eigen::half rounds
  // inside multi-step ops. Comparisons give their bool outputs as is.
  for (const char* op :
       {"Abs", "Acos", "Acosh", "Add", "AddV2", "Asin", "Asinh", "Atan",
        "Atan2", "Atanh", "Ceil", "Cos", "Cosh", "Div", "Equal", "Erf",
        "Erfc", "Exp", "Expm1", "Floor", "FloorDiv", "FloorMod", "Greater",
        "GreaterEqual", "IsFinite", "IsInf", "IsNan", "Less", "LessEqual",
        "Log", "Log1p", "Maximum", "Minimum", "Mul", "Neg", "NotEqual", "Pow",
        "RealDiv", "Reciprocal", "ReciprocalGrad", "Round", "Rsqrt",
        "RsqrtGrad", "Sigmoid", "SigmoidGrad", "Sign", "Sin", "Sinh", "Sqrt",
        "SqrtGrad", "Square", "SquaredDifference", "Sub", "Tan", "Tanh",
        "TanhGrad", "TruncateDiv", "Xdivy", "Xlog1py", "Xlogy",
        "CropAndResize", "CropAndResizeGradBoxes", "FusedBatchNormV2",
        "FusedBatchNormV3", "FusedBatchNormGradV2", "FusedBatchNormGradV3"}) {
    RegisterViaFloat(r, op, {"T"}, {DT_BFLOAT16});
  }
  // Both narrow types. (TensorFlow also registers the Bincount family on
  // them, but its OpDefs take no half or bfloat16 weights.)
  for (const char* op : {"ClipByValue", "DivNoNan", "Einsum", "ListDiff"}) {
    RegisterViaFloat(r, op);
  }
  RegisterViaFloat(r, "Range", {"Tidx"});
  for (const char* op : {"MatrixInverse", "Qr"}) {
    RegisterViaFloat(r, op, {"T"}, {DT_HALF});
  }
}

}  // namespace weft
