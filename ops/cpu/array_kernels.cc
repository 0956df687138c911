// Const, Placeholder, PlaceholderWithDefault, Identity, IdentityN and
// StopGradient, plus RegisterArrayKernels, which registers every array kernel.
//
// None of these copy: outputs share the input's (or the constant's) buffer.
#include "ops/cpu/array_kernels.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "ops/cpu/array_util.h"
#include "ops/framework/node_def_util.h"
#include "ops/framework/op_kernel.h"
#include "ops/registration.h"
#include "runtime/core/status.h"
#include "runtime/core/tensor_proto.h"
#include "runtime/core/tensor_shape.h"

namespace weft {
namespace {

class ConstOp : public OpKernel {
 public:
  explicit ConstOp(OpKernelConstruction* c) : OpKernel(c) {
    DataType dtype;
    absl::Status s = c->GetAttr("dtype", &dtype);
    if (s.ok()) s = DecodeValue(c);
    if (s.ok() && value_.dtype() != dtype) {
      s = absl::InvalidArgumentError(absl::StrCat(
          "type mismatch between value (", DataTypeString(value_.dtype()),
          ") and dtype (", DataTypeString(dtype), ")"));
    }
    c->SetStatus(s);
  }
  void Compute(OpKernelContext* c) override { c->set_output(0, value_); }

 private:
  // Into the device's memory, so that a session's memory limit counts it:
  // a value may claim far more elements than it holds (one value fills
  // the shape), and a Const of 2^31 floats is 8 GB.
  absl::Status DecodeValue(OpKernelConstruction* c) {
    auto it = c->def().attr().find("value");
    if (c->device() == nullptr || it == c->def().attr().end() ||
        !it->second.has_tensor()) {
      return c->GetAttr("value", &value_);  // its error names what is wrong
    }
    absl::StatusOr<Tensor> t = TensorFromProto(it->second.tensor(), c->device()->allocator());
    if (!t.ok()) {
      return WithContext(t.status(), absl::StrCat(NodeLabel(c->def()), ": attr 'value'"));
    }
    value_ = *std::move(t);
    return absl::OkStatus();
  }

  Tensor value_;  // never written: consumers see a shared buffer
};

class PlaceholderOp : public OpKernel {
 public:
  explicit PlaceholderOp(OpKernelConstruction* c) : OpKernel(c) {
    // A missing shape attr (old graphs) means "unknown".
    if (c->HasAttr("shape")) c->SetStatus(c->GetAttr("shape", &shape_));
  }
  void Compute(OpKernelContext* c) override {
    std::string message =
        absl::StrCat("You must feed a value for placeholder tensor '", name(),
                     "' with dtype ", DataTypeString(output_types()[0]));
    if (shape_.known_rank() && shape_.rank() > 0) {
      absl::StrAppend(&message, " and shape ", shape_.DebugString());
    }
    c->SetStatus(absl::InvalidArgumentError(message));
  }

 private:
  PartialShape shape_;
};

// Identity-like: output i is input i. A ref input is read under its lock;
// reading an uninitialized variable ("v/read" before the initializer ran)
// is FAILED_PRECONDITION naming the variable.
class IdentityOp : public OpKernel {
 public:
  explicit IdentityOp(OpKernelConstruction* c) : OpKernel(c) {
    for (const std::string& in : c->def().input()) input_names_.push_back(in);
  }
  void Compute(OpKernelContext* c) override {
    for (int i = 0; i < c->num_inputs(); ++i) {
      const Tensor& t = c->input(i);
      // Only a variable that was never assigned yields an uninitialized
      // value here (whether the executor passes the ref or its snapshot).
      OP_REQUIRES(c, t.IsInitialized(),
                  absl::FailedPreconditionError(absl::StrCat(
                      "Attempting to use uninitialized value ",
                      i < static_cast<int>(input_names_.size())
                          ? input_names_[i]
                          : absl::StrCat("input ", i))));
      c->set_output(i, t);
    }
  }

 private:
  std::vector<std::string> input_names_;
};

}  // namespace

void RegisterArrayKernels(KernelRegistry* r) {
  r->Register(KernelDef("Const", kDeviceTypeCpu), MakeKernel<ConstOp>);
  r->Register(KernelDef("Placeholder", kDeviceTypeCpu), MakeKernel<PlaceholderOp>);
  for (const char* op :
       {"Identity", "IdentityN", "StopGradient", "PreventGradient",
        "PlaceholderWithDefault"}) {
    r->Register(KernelDef(op, kDeviceTypeCpu), MakeKernel<IdentityOp>);
  }
  RegisterArrayShapeKernels(r);
  RegisterArrayFillKernels(r);
  RegisterArrayTransposeKernels(r);
  RegisterArrayConcatKernels(r);
  RegisterArrayTileKernels(r);
  RegisterArraySliceKernels(r);
  RegisterArrayGatherKernels(r);
  RegisterArrayReverseKernels(r);
}

}  // namespace weft
