// MasterSession's shared helpers, documented in master_session_parts.h.
#include "distributed/master_session_parts.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "distributed/fanout.h"
#include "distributed/run_plan.h"
#include "distributed/step_id.h"
#include "runtime/core/allocator.h"
#include "runtime/core/device_name.h"
#include "runtime/core/status.h"
#include "runtime/core/tensor_proto.h"
#include "runtime/core/thread_pool.h"

namespace weft {
namespace master_session_internal {

void InitRunGraph(const std::string& session, const std::string& graph, int64_t step_id,
                  tensorflow::RunGraphRequest* request) {
  request->set_session_handle(session);
  request->set_create_worker_session_called(true);
  request->set_graph_handle(graph);
  request->set_step_id(step_id);
  request->set_store_errors_in_response_body(true);
}

absl::Status TakeFetched(const tensorflow::RunGraphResponse& response,
                         const std::vector<std::string>& keys, const std::string& task,
                         const std::string& what,
                         std::vector<tensorflow::TensorProto>* fetched) {
  absl::flat_hash_map<std::string, const tensorflow::TensorProto*> by_key;
  for (const tensorflow::NamedTensorProto& t : response.recv()) {
    by_key[t.name()] = &t.tensor();
  }
  for (const std::string& key : keys) {
    auto it = by_key.find(key);
    if (it == by_key.end()) {
      return absl::InternalError(absl::StrCat(
          "task ", task, " returned no value for the fetch under '", key, "' in ", what));
    }
    fetched->push_back(*it->second);
  }
  return absl::OkStatus();
}

absl::Status CallStatus(const absl::Status& rpc,
                        const tensorflow::RunGraphResponse& response) {
  if (!rpc.ok()) return rpc;
  if (response.status_code() == tensorflow::error::OK) return absl::OkStatus();
  return absl::Status(static_cast<absl::StatusCode>(response.status_code()),
                      response.status_error_message());
}

bool IsDerived(const absl::Status& s) {
  return absl::IsAborted(s) || absl::IsCancelled(s);
}

std::string Tasks(const std::deque<std::string>& tasks) {
  return absl::StrJoin(tasks, ", ");
}

absl::Status ClosedError(const std::string& handle) {
  return absl::AbortedError(absl::StrCat(
      "session '", handle, "' is closed (create a new session)"));
}



absl::Status CheckFeed(const std::string& name,
                       const tensorflow::TensorProto& proto,
                       const FeedSpec& spec) {
  const std::string context = absl::StrCat("feed '", name, "'");
  const DataType dtype = proto.dtype();
  if (proto.tensor_content().empty() || dtype == DT_INVALID ||
      dtype == DT_STRING || dtype == DT_RESOURCE ||
      !DataTypeIsSupported(dtype)) {
    absl::StatusOr<Tensor> value = TensorFromProto(proto, CpuAllocator());
    if (!value.ok()) return WithContext(value.status(), context);
    return spec.Check(*value);
  }
  absl::StatusOr<TensorShape> shape = TensorShape::FromProto(proto.tensor_shape());
  if (!shape.ok()) return WithContext(shape.status(), context);
  const size_t size = DataTypeSize(dtype);
  const size_t bytes = proto.tensor_content().size();
  if (size == 0 || bytes % size != 0 ||
      bytes / size != static_cast<uint64_t>(shape->num_elements())) {
    return absl::InvalidArgumentError(absl::StrCat(
        context, ": TensorProto tensor_content has ", bytes, " bytes but shape ",
        shape->DebugString(), " of ", DataTypeString(dtype), " needs ",
        shape->num_elements(), " values of ", size, " bytes"));
  }
  return spec.Check(dtype, *shape);
}

std::shared_ptr<CleanupCalls> StartCleanup(WorkerCache* workers,
                                           const std::vector<std::string>& tasks,
                                           int64_t step_id) {
  auto calls = CleanupCalls::Make();
  for (const std::string& task : tasks) {
    absl::StatusOr<WorkerInterface*> worker = workers->GetWorker(task);
    if (!worker.ok()) continue;
    calls->Add(task, *worker).request.set_step_id(step_id);
  }
  calls->Start(&WorkerInterface::CleanupGraphAsync);
  return calls;
}

absl::Status CancelledByClient(int64_t step_id) {
  return absl::CancelledError(absl::StrCat(
      "the client cancelled the call, or its deadline passed; step ", step_id,
      " was aborted on every task"));
}

void AddFetched(const tensorflow::RunStepRequest& request,
                std::vector<tensorflow::TensorProto>* fetched,
                tensorflow::RunStepResponse* response) {
  for (size_t j = 0; j < fetched->size(); ++j) {
    tensorflow::NamedTensorProto* out = response->add_tensor();
    out->set_name(request.fetch(static_cast<int>(j)));
    *out->mutable_tensor() = std::move((*fetched)[j]);
  }
}

}  // namespace master_session_internal

}  // namespace weft
