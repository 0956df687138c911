// CancellationManager: lets a step be cancelled from outside (a deadline, a
// failed node, the user) and wakes whatever waits on it.
//
//   CancellationToken t = cm->Register([&] { cv.SignalAll(); });
//   if (t == kInvalidToken) { /* already cancelled */ }
//   ...
//   cm->Deregister(t);
//
// Thread-safe. Callbacks run once, on the thread that calls StartCancel(),
// outside the manager's lock.
#ifndef WEFT_RUNTIME_CORE_CANCELLATION_H_
#define WEFT_RUNTIME_CORE_CANCELLATION_H_

#include <atomic>
#include <cstdint>
#include <functional>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"

namespace weft {

using CancellationToken = int64_t;
inline constexpr CancellationToken kInvalidToken = -1;

class CancellationManager {
 public:
  CancellationManager() = default;
  CancellationManager(const CancellationManager&) = delete;
  CancellationManager& operator=(const CancellationManager&) = delete;

  // Runs every registered callback once; later Register calls fail.
  void StartCancel();
  bool IsCancelled() const {
    return cancelled_.load(std::memory_order_acquire);
  }
  // kInvalidToken if already cancelled (the callback is not called then).
  CancellationToken Register(std::function<void()> callback);
  // False if the callback already ran or is running. A callback still
  // waiting its turn in a StartCancel is removed and never runs.
  bool Deregister(CancellationToken token);

 private:
  std::atomic<bool> cancelled_{false};
  absl::Mutex mu_;
  CancellationToken next_token_ ABSL_GUARDED_BY(mu_) = 0;
  absl::flat_hash_map<CancellationToken, std::function<void()>> callbacks_
      ABSL_GUARDED_BY(mu_);
};

}  // namespace weft

#endif  // WEFT_RUNTIME_CORE_CANCELLATION_H_
