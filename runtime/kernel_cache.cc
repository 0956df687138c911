#include "runtime/kernel_cache.h"

#include "runtime/core/status.h"

namespace weft {

absl::StatusOr<OpKernel*> KernelCache::FindOrCreate(const std::string& key,
                                                    const CreateFn& create) {
  absl::MutexLock lock(&mu_);
  auto it = kernels_.find(key);
  if (it != kernels_.end()) return it->second.get();
  WEFT_ASSIGN_OR_RETURN(std::unique_ptr<OpKernel> kernel, create());
  OpKernel* raw = kernel.get();
  kernels_.emplace(key, std::move(kernel));
  return raw;
}

int KernelCache::size() const {
  absl::MutexLock lock(&mu_);
  return static_cast<int>(kernels_.size());
}

}  // namespace weft
