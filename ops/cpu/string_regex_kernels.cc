// StaticRegexReplace, RegexReplace and RegexFullMatch with RE2 (TensorFlow's
// engine, linear time whatever the pattern; rewrites use \0..\9). A pattern
// RE2 rejects is INVALID_ARGUMENT "Invalid pattern: <p>, error: <why>", as
// TensorFlow words it. Big tensors are matched in parallel.
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "ops/cpu/cwise_parallel.h"
#include "ops/framework/op_kernel.h"
#include "ops/registration.h"
#include "re2/re2.h"

namespace weft {
namespace {

absl::StatusOr<std::unique_ptr<RE2>> Compile(const std::string& pattern) {
  auto re = std::make_unique<RE2>(pattern, RE2::Quiet);
  if (!re->ok()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Invalid pattern: ", pattern, ", error: ", re->error()));
  }
  return re;
}

// Input i of c as a scalar string; `what` names it in the error.
absl::StatusOr<std::string> ScalarInput(OpKernelContext* c, int i,
                                        const char* what) {
  const Tensor& t = c->input(i);
  if (t.dims() != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        what, " must be scalar, but received ", t.shape().DebugString()));
  }
  return t.scalar<std::string>();
}

void Replace(OpKernelContext* c, const RE2& re, const std::string& rewrite,
             bool global) {
  const Tensor& in = c->input(0);
  Tensor* out = nullptr;
  OP_REQUIRES_OK(c, c->allocate_output(0, in.shape(), &out));
  const std::string* s = in.data<std::string>();
  std::string* o = out->data<std::string>();
  ParallelRange(c, in.NumElements(), 1000, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) {
      o[i] = s[i];
      if (global) {
        RE2::GlobalReplace(&o[i], re, rewrite);
      } else {
        RE2::Replace(&o[i], re, rewrite);
      }
    }
  });
}

class StaticRegexReplaceOp : public OpKernel {
 public:
  explicit StaticRegexReplaceOp(OpKernelConstruction* c) : OpKernel(c) {
    std::string pattern;
    c->SetStatus(c->GetAttr("pattern", &pattern));
    c->SetStatus(c->GetAttr("rewrite", &rewrite_));
    c->SetStatus(c->GetAttr("replace_global", &global_));
    if (!c->status().ok()) return;
    absl::StatusOr<std::unique_ptr<RE2>> re = Compile(pattern);
    if (!re.ok()) {
      c->SetStatus(re.status());
      return;
    }
    re_ = std::move(*re);
  }
  void Compute(OpKernelContext* c) override {
    Replace(c, *re_, rewrite_, global_);
  }

 private:
  std::unique_ptr<RE2> re_;
  std::string rewrite_;
  bool global_ = true;
};

class RegexReplaceOp : public OpKernel {
 public:
  explicit RegexReplaceOp(OpKernelConstruction* c) : OpKernel(c) {
    c->SetStatus(c->GetAttr("replace_global", &global_));
  }
  void Compute(OpKernelContext* c) override {
    absl::StatusOr<std::string> pattern = ScalarInput(c, 1, "Pattern");
    OP_REQUIRES_OK(c, pattern.status());
    absl::StatusOr<std::string> rewrite = ScalarInput(c, 2, "Rewrite");
    OP_REQUIRES_OK(c, rewrite.status());
    absl::StatusOr<std::unique_ptr<RE2>> re = Compile(*pattern);
    OP_REQUIRES_OK(c, re.status());
    Replace(c, **re, *rewrite, global_);
  }

 private:
  bool global_ = true;
};

class RegexFullMatchOp : public OpKernel {
 public:
  explicit RegexFullMatchOp(OpKernelConstruction* c) : OpKernel(c) {}
  void Compute(OpKernelContext* c) override {
    absl::StatusOr<std::string> pattern = ScalarInput(c, 1, "Pattern");
    OP_REQUIRES_OK(c, pattern.status());
    absl::StatusOr<std::unique_ptr<RE2>> re = Compile(*pattern);
    OP_REQUIRES_OK(c, re.status());
    const Tensor& in = c->input(0);
    Tensor* out = nullptr;
    OP_REQUIRES_OK(c, c->allocate_output(0, in.shape(), &out));
    const std::string* s = in.data<std::string>();
    bool* o = out->data<bool>();
    ParallelRange(c, in.NumElements(), 1000, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) o[i] = RE2::FullMatch(s[i], **re);
    });
  }
};

}  // namespace

void RegisterStringRegexKernels(KernelRegistry* r) {
  r->Register(KernelDef("StaticRegexReplace", kDeviceTypeCpu),
              MakeKernel<StaticRegexReplaceOp>);
  r->Register(KernelDef("RegexReplace", kDeviceTypeCpu),
              MakeKernel<RegexReplaceOp>);
  r->Register(KernelDef("RegexFullMatch", kDeviceTypeCpu),
              MakeKernel<RegexFullMatchOp>);
}

}  // namespace weft
