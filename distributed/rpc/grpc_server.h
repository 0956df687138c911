// GrpcServer: one task of a cluster, serving TensorFlow's MasterService and
// WorkerService over gRPC on the address its cluster spec names (what
// tf.distribute.Server is to TensorFlow). It owns the task's devices, its
// Worker (distributed/worker.h) and its Master (distributed/master.h), and
// reaches the other tasks through a GrpcWorkerCache.
//
//   ServerOptions o;
//   o.cluster = spec;  o.task = {"worker", 0};
//   WEFT_ASSIGN_OR_RETURN(std::unique_ptr<GrpcServer> server, GrpcServer::Start(o));
//   // a TensorFlow client: tf.compat.v1.Session("grpc://" + server->address())
//   server->Shutdown();
//
// Listening: exactly the task's own address from the spec (not every
// interface, as TensorFlow's servers do). A host that is not a loopback
// name or address (localhost, 127.0.0.0/8, ::1) is refused unless
// `allow_non_loopback`, and even then unless callers are authenticated (an
// auth token, or mutual TLS) or `insecure` says to serve anyone. Port 0 in the spec is not allowed (the other
// tasks could not find this one), except for a cluster of this task alone.
// A loopback task also listens on its local socket (local_socket.h), where
// Weft tasks on this host reach it without TCP, unless `local_socket` is
// off or the server uses TLS.
//
// Files: a peer's graph reaches the host's files only inside
// `file_roots`; every other path is PERMISSION_DENIED naming the node.
//
// Calls: the methods are TensorFlow's paths (/tensorflow.MasterService/
// RunStep, ...); an unknown path is UNIMPLEMENTED naming it, a malformed
// request INVALID_ARGUMENT naming the message, an oversize one
// RESOURCE_EXHAUSTED (the limit is `max_message_bytes`), one without the
// cluster's auth token UNAUTHENTICATED. Calls that carry no graph and no
// tensors are refused past 4 MiB before they are parsed. The master's
// calls, which block, run on a pool of the server's, the worker's control
// calls on another (so no number of sessions waiting for tasks holds up a
// RegisterGraph); RunGraph and RecvTensor never hold a thread while they
// wait. A RunStep whose client cancels, goes away or passes its deadline
// is aborted on every task.
//
// Thread safety: Start, then any thread may call Shutdown (idempotent);
// the destructor shuts down. Shutdown cancels the steps in flight, closes
// every session, and stops listening; calls still pending then end with
// CANCELLED.
#ifndef WEFT_DISTRIBUTED_RPC_GRPC_SERVER_H_
#define WEFT_DISTRIBUTED_RPC_GRPC_SERVER_H_

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "distributed/cluster_spec.h"
#include "distributed/rpc/grpc_security.h"
#include "distributed/step_rendezvous.h"

namespace weft {

class DeviceMgr;
class MasterInterface;

struct ServerOptions {
  ClusterSpec cluster;
  TaskId task;
  bool allow_non_loopback = false;
  // Serve a non-loopback address without authenticating callers.
  bool insecure = false;
  // Also listen on the task's local socket (local_socket.h), where this
  // host's Weft tasks reach it without TCP. Only for a loopback address
  // with a fixed port and without TLS.
  bool local_socket = true;
  int max_message_bytes = 1 << 30;
  // The memory gRPC may use for the calls it is receiving and sending (its
  // ResourceQuota): past it, gRPC slows its readers and then drops
  // connections, so peers cannot pin more. 0: twice max_message_bytes
  // plus 256 MiB (room for one largest message either way).
  int64_t rpc_memory_bytes = 0;
  // TLS for the server and for its calls to other tasks; the token every
  // call must present (grpc_security.h).
  std::shared_ptr<const Security> security = Security::None();
  int num_cpus = 1;            // CPU devices of the task
  int max_gpus = -1;           // -1: every GPU the machine has
  int intra_op_threads = 0;    // 0: the cores
  int inter_op_threads = 0;    // 0: the cores
  int64_t memory_limit_bytes = 0;  // host memory the task may hold; 0: no limit
  // The directories whose files the graphs run here may read and write
  // (checkpoints, readers, writers: runtime/core/file_policy.h); each must
  // exist. None: graphs get no file access, whoever sent them.
  std::vector<std::string> file_roots;
  // The master's waits (distributed/master.h).
  absl::Duration wait_for_tasks = absl::Minutes(2);
  absl::Duration session_gc = absl::Hours(1);
  // How long the worker keeps step rendezvous that peers asked for and
  // that never started here, or that no master cleaned up.
  StepRendezvousLimits step_limits;
  std::function<void(absl::string_view)> log;  // null: stderr
};

class GrpcServer {
 public:
  // FAILED_PRECONDITION naming the address when it cannot be bound (in use,
  // not local), INVALID_ARGUMENT for a task not in the cluster, a
  // non-loopback host without allow_non_loopback, or one whose callers
  // would not be authenticated (without `insecure`).
  static absl::StatusOr<std::unique_ptr<GrpcServer>> Start(
      const ServerOptions& options);
  ~GrpcServer();
  GrpcServer(const GrpcServer&) = delete;
  GrpcServer& operator=(const GrpcServer&) = delete;

  // "/job:J/replica:0/task:T".
  const std::string& task_name() const;
  // host:port as the cluster spec names it (the port bound).
  const std::string& address() const;
  // The local socket's gRPC address, or "" when the task has none.
  const std::string& local_target() const;
  const DeviceMgr& devices() const;
  // The task's master in-process (distributed/local_master.h): what a
  // trainer on this task drives, with no loopback RPC per step. It may be
  // held past Shutdown, after which its calls are UNAVAILABLE.
  std::shared_ptr<MasterInterface> master() const;

  // Worker::WaitForCollectivesClaimed: call before Shutdown when this
  // task ran all-reduces, so that its peers can finish theirs.
  bool WaitForCollectivesClaimed(absl::Duration max);
  void Shutdown();

  struct Impl;

 private:
  explicit GrpcServer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace weft

#endif  // WEFT_DISTRIBUTED_RPC_GRPC_SERVER_H_
