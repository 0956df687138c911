// Master: the cluster a session sees (ConfigProto.cluster_def propagated,
// or the server's own, narrowed by device filters) and the devices its
// tasks report (master.h).
#include "distributed/master.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <utility>

#include "absl/algorithm/container.h"
#include "absl/cleanup/cleanup.h"
#include "absl/random/random.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "distributed/fanout.h"
#include "distributed/device_filters.h"
#include "distributed/master_session.h"
#include "distributed/task_name.h"
#include "runtime/core/device_name.h"
#include "runtime/core/status.h"

namespace weft {
namespace {

using StatusCalls =
    Fanout<tensorflow::GetStatusRequest, tensorflow::GetStatusResponse>;

}  // namespace

absl::StatusOr<Master::Discovered> Master::DiscoverDevices(
    const std::vector<std::string>& filters, const View& view) {
  WEFT_ASSIGN_OR_RETURN(std::vector<DeviceSpec> specs,
                        ParseFilters(filters, "ConfigProto.device_filters"));
  struct Pending {
    TaskId id;
    std::string name;
    std::shared_ptr<StatusCalls> call;  // in flight, or the last one
    absl::Time retry_at = absl::InfinitePast();
    std::string last_error;
    bool done = false;
    std::vector<tensorflow::DeviceAttributes> devices;
  };
  std::vector<Pending> tasks;
  bool self_included = false;
  for (const TaskId& id : SelectTasks(view.cluster, specs)) {
    Pending p;
    p.id = id;
    p.name = id.DeviceNamePrefix();
    self_included |= p.name == view.task;
    tasks.push_back(std::move(p));
  }
  if (!self_included) {
    // This task always serves its own sessions: it holds the client device.
    for (const TaskId& id : view.cluster.Tasks()) {
      if (id.DeviceNamePrefix() != view.task) continue;
      Pending p;
      p.id = id;
      p.name = view.task;
      tasks.push_back(std::move(p));
    }
  }
  std::stable_partition(tasks.begin(), tasks.end(), [&view](const Pending& p) {
    return p.name == view.task;
  });
  if (tasks.empty() || tasks.front().name != view.task) {
    return absl::InternalError(absl::StrCat(
        "this master's task ", view.task, " is not in the cluster ",
        view.cluster.ToString()));
  }

  const absl::Time start = absl::Now();
  const absl::Time deadline = start + options_.wait_for_tasks;
  absl::Time next_log = start + options_.wait_log_interval;
  // Waiting holds the calling thread, which the server's other calls also
  // need: past max_waiting_sessions more callers are told to come back.
  bool holds_slot = false;
  absl::Cleanup release = [this, &holds_slot] {
    if (!holds_slot) return;
    absl::MutexLock lock(&mu_);
    --waiting_sessions_;
  };
  auto describe = [&view](const Pending& p) {
    absl::StatusOr<std::string> address = view.cluster.Address(p.id);
    return absl::StrCat(p.name, " at ", address.ok() ? *address : "?",
                        p.last_error.empty() ? "" : " (", p.last_error,
                        p.last_error.empty() ? "" : ")");
  };
  for (;;) {
    int waiting = 0;
    const absl::Time now = absl::Now();
    for (Pending& p : tasks) {
      if (p.done) continue;
      if (p.call != nullptr && p.call->finished(0)) {
        const StatusCalls::Call& c = p.call->call(0);
        if (c.status.ok()) {
          p.done = true;
          p.devices.assign(c.response.device_attributes().begin(),
                           c.response.device_attributes().end());
          continue;
        }
        p.last_error = std::string(c.status.message());
        p.call = nullptr;
        p.retry_at = now + absl::Milliseconds(500);
      }
      ++waiting;
      if (p.call == nullptr && now >= p.retry_at) {
        absl::StatusOr<WorkerInterface*> worker =
            view.workers->GetWorker(p.name);
        if (!worker.ok()) {
          p.last_error = std::string(worker.status().message());
          p.retry_at = now + absl::Milliseconds(500);
          continue;
        }
        p.call = StatusCalls::Make();
        p.call->Add(p.name, *worker);
        p.call->Start(&WorkerInterface::GetStatusAsync);
      }
    }
    if (waiting == 0) break;
    if (now >= deadline) {
      std::vector<std::string> missing;
      for (const Pending& p : tasks) {
        if (!p.done) missing.push_back(describe(p));
      }
      return absl::UnavailableError(absl::StrCat(
          "CreateSession: ", missing.size(), " task(s) did not answer GetStatus within ",
          absl::FormatDuration(options_.wait_for_tasks), ": ",
          absl::StrJoin(missing, "; "),
          ". Start them (weft server / weft launch with the same --cluster), "
          "or check the addresses in the cluster spec"));
    }
    if (!holds_slot) {
      absl::MutexLock lock(&mu_);
      if (waiting_sessions_ >= options_.max_waiting_sessions) {
        std::vector<std::string> missing;
        for (const Pending& p : tasks) {
          if (!p.done) missing.push_back(describe(p));
        }
        return absl::UnavailableError(absl::StrCat(
            "CreateSession: ", waiting_sessions_, " other sessions already "
            "wait for tasks to answer on master ", view.task,
            " (the most it keeps waiting at once); not yet answering: ",
            absl::StrJoin(missing, "; "),
            ". Try again once those tasks are up"));
      }
      ++waiting_sessions_;
      holds_slot = true;
    }
    if (now >= next_log) {
      std::vector<std::string> missing;
      for (const Pending& p : tasks) {
        if (!p.done) missing.push_back(describe(p));
      }
      Log(absl::StrCat("master ", view.task, ": waiting ",
                       absl::FormatDuration(absl::Trunc(now - start, absl::Seconds(1))),
                       " (of ", absl::FormatDuration(options_.wait_for_tasks),
                       ") for ", missing.size(), " task(s) to answer GetStatus: ",
                       absl::StrJoin(missing, "; ")));
      next_log = now + options_.wait_log_interval;
    }
    absl::SleepFor(absl::Milliseconds(10));
  }

  Discovered out;
  for (Pending& p : tasks) {
    out.tasks.push_back(p.name);
    for (tensorflow::DeviceAttributes& d : p.devices) {
      // Name devices by the task the cluster spec says they are (a task
      // may have been started under another name).
      absl::StatusOr<std::string> name = DeviceAsTask(d.name(), p.name);
      if (!name.ok()) {
        return absl::InvalidArgumentError(absl::StrCat(
            "task ", p.name, " reported a device named '", d.name(),
            "'; GetStatus must give full device names"));
      }
      d.set_name(*name);
      bool wanted = specs.empty() || p.name == view.task;
      for (const DeviceSpec& f : specs) wanted |= f.Matches(*ParseDeviceSpec(*name));
      if (wanted) out.devices.push_back(std::move(d));
    }
  }
  if (out.devices.empty() ||
      !absl::StartsWith(out.devices.front().name(), view.task + "/")) {
    return absl::FailedPreconditionError(absl::StrCat(
        "task ", view.task, " reported no devices; it needs a CPU to "
        "hold the session's feeds and fetches"));
  }
  return out;
}

absl::StatusOr<Master::View> Master::PropagatedView(
    const tensorflow::ClusterDef& def, const std::string& target) const {
  if (!options_.session_workers) {
    return absl::UnimplementedError(absl::StrCat(
        "master ", options_.task, " does not take a cluster from "
        "ConfigProto.cluster_def (ClusterSpec propagation) in this process"));
  }
  absl::StatusOr<ClusterSpec> cluster = ClusterSpec::FromClusterDef(def);
  if (!cluster.ok()) {
    return WithContext(cluster.status(), "ConfigProto.cluster_def");
  }
  // This master is the task at the address the client dialled, or at the
  // address this server was started with.
  std::vector<std::string> mine;
  absl::string_view dialled = target;
  absl::ConsumePrefix(&dialled, "grpc://");
  if (!dialled.empty()) mine.emplace_back(dialled);
  for (const TaskId& id : options_.cluster.Tasks()) {
    if (id.DeviceNamePrefix() != options_.task) continue;
    absl::StatusOr<std::string> own = options_.cluster.Address(id);
    if (own.ok() && !absl::c_linear_search(mine, *own)) mine.push_back(*own);
  }
  std::vector<TaskId> matches;
  for (const TaskId& id : cluster->Tasks()) {
    absl::StatusOr<std::string> address = cluster->Address(id);
    if (address.ok() && absl::c_linear_search(mine, *address)) {
      matches.push_back(id);
    }
  }
  if (matches.size() != 1) {
    std::vector<std::string> names;
    for (const TaskId& id : matches) names.push_back(id.ToString());
    return absl::InvalidArgumentError(absl::StrCat(
        "ConfigProto.cluster_def ",
        matches.empty() ? "has no task at this master's address ("
                        : absl::StrCat("has ", matches.size(),
                                       " tasks at this master's address (",
                                       absl::StrJoin(names, ", "), ": "),
        absl::StrJoin(mine, " or "),
        "); the master must be exactly one of the session's tasks: add it "
        "under the address the client connects to"));
  }
  View view;
  view.cluster = *std::move(cluster);
  view.task = matches.front().DeviceNamePrefix();
  WEFT_ASSIGN_OR_RETURN(view.owned, options_.session_workers(view.cluster, view.task));
  view.workers = view.owned.get();
  return view;
}

}  // namespace weft
