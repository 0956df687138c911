#include "ops/data/optional_value.h"

#include <memory>
#include <utility>

#include "absl/strings/str_cat.h"
#include "ops/data/dataset.h"

namespace weft {
namespace data {
namespace {

class OptionalFromValueOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* c) override {
    std::vector<Tensor> value;
    for (int i = 0; i < c->num_inputs(); ++i) value.push_back(c->input(i));
    c->set_output(0, OptionalTensor(std::move(value)));
  }
};

class OptionalNoneOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* c) override {
    c->set_output(0, OptionalTensor(std::nullopt));
  }
};

absl::StatusOr<const OptionalValue*> OptionalFromInput(OpKernelContext* c) {
  const Tensor& t = c->input(0);
  const OptionalValue* v = nullptr;
  if (t.dtype() == DT_VARIANT && t.NumElements() == 1) {
    v = t.scalar<Variant>().get<OptionalValue>();
  }
  if (v == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(
        KernelLabel(c), ": input must be an optional (a variant scalar made by "
                        "OptionalFromValue or IteratorGetNextAsOptional)"));
  }
  return v;
}

class OptionalHasValueOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* c) override {
    absl::StatusOr<const OptionalValue*> v = OptionalFromInput(c);
    OP_REQUIRES_OK(c, v.status());
    c->set_output(0, Tensor::Scalar<bool>((*v)->has_value()));
  }
};

class OptionalGetValueOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* c) override {
    absl::StatusOr<const OptionalValue*> v = OptionalFromInput(c);
    OP_REQUIRES_OK(c, v.status());
    OP_REQUIRES(c, (*v)->has_value(),
                absl::InvalidArgumentError(
                    "The given optional does not have a value."));
    OP_REQUIRES_OK(c, SetElementOutputs(c, (*v)->value()));
  }
};

}  // namespace

Tensor OptionalTensor(std::optional<std::vector<Tensor>> value) {
  Tensor t(DT_VARIANT, TensorShape());
  t.scalar<Variant>().value = std::make_shared<const OptionalValue>(std::move(value));
  return t;
}

void RegisterOptionalKernels(KernelRegistry* r) {
  r->Register(KernelDef("OptionalFromValue", kDeviceTypeCpu),
              MakeKernel<OptionalFromValueOp>);
  r->Register(KernelDef("OptionalNone", kDeviceTypeCpu), MakeKernel<OptionalNoneOp>);
  r->Register(KernelDef("OptionalHasValue", kDeviceTypeCpu),
              MakeKernel<OptionalHasValueOp>);
  r->Register(KernelDef("OptionalGetValue", kDeviceTypeCpu),
              MakeKernel<OptionalGetValueOp>);
}

}  // namespace data
}  // namespace weft
