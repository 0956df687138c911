// Resource variables: VarHandleOp makes a DT_RESOURCE handle naming a Var in
// the device's ResourceMgr; the other kernels look the Var up through the
// handle and read or change it under its mutex. Errors name the variable.
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "ops/cpu/array_util.h"
#include "ops/cpu/resource_variable.h"
#include "ops/cpu/state_kernels.h"
#include "ops/cpu/state_update.h"
#include "ops/framework/op_kernel.h"
#include "runtime/core/resource_mgr.h"

namespace weft {
namespace {

// TensorFlow's ResourceHandle::ANONYMOUS_NAME (eager-only variables).
constexpr char kAnonymousName[] = "cd2c89b7-88b7-44c8-ad83-06c2a9158347";

class VarHandleOp : public OpKernel {
 public:
  explicit VarHandleOp(OpKernelConstruction* c) : OpKernel(c) {
    std::string container, shared_name;
    DataType dtype;
    absl::Status s = c->GetAttr("container", &container);
    if (s.ok()) s = c->GetAttr("shared_name", &shared_name);
    if (s.ok()) s = c->GetAttr("dtype", &dtype);
    if (s.ok() && shared_name == kAnonymousName) {
      s = absl::UnimplementedError(
          "anonymous resource variables (eager-only) are not supported");
    }
    if (!s.ok()) {
      c->SetStatus(s);
      return;
    }
    ResourceMgr* rm = c->device()->resource_manager();
    handle_ = Tensor(DT_RESOURCE, TensorShape());
    ResourceHandle& h = handle_.scalar<ResourceHandle>();
    h.device = c->device()->name();
    h.container = container.empty() ? rm->default_container() : container;
    h.name = shared_name.empty() ? c->def().name() : shared_name;
    h.dtype = dtype;
  }
  void Compute(OpKernelContext* c) override { c->set_output(0, handle_); }

 private:
  Tensor handle_;  // never written after construction
};

class ReadVariableOp : public OpKernel {
 public:
  explicit ReadVariableOp(OpKernelConstruction* c) : OpKernel(c) {
    c->SetStatus(c->GetAttr("dtype", &dtype_));
  }
  void Compute(OpKernelContext* c) override {
    absl::StatusOr<Tensor> value = ReadVariable(c, 0, dtype_);
    OP_REQUIRES_OK(c, value.status());
    c->set_output(0, *std::move(value));
  }

 private:
  DataType dtype_ = DT_INVALID;
};

class AssignVariableOp : public OpKernel {
 public:
  explicit AssignVariableOp(OpKernelConstruction* c) : OpKernel(c) {
    absl::Status s = c->GetAttr("dtype", &dtype_);
    // validate_shape is absent from graphs written before TF 2.12.
    if (s.ok() && c->HasAttr("validate_shape")) {
      s = c->GetAttr("validate_shape", &validate_shape_);
    }
    c->SetStatus(s);
  }
  void Compute(OpKernelContext* c) override {
    ResourceHandle h;
    OP_REQUIRES_OK(c, GetHandle(c, 0, &h));
    const Tensor& value = c->input(1);
    const DataType dtype = dtype_;
    absl::StatusOr<std::shared_ptr<Var>> var =
        c->resource_manager()->LookupOrCreate<Var>(
            h.container, h.name, [dtype] { return std::make_shared<Var>(dtype); });
    OP_REQUIRES_OK(c, var.status());
    OP_REQUIRES_OK(c, CheckDtype(h, **var, dtype_, "assign to"));
    absl::MutexLock lock((*var)->mu());
    Tensor* t = (*var)->tensor();
    OP_REQUIRES(c, !validate_shape_ || !t->IsInitialized() || t->shape() == value.shape(),
                absl::InvalidArgumentError(absl::StrCat(
                    "Trying to assign to ", VarLabel(h),
                    " with tensor with wrong shape. Expected ",
                    t->shape().DebugString(), " got ", value.shape().DebugString())));
    OP_REQUIRES_OK(c, AssignValue(t, value));
  }

