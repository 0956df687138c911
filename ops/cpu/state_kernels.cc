// Legacy reference variables: VariableV2 outputs a ref to a Var living in the
// device's ResourceMgr; Assign, AssignAdd, AssignSub and ApplyGradientDescent
// change it through their ref input and forward the ref; IsVariableInitialized
// says whether it holds a value yet; CountUpTo increments an integer one up
// to a limit.
//
// All access to the variable's tensor happens under the Var's mutex (taken
// from the ref input). Updates write the variable's buffer in place
// (state_update.h, Writes::kInPlace): a `v/read` taken earlier in a step
// and used after an update sees the update, as in TensorFlow.
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "ops/cpu/state_kernels.h"
#include "ops/cpu/state_update.h"
#include "ops/framework/op_kernel.h"
#include "ops/registration.h"
#include "runtime/core/resource_mgr.h"

namespace weft {

// ops/cpu/temporary_variable_kernels.cc (declared here rather than in
// ops/registration.h, which every kernel includes).
void RegisterTemporaryVariableKernels(KernelRegistry* r);

namespace {

class VariableOp : public OpKernel {
 public:
  explicit VariableOp(OpKernelConstruction* c) : OpKernel(c) {
    absl::Status s = c->GetAttr("dtype", &dtype_);
    if (s.ok()) s = c->GetAttr("shape", &shape_);
    if (s.ok()) s = c->GetAttr("container", &container_);
    if (s.ok()) s = c->GetAttr("shared_name", &shared_name_);
    c->SetStatus(s);
  }

  void Compute(OpKernelContext* c) override {
    std::shared_ptr<Var> var;
    {
      absl::MutexLock lock(&mu_);
      if (var_ == nullptr) {
        ResourceMgr* rm = c->resource_manager();
        const std::string container =
            container_.empty() ? rm->default_container() : container_;
        const std::string name = shared_name_.empty() ? this->name() : shared_name_;
        const DataType dtype = dtype_;
        absl::StatusOr<std::shared_ptr<Var>> found = rm->LookupOrCreate<Var>(
            container, name, [dtype] { return std::make_shared<Var>(dtype); });
        OP_REQUIRES_OK(c, found.status());
        OP_REQUIRES(c, (*found)->dtype() == dtype_,
                    absl::InvalidArgumentError(absl::StrCat(
                        "Trying to share variable ", name, " (container ",
                        container, ") with dtype ", DataTypeString(dtype_),
                        ", but it already exists with dtype ",
                        DataTypeString((*found)->dtype()))));
        var_ = *std::move(found);
      }
      var = var_;
    }
    c->set_output_ref(0, var->mu(), var->tensor());
  }

 private:
  DataType dtype_ = DT_INVALID;
  PartialShape shape_;
  std::string container_, shared_name_;
  absl::Mutex mu_;
  std::shared_ptr<Var> var_ ABSL_GUARDED_BY(mu_);
};

// The variable's name for messages: the node feeding the ref input.
std::string RefName(const OpKernelConstruction* c) {
  return c->def().input_size() > 0 ? c->def().input(0) : "<unknown>";
}

absl::Status Uninitialized(const std::string& name) {
  return absl::FailedPreconditionError(
      absl::StrCat("Attempting to use uninitialized value ", name));
}

class AssignOp : public OpKernel {
 public:
  explicit AssignOp(OpKernelConstruction* c) : OpKernel(c), var_name_(RefName(c)) {
    c->SetStatus(c->GetAttr("validate_shape", &validate_shape_));
  }
  void Compute(OpKernelContext* c) override {
    OP_REQUIRES(c, c->input_is_ref(0),
                absl::InvalidArgumentError("Assign's ref input is not a reference"));
    const Tensor& value = c->input(1);
    {
      absl::MutexLock lock(c->input_ref_mutex(0));
      Tensor* var = c->mutable_input(0);
      OP_REQUIRES(c, !validate_shape_ || !var->IsInitialized() ||
                         var->shape() == value.shape(),
                  absl::InvalidArgumentError(absl::StrCat(
                      "Assign requires shapes of both tensors to match. "
                      "lhs shape= ", var->shape().DebugString(),
                      " rhs shape= ", value.shape().DebugString(),
                      " (variable ", var_name_, ")")));
      OP_REQUIRES_OK(c, AssignValue(var, value, Writes::kInPlace));
    }
    c->forward_ref_input_to_ref_output(0, 0);
  }

