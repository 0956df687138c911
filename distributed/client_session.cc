#include "distributed/client_session.h"

#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "proto/master.pb.h"
#include "runtime/core/allocator.h"
#include "runtime/core/status.h"
#include "runtime/core/tensor_proto.h"

namespace weft {
namespace {

class ClientSession final : public Session {
 public:
  ClientSession(std::shared_ptr<MasterInterface> master,
                const SessionOptions& options, ClientSessionOptions client)
      : options_(options), master_(std::move(master)), client_(client) {}
  ~ClientSession() override { Close().IgnoreError(); }

  absl::Status Create(const tensorflow::GraphDef& graph) override {
    absl::MutexLock lock(&mu_);
    if (closed_) return absl::FailedPreconditionError("session is closed");
    if (!handle_.empty()) {
      return absl::AlreadyExistsError(
          "the session already has a graph; use Extend to add nodes");
    }
    tensorflow::CreateSessionRequest req;
    *req.mutable_graph_def() = graph;
    *req.mutable_config() = options_.config;
    tensorflow::CreateSessionResponse resp;
    WEFT_RETURN_IF_ERROR(master_->CreateSession({client_.call_timeout}, req, &resp));
    handle_ = resp.session_handle();
    version_ = resp.graph_version();
    return absl::OkStatus();
  }

  absl::Status Extend(const tensorflow::GraphDef& graph) override {
    {
      absl::MutexLock lock(&mu_);
      if (closed_) return absl::FailedPreconditionError("session is closed");
      if (!handle_.empty()) return ExtendLocked(graph);
    }
    return Create(graph);
  }

 private:
  absl::Status ExtendLocked(const tensorflow::GraphDef& graph)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    tensorflow::ExtendSessionRequest req;
    req.set_session_handle(handle_);
    *req.mutable_graph_def() = graph;
    req.set_current_graph_version(version_);
    tensorflow::ExtendSessionResponse resp;
    WEFT_RETURN_IF_ERROR(master_->ExtendSession({client_.call_timeout}, req, &resp));
    version_ = resp.new_graph_version();
    return absl::OkStatus();
  }

 public:
  absl::Status Run(const std::vector<std::pair<std::string, Tensor>>& feeds,
                   const std::vector<std::string>& fetches,
                   const std::vector<std::string>& targets,
                   std::vector<Tensor>* outputs) override {
    return Run(tensorflow::RunOptions(), feeds, fetches, targets, outputs,
               nullptr);
  }

  absl::Status Run(const tensorflow::RunOptions& options,
                   const std::vector<std::pair<std::string, Tensor>>& feeds,
                   const std::vector<std::string>& fetches,
                   const std::vector<std::string>& targets,
                   std::vector<Tensor>* outputs,
                   tensorflow::RunMetadata* metadata) override {
    if (outputs == nullptr && !fetches.empty()) {
      return absl::InvalidArgumentError("Run: fetches given but outputs is null");
    }
    tensorflow::RunStepRequest req;
    {
      absl::MutexLock lock(&mu_);
      if (closed_) return absl::FailedPreconditionError("session is closed");
      if (handle_.empty()) {
        return absl::FailedPreconditionError(
            "the session has no graph: call Create first");
      }
      req.set_session_handle(handle_);
    }
    for (const auto& [name, value] : feeds) {
      tensorflow::NamedTensorProto* feed = req.add_feed();
      feed->set_name(name);
      TensorToProto(value, feed->mutable_tensor());
    }
    for (const std::string& f : fetches) req.add_fetch(f);
    for (const std::string& t : targets) req.add_target(t);
    *req.mutable_options() = options;
    req.set_store_errors_in_response_body(true);
    tensorflow::RunStepResponse resp;
    const absl::Duration wait =
        options.timeout_in_ms() > 0
            ? absl::Milliseconds(options.timeout_in_ms()) + absl::Minutes(1)
            : client_.call_timeout;
    WEFT_RETURN_IF_ERROR(master_->RunStep({wait}, req, &resp));
    if (resp.status_code() != tensorflow::error::OK) {
      return absl::Status(static_cast<absl::StatusCode>(resp.status_code()),
                          resp.status_error_message());
    }
    // By name: TensorFlow's master answers in an order of its own.
    absl::flat_hash_map<std::string, const tensorflow::TensorProto*> by_name;
    for (const tensorflow::NamedTensorProto& t : resp.tensor()) {
      by_name.emplace(t.name(), &t.tensor());
    }
    if (outputs != nullptr) {
      outputs->clear();
      for (const std::string& name : fetches) {
        auto it = by_name.find(name);
        if (it == by_name.end()) {
          return absl::InternalError(absl::StrCat(
              master_->name(), " returned no value for the fetch '", name, "'"));
        }
        absl::StatusOr<Tensor> value = TensorFromProto(*it->second, CpuAllocator());
        if (!value.ok()) {
          return WithContext(value.status(),
                             absl::StrCat("fetch '", name, "' from ",
                                          master_->name()));
        }
        outputs->push_back(*std::move(value));
      }
    }
    if (metadata != nullptr) *metadata = std::move(*resp.mutable_metadata());
    return absl::OkStatus();
  }

  absl::Status Close() override {
    absl::MutexLock lock(&mu_);
    if (closed_) return absl::OkStatus();
    closed_ = true;
    if (handle_.empty()) return absl::OkStatus();
    tensorflow::CloseSessionRequest req;
    req.set_session_handle(handle_);
    tensorflow::CloseSessionResponse resp;
    return master_->CloseSession({client_.close_timeout}, req, &resp);
  }

 private:
  const SessionOptions options_;
  const std::shared_ptr<MasterInterface> master_;
  const ClientSessionOptions client_;
  absl::Mutex mu_;
  bool closed_ ABSL_GUARDED_BY(mu_) = false;
  std::string handle_ ABSL_GUARDED_BY(mu_);
  int64_t version_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace

std::unique_ptr<Session> NewClientSession(std::shared_ptr<MasterInterface> master,
                                          const SessionOptions& options,
                                          ClientSessionOptions client) {
  return std::make_unique<ClientSession>(std::move(master), options, client);
}

}  // namespace weft
