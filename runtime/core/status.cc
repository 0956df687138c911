#include "runtime/core/status.h"

namespace weft {

std::string StatusToString(const absl::Status& status) {
  if (status.ok()) return "OK";
  return absl::StrCat(absl::StatusCodeToString(status.code()), ": ",
                      status.message());
}

}  // namespace weft
