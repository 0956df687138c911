#include "distributed/rpc/cq_threads.h"

#include <pthread.h>

#include <algorithm>
#include <utility>

namespace weft {

CqTag::Posting::Posting(CqTag* tag) : tag_(tag) {
#if defined(WEFT_TSAN)
  tag_->posting_.Lock();
#endif
}

CqTag::Posting::~Posting() {
#if defined(WEFT_TSAN)
  tag_->posting_.Unlock();
#endif
}

void CqTag::Arrived() {
#if defined(WEFT_TSAN)
  absl::MutexLock lock(&posting_);
#endif
}

CqThreads::CqThreads(std::unique_ptr<grpc::CompletionQueue> cq,
                     const std::string& name, int threads)
    : cq_(std::move(cq)) {
  for (int i = 0; i < std::max(threads, 1); ++i) {
    threads_.emplace_back([q = cq_.get()] {
      void* tag = nullptr;
      bool ok = false;
      while (q->Next(&tag, &ok)) {
        CqTag* const done = static_cast<CqTag*>(tag);
        done->Arrived();
        done->Done(ok);
      }
    });
    // Linux limits thread names to 15 characters.
    pthread_setname_np(threads_.back().native_handle(),
                       name.substr(0, 15).c_str());
  }
}

CqThreads::~CqThreads() {
  CancelCalls();
  cq_->Shutdown();
  for (std::thread& t : threads_) t.join();
}

void CqThreads::Register(grpc::ClientContext* call) {
  absl::MutexLock lock(&mu_);
  calls_.insert(call);
}

void CqThreads::Unregister(grpc::ClientContext* call) {
  absl::MutexLock lock(&mu_);
  calls_.erase(call);
}

void CqThreads::CancelCalls() {
  absl::MutexLock lock(&mu_);
  for (grpc::ClientContext* call : calls_) call->TryCancel();
}

CqThreads* CqThreads::ForClients() {
  static CqThreads* const queue = new CqThreads(
      std::make_unique<grpc::CompletionQueue>(), "weft_rpc_client", 1);
  return queue;
}

}  // namespace weft
