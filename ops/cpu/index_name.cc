#include "ops/cpu/index_name.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace weft {

std::string IndexName(const TensorShape& shape, int64_t flat) {
  if (shape.dims() == 0) return "";
  std::vector<int64_t> at(shape.dims());
  for (int d = shape.dims() - 1; d >= 0; --d) {
    at[d] = shape.dim_size(d) > 0 ? flat % shape.dim_size(d) : 0;
    if (shape.dim_size(d) > 0) flat /= shape.dim_size(d);
  }
  return absl::StrCat("[", absl::StrJoin(at, ","), "]");
}

}  // namespace weft
