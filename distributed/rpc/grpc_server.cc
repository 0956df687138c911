#include "distributed/rpc/grpc_server.h"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/synchronization/notification.h"
#include "distributed/local_master.h"
#include "distributed/master.h"
#include "distributed/rpc/cq_threads.h"
#include "distributed/rpc/grpc_coding.h"
#include "distributed/rpc/grpc_worker_cache.h"
#include "distributed/rpc/local_socket.h"
#include "distributed/rpc/server_call.h"
#include "distributed/rpc/socket_options.h"
#include "distributed/rpc/tensor_coding.h"
#include "distributed/worker.h"
#include "grpcpp/completion_queue.h"
#include "grpcpp/generic/async_generic_service.h"
#include "grpcpp/resource_quota.h"
#include "grpcpp/security/server_credentials.h"
#include "grpcpp/server.h"
#include "grpcpp/server_builder.h"
#include "runtime/core/cancellation.h"
#include "runtime/core/file_policy.h"
#include "runtime/core/local_device_mgr.h"
#include "runtime/core/status.h"
#include "runtime/core/thread_pool.h"
#include "runtime/gpu/gpu_devices.h"

namespace weft {
namespace {

int64_t RpcMemoryBytes(const ServerOptions& o) {
  if (o.rpc_memory_bytes > 0) return o.rpc_memory_bytes;
  return 2 * int64_t{o.max_message_bytes} + (int64_t{256} << 20);
}

// Threads on the server's queue. One: a second thread on the same queue
// takes over the polling whenever the first runs a call, and each handoff
// wakes it (a two-task step went from 9 to 18 thread switches per task).
// What might hold the thread up is run elsewhere: blocking methods on the
// control pool, large RecvTensor answers on the receiving device's pool.
constexpr int kQueueThreads = 1;
// Calls the server waits for at once (each takes up the next as it arrives).
constexpr int kAwaitedCalls = 4;

// Splits "host:port" ("[::1]:2222" for IPv6); the spec checked the form.
std::pair<std::string, int> SplitAddress(absl::string_view address) {
  const size_t colon = address.rfind(':');
  int port = 0;
  (void)absl::SimpleAtoi(address.substr(colon + 1), &port);
  return {std::string(address.substr(0, colon)), port};
}

}  // namespace

struct GrpcServer::Impl {
  ServerOptions options;
  std::string task_name;
  std::string address;
  std::string local_target;  // empty: none
  std::unique_ptr<DeviceMgr> devices;
  std::unique_ptr<ThreadPool> inter_op;  // the worker's steps
  std::unique_ptr<ThreadPool> control;   // the master's blocking calls
  // The worker's control calls that do work before they answer
  // (RegisterGraph builds executors): a pool of their own, so that no
  // number of master calls waiting for tasks holds them up.
  std::unique_ptr<ThreadPool> worker_control;
  std::unique_ptr<ThreadPool> timer;     // collection of what expired
  // Declared before everything that makes calls on it or answers them, so
  // destroyed after them.
  std::unique_ptr<CqThreads> queue;
  std::unique_ptr<GrpcWorkerCache> cache;
  std::unique_ptr<Worker> worker;
  std::unique_ptr<Master> master;
  std::shared_ptr<LocalMaster> local_master;  // over `master` and `control`
  std::unique_ptr<Dispatcher> service;
  std::unique_ptr<grpc::Server> server;
  absl::Notification stop;
  absl::Mutex mu;
  bool shut_down ABSL_GUARDED_BY(mu) = false;
};

GrpcServer::GrpcServer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

GrpcServer::~GrpcServer() { Shutdown(); }

const std::string& GrpcServer::task_name() const { return impl_->task_name; }
const std::string& GrpcServer::address() const { return impl_->address; }
const std::string& GrpcServer::local_target() const {
  return impl_->local_target;
}
const DeviceMgr& GrpcServer::devices() const { return *impl_->devices; }
std::shared_ptr<MasterInterface> GrpcServer::master() const {
  return impl_->local_master;
}

absl::StatusOr<std::unique_ptr<GrpcServer>> GrpcServer::Start(
    const ServerOptions& options) {
  QuietGrpcLogging();
  auto impl = std::make_unique<Impl>();
  impl->options = options;
  const TaskId& task = options.task;
  if (!options.cluster.HasTask(task)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "task ", task.ToString(), " is not in the cluster ",
        options.cluster.ToString(), " (check --job and --task)"));
  }
  impl->task_name = task.DeviceNamePrefix();
  WEFT_ASSIGN_OR_RETURN(impl->address, options.cluster.Address(task));
  auto [host, port] = SplitAddress(impl->address);
  if (port == 0 && options.cluster.NumTasks() > 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "task ", task.ToString(), " has port 0 in the cluster spec; the other "
        "tasks could not find it: give every task its port"));
  }
  const bool loopback = IsLoopbackHost(host);
  if (!loopback && !options.allow_non_loopback) {
    return absl::InvalidArgumentError(absl::StrCat(
        "task ", task.ToString(), " would listen on ", impl->address,
        ", which is not a loopback address: the services accept graphs and "
        "run them, so serving the network must be asked for explicitly "
        "(weft server --allow-non-loopback)"));
  }
  if (!loopback && !options.security->authenticates_callers() &&
      !options.insecure) {
    return absl::InvalidArgumentError(absl::StrCat(
        "task ", task.ToString(), " would serve ", impl->address,
        " to the network without knowing who calls it: anyone who reaches "
        "the port could run graphs here. Give every task and client "
        "--auth-token-file (with --tls-cert/--tls-key so the token is not "
        "sent in the clear), or --tls-ca for mutual TLS; --insecure serves "
        "anyone"));
  }

  absl::StatusOr<std::shared_ptr<const FilePolicy>> files =
      FilePolicy::Confined(options.file_roots);
  if (!files.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "task ", task.ToString(), ": ", files.status().message(),
        " (--file-root)"));
  }
  LocalDeviceOptions device_options;
  device_options.file_policy = *files;
  device_options.job = task.job;
  device_options.task = task.index;
  device_options.num_cpus = options.num_cpus;
  device_options.intra_op_threads = options.intra_op_threads;
  device_options.host_memory_limit_bytes = options.memory_limit_bytes;
  GpuDevices gpus =
      NewLocalGpuDevices(task.job, 0, task.index, options.max_gpus);
  WEFT_ASSIGN_OR_RETURN(impl->devices,
                        NewLocalDeviceMgr(device_options, std::move(gpus.devices)));
  WEFT_ASSIGN_OR_RETURN(
      impl->inter_op,
      ThreadPool::Create("weft_inter_op", options.inter_op_threads > 0
                                              ? options.inter_op_threads
                                              : DefaultThreadCount()));
  WEFT_ASSIGN_OR_RETURN(impl->control, ThreadPool::Create("weft_rpc", 16));
  WEFT_ASSIGN_OR_RETURN(impl->worker_control,
                        ThreadPool::Create("weft_worker_rpc", 4));
  WEFT_ASSIGN_OR_RETURN(impl->timer, ThreadPool::Create("weft_gc", 1));

  // One queue and thread for the server's calls and for the calls this
  // task makes (cq_threads.h): so one thread polls and runs them all.
  grpc::ServerBuilder builder;
  std::unique_ptr<grpc::ServerCompletionQueue> cq = builder.AddCompletionQueue();
  grpc::ServerCompletionQueue* const queue = cq.get();
  impl->queue = std::make_unique<CqThreads>(std::move(cq), "weft_rpc_queue",
                                            kQueueThreads);

  GrpcChannelOptions channel;
  channel.max_message_bytes = options.max_message_bytes;
  channel.security = options.security;
  channel.queue = impl->queue.get();
  impl->cache = std::make_unique<GrpcWorkerCache>(options.cluster,
                                                  impl->task_name, nullptr,
                                                  channel);
  // ClusterSpec propagation: a session's own cache over the cluster its
  // client names, reaching this task in-process under its name there.
  auto session_workers = [impl = impl.get(), channel](
                             const ClusterSpec& cluster, const std::string& task)
      -> absl::StatusOr<std::shared_ptr<WorkerCache>> {
    return std::make_shared<GrpcWorkerCache>(cluster, task, impl->worker.get(),
                                             channel);
  };
  WorkerOptions w;
  w.task = impl->task_name;
  w.session_workers = session_workers;
  w.devices = impl->devices.get();
  w.inter_op_pool = impl->inter_op.get();
  w.workers = impl->cache.get();
  w.step_limits = options.step_limits;
  w.idle_ttl = options.session_gc > absl::ZeroDuration()
                   ? options.session_gc
                   : absl::InfiniteDuration();
  impl->worker = std::make_unique<Worker>(w);
  impl->cache->set_local(impl->worker.get());

  MasterOptions m;
  m.task = impl->task_name;
  m.session_workers = session_workers;
  m.cluster = options.cluster;
  m.workers = impl->cache.get();
  m.wait_for_tasks = options.wait_for_tasks;
  m.session_gc = options.session_gc;
  m.log = options.log;
  impl->master = std::make_unique<Master>(m);
  impl->local_master = std::make_shared<LocalMaster>(
      impl->master.get(), impl->control.get(), impl->task_name);

  impl->service = std::make_unique<Dispatcher>(options.security);
  Dispatcher& d = *impl->service;
  Worker* worker = impl->worker.get();
  ThreadPool* control = impl->control.get();
  ThreadPool* worker_control = impl->worker_control.get();
  constexpr absl::string_view kW = kWorkerServicePrefix;
  d.Add(kW, "GetStatus", WorkerMethod(worker, &WorkerInterface::GetStatusAsync, nullptr, "GetStatusRequest"));
  d.Add(kW, "CreateWorkerSession", WorkerMethod(worker, &WorkerInterface::CreateWorkerSessionAsync, nullptr, "CreateWorkerSessionRequest"));
  d.Add(kW, "DeleteWorkerSession", WorkerMethod(worker, &WorkerInterface::DeleteWorkerSessionAsync, worker_control, "DeleteWorkerSessionRequest"));
  d.Add(kW, "RegisterGraph", WorkerMethod(worker, &WorkerInterface::RegisterGraphAsync, worker_control, "RegisterGraphRequest"), kLarge);
  d.Add(kW, "DeregisterGraph", WorkerMethod(worker, &WorkerInterface::DeregisterGraphAsync, worker_control, "DeregisterGraphRequest"));
  d.Add(kW, "RunGraph", WorkerMethod(worker, &WorkerInterface::RunGraphAsync, nullptr, "RunGraphRequest"), kLarge);
  d.Add(kW, "CleanupGraph", WorkerMethod(worker, &WorkerInterface::CleanupGraphAsync, nullptr, "CleanupGraphRequest"));
  d.Add(kW, "CleanupAll", WorkerMethod(worker, &WorkerInterface::CleanupAllAsync, worker_control, "CleanupAllRequest"));
  d.Add(kW, "RecvTensor", RecvTensorMethod(worker));
  Master* master = impl->master.get();
  constexpr absl::string_view kM = kMasterServicePrefix;
  d.Add(kM, "CreateSession", MasterMethod(master, &Master::CreateSession, control, "CreateSessionRequest"), kLarge);
  d.Add(kM, "ExtendSession", MasterMethod(master, &Master::ExtendSession, control, "ExtendSessionRequest"), kLarge);
  d.Add(kM, "PartialRunSetup", MasterMethod(master, &Master::PartialRunSetup, control, "PartialRunSetupRequest"));
  d.Add(kM, "RunStep", Serve<tensorflow::RunStepRequest, tensorflow::RunStepResponse>(
      "RunStepRequest", nullptr,
      [master, control](const tensorflow::RunStepRequest& req, tensorflow::RunStepResponse* resp,
                        CallControl* call, std::function<void(absl::Status)> done) {
        master->RunStepAsync(req, resp, control, std::move(done),
                             CancelledWith(call));
      }), kLarge);
  d.Add(kM, "CloseSession", MasterMethod(master, &Master::CloseSession, control, "CloseSessionRequest"));
  d.Add(kM, "ListDevices", MasterMethod(master, &Master::ListDevices, control, "ListDevicesRequest"));
  d.Add(kM, "Reset", MasterMethod(master, &Master::Reset, control, "ResetRequest"));
  d.Add(kM, "MakeCallable", MasterMethod(master, &Master::MakeCallable, control, "MakeCallableRequest"));
  d.Add(kM, "RunCallable", Serve<tensorflow::RunCallableRequest, tensorflow::RunCallableResponse>(
      "RunCallableRequest", control,
      [master](const tensorflow::RunCallableRequest& req, tensorflow::RunCallableResponse* resp,
               CallControl* call, std::function<void(absl::Status)> done) {
        done(master->RunCallable(req, resp, CancelledWith(call).get()));
      }), kLarge);
  d.Add(kM, "ReleaseCallable", MasterMethod(master, &Master::ReleaseCallable, control, "ReleaseCallableRequest"));

  const std::string& listen = impl->address;
  int bound_port = 0;
  WEFT_ASSIGN_OR_RETURN(std::shared_ptr<grpc::ServerCredentials> credentials,
                        options.security->ServerCredentials());
  builder.AddListeningPort(listen, credentials, &bound_port);
  if (options.local_socket &&
      LocalSocketApplies(impl->address, *options.security)) {
    impl->local_target = LocalSocketTarget(impl->address);
    builder.AddListeningPort(impl->local_target, credentials);
  }
  // Local sockets' buffers, and the cap on connections (socket_options.h).
  builder.SetOption(ServerSocketOptions());
  // gRPC shares a port between processes by default (SO_REUSEPORT): then a
  // second task started on a busy port would answer half of its calls.
  builder.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
  // What peers can make gRPC hold, whatever they send.
  grpc::ResourceQuota quota(absl::StrCat("weft_server_", impl->address));
  quota.Resize(static_cast<size_t>(RpcMemoryBytes(options)));
  builder.SetResourceQuota(quota);
  builder.SetMaxReceiveMessageSize(options.max_message_bytes);
  builder.SetMaxSendMessageSize(options.max_message_bytes);
  builder.RegisterAsyncGenericService(impl->service->service());
  impl->server = builder.BuildAndStart();
  if (impl->server == nullptr || bound_port == 0) {
    impl->server.reset();
    // TensorFlow's code and first words (its server tests expect them),
    // then which task, where, and what to try.
    return absl::UnknownError(absl::StrCat(
        "Could not start gRPC server: task ", task.ToString(), " could not listen on ", listen,
        impl->local_target.empty() ? "" : absl::StrCat(" and ", impl->local_target),
        " (is another process using the port, or is the host not an "
        "address of this machine?",
        impl->local_target.empty() ? "" : " --no-local-socket serves TCP alone",
        ")"));
  }
  if (port == 0) impl->address = absl::StrCat(host, ":", bound_port);
  for (int i = 0; i < kAwaitedCalls; ++i) {
    AwaitCall(impl->service.get(), queue);
  }

  // Collection: the master's idle sessions, the worker's expired step
  // rendezvous (what peers asked for and never ran, steps never cleaned up).
  Impl* raw = impl.get();
  const bool session_gc = options.session_gc > absl::ZeroDuration();
  const absl::Duration every = std::min(
      {absl::Seconds(5), options.step_limits.unclaimed_ttl / 4,
       session_gc ? options.session_gc / 4 : absl::InfiniteDuration()});
  raw->timer->Schedule([raw, every, session_gc] {
    while (!raw->stop.WaitForNotificationWithTimeout(every)) {
      const absl::Time now = absl::Now();
      raw->worker->CollectExpired(now);
      if (session_gc) raw->master->CollectIdleSessions(now);
    }
  });
  return std::unique_ptr<GrpcServer>(new GrpcServer(std::move(impl)));
}

bool GrpcServer::WaitForCollectivesClaimed(absl::Duration max) {
  Worker* worker = impl_->worker.get();  // null once shut down
  return worker == nullptr || worker->WaitForCollectivesClaimed(max);
}

void GrpcServer::Shutdown() {
  Impl& impl = *impl_;
  {
    absl::MutexLock lock(&impl.mu);
    if (impl.shut_down) return;
    impl.shut_down = true;
  }
  impl.stop.Notify();
  impl.timer.reset();  // its loop reads the master and the worker
  // Steps in flight end now, so the calls waiting on them can answer.
  impl.worker->AbortAllSteps();
  impl.server->Shutdown(absl::ToChronoTime(absl::Now() + absl::Seconds(5)));
  impl.local_master->Close();  // waits for the in-process calls
  impl.master.reset();  // closes the sessions still open
  impl.control.reset();
  impl.worker_control.reset();
  impl.worker.reset();
  impl.inter_op.reset();
  // Every handler has answered: nothing posts to the queue any more.
  impl.queue.reset();
}

}  // namespace weft
