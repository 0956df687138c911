#include "runtime/core/cancellation.h"

#include <vector>

namespace weft {

void CancellationManager::StartCancel() {
  {
    absl::MutexLock lock(&mu_);
    if (cancelled_.load(std::memory_order_relaxed)) return;
    cancelled_.store(true, std::memory_order_release);
  }
  // One callback at a time, each taken out of the map just before it runs:
  // a callback may finish work whose owner then deregisters its own,
  // not yet run, callback (one executor's cancellation completing another's
  // step); that Deregister must succeed rather than wait for a callback
  // queued behind the running one on this same thread.
  for (;;) {
    std::function<void()> callback;
    {
      absl::MutexLock lock(&mu_);
      if (callbacks_.empty()) break;
      auto it = callbacks_.begin();
      callback = std::move(it->second);
      callbacks_.erase(it);
    }
    callback();
  }
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
