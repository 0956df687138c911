// Worker's shared helpers, documented in worker_parts.h.
#include "distributed/worker_parts.h"

namespace weft {
namespace worker_internal {

absl::Status OnTask(const std::string& task, const absl::Status& s) {
  return WithContext(s, absl::StrCat("task ", task));
}

absl::Status SendFeeds(const tensorflow::RunGraphRequest& request,
                       Allocator* allocator, StepRendezvous* rendezvous) {
  for (const tensorflow::NamedTensorProto& feed : request.send()) {
    absl::StatusOr<Tensor> value = TensorFromProto(feed.tensor(), allocator);
    absl::Status s = value.status();
    if (s.ok()) s = rendezvous->Send(feed.name(), *value, false);
    if (!s.ok()) {
      return WithContext(s, absl::StrCat("RunGraphRequest.send '", feed.name(), "'"));
    }
  }
  return absl::OkStatus();
}

absl::Status FetchStatus(const absl::Status& s, bool is_dead, const std::string& key) {
  if (!s.ok()) return WithContext(s, "RunGraphRequest.recv_key");
  if (is_dead) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the fetch under '", key, "' is dead (it comes from an untaken "
        "branch of a cond)"));
  }
  return absl::OkStatus();
}

}  // namespace worker_internal
}  // namespace weft
