#include "ops/framework/call_frame.h"

#include "absl/strings/str_cat.h"

namespace weft {

absl::Status SimpleCallFrame::GetArg(int index, Tensor* value) const {
  if (index < 0 || index >= static_cast<int>(args_.size())) {
    return absl::InvalidArgumentError(
        absl::StrCat("feed index ", index, " out of range (", args_.size(),
                     " feeds)"));
  }
  *value = args_[index];
  return absl::OkStatus();
}

absl::Status SimpleCallFrame::SetRetval(int index, const Tensor& value) {
  absl::MutexLock lock(&mu_);
  if (index < 0 || index >= static_cast<int>(retvals_.size())) {
    return absl::InvalidArgumentError(absl::StrCat(
        "fetch index ", index, " out of range (", retvals_.size(), " fetches)"));
  }
  retvals_[index] = value;
  set_[index] = true;
  return absl::OkStatus();
}

absl::Status SimpleCallFrame::TakeRetvals(std::vector<Tensor>* out) {
  absl::MutexLock lock(&mu_);
  for (size_t i = 0; i < set_.size(); ++i) {
    if (!set_[i]) {
      return absl::FailedPreconditionError(absl::StrCat(
          "fetch ", i, " was not produced (its value is dead: a Switch did "
          "not take the branch that computes it)"));
    }
  }
  *out = std::move(retvals_);
  return absl::OkStatus();
}

}  // namespace weft
