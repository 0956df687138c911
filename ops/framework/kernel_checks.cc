#include "ops/framework/kernel_checks.h"

#include "absl/strings/str_cat.h"

namespace weft {

absl::Status CheckSameShape(absl::string_view a_name, const Tensor& a,
                            absl::string_view b_name, const Tensor& b) {
  if (a.shape() == b.shape()) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(
      a_name, " and ", b_name, " must have the same shape, got ",
      a.shape().DebugString(), " and ", b.shape().DebugString()));
}

}  // namespace weft
