#include "runtime/cancellation.h"

#include <vector>

namespace weft {

void CancellationManager::StartCancel() {
  absl::flat_hash_map<CancellationToken, std::function<void()>> callbacks;
  {
    absl::MutexLock lock(&mu_);
    if (cancelled_.load(std::memory_order_relaxed)) return;
    cancelled_.store(true, std::memory_order_release);
    callbacks.swap(callbacks_);
  }
  for (auto& [token, callback] : callbacks) callback();
}

CancellationToken CancellationManager::Register(
    std::function<void()> callback) {
  absl::MutexLock lock(&mu_);
  if (cancelled_.load(std::memory_order_relaxed)) return kInvalidToken;
  const CancellationToken token = next_token_++;
  callbacks_.emplace(token, std::move(callback));
  return token;
}

bool CancellationManager::Deregister(CancellationToken token) {
  absl::MutexLock lock(&mu_);
  return callbacks_.erase(token) > 0;
}

}  // namespace weft
