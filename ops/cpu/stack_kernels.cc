// Stack kernels (StackV2, StackPushV2, StackPopV2, StackCloseV2): the
// stacks in which a v1 while loop's gradient keeps forward values, pushed
// once per forward iteration and popped in reverse by the backward loop.
//
// A stack lives in the device's ResourceMgr in the step's own container
// (StepContainerName), so it is private to the step and the executor drops
// it when the step ends, whether or not StackCloseV2 ran.
#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "ops/framework/op_kernel.h"
#include "ops/registration.h"
#include "runtime/core/resource_mgr.h"

namespace weft {
namespace {

class Stack : public ResourceBase {
 public:
  Stack(std::string name, DataType elem_type, int32_t max_size)
      : name_(std::move(name)), elem_type_(elem_type), max_size_(max_size) {}

  absl::Status Push(const Tensor& value) {
    if (value.dtype() != elem_type_) {
      return absl::InvalidArgumentError(absl::StrCat(
          "Stack ", name_, " holds ", DataTypeString(elem_type_),
          " but was pushed a value of type ",
          DataTypeString(value.dtype())));
    }
    absl::MutexLock lock(&mu_);
    if (max_size_ >= 0 && static_cast<int64_t>(items_.size()) >= max_size_) {
      return absl::InvalidArgumentError(absl::StrCat(
          "Stack ", name_, " is full: it has reached its max_size of ",
          max_size_));
    }
    items_.push_back(value);
    return absl::OkStatus();
  }

  absl::Status Pop(Tensor* out) {
    absl::MutexLock lock(&mu_);
    if (items_.empty()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "Stack ", name_, " is empty: popped more often than pushed"));
    }
    *out = std::move(items_.back());
    items_.pop_back();
    return absl::OkStatus();
  }

  DataType elem_type() const { return elem_type_; }
  std::string DebugString() const override {
    return absl::StrCat("Stack ", name_);
  }

 private:
  const std::string name_;
  const DataType elem_type_;
  const int32_t max_size_;  // < 0: unbounded
  absl::Mutex mu_;
  std::vector<Tensor> items_ ABSL_GUARDED_BY(mu_);
};

// The stack named by input 0, in this step's container.
absl::StatusOr<std::shared_ptr<Stack>> LookupStack(OpKernelContext* c) {
  const Tensor& t = c->input(0);
  if (t.dtype() != DT_RESOURCE || t.NumElements() != 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "expected a scalar stack handle, got ", t.DebugString()));
  }
  const ResourceHandle& h = t.data<ResourceHandle>()[0];
  absl::StatusOr<std::shared_ptr<Stack>> stack =
      c->resource_manager()->Lookup<Stack>(h.container, h.name);
  if (!stack.ok()) {
    return absl::NotFoundError(absl::StrCat(
        "stack '", h.name, "' does not exist in step ", c->step_id(),
        " (stacks live for one step; was it closed already?)"));
  }
  return stack;
}

class StackOp : public OpKernel {
 public:
  explicit StackOp(OpKernelConstruction* c) : OpKernel(c) {
    absl::Status s = c->GetAttr("elem_type", &elem_type_);
    if (s.ok()) s = c->GetAttr("stack_name", &stack_name_);
    c->SetStatus(s);
    if (stack_name_.empty()) stack_name_ = c->def().name();
  }
  void Compute(OpKernelContext* c) override {
    const Tensor& max_size = c->input(0);
    OP_REQUIRES(c, max_size.dtype() == DT_INT32 && max_size.dims() == 0,
                absl::InvalidArgumentError(absl::StrCat(
                    "max_size must be a scalar int32, got ",
                    max_size.DebugString())));
    // A new stack per run of this node (one per iteration when it sits in a
    // loop). The counter is process-wide: nodes may share a stack_name.
    static std::atomic<int64_t> counter{0};
    const std::string name = absl::StrCat(
        stack_name_, "_", counter.fetch_add(1, std::memory_order_relaxed));
    Tensor handle(DT_RESOURCE, TensorShape());
    ResourceHandle& h = handle.scalar<ResourceHandle>();
    h.device = c->device()->name();
    h.container = StepContainerName(c->step_id());
    h.name = name;
    h.dtype = elem_type_;
    OP_REQUIRES_OK(c, c->resource_manager()->Create<Stack>(
                          h.container, h.name,
                          std::make_shared<Stack>(
                              name, elem_type_, max_size.scalar<int32_t>())));
    c->set_output(0, std::move(handle));
  }

 private:
  DataType elem_type_ = DT_INVALID;
  std::string stack_name_;
};

class StackPushOp : public OpKernel {
 public:
  explicit StackPushOp(OpKernelConstruction* c) : OpKernel(c) {}
  void Compute(OpKernelContext* c) override {
    absl::StatusOr<std::shared_ptr<Stack>> stack = LookupStack(c);
    OP_REQUIRES_OK(c, stack.status());
    const Tensor& value = c->input(1);
    OP_REQUIRES_OK(c, (*stack)->Push(value));
    c->set_output(0, value);
  }
};

class StackPopOp : public OpKernel {
 public:
  explicit StackPopOp(OpKernelConstruction* c) : OpKernel(c) {}
  void Compute(OpKernelContext* c) override {
    absl::StatusOr<std::shared_ptr<Stack>> stack = LookupStack(c);
    OP_REQUIRES_OK(c, stack.status());
    Tensor value;
    OP_REQUIRES_OK(c, (*stack)->Pop(&value));
    OP_REQUIRES(c, value.dtype() == c->expected_output_dtype(0),
                absl::InvalidArgumentError(absl::StrCat(
                    "StackPopV2 expects ",
                    DataTypeString(c->expected_output_dtype(0)),
                    " but the stack holds ", DataTypeString(value.dtype()))));
    c->set_output(0, std::move(value));
  }
};

class StackCloseOp : public OpKernel {
 public:
  explicit StackCloseOp(OpKernelConstruction* c) : OpKernel(c) {}
  void Compute(OpKernelContext* c) override {
    const Tensor& t = c->input(0);
    OP_REQUIRES(c, t.dtype() == DT_RESOURCE && t.NumElements() == 1,
                absl::InvalidArgumentError(absl::StrCat(
                    "expected a scalar stack handle, got ", t.DebugString())));
    const ResourceHandle& h = t.data<ResourceHandle>()[0];
    // Closing twice (or a stack the step already dropped) is not an error.
    c->resource_manager()->Delete<Stack>(h.container, h.name).IgnoreError();
  }
};

}  // namespace

void RegisterStackKernels(KernelRegistry* r) {
  r->Register(KernelDef("StackV2", kDeviceTypeCpu), MakeKernel<StackOp>);
  r->Register(KernelDef("StackPushV2", kDeviceTypeCpu),
              MakeKernel<StackPushOp>);
  r->Register(KernelDef("StackPopV2", kDeviceTypeCpu), MakeKernel<StackPopOp>);
  r->Register(KernelDef("StackCloseV2", kDeviceTypeCpu),
              MakeKernel<StackCloseOp>);
}

}  // namespace weft
