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
#include "runtime/core/device_name.h"
#include "runtime/core/status.h"

namespace weft {
namespace {

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
