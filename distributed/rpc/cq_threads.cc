#include "distributed/rpc/cq_threads.h"

#include <pthread.h>
#if defined(WEFT_TSAN)
#include <sanitizer/tsan_interface.h>
#endif

#include <algorithm>
#include <utility>

namespace weft {

void CqTag::Posting() {
#if defined(WEFT_TSAN)
  __tsan_release(this);
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
#if defined(WEFT_TSAN)
        __tsan_acquire(tag);
#endif
        static_cast<CqTag*>(tag)->Done(ok);
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
