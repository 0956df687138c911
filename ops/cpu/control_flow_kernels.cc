// Control-flow and function-call kernels.
//
// Deadness: an output a kernel leaves unset is "dead"; the executor
// propagates deadness to consumers (skipping them) except into Merge, which
// sees dead inputs through has_input(). Switch sets only the output its
// predicate selects; Merge forwards the first live input.
//
// Enter, Exit and NextIteration (and their Ref variants, which forward the
// ref) pass data through; the executor gives them their frame semantics.
// ControlTrigger does nothing; the executor runs it even when its control
// inputs are dead. _Arg and _Retval move values in and out of the
// step's CallFrame.
#include <string>
#include <type_traits>

#include "absl/strings/str_cat.h"
#include "ops/framework/call_frame.h"
#include "ops/framework/op_kernel.h"
#include "ops/registration.h"

namespace weft {
namespace {

class NoOp : public OpKernel {
 public:
  explicit NoOp(OpKernelConstruction* c) : OpKernel(c) {}
  void Compute(OpKernelContext*) override {}
};

// Passes input 0 (or its ref) to output 0.
class ForwardOp : public OpKernel {
 public:
  explicit ForwardOp(OpKernelConstruction* c) : OpKernel(c) {}
  void Compute(OpKernelContext* c) override {
    if (c->input_is_ref(0)) {
      c->forward_ref_input_to_ref_output(0, 0);
    } else {
      c->set_output(0, c->input(0));
    }
  }
};

class SwitchOp : public OpKernel {
 public:
  explicit SwitchOp(OpKernelConstruction* c) : OpKernel(c) {}
  void Compute(OpKernelContext* c) override {
    const Tensor& pred = c->input(1);
    OP_REQUIRES(c, pred.dims() == 0 && pred.dtype() == DT_BOOL,
                absl::InvalidArgumentError(absl::StrCat(
                    "The second input must be a scalar bool, but it has shape ",
                    pred.shape().DebugString())));
    const int taken = pred.scalar<bool>() ? 1 : 0;  // output_false, output_true
    if (c->input_is_ref(0)) {
      c->forward_ref_input_to_ref_output(0, taken);
    } else {
      c->set_output(taken, c->input(0));
    }
  }
};

class SwitchNOp : public OpKernel {
 public:
  explicit SwitchNOp(OpKernelConstruction* c) : OpKernel(c) {}
  void Compute(OpKernelContext* c) override {
    const Tensor& index = c->input(1);
    OP_REQUIRES(c, index.dims() == 0 && index.dtype() == DT_INT32,
                absl::InvalidArgumentError(absl::StrCat(
                    "output_index must be a scalar int32, but it has shape ",
                    index.shape().DebugString())));
    const int32_t i = index.scalar<int32_t>();
    const int n = c->num_outputs();
    c->set_output(i >= 0 && i < n ? i : n - 1, c->input(0));
  }
};

class ToBoolOp : public OpKernel {
 public:
  explicit ToBoolOp(OpKernelConstruction* c) : OpKernel(c) {}
  void Compute(OpKernelContext* c) override {
    const Tensor& in = c->input(0);
    bool truth = in.NumElements() > 0;
    if (in.dims() == 0) {
      const DataType dt = in.dtype();
      if (dt == DT_STRING) {
        truth = !in.scalar<std::string>().empty();
      } else if (DataTypeSize(dt) > 0 && !DataTypeIsObject(dt)) {
        WEFT_SWITCH_ALL_TYPES(dt, truth = !IsZero(in.scalar<T>()), {
          c->SetStatus(absl::InvalidArgumentError(absl::StrCat(
              "cannot take the truth of a ", DataTypeString(dt), " scalar")));
          return;
        });
      } else {
        c->SetStatus(absl::InvalidArgumentError(absl::StrCat(
            "cannot take the truth of a ", DataTypeString(dt), " scalar")));
        return;
      }
    }
    c->set_output(0, Tensor::Scalar<bool>(truth));
  }

