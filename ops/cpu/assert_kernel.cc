// Assert: INVALID_ARGUMENT when `condition` is false, listing each data
// tensor's first `summarize` elements, as TensorFlow's message does.
#include <algorithm>
#include <string>

#include "absl/strings/str_cat.h"
#include "ops/framework/op_kernel.h"
#include "ops/registration.h"

namespace weft {
namespace {

class AssertOp : public OpKernel {
 public:
  explicit AssertOp(OpKernelConstruction* c) : OpKernel(c) {
    c->SetStatus(c->GetAttr("summarize", &summarize_));
  }
  void Compute(OpKernelContext* c) override {
    const Tensor& cond = c->input(0);
    OP_REQUIRES(c, cond.dtype() == DT_BOOL && cond.NumElements() == 1,
                absl::InvalidArgumentError(absl::StrCat(
                    "Assert's condition must be a bool scalar, got ",
                    cond.DebugString())));
    if (cond.scalar<bool>()) return;
    std::string msg = "assertion failed: ";
    for (int i = 1; i < c->num_inputs(); ++i) {
      const Tensor& t = c->input(i);
      const int64_t n = summarize_ < 0 ? t.NumElements()
                                       : std::min(t.NumElements(), summarize_);
      absl::StrAppend(&msg, i > 1 ? " " : "", "[");
      for (int64_t k = 0; k < n; ++k) {
        absl::StrAppend(&msg, k ? " " : "", t.ElementString(k));
      }
      absl::StrAppend(&msg, n < t.NumElements() ? "...]" : "]");
    }
    c->SetStatus(absl::InvalidArgumentError(msg));
  }

 private:
  int64_t summarize_ = 3;
};

}  // namespace

void RegisterAssertKernel(KernelRegistry* r) {
  r->Register(KernelDef("Assert", kDeviceTypeCpu), MakeKernel<AssertOp>);
}

}  // namespace weft
