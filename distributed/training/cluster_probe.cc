#include "distributed/training/cluster_probe.h"

#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "distributed/rpc/grpc_worker_cache.h"
#include "distributed/worker_interface.h"
#include "proto/worker.pb.h"

namespace weft {

std::vector<std::string> UnansweringTasks(
    const ClusterSpec& cluster, const std::vector<TaskId>& tasks,
    const std::shared_ptr<const Security>& security, absl::Duration timeout) {
  struct Probe {
    std::string label;
    std::unique_ptr<WorkerInterface> worker;
    tensorflow::GetStatusRequest request;
    tensorflow::GetStatusResponse response;
    absl::Status status;
    absl::Notification done;
  };
  GrpcChannelOptions options;
  options.status_timeout = timeout;
  options.security = security;
  std::vector<std::unique_ptr<Probe>> probes;
  std::vector<std::string> silent;
  for (const TaskId& task : tasks) {
    absl::StatusOr<std::string> address = cluster.Address(task);
    if (!address.ok()) {
      silent.push_back(absl::StrCat(task.ToString(), ": not in the cluster"));
      continue;
    }
    auto p = std::make_unique<Probe>();
    p->label = absl::StrCat(task.ToString(), " (", *address, ")");
    p->worker = NewGrpcRemoteWorker(task.DeviceNamePrefix(), *address, options);
    Probe* raw = p.get();
    p->worker->GetStatusAsync(&p->request, &p->response,
                              [raw](absl::Status s) {
                                raw->status = std::move(s);
                                raw->done.Notify();
                              });
    probes.push_back(std::move(p));
  }
  for (auto& p : probes) {
    // The call has its own deadline (status_timeout); wait for it so the
    // request and response outlive it.
    p->done.WaitForNotification();
    if (!p->status.ok()) {
      silent.push_back(absl::StrCat(p->label, ": ", p->status.message()));
    }
  }
  return silent;
}

}  // namespace weft