 private:
  const std::string var_name_;
  bool validate_shape_ = true;
};

// AssignAdd, AssignSub and ApplyGradientDescent.
class RefUpdateOp : public OpKernel {
 public:
  RefUpdateOp(OpKernelConstruction* c, UpdateKind kind)
      : OpKernel(c), kind_(kind), var_name_(RefName(c)) {}
  void Compute(OpKernelContext* c) override {
    OP_REQUIRES(c, c->input_is_ref(0),
                absl::InvalidArgumentError(absl::StrCat(
                    type_string(), "'s first input is not a reference")));
    const bool gd = kind_ == UpdateKind::kScaleSub;
    const Tensor* alpha = gd ? &c->input(1) : nullptr;
    const Tensor& value = c->input(gd ? 2 : 1);
    if (gd) {
      OP_REQUIRES(c, alpha->dims() == 0,
                  absl::InvalidArgumentError(absl::StrCat(
                      "alpha is not a scalar: ", alpha->shape().DebugString())));
    }
    {
      absl::MutexLock lock(c->input_ref_mutex(0));
      Tensor* var = c->mutable_input(0);
      OP_REQUIRES(c, var->IsInitialized(), Uninitialized(var_name_));
      OP_REQUIRES(c, var->shape() == value.shape(),
                  absl::InvalidArgumentError(absl::StrCat(
                      type_string(), ": variable ", var_name_, " has shape ",
                      var->shape().DebugString(), " but the ",
                      gd ? "delta" : "value", " has shape ",
                      value.shape().DebugString())));
      OP_REQUIRES_OK(c, ApplyUpdate(kind_, var, value, alpha, Writes::kInPlace));
    }
    c->forward_ref_input_to_ref_output(0, 0);
  }

 private:
  const UpdateKind kind_;
  const std::string var_name_;
};

// Whether the variable behind the ref input holds a value yet.
class IsVariableInitializedOp : public OpKernel {
 public:
  explicit IsVariableInitializedOp(OpKernelConstruction* c) : OpKernel(c) {}
  void Compute(OpKernelContext* c) override {
    OP_REQUIRES(c, c->input_is_ref(0),
                absl::InvalidArgumentError(
                    "IsVariableInitialized's input is not a reference"));
    bool initialized;
    {
      absl::MutexLock lock(c->input_ref_mutex(0));
      initialized = c->mutable_input(0)->IsInitialized();
    }
    Tensor* out;
    OP_REQUIRES_OK(c, c->allocate_output(0, TensorShape(), &out));
    out->scalar<bool>() = initialized;
  }
};

// CountUpTo: the variable's value, which it then increments; OUT_OF_RANGE
// at the limit.
class CountUpToOp : public OpKernel {
 public:
  explicit CountUpToOp(OpKernelConstruction* c) : OpKernel(c), var_name_(RefName(c)) {
    c->SetStatus(c->GetAttr("limit", &limit_));
  }
  void Compute(OpKernelContext* c) override {
    OP_REQUIRES(c, c->input_is_ref(0),
                absl::InvalidArgumentError("CountUpTo's input is not a reference"));
    absl::StatusOr<Tensor> before;
    {
      absl::MutexLock lock(c->input_ref_mutex(0));
      before = CountUp(c->mutable_input(0), limit_, var_name_, Writes::kInPlace);
    }
    OP_REQUIRES_OK(c, before.status());
    c->set_output(0, *std::move(before));
  }

 private:
  const std::string var_name_;
  int64_t limit_ = 0;
};

template <UpdateKind kKind>
std::unique_ptr<OpKernel> MakeRefUpdate(OpKernelConstruction* c) {
  return std::make_unique<RefUpdateOp>(c, kKind);
}

}  // namespace

void RegisterStateKernels(KernelRegistry* r) {
  r->Register(KernelDef("VariableV2", kDeviceTypeCpu), MakeKernel<VariableOp>);
  r->Register(KernelDef("Assign", kDeviceTypeCpu), MakeKernel<AssignOp>);
  r->Register(KernelDef("IsVariableInitialized", kDeviceTypeCpu),
              MakeKernel<IsVariableInitializedOp>);
  r->Register(KernelDef("CountUpTo", kDeviceTypeCpu), MakeKernel<CountUpToOp>);
  r->Register(KernelDef("AssignAdd", kDeviceTypeCpu).TypeConstraint("T", UpdatableTypes()),
              MakeRefUpdate<UpdateKind::kAdd>);
  r->Register(KernelDef("AssignSub", kDeviceTypeCpu).TypeConstraint("T", UpdatableTypes()),
              MakeRefUpdate<UpdateKind::kSub>);
  r->Register(KernelDef("ApplyGradientDescent", kDeviceTypeCpu)
                  .TypeConstraint("T", UpdatableTypes()),
              MakeRefUpdate<UpdateKind::kScaleSub>);
  RegisterResourceVariableKernels(r);
  RegisterScatterKernels(r);
  RegisterTemporaryVariableKernels(r);
}

}  // namespace weft
