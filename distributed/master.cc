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
#include "distributed/master_session.h"
#include "runtime/core/device_name.h"
#include "runtime/core/status.h"

namespace weft {
namespace {

using StatusCalls =
    Fanout<tensorflow::GetStatusRequest, tensorflow::GetStatusResponse>;

std::string NewSessionHandle() {
  static absl::Mutex mu(absl::kConstInit);
  static absl::BitGen* gen = new absl::BitGen();
  absl::MutexLock lock(&mu);
  return absl::StrFormat("%016x", absl::Uniform<uint64_t>(*gen));
}

absl::Status NotFound(const std::string& handle) {
  return absl::AbortedError(absl::StrCat(
      "session '", handle,
      "' is not found on this master (closed, collected after being idle, "
      "or the server restarted; create a new session)"));
}

// The filters as device specs; INVALID_ARGUMENT naming a malformed one.
absl::StatusOr<std::vector<DeviceSpec>> ParseFilters(
    const std::vector<std::string>& filters, absl::string_view field) {
  std::vector<DeviceSpec> specs;
  for (const std::string& f : filters) {
    absl::StatusOr<DeviceSpec> spec = ParseDeviceSpec(f);
    if (!spec.ok()) return WithContext(spec.status(), field);
    specs.push_back(*std::move(spec));
  }
  return specs;
}

DeviceSpec TaskSpec(const TaskId& task) {
  DeviceSpec spec;
  spec.job = task.job;
  spec.replica = 0;
  spec.task = task.index;
  return spec;
}

// The cluster's tasks some filter allows (all of them without filters).
std::vector<TaskId> SelectTasks(const ClusterSpec& cluster,
                                const std::vector<DeviceSpec>& filters) {
  std::vector<TaskId> tasks;
  for (const TaskId& task : cluster.Tasks()) {
    bool wanted = filters.empty();
    for (const DeviceSpec& f : filters) {
      wanted |= f.IsCompatibleWith(TaskSpec(task));
    }
    if (wanted) tasks.push_back(task);
  }
  return tasks;
}

}  // namespace

Master::Master(MasterOptions options) : options_(std::move(options)) {}

Master::~Master() {
  absl::flat_hash_map<std::string, Entry> sessions;
  {
    absl::MutexLock lock(&mu_);
    sessions.swap(sessions_);
  }
  for (auto& [handle, entry] : sessions) entry.session->Close().IgnoreError();
}

void Master::Log(absl::string_view line) const {
  if (options_.log) {
    options_.log(line);
  } else {
    std::fprintf(stderr, "%.*s\n", static_cast<int>(line.size()), line.data());
  }
}

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
      absl::StatusOr<DeviceSpec> spec = ParseDeviceSpec(d.name());
      if (!spec.ok() || !spec->IsFull()) {
        return absl::InvalidArgumentError(absl::StrCat(
            "task ", p.name, " reported a device named '", d.name(),
            "'; GetStatus must give full device names"));
      }
      spec->job = p.id.job;
      spec->replica = 0;
      spec->task = p.id.index;
      d.set_name(spec->ToString());
      bool wanted = specs.empty() || p.name == view.task;
      for (const DeviceSpec& f : specs) wanted |= f.Matches(*spec);
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

absl::Status Master::CreateSession(
    const tensorflow::CreateSessionRequest& request,
    tensorflow::CreateSessionResponse* response) {
  CollectIdleSessions(absl::Now());
  const tensorflow::ConfigProto& config = request.config();
  View view{options_.cluster, options_.task, options_.workers, nullptr};
  if (config.has_cluster_def() && config.cluster_def().job_size() > 0) {
    WEFT_ASSIGN_OR_RETURN(view,
                          PropagatedView(config.cluster_def(), request.target()));
  }
  WEFT_ASSIGN_OR_RETURN(
      Discovered found,
      DiscoverDevices({config.device_filters().begin(),
                       config.device_filters().end()},
                      view));
  MasterSessionOptions o;
  o.handle = NewSessionHandle();
  o.config = config;
  o.tasks = std::move(found.tasks);
  o.devices = std::move(found.devices);
  o.client_device = o.devices.front().name();
  o.workers = view.workers;
  o.owned_workers = view.owned;
  if (view.owned != nullptr) o.cluster_def = config.cluster_def();
  o.ops = options_.ops;
  o.kernels = options_.kernels;
  o.call_timeout = options_.call_timeout;
  o.abort_wait = options_.abort_wait;
  WEFT_ASSIGN_OR_RETURN(std::unique_ptr<MasterSession> session,
                        MasterSession::Create(std::move(o), request.graph_def()));
  const std::string handle = session->handle();
  response->set_session_handle(handle);
  response->set_graph_version(0);
  absl::MutexLock lock(&mu_);
  sessions_[handle] = Entry{std::move(session), absl::Now()};
  return absl::OkStatus();
}

absl::StatusOr<std::shared_ptr<MasterSession>> Master::Find(
    const std::string& handle) {
  absl::MutexLock lock(&mu_);
  auto it = sessions_.find(handle);
  if (it == sessions_.end()) return NotFound(handle);
  it->second.last_used = absl::Now();
  return it->second.session;
}

absl::Status Master::ExtendSession(
    const tensorflow::ExtendSessionRequest& request,
    tensorflow::ExtendSessionResponse* response) {
  WEFT_ASSIGN_OR_RETURN(auto session, Find(request.session_handle()));
  return session->Extend(request, response);
}

absl::Status Master::PartialRunSetup(const tensorflow::PartialRunSetupRequest& request,
                                     tensorflow::PartialRunSetupResponse* response) {
  WEFT_ASSIGN_OR_RETURN(auto session, Find(request.session_handle()));
  return session->PartialRunSetup(request, response);
}

namespace {

// The step's error in the response body when the client asked for that.
absl::Status StoreError(const tensorflow::RunStepRequest& request,
                        tensorflow::RunStepResponse* response, absl::Status s) {
  if (!s.ok() && request.store_errors_in_response_body()) {
    response->set_status_code(static_cast<tensorflow::error::Code>(s.code()));
    response->set_status_error_message(std::string(s.message()));
    return absl::OkStatus();
  }
  return s;
}

}  // namespace

absl::Status Master::RunStep(const tensorflow::RunStepRequest& request,
                             tensorflow::RunStepResponse* response) {
  absl::StatusOr<std::shared_ptr<MasterSession>> session =
      Find(request.session_handle());
  return StoreError(request, response,
                    session.ok() ? (*session)->Run(request, response)
                                 : session.status());
}

void Master::RunStepAsync(const tensorflow::RunStepRequest& request,
                          tensorflow::RunStepResponse* response,
                          ThreadPool* pool,
                          std::function<void(absl::Status)> done,
                          std::shared_ptr<CancellationManager> cancel) {
  absl::StatusOr<std::shared_ptr<MasterSession>> session =
      Find(request.session_handle());
  if (!session.ok()) {
    done(StoreError(request, response, session.status()));
    return;
  }
  MasterSession::RunAsync(
      *std::move(session), request, response, pool,
      [&request, response, done = std::move(done)](absl::Status s) {
        done(StoreError(request, response, std::move(s)));
      },
      std::move(cancel));
}

absl::Status Master::CloseSession(const tensorflow::CloseSessionRequest& request,
                                  tensorflow::CloseSessionResponse*) {
  std::shared_ptr<MasterSession> session;
  {
    absl::MutexLock lock(&mu_);
    auto it = sessions_.find(request.session_handle());
    if (it == sessions_.end()) return NotFound(request.session_handle());
    session = std::move(it->second.session);
    sessions_.erase(it);
  }
  // Closed here whatever the tasks answer: a task that has died holds
  // nothing of the session any more, and a client cannot do better.
  absl::Status s = session->Close();
  if (!s.ok()) {
    Log(absl::StrCat("master ", options_.task, ": closing session '",
                     request.session_handle(), "': ", s.message()));
  }
  return absl::OkStatus();
}

absl::Status Master::ListDevices(const tensorflow::ListDevicesRequest& request,
                                 tensorflow::ListDevicesResponse* response) {
  if (!request.session_handle().empty()) {
    WEFT_ASSIGN_OR_RETURN(auto session, Find(request.session_handle()));
    session->ListDevices(response);
    return absl::OkStatus();
  }
  WEFT_ASSIGN_OR_RETURN(
      Discovered found,
      DiscoverDevices({}, View{options_.cluster, options_.task, options_.workers, nullptr}));
  FillListDevicesResponse(found.devices, options_.task, response);
  return absl::OkStatus();
}

absl::Status Master::Reset(const tensorflow::ResetRequest& request,
                           tensorflow::ResetResponse*) {
  WEFT_ASSIGN_OR_RETURN(
      std::vector<DeviceSpec> specs,
      ParseFilters({request.device_filters().begin(),
                    request.device_filters().end()},
                   "ResetRequest.device_filters"));
  absl::flat_hash_map<std::string, Entry> sessions;
  {
    absl::MutexLock lock(&mu_);
    sessions.swap(sessions_);
  }
  for (auto& [handle, entry] : sessions) entry.session->Close().IgnoreError();

  using Calls =
      Fanout<tensorflow::CleanupAllRequest, tensorflow::CleanupAllResponse>;
  auto calls = Calls::Make();
  absl::Status status;
  for (const TaskId& id : SelectTasks(options_.cluster, specs)) {
    const std::string name = id.DeviceNamePrefix();
    absl::StatusOr<WorkerInterface*> worker = options_.workers->GetWorker(name);
    if (!worker.ok()) {
      status.Update(worker.status());
      continue;
    }
    auto& call = calls->Add(name, *worker);
    for (const std::string& c : request.container()) {
      call.request.add_container(c);
    }
  }
  calls->Start(&WorkerInterface::CleanupAllAsync);
  if (!calls->WaitUntil(absl::Now() + options_.call_timeout)) {
    return absl::DeadlineExceededError(absl::StrCat(
        "Reset: ", absl::StrJoin(calls->Unanswered(), ", "),
        " did not answer CleanupAll within ",
        absl::FormatDuration(options_.call_timeout)));
  }
  for (int i = 0; i < calls->size(); ++i) status.Update(calls->call(i).status);
  return status;
}

absl::Status Master::MakeCallable(const tensorflow::MakeCallableRequest& request,
                                  tensorflow::MakeCallableResponse* response) {
  WEFT_ASSIGN_OR_RETURN(auto session, Find(request.session_handle()));
  return session->MakeCallable(request, response);
}

absl::Status Master::RunCallable(const tensorflow::RunCallableRequest& request,
                                 tensorflow::RunCallableResponse* response,
                                 CancellationManager* cancel) {
  WEFT_ASSIGN_OR_RETURN(auto session, Find(request.session_handle()));
  return session->RunCallable(request, response, cancel);
}

absl::Status Master::ReleaseCallable(
    const tensorflow::ReleaseCallableRequest& request,
    tensorflow::ReleaseCallableResponse*) {
  WEFT_ASSIGN_OR_RETURN(auto session, Find(request.session_handle()));
  return session->ReleaseCallable(request);
}

int Master::CollectIdleSessions(absl::Time now) {
  if (options_.session_gc <= absl::ZeroDuration()) return 0;
  std::vector<std::shared_ptr<MasterSession>> idle;
  {
    absl::MutexLock lock(&mu_);
    for (auto it = sessions_.begin(); it != sessions_.end();) {
      if (now - it->second.last_used >= options_.session_gc) {
        idle.push_back(std::move(it->second.session));
        sessions_.erase(it++);
      } else {
        ++it;
      }
    }
  }
  for (const auto& session : idle) {
    Log(absl::StrCat("master ", options_.task, ": closing session '",
                     session->handle(), "', idle for more than ",
                     absl::FormatDuration(options_.session_gc)));
    session->Close().IgnoreError();
  }
  return static_cast<int>(idle.size());
}

int Master::num_sessions() const {
  absl::MutexLock lock(&mu_);
  return static_cast<int>(sessions_.size());
}

}  // namespace weft
