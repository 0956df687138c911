#include "runtime/core/rendezvous.h"

#include <algorithm>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace weft {

std::string RendezvousKey::ToString() const {
  return absl::StrCat(src_device, ";", absl::Hex(src_incarnation, absl::kZeroPad16),
                      ";", dst_device, ";", tensor_name, ";", frame_id, ":",
                      iter_id);
}

absl::StatusOr<RendezvousKey> RendezvousKey::Parse(absl::string_view key) {
  std::vector<absl::string_view> parts = absl::StrSplit(key, ';');
  auto bad = [&](absl::string_view why) {
    return absl::InvalidArgumentError(
        absl::StrCat("malformed rendezvous key '", key, "': ", why));
  };
  if (parts.size() != 5) return bad("expected 5 ';'-separated parts");
  RendezvousKey k;
  k.src_device = std::string(parts[0]);
  if (!absl::SimpleHexAtoi(parts[1], &k.src_incarnation)) {
    return bad("incarnation is not hex");
  }
  k.dst_device = std::string(parts[2]);
  k.tensor_name = std::string(parts[3]);
  std::vector<absl::string_view> frame = absl::StrSplit(parts[4], ':');
  if (frame.size() != 2 || !absl::SimpleAtoi(frame[0], &k.frame_id) ||
      !absl::SimpleAtoi(frame[1], &k.iter_id)) {
    return bad("frame part must be frame_id:iter_id");
  }
  if (k.src_device.empty() || k.dst_device.empty() || k.tensor_name.empty()) {
    return bad("empty device or tensor name");
  }
  return k;
}

LocalRendezvous::~LocalRendezvous() {
  StartAbort(absl::CancelledError("rendezvous destroyed before the step ended"));
}

absl::Status LocalRendezvous::Send(const std::string& key, const Tensor& value,
                                   bool is_dead) {
  DoneCallback waiter;
  {
    absl::MutexLock lock(&mu_);
    if (!abort_status_.ok()) return abort_status_;
    auto [it, inserted] = table_.try_emplace(key);
    Item& item = it->second;
    if (!inserted && item.has_value) {
      return absl::FailedPreconditionError(
          absl::StrCat("rendezvous key '", key, "' was sent twice in one step"));
    }
    if (inserted) {
      item.has_value = true;
      item.value = value;
      item.is_dead = is_dead;
      return absl::OkStatus();
    }
    waiter = std::move(item.waiter);
    table_.erase(it);
  }
  waiter(absl::OkStatus(), value, is_dead);
  return absl::OkStatus();
}

void LocalRendezvous::RecvAsync(const std::string& key, DoneCallback done) {
  Item item;
  absl::Status aborted;
  {
    absl::MutexLock lock(&mu_);
    if (!abort_status_.ok()) {
      aborted = abort_status_;
    } else {
      auto [it, inserted] = table_.try_emplace(key);
      if (inserted) {
        it->second.waiter = std::move(done);
        return;
      }
      if (!it->second.has_value) {
        aborted = absl::FailedPreconditionError(absl::StrCat(
            "rendezvous key '", key, "' has two receivers in one step"));
      } else {
        item = std::move(it->second);
        table_.erase(it);
      }
    }
  }
  if (!aborted.ok()) {
    done(aborted, Tensor(), false);
    return;
  }
  done(absl::OkStatus(), item.value, item.is_dead);
}

void LocalRendezvous::StartAbort(const absl::Status& status) {
  std::vector<DoneCallback> waiters;
  absl::Status aborted;
  {
    absl::MutexLock lock(&mu_);
    if (!abort_status_.ok()) return;
    abort_status_ = status.ok() ? absl::CancelledError("rendezvous aborted") : status;
    aborted = abort_status_;
    for (auto& [key, item] : table_) {
      if (item.waiter) waiters.push_back(std::move(item.waiter));
    }
    table_.clear();
  }
  // An OK `status` must not reach waiters as success.
  for (DoneCallback& w : waiters) w(aborted, Tensor(), false);
}

absl::Status LocalRendezvous::Recv(const std::string& key,
                                   absl::Duration timeout, Tensor* value,
                                   bool* is_dead) {
  struct State {
    absl::Mutex mu;
    bool done = false;
    absl::Status status;
    Tensor value;
    bool is_dead = false;
  };
  auto state = std::make_shared<State>();
  RecvAsync(key, [state](const absl::Status& s, const Tensor& v, bool dead) {
    absl::MutexLock lock(&state->mu);
    state->done = true;
    state->status = s;
    state->value = v;
    state->is_dead = dead;
  });
  auto result = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(state->mu) {
    *value = state->value;
    *is_dead = state->is_dead;
    return state->status;
  };
  {
    absl::MutexLock lock(&state->mu);
    if (state->mu.AwaitWithTimeout(absl::Condition(&state->done), timeout)) {
      return result();
    }
  }
  // Timed out: take the parked receiver back, so that the key may be
  // received again later (one receiver per key is allowed).
  bool withdrawn = false;
  {
    absl::MutexLock lock(&mu_);
    auto it = table_.find(key);
    if (it != table_.end() && !it->second.has_value) {
      table_.erase(it);
      withdrawn = true;
    }
  }
  if (withdrawn) {
    return absl::DeadlineExceededError(absl::StrCat(
        "waited ", absl::FormatDuration(timeout), " for rendezvous key '", key,
        "': its sender never ran (check the producing node and its device)"));
  }
  // A Send or an abort took the receiver in the meantime and is calling it
  // now, outside the rendezvous lock: its result is moments away.
  absl::MutexLock lock(&state->mu);
  state->mu.Await(absl::Condition(&state->done));
  return result();
}

int LocalRendezvous::PendingCount() const {
  absl::MutexLock lock(&mu_);
  return static_cast<int>(table_.size());
}

std::vector<std::string> LocalRendezvous::WaitingKeys(int max) const {
  std::vector<std::string> keys;
  {
    absl::MutexLock lock(&mu_);
    for (const auto& [key, item] : table_) {
      if (!item.has_value) keys.push_back(key);
    }
  }
  std::sort(keys.begin(), keys.end());
  if (keys.size() > static_cast<size_t>(std::max(max, 0))) keys.resize(max);
  return keys;
}

}  // namespace weft
