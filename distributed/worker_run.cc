// Worker: RunGraph (a step's partition, its feeds and fetches), partial steps a call at a time, and cleanup (worker_parts.h).
#include "distributed/worker.h"

#include "distributed/worker_parts.h"

namespace weft {

using worker_internal::OnTask;
using worker_internal::MaybeStoreError;
using worker_internal::SendFeeds;
using worker_internal::FetchStatus;

void Worker::RunGraphAsync(const tensorflow::RunGraphRequest* request,
                           tensorflow::RunGraphResponse* response,
                           Done done) {
  const bool in_body = request->store_errors_in_response_body();
  RunGraph(request, response,
           [this, in_body, response, done = std::move(done)](absl::Status s) {
             done(MaybeStoreError(in_body, OnTask(options_.task, s), response));
           });
}

void Worker::RunGraph(const tensorflow::RunGraphRequest* request,
                      tensorflow::RunGraphResponse* response, Done done) {
  if (request->is_partial()) {
    // A later call of a partial run: its feeds and fetches only.
    std::shared_ptr<PartialStep> running;
    {
      absl::MutexLock lock(&mu_);
      auto it = partial_.find(request->step_id());
      if (it != partial_.end()) running = it->second;
    }
    if (running != nullptr) {
      ContinuePartial(running, request, response, std::move(done), /*sent=*/false);
      return;
    }
  }
  absl::StatusOr<std::shared_ptr<Session>> session = FindSession(
      request->session_handle(), request->create_worker_session_called());
  if (!session.ok()) {
    done(session.status());
    return;
  }
  std::shared_ptr<const RegisteredGraph> graph;
  {
    absl::MutexLock lock(&(*session)->mu);
    auto it = (*session)->graphs.find(request->graph_handle());
    if (it != (*session)->graphs.end()) {
      graph = it->second.graph;
      it->second.last_used = absl::Now();
    }
  }
  if (graph == nullptr) {
    done(absl::AbortedError(absl::StrCat(
        "no registered graph '", request->graph_handle(),
        "' (it was deregistered, or this task restarted; register it "
        "again)")));
    return;
  }
  absl::StatusOr<std::shared_ptr<StepRendezvous>> rendezvous =
      steps_.FindOrCreate(request->step_id(), StepUse::kRun);
  if (!rendezvous.ok()) {
    done(rendezvous.status());
    return;
  }
  if ((*session)->workers != nullptr) {
    (*rendezvous)->Bind((*session)->task, (*session)->workers);
  }
  // Feeds go into the step's rendezvous, where their client-terminated
  // _Recvs find them.
  if (absl::Status s = SendFeeds(*request, options_.devices->default_device()->allocator(),
                                  rendezvous->get());
      !s.ok()) {
    steps_.RunEnded(request->step_id());
    done(s);
    return;
  }
  struct Step {
    std::shared_ptr<const RegisteredGraph> graph;
    std::shared_ptr<StepRendezvous> rendezvous;
    std::shared_ptr<CancellationManager> cancellation =
        std::make_shared<CancellationManager>();
    std::unique_ptr<StepStatsCollector> stats;  // when the master asks
    std::string stats_task;
    Executor::StepArgs args;
  };
  auto step = std::make_shared<Step>();
  step->graph = graph;
  step->rendezvous = *rendezvous;
  step->args.step_id = request->step_id();
  step->args.rendezvous = step->rendezvous.get();
  step->args.collectives = collectives_.get();
  step->args.cancellation = step->cancellation.get();
  if (request->exec_opts().record_timeline() ||
      request->exec_opts().record_costs()) {
    step->stats = std::make_unique<StepStatsCollector>();
    step->args.observer = step->stats.get();
    // Statistics name the devices as the step's session does.
    step->stats_task = (*session)->workers != nullptr ? (*session)->task
                                                     : options_.task;
  }
  // A partial run's first call: the step runs on after this call answers
  // (its fetches are served as they come); the last call waits for it.
  std::shared_ptr<PartialStep> partial;
  Done rpc_done;
  if (request->is_partial()) {
    // What a peer can keep running here between the calls is bounded.
    bool full;
    {
      absl::MutexLock lock(&mu_);
      full = static_cast<int>(partial_.size()) >= options_.max_partial_steps;
    }
    if (full) {
      steps_.RunEnded(request->step_id());
      done(absl::ResourceExhaustedError(absl::StrCat(
          "task ", options_.task, " already runs ", options_.max_partial_steps,
          " partial runs, the most it keeps; finish or abandon some (their "
          "last call, or closing their session, ends them)")));
      return;
    }
    partial = std::make_shared<PartialStep>();
    partial->rendezvous = *rendezvous;
    rpc_done = std::move(done);
    done = [partial](absl::Status s) { partial->End(std::move(s)); };
  }
  {
    absl::MutexLock lock(&mu_);
    ++running_steps_;
    cancel_[request->step_id()].push_back(step->cancellation);
    if (partial != nullptr) partial_[request->step_id()] = partial;
  }
  const bool whole = partial == nullptr;  // else `request` ends before the step
  Executor::DoneCallback finished = [this, step, request, response, whole,
                                     done = std::move(done)](
                                        absl::Status s) mutable {
    if (s.ok() && whole) {
      absl::flat_hash_map<std::string, int> seen;  // a key asked twice
      for (const std::string& key : request->recv_key()) {
        auto [it, first] = seen.try_emplace(key, response->recv_size());
        if (!first) {
          *response->add_recv() = response->recv(it->second);
          continue;
        }
        Tensor value;
        bool is_dead = false;
        s = FetchStatus(step->rendezvous->TakeLocal(key, &value, &is_dead), is_dead, key);
        if (!s.ok()) break;
        tensorflow::NamedTensorProto* out = response->add_recv();
        out->set_name(key);
        TensorToProto(value, out->mutable_tensor());
      }
    }
    if (step->stats != nullptr && whole) {
      tensorflow::StepStats* stats = response->mutable_step_stats();
      step->stats->Finalize(stats);
      for (tensorflow::DeviceStepStats& d : *stats->mutable_dev_stats()) {
        if (absl::StartsWith(d.device(), options_.task + "/")) {
          d.set_device(absl::StrCat(step->stats_task,
                                    d.device().substr(options_.task.size())));
        }
      }
    }
    if (!s.ok()) {
      // Peers waiting for this step's tensors stop now. ABORTED, so the
      // master reports this task's error rather than theirs.
      step->rendezvous->StartAbort(absl::AbortedError(absl::StrCat(
          "step ", step->args.step_id, " failed on task ", options_.task,
          ": ", s.message())));
    }
    const int64_t step_id = step->args.step_id;
    const CancellationManager* const mine = step->cancellation.get();
    step.reset();  // the graph and rendezvous, before the worker may go
    steps_.RunEnded(step_id);
    done(s);
    std::shared_ptr<CancellationManager> dropped;  // freed unlocked
    absl::MutexLock lock(&mu_);
    --running_steps_;
    auto it = cancel_.find(step_id);
    if (it != cancel_.end()) {
      auto& list = it->second;
      for (auto c = list.begin(); c != list.end(); ++c) {
        if (c->get() == mine) {
          dropped = std::move(*c);
          list.erase(c);
          break;
        }
      }
      if (list.empty()) cancel_.erase(it);
    }
  };
  // On the pool, so that RunGraph returns at once: the master starts every
  // task's partition before any of them has finished.
  auto start = [graph, step, finished = std::move(finished)]() mutable {
    graph->exec->RunAsync(step->args, std::move(finished));
  };
  if (options_.inter_op_pool != nullptr) {
    options_.inter_op_pool->Schedule(std::move(start));
  } else {
    start();
  }
  if (partial != nullptr) {
    ContinuePartial(partial, request, response, std::move(rpc_done), /*sent=*/true);
  }
}

void Worker::PartialStep::End(absl::Status s) {
  std::function<void()> waiting;
  {
    absl::MutexLock lock(&mu);
    ended = true;
    status = std::move(s);
    waiting = std::move(on_end);
  }
  if (waiting) waiting();
}

void Worker::ContinuePartial(std::shared_ptr<PartialStep> step,
                             const tensorflow::RunGraphRequest* request,
                             tensorflow::RunGraphResponse* response, Done done,
                             bool sent) {
  if (!sent) {
    absl::Status s = SendFeeds(*request, options_.devices->default_device()->allocator(),
                               step->rendezvous.get());
    if (!s.ok()) {
      done(s);
      return;
    }
  }
  // This call's fetches, as they come; then, for the last call, the end
  // of the step.
  struct Fetches {
    absl::Mutex mu;
    int left ABSL_GUARDED_BY(mu) = 0;
    absl::Status status ABSL_GUARDED_BY(mu);
    std::vector<Tensor> values ABSL_GUARDED_BY(mu);
  };
  auto fetches = std::make_shared<Fetches>();
  const int n = request->recv_key_size();
  {
    absl::MutexLock lock(&fetches->mu);
    fetches->left = n + 1;  // + 1: released below, once every wait is on
    fetches->values.resize(n);
  }
  const int64_t step_id = request->step_id();
  auto finish = [this, step, fetches, request, response, step_id,
                 done = std::move(done)]() mutable {
    absl::Status s;
    {
      absl::MutexLock lock(&fetches->mu);
      s = fetches->status;
      for (int i = 0; s.ok() && i < request->recv_key_size(); ++i) {
        tensorflow::NamedTensorProto* out = response->add_recv();
        out->set_name(request->recv_key(i));
        TensorToProto(fetches->values[i], out->mutable_tensor());
      }
    }
    if (!s.ok() || !request->is_last_partial_run()) {
      done(s);
      return;
    }
    auto last = [this, step, step_id, done = std::move(done)]() mutable {
      absl::Status status;
      {
        absl::MutexLock lock(&step->mu);
        status = step->status;
      }
      {
        absl::MutexLock lock(&mu_);
        partial_.erase(step_id);
      }
      done(status);
    };
    bool ended;
    {
      absl::MutexLock lock(&step->mu);
      ended = step->ended;
      if (!ended) step->on_end = std::move(last);
    }
    if (ended) last();
  };
  auto arrived = [fetches, finish](int i, const absl::Status& s, const Tensor& value,
                                   bool is_dead, const std::string& key) mutable {
    bool all;
    {
      absl::MutexLock lock(&fetches->mu);
      if (i >= 0) {
        const absl::Status fetched = FetchStatus(s, is_dead, key);
        if (fetched.ok()) fetches->values[i] = value;
        fetches->status.Update(fetched);
      }
      all = --fetches->left == 0;
    }
    if (all) finish();
  };
  auto shared_arrived = std::make_shared<decltype(arrived)>(std::move(arrived));
  for (int i = 0; i < n; ++i) {
    const std::string key = request->recv_key(i);
    step->rendezvous->RecvLocalAsync(
        key, [shared_arrived, i, key](const absl::Status& s, const Tensor& value,
                                      bool is_dead) {
          (*shared_arrived)(i, s, value, is_dead, key);
        });
  }
  (*shared_arrived)(-1, absl::OkStatus(), Tensor(), false, "");
}

void Worker::CleanupGraphAsync(const tensorflow::CleanupGraphRequest* request,
                               tensorflow::CleanupGraphResponse*, Done done) {
  steps_.Cleanup(request->step_id());
  {
    absl::MutexLock lock(&mu_);
    partial_.erase(request->step_id());
  }
  std::vector<std::shared_ptr<CancellationManager>> running;
  {
    absl::MutexLock lock(&mu_);
    auto it = cancel_.find(request->step_id());
    if (it != cancel_.end()) running = it->second;
  }
  for (const auto& cm : running) cm->StartCancel();
  done(absl::OkStatus());
}

void Worker::CleanupAllAsync(const tensorflow::CleanupAllRequest* request,
                             tensorflow::CleanupAllResponse*, Done done) {
  for (Device* d : options_.devices->devices()) {
    ResourceMgr* resources = d->resource_manager();
    // No container, or "", means the default one (as in TensorFlow).
    if (request->container().empty()) {
      resources->Cleanup(resources->default_container());
    }
    for (const std::string& c : request->container()) {
      resources->Cleanup(c.empty() ? resources->default_container() : c);
    }
  }
  done(absl::OkStatus());
}

}  // namespace weft