 private:
  DataType dtype_ = DT_INVALID;
  bool validate_shape_ = false;
};

// AssignAddVariableOp, AssignSubVariableOp, ResourceApplyGradientDescent.
class ResourceUpdateOp : public OpKernel {
 public:
  ResourceUpdateOp(OpKernelConstruction* c, UpdateKind kind)
      : OpKernel(c), kind_(kind) {
    c->SetStatus(c->GetAttr(kind == UpdateKind::kScaleSub ? "T" : "dtype", &dtype_));
  }
  void Compute(OpKernelContext* c) override {
    ResourceHandle h;
    OP_REQUIRES_OK(c, GetHandle(c, 0, &h));
    const bool gd = kind_ == UpdateKind::kScaleSub;
    const Tensor* alpha = gd ? &c->input(1) : nullptr;
    const Tensor& value = c->input(gd ? 2 : 1);
    if (gd) {
      OP_REQUIRES(c, alpha->dims() == 0,
                  absl::InvalidArgumentError(absl::StrCat(
                      "alpha is not a scalar: ", alpha->shape().DebugString())));
    }
    absl::StatusOr<std::shared_ptr<Var>> var = LookupVar(c, h);
    OP_REQUIRES_OK(c, var.status());
    OP_REQUIRES_OK(c, CheckDtype(h, **var, dtype_, "update"));
    absl::MutexLock lock((*var)->mu());
    Tensor* t = (*var)->tensor();
    OP_REQUIRES(c, t->IsInitialized(),
                absl::FailedPreconditionError(absl::StrCat(
                    "Attempting to use uninitialized value ", h.name, " (",
                    VarLabel(h), ")")));
    OP_REQUIRES(c, t->shape() == value.shape(),
                absl::InvalidArgumentError(absl::StrCat(
                    "Cannot update ", VarLabel(h), " with shape ",
                    t->shape().DebugString(), " using a Tensor with shape ",
                    value.shape().DebugString(), ", shapes must be equal.")));
    OP_REQUIRES_OK(c, ApplyUpdate(kind_, t, value, alpha));
  }

 private:
  const UpdateKind kind_;
  DataType dtype_ = DT_INVALID;
};

template <UpdateKind kKind>
std::unique_ptr<OpKernel> MakeResourceUpdate(OpKernelConstruction* c) {
  return std::make_unique<ResourceUpdateOp>(c, kKind);
}

// ResourceCountUpTo: CountUpTo on a resource variable.
class ResourceCountUpToOp : public OpKernel {
 public:
  explicit ResourceCountUpToOp(OpKernelConstruction* c) : OpKernel(c) {
    absl::Status s = c->GetAttr("limit", &limit_);
    if (s.ok()) s = c->GetAttr("T", &dtype_);
    c->SetStatus(s);
  }
  void Compute(OpKernelContext* c) override {
    ResourceHandle h;
    OP_REQUIRES_OK(c, GetHandle(c, 0, &h));
    absl::StatusOr<std::shared_ptr<Var>> var = LookupVar(c, h);
    OP_REQUIRES_OK(c, var.status());
    OP_REQUIRES_OK(c, CheckDtype(h, **var, dtype_, "count up"));
    absl::StatusOr<Tensor> before;
    {
      absl::MutexLock lock((*var)->mu());
      before = CountUp((*var)->tensor(), limit_,
                       absl::StrCat(h.name, " (", VarLabel(h), ")"));
    }
    OP_REQUIRES_OK(c, before.status());
    c->set_output(0, *std::move(before));
  }

 private:
  int64_t limit_ = 0;
  DataType dtype_ = DT_INVALID;
};

// ResourceGather: GatherV2 on a snapshot of the variable, along the dim
// after the batch dims.
class ResourceGatherOp : public OpKernel {
 public:
  explicit ResourceGatherOp(OpKernelConstruction* c) : OpKernel(c) {
    absl::Status s = c->GetAttr("dtype", &dtype_);
    if (s.ok()) s = c->GetAttr("batch_dims", &batch_dims_);
    c->SetStatus(s);
  }
  void Compute(OpKernelContext* c) override {
    std::string label;
    absl::StatusOr<Tensor> params = ReadVariable(c, 0, dtype_, &label);
    OP_REQUIRES_OK(c, params.status());
    absl::Status s = Gather(c, *params, c->input(1), batch_dims_, batch_dims_);
    OP_REQUIRES(c, s.ok(),
                absl::Status(s.code(), absl::StrCat(s.message(), " (gathering from ",
                                                    label, ")")));
  }

