// Rendezvous: where a _Send hands a tensor to the matching _Recv.
//
// A transfer is named by a key, the same string TensorFlow uses:
//   "src_device;src_incarnation_hex;dst_device;tensor_name;frame_id:iter_id"
// Send and Recv may happen in either order: a Send with no waiter parks the
// value; a Recv with no value parks its callback. Nothing busy-waits.
//
//   LocalRendezvous rv;                     // one per step
//   rv.Send(key, tensor, /*is_dead=*/false);
//   rv.RecvAsync(key, [](absl::Status s, const Tensor& t, bool dead) {...});
//   rv.StartAbort(status);                  // fails every waiter, now and later
//
// Thread-safe. Callbacks run outside the lock, on the thread that completed
// the pair (Send's or RecvAsync's caller) or the one that aborted.
#ifndef WEFT_RUNTIME_CORE_RENDEZVOUS_H_
#define WEFT_RUNTIME_CORE_RENDEZVOUS_H_

#include <cstdint>
#include <deque>
#include <functional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "runtime/core/tensor.h"

namespace weft {

struct RendezvousKey {
  std::string src_device;
  uint64_t src_incarnation = 0;
  std::string dst_device;
  std::string tensor_name;  // the edge, e.g. "edge_5_x" or "x:0"
  int64_t frame_id = 0;
  int64_t iter_id = 0;

  // The full key string (see the file comment).
  std::string ToString() const;
  static absl::StatusOr<RendezvousKey> Parse(absl::string_view key);
};

class Rendezvous {
 public:
  using DoneCallback =
      std::function<void(const absl::Status& status, const Tensor& value,
                         bool is_dead)>;

  virtual ~Rendezvous() = default;
  // FAILED_PRECONDITION if the key was already sent in this rendezvous;
  // the abort status if aborted.
  virtual absl::Status Send(const std::string& key, const Tensor& value,
                            bool is_dead) = 0;
  virtual void RecvAsync(const std::string& key, DoneCallback done) = 0;
  virtual void StartAbort(const absl::Status& status) = 0;
};

class LocalRendezvous final : public Rendezvous {
 public:
  LocalRendezvous() = default;
  ~LocalRendezvous() override;
  LocalRendezvous(const LocalRendezvous&) = delete;
  LocalRendezvous& operator=(const LocalRendezvous&) = delete;

  absl::Status Send(const std::string& key, const Tensor& value,
                    bool is_dead) override;
  void RecvAsync(const std::string& key, DoneCallback done) override;
  void StartAbort(const absl::Status& status) override;

  // Blocking receive with a deadline; DEADLINE_EXCEEDED names the key.
  absl::Status Recv(const std::string& key, absl::Duration timeout,
                    Tensor* value, bool* is_dead);
  // Keys sent but not yet received plus receivers still waiting; for tests.
  int PendingCount() const;
  // Up to `max` keys (sorted) whose receiver is still waiting for a Send:
  // what a step that has not finished is waiting for.
  std::vector<std::string> WaitingKeys(int max) const;

 private:
  struct Item {
    // Either a parked value (sent first) or a parked receiver (recv first).
    bool has_value = false;
    Tensor value;
    bool is_dead = false;
    DoneCallback waiter;
  };

  mutable absl::Mutex mu_;
  absl::flat_hash_map<std::string, Item> table_ ABSL_GUARDED_BY(mu_);
  absl::Status abort_status_ ABSL_GUARDED_BY(mu_);
};

}  // namespace weft

#endif  // WEFT_RUNTIME_CORE_RENDEZVOUS_H_
