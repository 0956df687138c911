#include "runtime/local_session.h"

#include <algorithm>
#include <cstdio>
#include <numeric>
#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/synchronization/notification.h"
#include "graph/graph_def_loader.h"
#include "graph/partition.h"
#include "graph/placer.h"
#include "graph/prune.h"
#include "ops/framework/call_frame.h"
#include "ops/framework/node_def_util.h"
#include "runtime/executor.h"
#include "runtime/device_memory.h"
#include "runtime/executor_observer.h"
#include "runtime/gpu/gpu_devices.h"
#include "runtime/local_device_mgr.h"
#include "runtime/multi_device_step.h"
#include "runtime/rendezvous.h"
#include "runtime/status.h"

namespace weft {

struct LocalSession::GraphState {
  tensorflow::GraphDef def;  // as given (defaults not added)
  std::unique_ptr<Graph> graph;
};

struct LocalSession::PreparedRun {
  // Feeds in sorted order: _Arg i takes sorted feed i.
  std::vector<std::string> feed_names;
  std::vector<DataType> feed_types;
  std::vector<PartialShape> feed_shapes;
  std::vector<bool> feed_is_placeholder;
  int num_fetches = 0;
  // One per device the run touches; with a single one the step needs no
  // rendezvous (the common, cheap case).
  struct Part {
    std::unique_ptr<Graph> graph;  // pruned and placed (and partitioned)
    std::unique_ptr<Executor> executor;
  };
  std::vector<Part> parts;
  std::vector<Executor*> executors;  // parts[i].executor, for the step
};

namespace {

// "x" -> "x:0"; other names unchanged (errors surface when pruning).
std::string CanonicalTensorName(const std::string& name) {
  absl::StatusOr<TensorId> id = ParseTensorName(name);
  if (!id.ok() || id->is_control()) return name;
  return absl::StrCat(id->node, ":", id->index);
}

// INVALID_ARGUMENT naming the field when the config asks for more devices or
// threads than one process may start (runtime/local_device_mgr.h); the
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
    : options_(options),
      ops_(options.ops != nullptr ? options.ops : &GlobalOpRegistry()),
      kernels_(options.kernels != nullptr ? options.kernels
                                          : &GlobalKernelRegistry()) {
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
  auto state = std::make_shared<GraphState>();
  state->def = graph;
  WEFT_ASSIGN_OR_RETURN(state->graph, ConvertGraphDefToGraph(graph, *ops_));
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
    std::shared_ptr<const GraphState> current;
    {
      absl::MutexLock lock(&mu_);
      if (closed_) return absl::FailedPreconditionError("session is closed");
      current = graph_;
    }
    auto state = std::make_shared<GraphState>();
    if (current == nullptr) {
      state->def = graph;
    } else {
      state->def = current->def;
      const tensorflow::VersionDef& have = current->def.versions();
      const tensorflow::VersionDef& add = graph.versions();
      if (graph.has_versions() && current->def.has_versions() &&
          (add.producer() != have.producer() ||
           add.min_consumer() != have.min_consumer())) {
        return absl::InvalidArgumentError(absl::StrCat(
            "Extend: the extension's versions (producer ", add.producer(),
            ", min_consumer ", add.min_consumer(),
            ") differ from the session graph's (producer ", have.producer(),
            ", min_consumer ", have.min_consumer(), ")"));
      }
      for (const tensorflow::NodeDef& node : graph.node()) {
        if (current->graph->FindNode(node.name()) != nullptr) {
          return absl::InvalidArgumentError(absl::StrCat(
              "Extend: node '", node.name(),
              "' is already in the session's graph (Extend can only add "
              "nodes)"));
        }
        *state->def.add_node() = node;
      }
      for (const tensorflow::FunctionDef& f : graph.library().function()) {
        bool present = false;
        for (const tensorflow::FunctionDef& g :
             current->def.library().function()) {
          present |= g.signature().name() == f.signature().name();
        }
        if (!present) *state->def.mutable_library()->add_function() = f;
      }
      for (const auto& g : graph.library().gradient()) {
        *state->def.mutable_library()->add_gradient() = g;
      }
    }
    WEFT_ASSIGN_OR_RETURN(state->graph,
                          ConvertGraphDefToGraph(state->def, *ops_));
    absl::MutexLock lock(&mu_);
    if (closed_) return absl::FailedPreconditionError("session is closed");
    if (graph_ != current) continue;  // raced with another Extend: redo
    graph_ = std::move(state);
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
  std::shared_ptr<const GraphState> graph;
  {
    absl::MutexLock lock(&mu_);
    if (closed_) return absl::FailedPreconditionError("session is closed");
    graph = graph_;
  }
  if (graph == nullptr) {
    return absl::FailedPreconditionError(
        "the session has no graph: call Create first");
  }

  // Sort feeds by canonical name; the prepared run takes them in that order.
  std::vector<std::string> names(feeds.size());
  for (size_t i = 0; i < feeds.size(); ++i) {
    names[i] = CanonicalTensorName(feeds[i].first);
  }
  std::vector<size_t> order(feeds.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(),
            [&](size_t a, size_t b) { return names[a] < names[b]; });
  std::vector<std::string> sorted_feeds(feeds.size());
  for (size_t i = 0; i < order.size(); ++i) {
    sorted_feeds[i] = names[order[i]];
    if (i > 0 && sorted_feeds[i] == sorted_feeds[i - 1]) {
      return absl::InvalidArgumentError(
          absl::StrCat("feed '", sorted_feeds[i], "' is given twice"));
    }
  }
  std::vector<std::string> sorted_targets = targets;
  std::sort(sorted_targets.begin(), sorted_targets.end());
  WEFT_ASSIGN_OR_RETURN(
      std::shared_ptr<const PreparedRun> run,
      GetOrPrepare(graph, sorted_feeds, fetches, sorted_targets));

  // Check the feed values against what the graph expects.
  std::vector<Tensor> args(feeds.size());
  for (size_t i = 0; i < order.size(); ++i) {
    const Tensor& value = feeds[order[i]].second;
    const std::string& name = run->feed_names[i];
    const char* what =
        run->feed_is_placeholder[i] ? "the placeholder" : "the fed tensor";
    if (!value.IsInitialized()) {
      return absl::InvalidArgumentError(
          absl::StrCat("feed '", name, "' is an empty (uninitialized) tensor"));
    }
    if (value.dtype() != run->feed_types[i]) {
      return absl::InvalidArgumentError(absl::StrCat(
          "feed '", name, "' has dtype ", DataTypeString(value.dtype()),
          " but ", what, " expects ", DataTypeString(run->feed_types[i])));
    }
    if (!run->feed_shapes[i].IsCompatibleWith(value.shape())) {
      return absl::InvalidArgumentError(absl::StrCat(
          "feed '", name, "' has shape ", value.shape().DebugString(), " but ",
          what, " expects shape ", run->feed_shapes[i].DebugString()));
    }
    args[i] = value;
  }

  int64_t timeout_ms = options.timeout_in_ms();
  if (timeout_ms <= 0) timeout_ms = options_.config.operation_timeout_in_ms();
  const bool trace = options.trace_level() != tensorflow::RunOptions::NO_TRACE;
  WEFT_RETURN_IF_ERROR(
      Execute(*run, std::move(args), timeout_ms, trace, outputs, metadata));
  if (metadata != nullptr && options.output_partition_graphs()) {
    for (const PreparedRun::Part& part : run->parts) {
      part.graph->ToGraphDef(metadata->add_partition_graphs());
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<std::shared_ptr<const LocalSession::PreparedRun>>
LocalSession::GetOrPrepare(const std::shared_ptr<const GraphState>& graph,
                           const std::vector<std::string>& sorted_feeds,
                           const std::vector<std::string>& fetches,
                           const std::vector<std::string>& targets) {
  const std::string key = absl::StrCat(absl::StrJoin(sorted_feeds, ","), "->",
                                       absl::StrJoin(fetches, ","), "//",
                                       absl::StrJoin(targets, ","));
  {
    absl::MutexLock lock(&mu_);
    auto it = cache_.find(key);
    if (it != cache_.end()) return it->second;
  }
  WEFT_ASSIGN_OR_RETURN(std::shared_ptr<const PreparedRun> run,
                        Prepare(*graph, sorted_feeds, fetches, targets));
  absl::MutexLock lock(&mu_);
  if (closed_) return absl::FailedPreconditionError("session is closed");
  // Another thread may have prepared the same signature meanwhile.
  auto [it, inserted] = cache_.emplace(key, run);
  return it->second;
}

absl::StatusOr<std::shared_ptr<const LocalSession::PreparedRun>>
LocalSession::Prepare(const GraphState& state,
                      const std::vector<std::string>& sorted_feeds,
                      const std::vector<std::string>& fetches,
                      const std::vector<std::string>& targets) {
  auto run = std::make_shared<PreparedRun>();
  WEFT_ASSIGN_OR_RETURN(
      std::unique_ptr<Graph> graph,
      PruneGraph(*state.graph, sorted_feeds, fetches, targets));
  for (const std::string& name : sorted_feeds) {
    // PruneGraph has checked the name.
    const TensorId id = *ParseTensorName(name);
    const Node* node = state.graph->FindNode(id.node);
    run->feed_names.push_back(name);
    run->feed_types.push_back(BaseType(node->output_type(id.index)));
    PartialShape shape;
    const bool placeholder = node->IsPlaceholder();
    if (placeholder) (void)GetNodeAttr(node->def(), "shape", &shape);
    run->feed_shapes.push_back(shape);
    run->feed_is_placeholder.push_back(placeholder);
  }
  run->num_fetches = static_cast<int>(fetches.size());
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
  WEFT_RETURN_IF_ERROR(PlaceGraph(placer, graph.get()));

  ExecutorOptions exec_options;
  exec_options.kernels = kernels_;
  exec_options.inter_op_pool = run_inline_ ? nullptr : inter_op_pool_.get();
  exec_options.kernel_cache = &kernels_cache_;
  auto add_part = [&](std::unique_ptr<Graph> g,
                      const std::string& device) -> absl::Status {
    WEFT_ASSIGN_OR_RETURN(exec_options.device, devices_->Lookup(device));
    PreparedRun::Part part;
    WEFT_ASSIGN_OR_RETURN(part.executor, Executor::Create(exec_options, *g));
    part.graph = std::move(g);
    run->executors.push_back(part.executor.get());
    run->parts.push_back(std::move(part));
    return absl::OkStatus();
  };
  const std::vector<Node*> nodes = graph->nodes();
  const bool one_device =
      std::all_of(nodes.begin(), nodes.end(), [&](const Node* n) {
        return n->assigned_device() == nodes.front()->assigned_device();
      });
  if (one_device) {
    const std::string device = nodes.empty()
                                   ? devices_->default_device()->name()
                                   : nodes.front()->assigned_device();
    WEFT_RETURN_IF_ERROR(add_part(std::move(graph), device));
  } else {
    PartitionOptions partition;
    partition.incarnation = [this](const std::string& name) -> uint64_t {
      absl::StatusOr<Device*> d = devices_->Lookup(name);
      return d.ok() ? (*d)->attributes().incarnation() : 0;
    };
    WEFT_ASSIGN_OR_RETURN(auto parts, PartitionGraph(partition, *graph));
    WEFT_RETURN_IF_ERROR(CheckTransfersPair(parts));
    for (auto& [device, def] : parts) {
      WEFT_ASSIGN_OR_RETURN(std::unique_ptr<Graph> g,
                            ConvertGraphDefToGraph(def, *ops_));
      for (Node* n : g->nodes()) n->set_assigned_device(device);
      WEFT_RETURN_IF_ERROR(add_part(std::move(g), device));
    }
  }
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
  const bool multi = run.executors.size() > 1;
  if (multi) step.rendezvous = &rendezvous.emplace();
  // Starts the step; `done` runs once it has finished on every device.
  auto start = [&](std::function<void(absl::Status)> done) {
    if (multi) {
      RunMultiDeviceStep(run.executors, step,
                         run_inline_ ? nullptr : inter_op_pool_.get(),
                         std::move(done));
    } else {
      run.executors.front()->RunAsync(step, std::move(done));
    }
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
  // copied them to the host (runtime/device_memory.h); a device tensor here
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
