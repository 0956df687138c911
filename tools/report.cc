#include <algorithm>
#include <cstdio>
#include <string>

#include "absl/strings/str_cat.h"

#include "runtime/core/status.h"
#include "tools/commands.h"

namespace weft {

int ReportError(const absl::Status& status) {
  std::fprintf(stderr, "error: %s\n", StatusToString(status).c_str());
  return kExitError;
}

absl::Status WithMemoryLimitFlag(const absl::Status& status, int64_t limit_bytes) {
  if (limit_bytes <= 0 || !absl::IsResourceExhausted(status)) return status;
  // At the end of the first line, before the "[[node ...]]" trailer.
  std::string message(status.message());
  message.insert(std::min(message.find('\n'), message.size()),
                 absl::StrCat(" (this run's --memory-limit is ", limit_bytes,
                              " bytes: give a larger one)"));
  return absl::Status(status.code(), message);
}

int ReportUsage(const absl::Status& status, const char* usage) {
  std::fprintf(stderr, "usage error: %s\n\n%s", std::string(status.message()).c_str(),
               usage);
  return kExitUsage;
}

std::optional<int> StartCommand(int argc, char** argv, const char* usage,
                                const std::vector<std::string>& required,
                                CommandLine* cl) {
  if (absl::Status s = cl->Parse(argc, argv); !s.ok()) return ReportUsage(s, usage);
  if (cl->Has("help")) {
    std::fputs(usage, stdout);
    return kExitOk;
  }
  if (!cl->positional().empty()) {
    return ReportUsage(absl::InvalidArgumentError(absl::StrCat(
                           "unexpected argument '", cl->positional()[0], "'")),
                       usage);
  }
  for (const std::string& flag : required) {
    if (!cl->Has(flag)) {
      return ReportUsage(
          absl::InvalidArgumentError(absl::StrCat("--", flag, " is required")),
          usage);
    }
  }
  const std::string format = cl->Get("format", "text");
  if (format != "text" && format != "json") {
    return ReportUsage(absl::InvalidArgumentError(absl::StrCat(
                           "--format must be text or json, not '", format, "'")),
                       usage);
  }
  return std::nullopt;
}

}  // namespace weft
