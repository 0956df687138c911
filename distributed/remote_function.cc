#include "distributed/remote_function.h"

#include "distributed/task_name.h"

#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "distributed/fanout.h"
#include "distributed/run_plan.h"
#include "distributed/step_id.h"
#include "distributed/task_name.h"
#include "graph/graph_def_loader.h"
#include "runtime/client_graph.h"
#include "runtime/core/allocator.h"
#include "runtime/core/cancellation.h"
#include "runtime/core/status.h"
#include "runtime/core/tensor_proto.h"
#include "runtime/function_runtime.h"

namespace weft {
namespace {

// One call of `m` to `w` (distributed/fanout.h keeps its request and
// response alive until it answers, however long the caller waits).
template <typename Req, typename Resp>
std::shared_ptr<Fanout<Req, Resp>> Start(
    WorkerInterface* w,
    void (WorkerInterface::*m)(const Req*, Resp*, WorkerInterface::Done),
    Req request) {
  auto call = Fanout<Req, Resp>::Make();
  call->Add("", w).request = std::move(request);
  call->Start(m);
  return call;
}

// Calls `m` and waits at most `timeout` for its answer.
template <typename Req, typename Resp>
absl::StatusOr<Resp> Await(
    WorkerInterface* w,
    void (WorkerInterface::*m)(const Req*, Resp*, WorkerInterface::Done),
    Req request,
                           absl::Duration timeout, const std::string& what) {
  auto call = Start(w, m, std::move(request));
  if (!call->WaitUntil(absl::Now() + timeout)) {
    return absl::DeadlineExceededError(absl::StrCat(
        what, " got no answer within ", absl::FormatDuration(timeout)));
  }
  if (!call->call(0).status.ok()) return call->call(0).status;
  return std::move(call->call(0).response);
}

// The function's call graph with its arguments as Placeholders and its
// results as Identities, every node asking for `device`.
void ToFedGraph(const std::string& device, tensorflow::GraphDef* graph) {
  for (tensorflow::NodeDef& n : *graph->mutable_node()) {
    auto& attr = *n.mutable_attr();
    if (n.op() == "_Arg") {
      n.set_op("Placeholder");
      attr["dtype"] = attr["T"];
      attr.erase("T");
      attr.erase("index");
    } else if (n.op() == "_Retval") {
      n.set_op("Identity");
      attr.erase("index");
    }
    n.set_device(device);
  }
}

class RemoteInstance final : public InstantiatedFunction {
 public:
  RemoteInstance(std::string name, DataTypeVector args, DataTypeVector rets,
                 const RemoteFunctionOptions& options, WorkerInterface* worker,
                 std::string task)
      : name_(std::move(name)),
        arg_types_(std::move(args)),
        ret_types_(std::move(rets)),
        owned_workers_(options.owned_workers),
        worker_(worker),
        task_(std::move(task)),
        session_(options.session_handle) {}

  ~RemoteInstance() override {
    if (graph_handle_.empty()) return;
    tensorflow::DeregisterGraphRequest req;
    req.set_session_handle(session_);
    req.set_create_worker_session_called(!session_.empty());
    req.set_graph_handle(graph_handle_);
    // Not waited for: the task drops the graph when it can.
    Start(worker_, &WorkerInterface::DeregisterGraphAsync, std::move(req));
  }

  const DataTypeVector& arg_types() const override { return arg_types_; }
  const DataTypeVector& ret_types() const override { return ret_types_; }
  const std::string& name() const override { return name_; }

  absl::Status Run(std::vector<Tensor> args, std::vector<Tensor>* rets,
                   CancellationManager* cancellation) const override {
    WEFT_RETURN_IF_ERROR(CheckFunctionArgs(name_, arg_types_, args));
    tensorflow::RunGraphRequest req;
    req.set_session_handle(session_);
    req.set_create_worker_session_called(!session_.empty());
    req.set_graph_handle(graph_handle_);
    const int64_t step_id = NewStepId();
    req.set_step_id(step_id);
    req.set_store_errors_in_response_body(true);
    for (size_t i = 0; i < args.size(); ++i) {
      tensorflow::NamedTensorProto* send = req.add_send();
      send->set_name(feed_keys_[i]);
      TensorToProto(args[i], send->mutable_tensor());
    }
    for (const std::string& key : fetch_keys_) req.add_recv_key(key);
    auto call = Start(worker_, &WorkerInterface::RunGraphAsync, std::move(req));
    // Cancelling the caller's step aborts this one on the task.
    CancellationToken token = kInvalidToken;
    if (cancellation != nullptr) {
      token = cancellation->Register([this, step_id] { Cleanup(step_id); });
      if (token == kInvalidToken) Cleanup(step_id);
    }
    call->WaitUntil(absl::InfiniteFuture());
    if (token != kInvalidToken) cancellation->Deregister(token);
    Cleanup(step_id);
    absl::Status s = call->call(0).status;
    const tensorflow::RunGraphResponse& resp = call->call(0).response;
    if (s.ok() && resp.status_code() != tensorflow::error::OK) {
      s = absl::Status(static_cast<absl::StatusCode>(resp.status_code()),
                       resp.status_error_message());
    }
    if (!s.ok()) return WithContext(s, Where());
    absl::flat_hash_map<std::string, const tensorflow::TensorProto*> by_key;
    for (const tensorflow::NamedTensorProto& t : resp.recv()) {
      by_key[t.name()] = &t.tensor();
    }
    rets->clear();
    for (const std::string& key : fetch_keys_) {
      auto it = by_key.find(key);
      if (it == by_key.end()) {
        return absl::InternalError(absl::StrCat(
            Where(), ": the task returned no value under '", key, "'"));
      }
      absl::StatusOr<Tensor> value = TensorFromProto(*it->second, CpuAllocator());
      if (!value.ok()) return WithContext(value.status(), Where());
      rets->push_back(*std::move(value));
    }
    return absl::OkStatus();
  }