 private:
  DataType dtype_ = DT_INVALID;
  int64_t batch_dims_ = 0;
};

class VarIsInitializedOp : public OpKernel {
 public:
  explicit VarIsInitializedOp(OpKernelConstruction* c) : OpKernel(c) {}
  void Compute(OpKernelContext* c) override {
    ResourceHandle h;
    OP_REQUIRES_OK(c, GetHandle(c, 0, &h));
    bool initialized = false;
    absl::StatusOr<std::shared_ptr<Var>> var =
        c->resource_manager()->Lookup<Var>(h.container, h.name);
    if (var.ok()) {
      absl::ReaderMutexLock lock((*var)->mu());
      initialized = (*var)->is_initialized();
    }
    Tensor* out;
    OP_REQUIRES_OK(c, c->allocate_output(0, TensorShape(), &out));
    out->scalar<bool>() = initialized;
  }
};

// The shape of a resource variable's value, as int32 or int64 (out_type).
class VariableShapeOp : public OpKernel {
 public:
  explicit VariableShapeOp(OpKernelConstruction* c) : OpKernel(c) {}
  void Compute(OpKernelContext* c) override {
    ResourceHandle h;
    OP_REQUIRES_OK(c, GetHandle(c, 0, &h));
    absl::StatusOr<std::shared_ptr<Var>> var = LookupVar(c, h);
    OP_REQUIRES_OK(c, var.status());
    std::vector<int64_t> dims;
    {
      absl::ReaderMutexLock lock((*var)->mu());
      OP_REQUIRES(c, (*var)->is_initialized(),
                  absl::FailedPreconditionError(absl::StrCat(
                      "Error in VariableShape: ", VarLabel(h),
                      " is uninitialized; run its initializer first")));
      const auto sizes = (*var)->tensor()->shape().dim_sizes();
      dims.assign(sizes.begin(), sizes.end());
    }
    OP_REQUIRES_OK(c, OutputInts(c, 0, dims, /*scalar=*/false, "the shape"));
  }
};

class DestroyResourceOp : public OpKernel {
 public:
  explicit DestroyResourceOp(OpKernelConstruction* c) : OpKernel(c) {
    c->SetStatus(c->GetAttr("ignore_lookup_error", &ignore_lookup_error_));
  }
  void Compute(OpKernelContext* c) override {
    ResourceHandle h;
    OP_REQUIRES_OK(c, GetHandle(c, 0, &h));
    absl::Status s = c->resource_manager()->Delete<Var>(h.container, h.name);
    OP_REQUIRES(c, s.ok() || ignore_lookup_error_,
                absl::NotFoundError(absl::StrCat(
                    "Cannot destroy ", VarLabel(h), ": it does not exist")));
  }

 private:
  bool ignore_lookup_error_ = true;
};

}  // namespace

void RegisterResourceVariableKernels(KernelRegistry* r) {
  r->Register(KernelDef("VarHandleOp", kDeviceTypeCpu), MakeKernel<VarHandleOp>);
  r->Register(KernelDef("ReadVariableOp", kDeviceTypeCpu), MakeKernel<ReadVariableOp>);
  r->Register(KernelDef("AssignVariableOp", kDeviceTypeCpu),
              MakeKernel<AssignVariableOp>);
  r->Register(KernelDef("AssignAddVariableOp", kDeviceTypeCpu)
                  .TypeConstraint("dtype", UpdatableTypes()),
              MakeResourceUpdate<UpdateKind::kAdd>);
  r->Register(KernelDef("AssignSubVariableOp", kDeviceTypeCpu)
                  .TypeConstraint("dtype", UpdatableTypes()),
              MakeResourceUpdate<UpdateKind::kSub>);
  r->Register(KernelDef("ResourceApplyGradientDescent", kDeviceTypeCpu)
                  .TypeConstraint("T", UpdatableTypes()),
              MakeResourceUpdate<UpdateKind::kScaleSub>);
  r->Register(KernelDef("ResourceCountUpTo", kDeviceTypeCpu),
              MakeKernel<ResourceCountUpToOp>);
  r->Register(KernelDef("ResourceGather", kDeviceTypeCpu),
              MakeKernel<ResourceGatherOp>);
  r->Register(KernelDef("VarIsInitializedOp", kDeviceTypeCpu),
              MakeKernel<VarIsInitializedOp>);
  r->Register(KernelDef("VariableShape", kDeviceTypeCpu),
              MakeKernel<VariableShapeOp>);
  r->Register(KernelDef("DestroyResourceOp", kDeviceTypeCpu),
              MakeKernel<DestroyResourceOp>);
}

}  // namespace weft