 private:
  template <typename T>
  static bool IsZero(const T& v) {
    if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) {
      return (v.bits & 0x7fff) == 0;
    } else if constexpr (std::is_same_v<T, std::string> ||
                         std::is_same_v<T, ResourceHandle>) {
      return false;
    } else {
      return v == T{};
    }
  }
};

class MergeOp : public OpKernel {
 public:
  explicit MergeOp(OpKernelConstruction* c) : OpKernel(c) {}
  void Compute(OpKernelContext* c) override {
    for (int i = 0; i < c->num_inputs(); ++i) {
      if (!c->has_input(i)) continue;
      if (c->input_is_ref(i)) {
        c->forward_ref_input_to_ref_output(i, 0);
      } else {
        c->set_output(0, c->input(i));
      }
      c->set_output(1, Tensor::Scalar<int32_t>(i));
      return;
    }
    // Every input dead: both outputs stay unset (dead).
  }
};

class ArgOp : public OpKernel {
 public:
  explicit ArgOp(OpKernelConstruction* c) : OpKernel(c) {
    c->SetStatus(c->GetAttr("index", &index_));
  }
  void Compute(OpKernelContext* c) override {
    CallFrame* frame = c->call_frame();
    OP_REQUIRES(c, frame != nullptr,
                absl::FailedPreconditionError(absl::StrCat(
                    "_Arg node '", name(), "' ran without a call frame")));
    Tensor value;
    OP_REQUIRES_OK(c, frame->GetArg(static_cast<int>(index_), &value));
    const DataType want = c->expected_output_dtype(0);
    OP_REQUIRES(c, value.dtype() == want,
                absl::InvalidArgumentError(absl::StrCat(
                    "Type mismatch: actual ", DataTypeString(value.dtype()),
                    " vs. expect ", DataTypeString(want), " for argument ",
                    index_, " ('", name(), "')")));
    c->set_output(0, std::move(value));
  }

 private:
  int64_t index_ = 0;
};

class RetvalOp : public OpKernel {
 public:
  explicit RetvalOp(OpKernelConstruction* c)
      : OpKernel(c),
        input_name_(c->def().input_size() > 0 ? c->def().input(0) : "input 0") {
    c->SetStatus(c->GetAttr("index", &index_));
  }
  void Compute(OpKernelContext* c) override {
    CallFrame* frame = c->call_frame();
    OP_REQUIRES(c, frame != nullptr,
                absl::FailedPreconditionError(absl::StrCat(
                    "_Retval node '", name(), "' ran without a call frame")));
    const Tensor& value = c->input(0);
    OP_REQUIRES(c, value.IsInitialized(),
                absl::FailedPreconditionError(absl::StrCat(
                    "Attempting to use uninitialized value ", input_name_,
                    " (fetched by '", name(), "')")));
    OP_REQUIRES_OK(c, frame->SetRetval(static_cast<int>(index_), value));
  }

 private:
  const std::string input_name_;
  int64_t index_ = 0;
};

}  // namespace

void RegisterControlFlowKernels(KernelRegistry* r) {
  r->Register(KernelDef("NoOp", kDeviceTypeCpu), MakeKernel<NoOp>);
  r->Register(KernelDef("ControlTrigger", kDeviceTypeCpu), MakeKernel<NoOp>);
  for (const char* op : {"Switch", "RefSwitch"}) {
    r->Register(KernelDef(op, kDeviceTypeCpu), MakeKernel<SwitchOp>);
  }
  r->Register(KernelDef("_SwitchN", kDeviceTypeCpu), MakeKernel<SwitchNOp>);
  r->Register(KernelDef("ToBool", kDeviceTypeCpu), MakeKernel<ToBoolOp>);
  for (const char* op : {"Merge", "RefMerge"}) {
    r->Register(KernelDef(op, kDeviceTypeCpu), MakeKernel<MergeOp>);
  }
  for (const char* op :
       {"Enter", "Exit", "NextIteration", "LoopCond", "RefEnter", "RefExit",
        "RefNextIteration", "RefIdentity"}) {
    r->Register(KernelDef(op, kDeviceTypeCpu), MakeKernel<ForwardOp>);
  }
  RegisterStackKernels(r);
  RegisterAssertKernel(r);
  r->Register(KernelDef("_Arg", kDeviceTypeCpu), MakeKernel<ArgOp>);
  r->Register(KernelDef("_Retval", kDeviceTypeCpu), MakeKernel<RetvalOp>);
}

}  // namespace weft
