// The WorkerCache of a server: this task's own Worker in-process, every
// other task of the cluster through a gRPC channel to its address
// (TensorFlow's WorkerService methods, called on a completion queue, so no
// thread waits on a call: unary_call.h).
//
//   GrpcWorkerCache cache(spec, "/job:worker/replica:0/task:0", &local, options);
//   WEFT_ASSIGN_OR_RETURN(WorkerInterface* ps0,
//                         cache.GetWorker("/job:ps/replica:0/task:0"));
//
// Channels are made on first use and kept. Deadlines: GetStatus (which the
// master repeats until a task is up) fails fast after `status_timeout`;
// control calls after `control_timeout`; RunGraph and RecvTensor have none
// (a step takes as long as it takes; the master aborts it with CleanupGraph
// when it must end). Errors name the task, its address and the method.
//
// Thread safety: thread-safe. `local` (may be null: a client holds no
// worker) must outlive the cache; so must every call's request and
// response (the WorkerInterface contract).
#ifndef WEFT_DISTRIBUTED_RPC_GRPC_WORKER_CACHE_H_
#define WEFT_DISTRIBUTED_RPC_GRPC_WORKER_CACHE_H_

#include <map>
#include <memory>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "distributed/cluster_spec.h"
#include "distributed/rpc/cq_threads.h"
#include "distributed/rpc/grpc_security.h"
#include "distributed/worker_interface.h"

namespace weft {

struct GrpcChannelOptions {
  // Largest message sent or received, both ways.
  int max_message_bytes = 1 << 30;
  absl::Duration status_timeout = absl::Seconds(5);
  absl::Duration control_timeout = absl::Seconds(120);
  // TLS and the auth token the calls present.
  std::shared_ptr<const Security> security = Security::None();
  // Where calls complete and their callbacks run (a server's own queue,
  // which must outlive the calls); null: CqThreads::ForClients().
  CqThreads* queue = nullptr;
};

class GrpcWorkerCache final : public WorkerCache {
 public:
  GrpcWorkerCache(ClusterSpec cluster, std::string local_task,
                  WorkerInterface* local, GrpcChannelOptions options = {});
  ~GrpcWorkerCache() override;

  // The in-process worker of `local_task`, when it is made after the
  // cache (it needs the cache); before the first GetWorker.
  void set_local(WorkerInterface* local) { local_ = local; }

  // UNAVAILABLE naming the task when the cluster has no such task.
  absl::StatusOr<WorkerInterface*> GetWorker(const std::string& task) override;

 private:
  const ClusterSpec cluster_;
  const std::string local_task_;
  WorkerInterface* local_;
  const GrpcChannelOptions options_;
  absl::Mutex mu_;
  std::map<std::string, std::unique_ptr<WorkerInterface>> remote_
      ABSL_GUARDED_BY(mu_);
};

// A WorkerInterface for the task at `address` (for tests and tools that
// talk to one task).
std::unique_ptr<WorkerInterface> NewGrpcRemoteWorker(
    const std::string& task, const std::string& address,
    const GrpcChannelOptions& options);

}  // namespace weft

#endif  // WEFT_DISTRIBUTED_RPC_GRPC_WORKER_CACHE_H_
