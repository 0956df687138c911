#include "runtime/local_session.h"

#include <algorithm>
#include <cstdio>
#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/synchronization/notification.h"
#include "graph/graph_def_loader.h"
#include "graph/placer.h"
#include "ops/framework/call_frame.h"
#include "runtime/client_graph.h"
#include "runtime/core/device_memory.h"
#include "runtime/executable_graph.h"
#include "runtime/executor_observer.h"
#include "runtime/function_runtime.h"
#include "runtime/session_graph.h"
#include "runtime/gpu/gpu_devices.h"
#include "runtime/core/local_device_mgr.h"
#include "runtime/core/rendezvous.h"
#include "runtime/core/status.h"

namespace weft {

struct LocalSession::PreparedRun {
  std::vector<FeedSpec> feeds;  // _Arg i takes the signature's feed i
  int num_fetches = 0;
  // The graph's library functions, for kernels that call them per element;
  // null when it has none. Outlives `graph`.
  std::shared_ptr<FunctionRuntime> functions;
  std::unique_ptr<ExecutableGraph> graph;
};

namespace {

// INVALID_ARGUMENT naming the field when the config asks for more devices or
// threads than one process may start (runtime/core/local_device_mgr.h); the
// session then holds a default config's devices and Create reports the
// error.
absl::Status CheckConfigBounds(const tensorflow::ConfigProto& config) {
  auto cpus = config.device_count().find("CPU");
  if (cpus != config.device_count().end() && cpus->second > kMaxLocalCpuDevices) {
    return absl::InvalidArgumentError(absl::StrCat(
        "ConfigProto.device_count[\"CPU\"] is ", cpus->second,
        "; a session has at most ", kMaxLocalCpuDevices, " CPU devices"));
  }
  for (const auto& [field, threads] :
       {std::pair<const char*, int>{"intra_op_parallelism_threads",
                                    config.intra_op_parallelism_threads()},
        {"inter_op_parallelism_threads", config.inter_op_parallelism_threads()}}) {
    if (threads > kMaxPoolThreads) {
      return absl::InvalidArgumentError(absl::StrCat(
          "ConfigProto.", field, " is ", threads, "; at most ", kMaxPoolThreads,
          " (0 picks the number of cores)"));
    }
  }
  return absl::OkStatus();
}

}  // namespace

std::unique_ptr<Session> NewLocalSession(const SessionOptions& options) {
  return std::make_unique<LocalSession>(options);
}

LocalSession::LocalSession(const SessionOptions& options)
    : LocalSession(options, GlobalOpRegistry(), GlobalKernelRegistry()) {}

LocalSession::LocalSession(const SessionOptions& options, const OpRegistry& ops,
                           const KernelRegistry& kernels)
    : options_(options), ops_(&ops), kernels_(&kernels) {
  init_status_ = CheckConfigBounds(options.config);
  // A config out of bounds is reported by Create; meanwhile the session
  // holds no more than a default one would.
  const tensorflow::ConfigProto config =
      init_status_.ok() ? options.config : tensorflow::ConfigProto();
  LocalDeviceOptions device_options;
  auto cpus = config.device_count().find("CPU");
  if (cpus != config.device_count().end() && cpus->second > 0) {
    device_options.num_cpus = cpus->second;
  }
  device_options.intra_op_threads =
      std::max(0, config.intra_op_parallelism_threads());
  device_options.host_memory_limit_bytes =
      std::max<int64_t>(0, options.memory_limit_bytes);
  // GPUs as TensorFlow counts them: all there are, unless
  // device_count["GPU"] asks for fewer.
  auto gpus_wanted = config.device_count().find("GPU");
  const int max_gpus = gpus_wanted == config.device_count().end()
                           ? -1
                           : std::max(0, gpus_wanted->second);
  GpuDevices gpus = NewLocalGpuDevices(device_options.job, device_options.replica,
                                       device_options.task, max_gpus);
  if (config.log_device_placement() && !gpus.note.empty()) {
    std::fprintf(stderr, "%s\n", gpus.note.c_str());
  }
  absl::StatusOr<std::unique_ptr<DeviceMgr>> devices =
      NewLocalDeviceMgr(device_options, std::move(gpus.devices));
  if (!devices.ok()) {
    init_status_.Update(devices.status());
    return;
  }
  devices_ = *std::move(devices);
  const int inter_op = config.inter_op_parallelism_threads();
  run_inline_ = inter_op < 0;
  // Even when kernels run inline, steps with a timeout run on the pool so the
  // caller can wait with a deadline.
  absl::StatusOr<std::unique_ptr<ThreadPool>> pool = ThreadPool::Create(
      "weft_inter_op", inter_op > 0 ? inter_op : DefaultThreadCount());
  if (!pool.ok()) {
    init_status_.Update(WithContext(
        pool.status(),
        "the session's inter-op pool (ConfigProto.inter_op_parallelism_threads)"));
    return;
  }
  inter_op_pool_ = *std::move(pool);
}

LocalSession::~LocalSession() { (void)Close(); }

absl::Status LocalSession::Create(const tensorflow::GraphDef& graph) {
  if (!init_status_.ok()) return init_status_;
  {
    absl::MutexLock lock(&mu_);
    if (closed_) return absl::FailedPreconditionError("session is closed");
    if (graph_ != nullptr) {
      return absl::AlreadyExistsError(
          "the session already has a graph; use Extend to add nodes");
    }
  }
  WEFT_ASSIGN_OR_RETURN(std::shared_ptr<const SessionGraph> state,
                        SessionGraph::Create(graph, *ops_));
  absl::MutexLock lock(&mu_);
  if (closed_) return absl::FailedPreconditionError("session is closed");
  if (graph_ != nullptr) {
    return absl::AlreadyExistsError(
        "the session already has a graph; use Extend to add nodes");
  }
  graph_ = std::move(state);
  return absl::OkStatus();
}

absl::Status LocalSession::Extend(const tensorflow::GraphDef& graph) {
  if (!init_status_.ok()) return init_status_;
  // Extends are serialised by taking the graph under the lock and swapping
  // it back only if nobody changed it meanwhile.
  for (;;) {
    std::shared_ptr<const SessionGraph> current;
    {
      absl::MutexLock lock(&mu_);
      if (closed_) return absl::FailedPreconditionError("session is closed");
      current = graph_;
    }
    absl::StatusOr<std::shared_ptr<const SessionGraph>> state =
        current == nullptr ? SessionGraph::Create(graph, *ops_)
                           : current->Extend(graph, *ops_);
    WEFT_RETURN_IF_ERROR(state.status());
    absl::MutexLock lock(&mu_);
    if (closed_) return absl::FailedPreconditionError("session is closed");
    if (graph_ != current) continue;  // raced with another Extend: redo
    graph_ = *std::move(state);
    return absl::OkStatus();
  }
}

absl::Status LocalSession::Run(
    const std::vector<std::pair<std::string, Tensor>>& feeds,
    const std::vector<std::string>& fetches,
    const std::vector<std::string>& targets, std::vector<Tensor>* outputs) {
  return Run(tensorflow::RunOptions(), feeds, fetches, targets, outputs,
             nullptr);
}

absl::Status LocalSession::Run(
    const tensorflow::RunOptions& options,
    const std::vector<std::pair<std::string, Tensor>>& feeds,
    const std::vector<std::string>& fetches,
    const std::vector<std::string>& targets, std::vector<Tensor>* outputs,
    tensorflow::RunMetadata* metadata) {
  if (outputs == nullptr && !fetches.empty()) {
    return absl::InvalidArgumentError("Run: fetches given but outputs is null");
  }
  std::shared_ptr<const SessionGraph> graph;
  {
    absl::MutexLock lock(&mu_);
    if (closed_) return absl::FailedPreconditionError("session is closed");
    graph = graph_;
  }
  if (graph == nullptr) {
    return absl::FailedPreconditionError(
        "the session has no graph: call Create first");
  }

  std::vector<std::string> feed_names(feeds.size());
  for (size_t i = 0; i < feeds.size(); ++i) feed_names[i] = feeds[i].first;
  WEFT_ASSIGN_OR_RETURN(const RunSignature signature,
                        RunSignature::Make(feed_names, fetches, targets));
  WEFT_ASSIGN_OR_RETURN(std::shared_ptr<const PreparedRun> run,
                        GetOrPrepare(graph, signature));

  // Check the feed values against what the graph expects.
  std::vector<Tensor> args(feeds.size());
  for (size_t i = 0; i < signature.feed_order.size(); ++i) {
    const Tensor& value = feeds[signature.feed_order[i]].second;
    WEFT_RETURN_IF_ERROR(run->feeds[i].Check(value));
    args[i] = value;
  }

  int64_t timeout_ms = options.timeout_in_ms();
  if (timeout_ms <= 0) timeout_ms = options_.config.operation_timeout_in_ms();
  const bool trace = options.trace_level() != tensorflow::RunOptions::NO_TRACE;
  WEFT_RETURN_IF_ERROR(
      Execute(*run, std::move(args), timeout_ms, trace, outputs, metadata));
  if (metadata != nullptr && options.output_partition_graphs()) {
    for (int i = 0; i < run->graph->num_partitions(); ++i) {
      run->graph->partition(i).ToGraphDef(metadata->add_partition_graphs());
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<std::shared_ptr<const LocalSession::PreparedRun>>
LocalSession::GetOrPrepare(const std::shared_ptr<const SessionGraph>& graph,
                           const RunSignature& signature) {
  const std::string key = signature.Key();
  {
    absl::MutexLock lock(&mu_);
    auto it = cache_.find(key);
    if (it != cache_.end()) return it->second;
  }
  WEFT_ASSIGN_OR_RETURN(std::shared_ptr<const PreparedRun> run,
                        Prepare(*graph, signature));
  absl::MutexLock lock(&mu_);
  if (closed_) return absl::FailedPreconditionError("session is closed");
  // Another thread may have prepared the same signature meanwhile.
  auto [it, inserted] = cache_.emplace(key, run);
  return it->second;
}

// The prepare pipeline: prune for the signature, place on this process's
// devices, partition per device and build the executors.
absl::StatusOr<std::shared_ptr<const LocalSession::PreparedRun>>
LocalSession::Prepare(const SessionGraph& state, const RunSignature& signature) {
  WEFT_ASSIGN_OR_RETURN(ClientGraph client,
                        BuildClientGraph(*state.graph, signature));
  const tensorflow::ConfigProto& config = options_.config;
  PlacerOptions placer;
  for (Device* d : devices_->devices()) placer.devices.push_back(d->name());
  placer.kernels = kernels_;
  placer.allow_soft_placement = config.allow_soft_placement();
  if (config.log_device_placement()) {
    placer.log = [](absl::string_view line) {
      std::fprintf(stderr, "%.*s\n", static_cast<int>(line.size()),
                   line.data());
    };
  }
  WEFT_RETURN_IF_ERROR(PlaceGraph(placer, client.graph.get()));

  ExecutableOptions exec_options;
  exec_options.devices = devices_.get();
  exec_options.ops = ops_;
  exec_options.kernels = kernels_;
  exec_options.inter_op_pool = run_inline_ ? nullptr : inter_op_pool_.get();
  exec_options.kernel_cache = &kernels_cache_;
  exec_options.optimizations = GraphOptimizationsFrom(config.graph_options());
  auto run = std::make_shared<PreparedRun>();
  if (!state.graph->library().function().empty()) {
    FunctionRuntime::Options functions;
    functions.library = state.graph->library();
    functions.ops = ops_;
    functions.kernels = kernels_;
    functions.devices = devices_.get();  // RemoteCall targets
    run->functions = std::make_shared<FunctionRuntime>(std::move(functions));
    exec_options.functions = run->functions.get();
  }
  WEFT_ASSIGN_OR_RETURN(
      run->graph, ExecutableGraph::Create(exec_options, std::move(client.graph)));
  run->feeds = std::move(client.feeds);
  run->num_fetches = client.num_fetches;
  return std::shared_ptr<const PreparedRun>(std::move(run));
}

absl::Status LocalSession::Execute(const PreparedRun& run,
                                   std::vector<Tensor> args, int64_t timeout_ms,
                                   bool trace, std::vector<Tensor>* outputs,
                                   tensorflow::RunMetadata* metadata) {
  SimpleCallFrame frame(std::move(args), run.num_fetches);
  CancellationManager cancellation;
  {
    absl::MutexLock lock(&mu_);
    if (closed_) return absl::FailedPreconditionError("session is closed");
    running_.insert(&cancellation);
  }
  StepStatsCollector stats;
  // Made only when the run spans devices; freed (and any leftover transfer
  // dropped) when the step ends.
  std::optional<LocalRendezvous> rendezvous;
  Executor::StepArgs step;
  step.step_id = next_step_id_.fetch_add(1, std::memory_order_relaxed);
  step.call_frame = &frame;
  step.cancellation = &cancellation;
  step.observer = trace ? &stats : nullptr;
  if (run.graph->needs_rendezvous()) step.rendezvous = &rendezvous.emplace();
  // Starts the step; `done` runs once it has finished on every device.
  auto start = [&](std::function<void(absl::Status)> done) {
    run.graph->RunAsync(step, std::move(done));
  };

  absl::Status status;
  if (timeout_ms <= 0) {
    absl::Notification done;
    start([&](absl::Status s) {
      status = std::move(s);
      done.Notify();
    });
    done.WaitForNotification();
  } else {
    // Run on the pool so this thread can wait with a deadline.
    absl::Notification done;
    inter_op_pool_->Schedule([&] {
      start([&](absl::Status s) {
        status = std::move(s);
        done.Notify();
      });
    });
    if (!done.WaitForNotificationWithTimeout(absl::Milliseconds(timeout_ms))) {
      // What the step was waiting for, read before the abort clears it.
      std::string waiting;
      if (rendezvous.has_value()) {
        const std::vector<std::string> keys = rendezvous->WaitingKeys(3);
        if (!keys.empty()) {
          waiting = absl::StrCat("; transfers still awaited (rendezvous keys): ",
                                 absl::StrJoin(keys, ", "));
        }
      }
      cancellation.StartCancel();
      done.WaitForNotification();
      status = absl::DeadlineExceededError(absl::StrCat(
          "step ", step.step_id, " did not finish within ", timeout_ms,
          " ms (RunOptions.timeout_in_ms / operation_timeout_in_ms) and was "
          "cancelled", waiting));
    }
  }
  {
    absl::MutexLock lock(&mu_);
    running_.erase(&cancellation);
  }
  if (trace && metadata != nullptr)
    stats.Finalize(metadata->mutable_step_stats());
  WEFT_RETURN_IF_ERROR(status);
  std::vector<Tensor> results;
  WEFT_RETURN_IF_ERROR(frame.TakeRetvals(&results));
  // _Retval runs on the CPU only, so fetches arrive through a _Recv that
  // copied them to the host (runtime/core/device_memory.h); a device tensor here
  // would be a bug, and handing it out would let the caller read GPU memory.
  for (size_t i = 0; i < results.size(); ++i) {
    if (!InHostMemory(results[i])) {
      return absl::InternalError(absl::StrCat(
          "fetch #", i, " of step ", step.step_id,
          " is in device memory; fetched values must be copied to the host"));
    }
  }
  if (outputs != nullptr) *outputs = std::move(results);
  return absl::OkStatus();
}

absl::Status LocalSession::Close() {
  absl::flat_hash_map<std::string, std::shared_ptr<const PreparedRun>> cache;
  {
    absl::MutexLock lock(&mu_);
    closed_ = true;
    for (CancellationManager* cm : running_) cm->StartCancel();
    mu_.Await(absl::Condition(
        +[](absl::flat_hash_set<CancellationManager*>* running) {
          return running->empty();
        },
        &running_));
    cache.swap(cache_);
    graph_ = nullptr;
  }
  return absl::OkStatus();  // `cache` (the executors) goes here, unlocked
}

int LocalSession::num_cached_runs() const {
  absl::MutexLock lock(&mu_);
  return static_cast<int>(cache_.size());
}

}  // namespace weft