  std::string graph_handle_;
  std::vector<std::string> feed_keys_;   // argument i's send key
  std::vector<std::string> fetch_keys_;  // result j's receive key

 private:
  std::string Where() const {
    return absl::StrCat("function ", name_, " on task ", task_);
  }

  // Drops (and, while it runs, aborts) the step on the task; not waited for.
  void Cleanup(int64_t step_id) const {
    tensorflow::CleanupGraphRequest req;
    req.set_step_id(step_id);
    Start(worker_, &WorkerInterface::CleanupGraphAsync, std::move(req));
  }

  const std::string name_;
  const DataTypeVector arg_types_;
  const DataTypeVector ret_types_;
  const std::shared_ptr<WorkerCache> owned_workers_;  // may hold worker_
  WorkerInterface* const worker_;
  const std::string task_;
  const std::string session_;
};

// InstantiateRemoteFunction without the function's name on its errors.
absl::StatusOr<std::shared_ptr<const InstantiatedFunction>> Instantiate(
    const RemoteFunctionOptions& options, const tensorflow::NameAttrList& fn,
    const std::string& task, const std::string& device) {
  WEFT_ASSIGN_OR_RETURN(WorkerInterface * worker,
                        options.workers->GetWorker(task));
  WEFT_ASSIGN_OR_RETURN(
      tensorflow::GetStatusResponse status,
      Await(worker, &WorkerInterface::GetStatusAsync,
            tensorflow::GetStatusRequest(), options.call_timeout,
            absl::StrCat("GetStatus of task ", task)));

  // The function as a graph fed and fetched on the target device.
  WEFT_ASSIGN_OR_RETURN(FunctionLibrary index,
                        FunctionLibrary::Create(*options.library));
  DataTypeVector arg_types, ret_types;
  WEFT_ASSIGN_OR_RETURN(
      tensorflow::GraphDef graph_def,
      FunctionCallGraph(fn, index, *options.library, *options.ops, &arg_types,
                        &ret_types));
  ToFedGraph(device, &graph_def);
  WEFT_ASSIGN_OR_RETURN(std::unique_ptr<Graph> graph,
                        ConvertGraphDefToGraph(graph_def, *options.ops));
  std::vector<std::string> feeds, fetches;
  for (size_t i = 0; i < arg_types.size(); ++i) {
    feeds.push_back(absl::StrCat("_arg", i, ":0"));
  }
  for (size_t j = 0; j < ret_types.size(); ++j) {
    fetches.push_back(absl::StrCat("_retval", j, ":0"));
  }
  WEFT_ASSIGN_OR_RETURN(RunSignature signature,
                        RunSignature::Make(feeds, fetches, {}));
  ClusterPlacement placement;
  placement.devices.assign(status.device_attributes().begin(),
                           status.device_attributes().end());
  // The task may have been started under another name than the session's
  // cluster gives it.
  for (tensorflow::DeviceAttributes& d : placement.devices) {
    WEFT_ASSIGN_OR_RETURN(std::string name, DeviceAsTask(d.name(), task));
    d.set_name(std::move(name));
  }
  placement.client_device = device;
  placement.ops = options.ops;
  placement.kernels = options.kernels;
  WEFT_ASSIGN_OR_RETURN(RunPlan plan, PlanRun(*graph, signature, placement));
  if (plan.partitions.size() != 1 || plan.partitions.count(task) == 0) {
    return absl::InternalError(absl::StrCat(
        "it was planned over ", plan.partitions.size(),
        " tasks; expected task ", task, " alone"));
  }

  tensorflow::RegisterGraphRequest reg;
  reg.set_session_handle(options.session_handle);
  reg.set_create_worker_session_called(!options.session_handle.empty());
  *reg.mutable_graph_def() = std::move(plan.partitions.begin()->second);
  *reg.mutable_graph_def()->mutable_library() = *options.library;
  WEFT_ASSIGN_OR_RETURN(
      tensorflow::RegisterGraphResponse registered,
      Await(worker, &WorkerInterface::RegisterGraphAsync, std::move(reg),
            options.call_timeout, absl::StrCat("RegisterGraph on task ", task)));

  auto instance = std::make_shared<RemoteInstance>(
      fn.name(), std::move(arg_types), std::move(ret_types), options, worker,
      task);
  instance->graph_handle_ = registered.graph_handle();
  // Signature feed i is argument feed_order[i].
  instance->feed_keys_.resize(signature.feeds.size());
  for (size_t i = 0; i < signature.feeds.size(); ++i) {
    instance->feed_keys_[signature.feed_order[i]] = plan.feed_keys[i];
  }
  instance->fetch_keys_ = plan.fetch_keys;
  return std::shared_ptr<const InstantiatedFunction>(std::move(instance));
}

}  // namespace

absl::StatusOr<std::shared_ptr<const InstantiatedFunction>>
InstantiateRemoteFunction(const RemoteFunctionOptions& options,
                          const tensorflow::NameAttrList& fn,
                          const DeviceSpec& target) {
  if (!target.IsFull()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "function ", fn.name(), ": the target '", target.ToString(),
        "' must name a job, task and device"));
  }
  DeviceSpec task;
  task.job = target.job;
  task.replica = target.replica;
  task.task = target.task;
  const std::string device = target.ToString();
  absl::StatusOr<std::shared_ptr<const InstantiatedFunction>> f =
      Instantiate(options, fn, task.ToString(), device);
  if (!f.ok()) {
    return WithContext(f.status(),
                       absl::StrCat("function ", fn.name(), " on ", device));
  }
  return f;
}

}  // namespace weft
