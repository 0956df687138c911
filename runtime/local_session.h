// LocalSession: a Session that runs graphs in-process.
//
// It owns a DeviceMgr (CPU devices, with their ResourceMgrs, so variables
// persist across Run calls) and an inter-op thread pool. Each distinct Run
// signature (sorted feeds, fetches in order, sorted targets) is prepared once
// and cached: prune to what the fetches and targets need, rewrite feeds and
// fetches into _Arg/_Retval nodes, place, and build an Executor. Later Runs
// with the same signature only check the feed values (dtype, and shape against
// a Placeholder's `shape` attr) and execute.
//
// Devices: ConfigProto.device_count["CPU"] CPU devices, then the machine's
// GPUs (all of them, or device_count["GPU"]; none without CUDA, see
// runtime/gpu/gpu_devices.h; log_device_placement prints why). CPU:0 stays
// the default device: unlike TensorFlow, a node goes to a GPU only when it
// asks for one ("/gpu:0", "/device:GPU:0") and has a GPU kernel. The pruned graph is
// placed (graph/placer.h: requested devices, colocation, kernels, soft
// placement). If it lands on one device, one executor runs it with no
// rendezvous. Otherwise it is partitioned (graph/partition.h) into one
// executor per device; each step runs them concurrently over one
// LocalRendezvous made for that step (tensors pass by reference, no copy)
// and freed after it, and a failure anywhere aborts the whole step
// (runtime/multi_device_step.h). Results do not depend on the device count.
// Placement is per Run signature (TensorFlow's place_pruned_graph), so a
// node whose placement depends on colocation with nodes outside the pruned
// graph may land differently in different signatures.
//
//   auto session = std::make_unique<LocalSession>(SessionOptions());
//   WEFT_RETURN_IF_ERROR(session->Create(graph_def));
//   ...
//
// Kernels of stateful nodes (variables, random ops) are shared by all the
// session's executors, as TensorFlow's OpSegment does, so their state does
// not depend on which signature runs them.
//
// Thread safety: see Session. One mutex guards the graph, the cache and the
// set of running steps; it is never held while a step runs or while a Run
// signature is prepared.
// Copy/move: neither.
#ifndef WEFT_RUNTIME_LOCAL_SESSION_H_
#define WEFT_RUNTIME_LOCAL_SESSION_H_

#include <atomic>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/synchronization/mutex.h"
#include "graph/graph.h"
#include "ops/framework/kernel_registry.h"
#include "ops/framework/op_registry.h"
#include "runtime/core/cancellation.h"
#include "runtime/client_graph.h"
#include "runtime/session_graph.h"
#include "runtime/core/device.h"
#include "runtime/kernel_cache.h"
#include "runtime/session.h"
#include "runtime/core/thread_pool.h"

namespace weft {

class LocalSession : public Session {
 public:
  // Ops and kernels from the global registries (//ops, //ops:kernels).
  explicit LocalSession(const SessionOptions& options);
  // Ops and kernels from registries of the caller's (tests); they must
  // outlive the session.
  LocalSession(const SessionOptions& options, const OpRegistry& ops,
               const KernelRegistry& kernels);
  ~LocalSession() override;
  LocalSession(const LocalSession&) = delete;
  LocalSession& operator=(const LocalSession&) = delete;

  absl::Status Create(const tensorflow::GraphDef& graph) override;
  absl::Status Extend(const tensorflow::GraphDef& graph) override;
  absl::Status Run(const std::vector<std::pair<std::string, Tensor>>& feeds,
                   const std::vector<std::string>& fetches,
                   const std::vector<std::string>& targets,
                   std::vector<Tensor>* outputs) override;
  absl::Status Run(const tensorflow::RunOptions& options,
                   const std::vector<std::pair<std::string, Tensor>>& feeds,
                   const std::vector<std::string>& fetches,
                   const std::vector<std::string>& targets,
                   std::vector<Tensor>* outputs,
                   tensorflow::RunMetadata* metadata) override;
  absl::Status Close() override;

  // After a successful Create.
  const DeviceMgr& device_mgr() const { return *devices_; }
  // Prepared Run signatures held in the cache (for tests and inspection).
  int num_cached_runs() const;

 private:
  struct PreparedRun;  // one cached Run signature

  absl::StatusOr<std::shared_ptr<const PreparedRun>> GetOrPrepare(
      const std::shared_ptr<const SessionGraph>& graph,
      const RunSignature& signature);
  absl::StatusOr<std::shared_ptr<const PreparedRun>> Prepare(
      const SessionGraph& graph, const RunSignature& signature);
  absl::Status Execute(const PreparedRun& run, std::vector<Tensor> args,
                       int64_t timeout_ms, bool trace,
                       std::vector<Tensor>* outputs,
                       tensorflow::RunMetadata* metadata);

  const SessionOptions options_;
  // Not OK when options_.config asks for more devices or threads than a
  // process may start (see runtime/core/local_device_mgr.h), or when the devices'
  // or the session's threads could not start; returned by Create and
  // Extend. Then devices_ or inter_op_pool_ may be null, and as no graph is
  // ever set, nothing else reads them.
  absl::Status init_status_;
  const OpRegistry* const ops_;
  const KernelRegistry* const kernels_;
  std::unique_ptr<DeviceMgr> devices_;
  std::unique_ptr<ThreadPool> inter_op_pool_;
  // Stateful kernels shared by all cached executors; outlives them (members
  // are destroyed in reverse order, `cache_` first).
  KernelCache kernels_cache_;
  bool run_inline_ = false;  // inter_op_parallelism_threads < 0
  std::atomic<int64_t> next_step_id_{1};

  mutable absl::Mutex mu_;
  bool closed_ ABSL_GUARDED_BY(mu_) = false;
  std::shared_ptr<const SessionGraph> graph_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<std::string, std::shared_ptr<const PreparedRun>> cache_
      ABSL_GUARDED_BY(mu_);
  // Steps in flight, cancelled by Close().
  absl::flat_hash_set<CancellationManager*> running_ ABSL_GUARDED_BY(mu_);
};

}  // namespace weft

#endif  // WEFT_RUNTIME_LOCAL_SESSION_H_
