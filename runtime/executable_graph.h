// ExecutableGraph: a placed graph made runnable on one process's devices, the
// last stage of the prepare pipeline (after runtime/client_graph.h and
// graph/placer.h). The local session builds one per Run signature; a
// worker builds one per registered graph.
//
//   ExecutableOptions options;
//   options.devices = &device_mgr;
//   options.ops = &GlobalOpRegistry();
//   options.kernels = &GlobalKernelRegistry();
//   WEFT_ASSIGN_OR_RETURN(std::unique_ptr<ExecutableGraph> exec,
//                         ExecutableGraph::Create(options, std::move(placed)));
//   Executor::StepArgs step;                     // step id, call frame, ...
//   if (exec->needs_rendezvous()) step.rendezvous = &rendezvous;
//   exec->RunAsync(step, [](absl::Status s) { ... });
//
// A graph whose nodes all sit on one device gets one executor and needs no
// rendezvous. Otherwise it is partitioned per device (graph/partition.h),
// with _Send/_Recv on every edge between devices, and a step runs every
// partition at once over the rendezvous the caller gives
// (runtime/multi_device_step.h: a failure anywhere aborts the whole step).
// Every node's assigned device must be one of `options.devices`, by its full
// name (a short "CPU:0" of another task's device is not one of ours). Each
// partition is optimised (constant folding, kernel fusion) before its
// executor is built, so partition(i) is the graph that runs.
//
// Ownership: owns the partitions' graphs and executors; the devices, the
// registries, the pool and the kernel cache must outlive it. Thread safety:
// after Create, RunAsync may be called from many threads at once (each step
// with its own StepArgs). A failed Create leaves nothing behind.
#ifndef WEFT_RUNTIME_EXECUTABLE_GRAPH_H_
#define WEFT_RUNTIME_EXECUTABLE_GRAPH_H_

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "graph/graph.h"
#include "ops/framework/kernel_registry.h"
#include "ops/framework/op_registry.h"
#include "runtime/core/device.h"
#include "runtime/executor.h"
#include "runtime/graph_optimizer.h"
#include "runtime/kernel_cache.h"
#include "runtime/core/thread_pool.h"

namespace weft {

struct ExecutableOptions {
  const DeviceMgr* devices = nullptr;        // required
  const OpRegistry* ops = nullptr;           // required (for partitions)
  const KernelRegistry* kernels = nullptr;   // required
  // Runs expensive kernels and all but one partition of a step; null runs
  // everything on the caller's thread.
  ThreadPool* inter_op_pool = nullptr;
  // Optional; shares stateful kernels with the owner's other graphs.
  KernelCache* kernel_cache = nullptr;
  // Optional: a session's own resources on each device (an isolated
  // session); unset, or null for a device, uses the device's. What it
  // returns must outlive the graph.
  std::function<ResourceMgr*(const Device*)> resources;
  // False (a local session): every _Recv's sender must be in the graph, or
  // the step would wait forever; Create refuses such a graph. True (a
  // worker): a _Recv whose sender is not on `devices` is another task's
  // transfer, served through the step's rendezvous.
  bool receives_from_other_tasks = false;
  // Optional ("/job:J/replica:R/task:T"): the task the graph's device names
  // use for `devices` instead of the one they are named under (a worker
  // session of a propagated cluster serves as another task's name).
  std::string task_name;
  // Optional: runs the graph's library functions for kernels that call them
  // per element (ops/framework/function_runner.h); must outlive the graph.
  FunctionRunner* functions = nullptr;
  // What each CPU partition gets before its executor is built
  // (runtime/graph_optimizer.h); both on unless the client turned them off.
  GraphOptimizations optimizations;
};

class ExecutableGraph {
 public:
  // INVALID_ARGUMENT naming the node and the device when a node's device is
  // not in `options.devices`; otherwise what partitioning or building an
  // executor reports (naming the node).
  static absl::StatusOr<std::unique_ptr<ExecutableGraph>> Create(
      const ExecutableOptions& options, std::unique_ptr<Graph> placed);

  ExecutableGraph(const ExecutableGraph&) = delete;
  ExecutableGraph& operator=(const ExecutableGraph&) = delete;

  // True when the graph spans devices: steps then need args.rendezvous.
  bool needs_rendezvous() const { return parts_.size() > 1; }
  // Runs one step on every partition; `done` gets the step's status once
  // all have finished. `args` and what it points to must outlive the step.
  void RunAsync(const Executor::StepArgs& args,
                Executor::DoneCallback done) const;
  // The graphs that run, one per device (RunMetadata.partition_graphs).
  int num_partitions() const { return static_cast<int>(parts_.size()); }
  const Graph& partition(int i) const { return *parts_[i].graph; }

 private:
  struct Part {
    std::unique_ptr<Graph> graph;
    std::unique_ptr<Executor> executor;
  };
  explicit ExecutableGraph(ThreadPool* pool) : pool_(pool) {}

  ThreadPool* const pool_;
  std::vector<Part> parts_;
  std::vector<Executor*> executors_;  // parts_[i].executor
};

}  // namespace weft

#endif  // WEFT_RUNTIME_EXECUTABLE_GRAPH_H_
