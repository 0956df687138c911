#include "ops/data/ordered_producer.h"

#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"
#include "runtime/core/cancellation.h"

namespace weft {
namespace data {

struct OrderedProducer::State {
  State(int64_t capacity, ReadFn read, TransformFn transform)
      : capacity(capacity), read(std::move(read)), transform(std::move(transform)) {}

  struct Result {
    absl::Status status;
    std::vector<Tensor> element;
  };

  const int64_t capacity;
  const ReadFn read;
  const TransformFn transform;
  CancellationManager cancellation;  // the producers'; cancelled on destruction

  absl::Mutex mu;
  absl::CondVar cv;  // any change below
  bool stop ABSL_GUARDED_BY(mu) = false;
  bool reading ABSL_GUARDED_BY(mu) = false;   // a producer is reading the input
  int64_t next_read ABSL_GUARDED_BY(mu) = 0;  // the next sequence number to read
  int64_t next_out ABSL_GUARDED_BY(mu) = 0;   // the next one GetNext returns
  int64_t end_at ABSL_GUARDED_BY(mu) = -1;    // the number the input ended at
  absl::flat_hash_map<int64_t, Result> results ABSL_GUARDED_BY(mu);
};

OrderedProducer::OrderedProducer(int threads, int64_t capacity, ReadFn read,
                                 TransformFn transform)
    : num_threads_(threads < 1 ? 1 : threads),
      state_(std::make_shared<State>(capacity < num_threads_ ? num_threads_ : capacity,
                                     std::move(read), std::move(transform))) {}

OrderedProducer::~OrderedProducer() {
  {
    absl::MutexLock lock(&state_->mu);
    state_->stop = true;
    state_->cv.SignalAll();
  }
  state_->cancellation.StartCancel();
  for (std::thread& t : threads_) t.join();
}

void OrderedProducer::Produce(std::shared_ptr<State> state) {
  State& s = *state;
  IteratorContext ctx;
  ctx.cancellation = &s.cancellation;
  while (true) {
    int64_t seq;
    {
      absl::MutexLock lock(&s.mu);
      while (!s.stop && s.end_at < 0 &&
             (s.reading || s.next_read >= s.next_out + s.capacity)) {
        s.cv.Wait(&s.mu);
      }
      if (s.stop || s.end_at >= 0) return;
      s.reading = true;
      seq = s.next_read++;
    }
    std::vector<Tensor> element;
    bool end = false;
    absl::Status status = s.read(&ctx, &element, &end);
    {
      absl::MutexLock lock(&s.mu);
      s.reading = false;
      s.cv.SignalAll();
      if (status.ok() && end) {
        s.end_at = seq;
        return;
      }
      if (!status.ok()) {
        s.results[seq] = State::Result{std::move(status), {}};
        continue;
      }
    }
    std::vector<Tensor> out;
    if (s.transform) {
      status = s.transform(&ctx, std::move(element), &out);
    } else {
      out = std::move(element);
    }
    absl::MutexLock lock(&s.mu);
    s.results[seq] = State::Result{std::move(status), std::move(out)};
    s.cv.SignalAll();
  }
}

absl::Status OrderedProducer::GetNext(IteratorContext* ctx, std::vector<Tensor>* out,
                                      bool* end_of_sequence) {
  out->clear();
  *end_of_sequence = false;
  if (threads_.empty()) {
    for (int i = 0; i < num_threads_; ++i) threads_.emplace_back(Produce, state_);
  }
  CancellationManager* cm = ctx != nullptr ? ctx->cancellation : nullptr;
  CancellationToken token = kInvalidToken;
  absl::Status status;
  {
    State& s = *state_;
    absl::MutexLock lock(&s.mu);
    while (true) {
      auto it = s.results.find(s.next_out);
      if (it != s.results.end()) {
        status = std::move(it->second.status);
        *out = std::move(it->second.element);
        s.results.erase(it);
        ++s.next_out;
        s.cv.SignalAll();
        break;
      }
      if (s.end_at >= 0 && s.next_out >= s.end_at) {
        *end_of_sequence = true;
        break;
      }
      if (cm != nullptr && token == kInvalidToken) {
        std::weak_ptr<State> weak = state_;
        token = cm->Register([weak] {
          if (std::shared_ptr<State> st = weak.lock()) {
            absl::MutexLock l(&st->mu);
            st->cv.SignalAll();
          }
        });
      }
      if (cm != nullptr && (cm->IsCancelled() || token == kInvalidToken)) {
        status = absl::CancelledError(
            "the step was cancelled while GetNext waited for an element "
            "being read ahead");
        break;
      }
      s.cv.Wait(&s.mu);
    }
  }
  if (token != kInvalidToken) cm->Deregister(token);
  return status;
}

}  // namespace data
}  // namespace weft
