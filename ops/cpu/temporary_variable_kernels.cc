// TemporaryVariable and DestroyTemporaryVariable: a ref variable that lives
// for one step. TemporaryVariable makes a tensor of its shape and dtype
// attrs (zeros; TensorFlow leaves it unset), keeps it as a Var named by
// var_name (the node's name when empty) in the step's container
// (StepContainerName), and outputs a ref to it; a second creation of the
// name in one step is ALREADY_EXISTS. DestroyTemporaryVariable outputs the
// variable's value (sharing its buffer) and removes it from the container;
// whatever is not destroyed goes when the step ends, with the container.
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "ops/cpu/array_util.h"
#include "ops/framework/op_kernel.h"
#include "ops/registration.h"
#include "runtime/core/resource_mgr.h"

namespace weft {
namespace {

class TemporaryVariableOp : public OpKernel {
 public:
  explicit TemporaryVariableOp(OpKernelConstruction* c) : OpKernel(c) {
    PartialShape shape;
    absl::Status s = c->GetAttr("dtype", &dtype_);
    if (s.ok()) s = c->GetAttr("shape", &shape);
    if (s.ok()) s = c->GetAttr("var_name", &var_name_);
    if (s.ok() && !shape.IsFullyDefined()) {
      s = absl::InvalidArgumentError(absl::StrCat(
          "TemporaryVariable ", name(), " needs a fully defined shape, got ",
          shape.DebugString()));
    }
    if (s.ok()) {
      s = ShapeFromDims(std::vector<int64_t>(shape.dims().begin(), shape.dims().end()),
                        "shape", &shape_);
    }
    c->SetStatus(s);
    if (var_name_.empty()) var_name_ = name();
  }

  void Compute(OpKernelContext* c) override {
    auto var = std::make_shared<Var>(dtype_);
    OP_REQUIRES_OK(c, c->allocate_temp(dtype_, shape_, var->tensor()));
    OP_REQUIRES_OK(c, ZeroFill(var->tensor()));
    OP_REQUIRES_OK(c, c->resource_manager()->Create<Var>(
                          StepContainerName(c->step_id()), var_name_, var));
    c->set_output_ref(0, var->mu(), var->tensor());
  }

 private:
  static absl::Status ZeroFill(Tensor* t) {
    // Object dtypes (string, resource, variant) start default-constructed.
    if (!DataTypeIsObject(t->dtype()) && t->TotalBytes() > 0) {
      std::memset(t->raw_data(), 0, t->TotalBytes());
    }
    return absl::OkStatus();
  }

  DataType dtype_ = DT_INVALID;
  TensorShape shape_;
  std::string var_name_;
};

class DestroyTemporaryVariableOp : public OpKernel {
 public:
  explicit DestroyTemporaryVariableOp(OpKernelConstruction* c) : OpKernel(c) {
    absl::Status s = c->GetAttr("var_name", &var_name_);
    if (s.ok() && var_name_.empty()) {
      s = absl::InvalidArgumentError("Missing var_name attribute");
    }
    c->SetStatus(s);
  }

  void Compute(OpKernelContext* c) override {
    OP_REQUIRES(c, c->input_is_ref(0),
                absl::InvalidArgumentError("lhs input needs to be a ref type"));
    {
      absl::MutexLock lock(c->input_ref_mutex(0));
      c->set_output(0, *c->mutable_input(0));
    }
    OP_REQUIRES_OK(c, c->resource_manager()->Delete<Var>(
                          StepContainerName(c->step_id()), var_name_));
  }

 private:
  std::string var_name_;
};

}  // namespace

void RegisterTemporaryVariableKernels(KernelRegistry* r) {
  r->Register(KernelDef("TemporaryVariable", kDeviceTypeCpu),
              MakeKernel<TemporaryVariableOp>);
  r->Register(KernelDef("DestroyTemporaryVariable", kDeviceTypeCpu),
              MakeKernel<DestroyTemporaryVariableOp>);
}

}  // namespace weft
