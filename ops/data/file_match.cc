#include "ops/data/file_match.h"

#include <glob.h>

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "runtime/core/status.h"

namespace weft {
namespace data {

absl::Status MatchFiles(const FilePolicy& policy, const std::string& pattern,
                        std::vector<std::string>* out) {
  WEFT_RETURN_IF_ERROR(policy.Resolve(pattern).status());
  glob_t g;
  const int rc = glob(pattern.c_str(), GLOB_PERIOD | GLOB_NOSORT, nullptr, &g);
  if (rc != 0 && rc != GLOB_NOMATCH) {
    globfree(&g);
    return absl::UnknownError(
        absl::StrCat("matching '", pattern, "' failed (glob error ", rc, ")"));
  }
  std::vector<std::string> found;
  for (size_t i = 0; rc == 0 && i < g.gl_pathc; ++i) {
    std::string path = g.gl_pathv[i];
    const size_t slash = path.rfind('/');
    const std::string base = slash == std::string::npos ? path : path.substr(slash + 1);
    if (base == "." || base == "..") continue;
    if (!policy.Resolve(path).ok()) continue;
    found.push_back(std::move(path));
  }
  globfree(&g);
  std::sort(found.begin(), found.end());
  out->insert(out->end(), found.begin(), found.end());
  return absl::OkStatus();
}

}  // namespace data
}  // namespace weft
