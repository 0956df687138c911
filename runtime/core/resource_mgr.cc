#include "runtime/core/resource_mgr.h"

#include <algorithm>

namespace weft {

std::string Var::DebugString() const {
  return absl::StrCat("Var<", DataTypeString(dtype_), ">");
}

void ResourceMgr::Cleanup(const std::string& container) {
  std::vector<std::shared_ptr<ResourceBase>> doomed;  // freed outside the lock
  absl::MutexLock lock(&mu_);
  for (auto it = resources_.begin(); it != resources_.end();) {
    if (it->first.container == container) {
      doomed.push_back(std::move(it->second));
      resources_.erase(it++);
    } else {
      ++it;
    }
  }
}

std::vector<std::string> ResourceMgr::List() const {
  std::vector<std::string> names;
  absl::MutexLock lock(&mu_);
  for (const auto& [key, resource] : resources_) {
    names.push_back(absl::StrCat(key.container, "/", key.name));
  }
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace weft
