#include <cstdio>

#include "runtime/status.h"
#include "tools/commands.h"

namespace weft {

int ReportError(const absl::Status& status) {
  std::fprintf(stderr, "error: %s\n", StatusToString(status).c_str());
  return kExitError;
}

int ReportUsage(const absl::Status& status, const char* usage) {
  std::fprintf(stderr, "usage error: %s\n\n%s", std::string(status.message()).c_str(),
               usage);
  return kExitUsage;
}

}  // namespace weft
