// The parts of MasterSession (master_session.h) that its implementation
// files share: the private Plan, Step and PartialRun, and the helpers of a
// step's RunGraph calls. The class is implemented over several files, one
// job each: master_session.cc (sessions, graphs, callables, close),
// master_session_plans.cc (registering a run's partitions on its tasks),
// master_session_step.cc (a step's lifecycle, blocking and asynchronous),
// master_session_partial.cc (partial runs) and master_session_recovery.cc
// (tasks that restarted under the session). Only those files include this
// header.
#ifndef WEFT_DISTRIBUTED_MASTER_SESSION_PARTS_H_
#define WEFT_DISTRIBUTED_MASTER_SESSION_PARTS_H_

#include <deque>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/time/time.h"
#include "distributed/fanout.h"
#include "distributed/master_session.h"
#include "distributed/run_plan.h"

namespace weft {

struct MasterSession::Plan {
  RunPlan plan;
  std::map<std::string, std::string> graph_handles;  // task -> handle
  std::vector<std::string> recv_keys;  // plan.fetch_keys without repeats
};

struct MasterSession::Step {
  using Calls =
      Fanout<tensorflow::RunGraphRequest, tensorflow::RunGraphResponse>;
  int64_t id = 0;
  int64_t timeout_ms = 0;  // 0: none
  absl::Time deadline = absl::InfiniteFuture();
  int client = -1;  // the call to the client task; -1: none
  std::shared_ptr<Calls> calls = Calls::Make();
  // The caller's cancellation (its client went away), and this step's
  // registration there; deregistered by EndStep.
  CancellationManager* cancel = nullptr;
  CancellationToken token = kInvalidToken;
};

struct MasterSession::PartialRun {
  std::string handle;
  std::shared_ptr<const Plan> plan;
  int64_t step_id = 0;
  // By the names the setup gave (and their canonical forms): the plan's
  // position, and whether it was fed or fetched already.
  absl::flat_hash_map<std::string, int> feeds, fetches;
  std::vector<bool> fed, fetched;
  int fetches_left = 0;
  bool busy = false;  // a call is in flight
};

namespace master_session_internal {

using CleanupCalls =
    Fanout<tensorflow::CleanupGraphRequest, tensorflow::CleanupGraphResponse>;

// What every RunGraph of a step carries: the session, graph and step, and
// errors in the response body.
void InitRunGraph(const std::string& session, const std::string& graph, int64_t step_id,
                  tensorflow::RunGraphRequest* request);

// The values of `keys` in a RunGraph's answer from `task`, in order;
// INTERNAL naming the key (and `what`: the step) when one is missing.
absl::Status TakeFetched(const tensorflow::RunGraphResponse& response,
                         const std::vector<std::string>& keys, const std::string& task,
                         const std::string& what,
                         std::vector<tensorflow::TensorProto>* fetched);

// The code and message a RunGraph call ended with: the call's own status,
// or the one its response body carries.
absl::Status CallStatus(const absl::Status& rpc,
                        const tensorflow::RunGraphResponse& response);

// An error that another task's failure caused (the step was aborted or
// cancelled there because it failed here): reported only when no cause is.
bool IsDerived(const absl::Status& s);

std::string Tasks(const std::deque<std::string>& tasks);

absl::Status ClosedError(const std::string& handle);

// A feed checked against the plan (dtype, shape, content size) without
// decoding it when its values come as tensor_content, as clients send large
// ones: the task that reads the feed decodes it, once. Small typed-field
// values are decoded here, which checks them fully.
// `name` is the feed as the client named it.
absl::Status CheckFeed(const std::string& name,
                       const tensorflow::TensorProto& proto,
                       const FeedSpec& spec);

// CleanupGraph of `step_id` sent to `tasks` (those `workers` reaches).
std::shared_ptr<CleanupCalls> StartCleanup(WorkerCache* workers,
                                           const std::vector<std::string>& tasks,
                                           int64_t step_id);

absl::Status CancelledByClient(int64_t step_id);

void AddFetched(const tensorflow::RunStepRequest& request,
                std::vector<tensorflow::TensorProto>* fetched,
                tensorflow::RunStepResponse* response);

// A RunStepRequest's parts as RunNamed takes them.
struct NamedRun {
  explicit NamedRun(const tensorflow::RunStepRequest& request)
      : fetches(request.fetch().begin(), request.fetch().end()),
        targets(request.target().begin(), request.target().end()) {
    feeds.reserve(request.feed_size());
    for (const tensorflow::NamedTensorProto& f : request.feed()) {
      feeds.emplace_back(f.name(), &f.tensor());
    }
  }
  std::vector<std::pair<std::string, const tensorflow::TensorProto*>> feeds;
  std::vector<std::string> fetches;
  std::vector<std::string> targets;
};

}  // namespace master_session_internal
}  // namespace weft

#endif  // WEFT_DISTRIBUTED_MASTER_SESSION_PARTS_H_
