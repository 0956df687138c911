// The queues of TensorFlow's data-flow ops, FIFOQueueV2,
// PaddingFIFOQueueV2, RandomShuffleQueueV2 and PriorityQueueV2, and the
// Queue*V2 ops on them: bounded queues of tuples of tensors shared between
// graphs (by shared_name) on one device. Synchronous training's token
// queue is a FIFO one: the chief enqueues one token per worker after each
// update and every worker dequeues one before its next step; TF1 input
// pipelines (string_input_producer, shuffle_batch) use the others. Every
// op also exists in its V1 form (FIFOQueue, QueueEnqueue, ...: the handle a
// Ref(string) tensor of container and name, as TensorFlow 1.x graphs hold
// it), with the same kernels.
//
// Semantics, as TensorFlow's:
//   - Enqueue waits while the queue is full (capacity < 0: unbounded);
//     EnqueueMany enqueues the slices of its inputs along dimension 0, as
//     many at a time as fit. Waiters are served in arrival order.
//   - Dequeue waits for one element; DequeueMany(n) for n, returned stacked
//     along a new dimension 0; DequeueUpTo(n) the same, but once the queue
//     is closed it returns what is left (at least one).
//   - A padding queue's DequeueMany pads each component to the largest
//     shape among the elements it takes (zeros, empty strings).
//   - A random-shuffle queue hands out a random element (TensorFlow's
//     choice: the stream of its seed and seed2 attrs, word % size, the last
//     element moved into the gap) and keeps min_after_dequeue elements back
//     until it is closed.
//   - A priority queue's elements have an int64 scalar first (beside its
//     component_types) and leave lowest first.
//   - Close: later enqueues fail CANCELLED; dequeues are served from what
//     is left, then fail OUT_OF_RANGE. With cancel_pending_enqueues, waiting
//     enqueues fail CANCELLED too.
//   - Every wait ends early, CANCELLED, when its step is aborted (its
//     deadline, a failed peer), so a dead chief never hangs a worker.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <deque>
#include <functional>
#include <list>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "ops/cpu/array_util.h"
#include "ops/cpu/philox_random.h"
#include "ops/cpu/shared_resource.h"
#include "ops/framework/op_kernel.h"
#include "ops/registration.h"
#include "runtime/core/resource_mgr.h"
#include "runtime/core/status.h"

namespace weft {
namespace {

using Tuple = std::vector<Tensor>;  // one tensor per component
using EnqueueDone = std::function<void(absl::Status)>;
using DequeueDone = std::function<void(absl::StatusOr<Tuple>)>;

enum class QueueKind { kFifo, kPadding, kRandomShuffle, kPriority };

// What a queue is made with (its kernel's attrs).
struct QueueConfig {
  QueueKind kind = QueueKind::kFifo;
  DataTypeVector types;
  std::vector<PartialShape> shapes;
  int64_t capacity = -1;
  int64_t min_after_dequeue = 0;  // random-shuffle only
  int64_t seed = 0, seed2 = 0;    // random-shuffle only; both 0: random
};

class FifoQueue : public ResourceBase,
                  public std::enable_shared_from_this<FifoQueue> {
 public:
  FifoQueue(std::string name, QueueConfig config)
      : name_(std::move(name)), kind_(config.kind), types_(std::move(config.types)),
        shapes_(std::move(config.shapes)), capacity_(config.capacity),
        min_after_dequeue_(config.min_after_dequeue) {
    absl::MutexLock lock(&mu_);
    generator_ = philox::SeededGenerator(config.seed, config.seed2);
  }

  QueueKind kind() const { return kind_; }

  const DataTypeVector& types() const { return types_; }
  std::string DebugString() const override {
    return absl::StrCat(kind_ == QueueKind::kFifo      ? "FIFOQueue '"
                        : kind_ == QueueKind::kPadding ? "PaddingFIFOQueue '"
                        : kind_ == QueueKind::kPriority ? "PriorityQueue '"
                                                       : "RandomShuffleQueue '",
                        name_, "'");
  }

  // Checks one element (or, with `batched`, a batch along dimension 0)
  // against the queue's component types and shapes; returns the batch size.
  absl::StatusOr<int64_t> Check(const Tuple& t, bool batched) const {
    if (t.size() != types_.size()) {
      return absl::InvalidArgumentError(absl::StrCat(
          DebugString(), " has ", types_.size(), " components, was given ",
          t.size()));
    }
    int64_t n = 1;
    for (size_t i = 0; i < t.size(); ++i) {
      if (t[i].dtype() != types_[i]) {
        return absl::InvalidArgumentError(absl::StrCat(
            DebugString(), " component ", i, " is ",
            DataTypeString(types_[i]), ", was given ",
            DataTypeString(t[i].dtype())));
      }
      TensorShape element = t[i].shape();
      if (batched) {
        if (element.dims() == 0) {
          return absl::InvalidArgumentError(absl::StrCat(
              DebugString(), ": EnqueueMany needs components of rank >= 1 "
              "(a batch along dimension 0); component ", i, " is a scalar"));
        }
        const int64_t d = element.dim_size(0);
        if (i > 0 && d != n) {
          return absl::InvalidArgumentError(absl::StrCat(
              DebugString(), ": EnqueueMany components disagree on the "
              "batch size: ", n, " and ", d, " (component ", i, ")"));
        }
        n = d;
        element.RemoveDim(0);
      }
      if (kind_ == QueueKind::kPriority && i == 0 && element.dims() != 0) {
        return absl::InvalidArgumentError(absl::StrCat(
            DebugString(), ": the priority (component 0) must be an int64 "
            "scalar per element, got shape ", element.DebugString()));
      }
      if (!shapes_.empty() && !shapes_[i].IsCompatibleWith(element)) {
        return absl::InvalidArgumentError(absl::StrCat(
            DebugString(), " component ", i, " has shape ",
            shapes_[i].DebugString(), ", was given an element of shape ",
            element.DebugString()));
      }
    }
    return n;
  }

  // Queues `elements` (owned copies) and calls done once all are in.
  void Enqueue(std::deque<Tuple> elements, CancellationManager* cm,
               EnqueueDone done) {
    Wait(cm, [&](int64_t id, CancellationToken token) {
      if (closed_) return ClosedForEnqueue();
      enqueuers_.push_back(
          Enqueuer{id, std::move(elements), std::move(done), cm, token});
      return absl::OkStatus();
    }, [&](absl::Status s) { done(std::move(s)); });
  }

  // n < 0: one element, unstacked; otherwise n elements stacked (with
  // `up_to`, fewer once the queue is closed).
  void Dequeue(int64_t n, bool up_to, CancellationManager* cm, DequeueDone done) {
    Wait(cm, [&](int64_t id, CancellationToken token) {
      dequeuers_.push_back(Dequeuer{id, n, up_to, std::move(done), cm, token});
      return absl::OkStatus();
    }, [&](absl::Status s) { done(std::move(s)); });
  }

  void Close(bool cancel_pending_enqueues) {
    std::vector<std::function<void()>> completions;
    {
      absl::MutexLock lock(&mu_);
      closed_ = true;
      cancel_enqueues_ |= cancel_pending_enqueues;
      PumpLocked(&completions);
    }
    for (auto& f : completions) f();
  }

  int32_t size() {
    absl::MutexLock lock(&mu_);
    return static_cast<int32_t>(elements_.size());
  }

  bool closed() {
    absl::MutexLock lock(&mu_);
    return closed_;
  }

 private:
  struct Enqueuer {
    int64_t id;
    std::deque<Tuple> elements;  // still to go in
    EnqueueDone done;
    CancellationManager* cm;
    CancellationToken token;
  };
  struct Dequeuer {
    int64_t id;
    int64_t n;
    bool up_to;
    DequeueDone done;
    CancellationManager* cm;
    CancellationToken token;
  };

  // Registers the waiter's cancellation, queues it with `push` (under mu_)
  // and serves what can be served; `fail` gets CANCELLED if the step is
  // aborted first, or push's error.
  void Wait(CancellationManager* cm,
            const std::function<absl::Status(int64_t, CancellationToken)>& push,
            const std::function<void(absl::Status)>& fail) {
    int64_t id;
    {
      absl::MutexLock lock(&mu_);
      id = ids_.Begin();
    }
    bool cancelled;
    const CancellationToken token = RegisterWaiter(
        cm, shared_from_this(), id, &FifoQueue::Cancel, &cancelled);
    std::vector<std::function<void()>> completions;
    absl::Status refused;
    {
      absl::MutexLock lock(&mu_);
      cancelled |= ids_.End(id);
      if (!cancelled) refused = push(id, token);
      if (!cancelled && refused.ok()) PumpLocked(&completions);
    }
    if (cancelled || !refused.ok()) {
      if (token != kInvalidToken) cm->Deregister(token);
      fail(cancelled ? Aborted() : refused);
      return;
    }
    for (auto& f : completions) f();
  }

  absl::Status Aborted() const {
    return absl::CancelledError(absl::StrCat(
        DebugString(), ": the step was aborted while waiting on it"));
  }
  absl::Status ClosedForEnqueue() const {
    return absl::CancelledError(absl::StrCat(DebugString(), " is closed"));
  }

  // A completion for a waiter leaving the queue: drops its cancellation
  // callback, then calls done. Run outside mu_.
  template <typename Done, typename Arg>
  static std::function<void()> Complete(CancellationManager* cm,
                                        CancellationToken token, Done done,
                                        Arg arg) {
    return [cm, token, done = std::move(done), arg = std::move(arg)]() mutable {
      if (token != kInvalidToken) cm->Deregister(token);
      done(std::move(arg));
    };
  }

  // Serves waiters in order until none can progress.
  void PumpLocked(std::vector<std::function<void()>>* completions)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    for (bool progress = true; progress;) {
      progress = false;
      while (!enqueuers_.empty()) {
        Enqueuer& e = enqueuers_.front();
        if (closed_ && cancel_enqueues_) {
          // A partly served EnqueueMany keeps what went in, as
          // TensorFlow's does.
          completions->push_back(
              Complete(e.cm, e.token, std::move(e.done), ClosedForEnqueue()));
          enqueuers_.pop_front();
          progress = true;
          continue;
        }
        while (!e.elements.empty() &&
               (capacity_ < 0 ||
                static_cast<int64_t>(elements_.size()) < capacity_)) {
          elements_.push_back(std::move(e.elements.front()));
          e.elements.pop_front();
          if (kind_ == QueueKind::kPriority) {
            std::push_heap(elements_.begin(), elements_.end(), LaterPriority);
          }
          progress = true;
        }
        if (!e.elements.empty()) break;  // full
        completions->push_back(Complete(e.cm, e.token, std::move(e.done),
                                        absl::OkStatus()));
        enqueuers_.pop_front();
      }
      while (!dequeuers_.empty()) {
        Dequeuer& d = dequeuers_.front();
        int64_t want = d.n < 0 ? 1 : d.n;
        const bool final = closed_ && enqueuers_.empty();  // no more will come
        // A random-shuffle queue keeps min_after_dequeue back until closed.
        const int64_t available =
            static_cast<int64_t>(elements_.size()) -
            (kind_ == QueueKind::kRandomShuffle && !closed_ ? min_after_dequeue_ : 0);
        if (d.up_to && final && available > 0) want = std::min(want, available);
        if (available < want) {
          if (!final) break;  // more may come
          completions->push_back(Complete(
              d.cm, d.token, std::move(d.done),
              absl::StatusOr<Tuple>(absl::OutOfRangeError(absl::StrCat(
                  DebugString(), " is closed and has insufficient elements "
                  "(requested ", want, ", current size ", elements_.size(), ")")))));
          dequeuers_.pop_front();
          progress = true;
          continue;
        }
        absl::StatusOr<Tuple> out = TakeLocked(d.n < 0 ? -1 : want);
        completions->push_back(
            Complete(d.cm, d.token, std::move(d.done), std::move(out)));
        dequeuers_.pop_front();
        progress = true;
      }
    }
  }

  // A priority queue's elements are a heap on component 0 (an int64
  // scalar), lowest first, made by the same std::push_heap/pop_heap calls
  // as TensorFlow's std::priority_queue, so equal priorities leave in the
  // same order as there.
  static bool LaterPriority(const Tuple& a, const Tuple& b) {
    return a[0].scalar<int64_t>() > b[0].scalar<int64_t>();
  }

  // Removes the next element: the front, the lowest priority, or for a
  // random-shuffle queue the one TensorFlow's choice names (the last
  // element fills its place).
  Tuple PopLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (kind_ == QueueKind::kPriority) {
      std::pop_heap(elements_.begin(), elements_.end(), LaterPriority);
      Tuple t = std::move(elements_.back());
      elements_.pop_back();
      return t;
    }
    size_t index = 0;
    if (kind_ == QueueKind::kRandomShuffle) {
      index = static_cast<size_t>(NextWordLocked() % elements_.size());
    }
    Tuple t = std::move(elements_[index]);
    if (index == 0) {
      elements_.pop_front();
    } else {
      elements_[index] = std::move(elements_.back());
      elements_.pop_back();
    }
    return t;
  }

  uint32_t NextWordLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (used_ == philox::PhiloxRandom::kResultElementCount) {
      block_ = generator_();
      used_ = 0;
    }
    return block_[used_++];
  }

  // Pops one element, or n stacked along a new dimension 0 (padded to the
  // largest shape by a padding queue).
  absl::StatusOr<Tuple> TakeLocked(int64_t n)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (n < 0) return PopLocked();
    // Check the shapes before anything leaves the queue (a random-shuffle
    // queue's choice consumes its stream, so check all it could take).
    const bool pad = kind_ == QueueKind::kPadding;
    std::vector<TensorShape> shapes(types_.size());
    const int64_t candidates =
        kind_ == QueueKind::kRandomShuffle || kind_ == QueueKind::kPriority
            ? static_cast<int64_t>(elements_.size()) : n;
    for (size_t i = 0; i < types_.size(); ++i) {
      for (int64_t k = 0; k < std::min<int64_t>(n, 1); ++k) shapes[i] = elements_[k][i].shape();
      for (int64_t k = 1; k < candidates; ++k) {
        const TensorShape& other = elements_[k][i].shape();
        if (pad && other.dims() == shapes[i].dims()) {
          for (int d = 0; d < other.dims(); ++d) {
            if (other.dim_size(d) > shapes[i].dim_size(d)) shapes[i].set_dim(d, other.dim_size(d));
          }
        } else if (other != shapes[i]) {
          return absl::InvalidArgumentError(absl::StrCat(
              DebugString(), ": DequeueMany needs elements of one shape; "
              "component ", i, " has ", shapes[i].DebugString(), " and ",
              other.DebugString()));
        }
      }
    }
    std::vector<Tuple> taken;
    for (int64_t k = 0; k < n; ++k) taken.push_back(PopLocked());
    if (pad) {  // the largest shape among those taken
      for (size_t i = 0; i < types_.size(); ++i) {
        if (n > 0) shapes[i] = taken[0][i].shape();
        for (const Tuple& t : taken) {
          for (int d = 0; d < shapes[i].dims(); ++d) {
            shapes[i].set_dim(d, std::max(shapes[i].dim_size(d), t[i].dim_size(d)));
          }
        }
      }
    }
    Tuple out(types_.size());
    for (size_t i = 0; i < types_.size(); ++i) {
      TensorShape shape = shapes[i];
      const int64_t slot = shape.num_elements();
      shape.InsertDim(0, n);
      Tensor stacked(types_[i], shape);
      if (!stacked.IsInitialized() && shape.num_elements() > 0) {
        return absl::ResourceExhaustedError(absl::StrCat(
            DebugString(), ": no memory to stack ", n, " elements of shape ",
            shapes[i].DebugString()));
      }
      for (int64_t k = 0; k < n; ++k) {
        const Tensor& e = taken[k][i];
        if (e.shape() == shapes[i]) {
          CopyElements(e, 0, stacked, k * slot, slot);
        } else {
          PadInto(e, shapes[i], &stacked, k * slot);
        }
      }
      out[i] = std::move(stacked);
    }
    return out;
  }

  // Copies `e` into the element of `dst` at `base` whose shape is
  // `padded` (as large as e's in every dim), the rest zeros.
  static void PadInto(const Tensor& e, const TensorShape& padded, Tensor* dst,
                      int64_t base) {
    VisitStorage(dst->dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      std::fill_n(dst->data<T>() + base, padded.num_elements(), T{});
    });
    const int rank = e.dims();
    if (e.NumElements() == 0) return;
    const int64_t row = rank == 0 ? 1 : e.dim_size(rank - 1);
    const int64_t rows = e.NumElements() / row;
    for (int64_t r = 0; r < rows; ++r) {
      // The row's index in e, then its offset in the padded element.
      int64_t rest = r, offset = 0, stride = rank == 0 ? 1 : padded.dim_size(rank - 1);
      for (int d = rank - 2; d >= 0; --d) {
        offset += (rest % e.dim_size(d)) * stride;
        rest /= e.dim_size(d);
        stride *= padded.dim_size(d);
      }
      CopyElements(e, r * row, *dst, base + offset, row);
    }
  }

  void Cancel(int64_t id) {
    std::function<void()> fail;
    {
      absl::MutexLock lock(&mu_);
      if (ids_.CancelIfNotQueued(id)) return;  // Wait sees it
      for (auto it = enqueuers_.begin(); it != enqueuers_.end(); ++it) {
        if (it->id != id) continue;
        fail = [done = std::move(it->done), s = Aborted()] { done(s); };
        enqueuers_.erase(it);
        break;
      }
      for (auto it = dequeuers_.begin(); !fail && it != dequeuers_.end();
           ++it) {
        if (it->id != id) continue;
        fail = [done = std::move(it->done), s = Aborted()] { done(s); };
        dequeuers_.erase(it);
        break;
      }
    }
    if (fail) fail();  // else: served already
  }

  const std::string name_;
  const QueueKind kind_;
  const DataTypeVector types_;
  const std::vector<PartialShape> shapes_;
  const int64_t capacity_;
  const int64_t min_after_dequeue_;
  absl::Mutex mu_;
  philox::PhiloxRandom generator_ ABSL_GUARDED_BY(mu_);
  philox::PhiloxRandom::Block block_ ABSL_GUARDED_BY(mu_){};
  int used_ ABSL_GUARDED_BY(mu_) = philox::PhiloxRandom::kResultElementCount;
  std::deque<Tuple> elements_ ABSL_GUARDED_BY(mu_);
  std::list<Enqueuer> enqueuers_ ABSL_GUARDED_BY(mu_);
  std::list<Dequeuer> dequeuers_ ABSL_GUARDED_BY(mu_);
  bool closed_ ABSL_GUARDED_BY(mu_) = false;
  bool cancel_enqueues_ ABSL_GUARDED_BY(mu_) = false;
  WaiterIds ids_ ABSL_GUARDED_BY(mu_);
};

// FIFOQueueV2, PaddingFIFOQueueV2, RandomShuffleQueueV2: the queue's handle,
// made on first use.
class QueueOp : public OpKernel {
 public:
  QueueOp(OpKernelConstruction* c, QueueKind kind) : OpKernel(c) {
    config_.kind = kind;
    absl::Status s = c->GetAttr("component_types", &config_.types);
    if (s.ok()) s = c->GetAttr("capacity", &config_.capacity);
    if (s.ok() && kind == QueueKind::kRandomShuffle) {
      s = c->GetAttr("min_after_dequeue", &config_.min_after_dequeue);
      if (s.ok()) s = c->GetAttr("seed", &config_.seed);
      if (s.ok()) s = c->GetAttr("seed2", &config_.seed2);
    }
    if (auto it = c->def().attr().find("shapes"); it != c->def().attr().end()) {
      for (const auto& p : it->second.list().shape()) {
        config_.shapes.push_back(PartialShape::FromProto(p));
      }
    }
    if (kind == QueueKind::kPriority) {
      // The priority comes first, an int64 scalar, beside component_types.
      config_.types.insert(config_.types.begin(), DT_INT64);
      if (!config_.shapes.empty()) config_.shapes.insert(config_.shapes.begin(), PartialShape({}));
    }
    const size_t n = config_.types.size();
    if (s.ok() && !config_.shapes.empty() && config_.shapes.size() != n) {
      s = absl::InvalidArgumentError(absl::StrCat(
          "queue ", c->def().name(), ": ", config_.shapes.size(), " shapes for ",
          n, " component types"));
    }
    if (s.ok() && kind == QueueKind::kPadding && config_.shapes.size() != n) {
      s = absl::InvalidArgumentError(absl::StrCat(
          "queue ", c->def().name(), ": a PaddingFIFOQueue needs a shape for "
          "each component (dims may be unknown, ranks may not)"));
    }
    for (size_t i = 0; s.ok() && kind == QueueKind::kPadding && i < n; ++i) {
      if (!config_.shapes[i].known_rank()) {
        s = absl::InvalidArgumentError(absl::StrCat(
            "queue ", c->def().name(), ": component ", i,
            " of a PaddingFIFOQueue needs a known rank"));
      }
    }
    for (DataType t : config_.types) {
      if (s.ok() && t != DT_STRING && DataTypeIsObject(t)) {
        s = absl::UnimplementedError(absl::StrCat(
            "queue ", c->def().name(), ": ", DataTypeString(t),
            " components are not supported (numbers, bool and strings are)"));
      }
    }
    c->SetStatus(s);
    handle_ = SharedResourceName(c, DT_INVALID);
    ref_ = !absl::EndsWith(c->def().op(), "V2");
    if (ref_) ref_handle_ = RefHandleTensor(handle_);
  }

  void Compute(OpKernelContext* c) override {
    absl::StatusOr<std::shared_ptr<FifoQueue>> q =
        c->resource_manager()->LookupOrCreate<FifoQueue>(
            handle_.container, handle_.name,
            [&] { return std::make_shared<FifoQueue>(handle_.name, config_); });
    OP_REQUIRES_OK(c, q.status());
    OP_REQUIRES(c, (*q)->types() == config_.types && (*q)->kind() == config_.kind,
                absl::InvalidArgumentError(absl::StrCat(
                    "queue '", handle_.name, "' exists already as a ",
                    (*q)->DebugString(), " with other component types or kind "
                    "than ", name(), " asks for")));
    if (ref_) {
      c->set_output_ref(0, &ref_mu_, &ref_handle_);
    } else {
      c->set_output(0, ResourceHandleTensor(handle_));
    }
  }

 private:
  QueueConfig config_;
  ResourceHandle handle_;
  bool ref_ = false;  // the V1 form: a Ref(string) handle
  absl::Mutex ref_mu_;
  Tensor ref_handle_;
};

absl::StatusOr<std::shared_ptr<FifoQueue>> LookupQueue(OpKernelContext* c) {
  return LookupSharedResource<FifoQueue>(c, "queue", "FIFOQueueV2");
}

// Base of the blocking queue kernels.
class AsyncQueueOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  bool IsAsync() const override { return true; }
  void Compute(OpKernelContext* c) override {
    c->SetStatus(absl::InternalError(
        absl::StrCat(name(), " is asynchronous; use ComputeAsync")));
  }
  void ComputeAsync(OpKernelContext* c, std::function<void()> done) override {
    absl::StatusOr<std::shared_ptr<FifoQueue>> q = LookupQueue(c);
    if (!q.ok()) {
      c->SetStatus(q.status());
      done();
      return;
    }
    Run(c, **q, std::move(done));
  }

 protected:
  virtual void Run(OpKernelContext* c, FifoQueue& q,
                   std::function<void()> done) = 0;
};

class EnqueueOp : public AsyncQueueOp {
 public:
  EnqueueOp(OpKernelConstruction* c, bool many)
      : AsyncQueueOp(c), many_(many) {}

 protected:
  void Run(OpKernelContext* c, FifoQueue& q,
           std::function<void()> done) override {
    Tuple inputs;
    for (int i = 1; i < c->num_inputs(); ++i) {
      inputs.push_back(c->input(i).DeepCopy());  // inputs may alias a var
      if (!inputs.back().IsInitialized() && c->input(i).NumElements() > 0) {
        c->SetStatus(absl::ResourceExhaustedError(absl::StrCat(
            name(), ": no memory to copy component ", i - 1, " (",
            c->input(i).shape().DebugString(), ")")));
        done();
        return;
      }
    }
    absl::StatusOr<int64_t> n = q.Check(inputs, many_);
    if (!n.ok()) {
      c->SetStatus(n.status());
      done();
      return;
    }
    std::deque<Tuple> elements;
    if (!many_) {
      elements.push_back(std::move(inputs));
    } else {
      for (int64_t k = 0; k < *n; ++k) {
        Tuple e;
        for (const Tensor& t : inputs) {
          TensorShape shape = t.shape();
          shape.RemoveDim(0);
          e.push_back(t.Slice(k, k + 1).Reshaped(shape));
        }
        elements.push_back(std::move(e));
      }
    }
    q.Enqueue(std::move(elements), c->cancellation(),
              [c, done = std::move(done)](absl::Status s) {
                c->SetStatus(s);
                done();
              });
  }

 private:
  const bool many_;
};

class DequeueOp : public AsyncQueueOp {
 public:
  // many: DequeueMany; up_to: DequeueUpTo (many too).
  DequeueOp(OpKernelConstruction* c, bool many, bool up_to = false)
      : AsyncQueueOp(c), many_(many), up_to_(up_to) {}

 protected:
  void Run(OpKernelContext* c, FifoQueue& q,
           std::function<void()> done) override {
    int64_t n = -1;
    if (many_) {
      const Tensor& t = c->input(1);
      if (t.dtype() != DT_INT32 || t.NumElements() != 1 ||
          t.scalar<int32_t>() < 0) {
        c->SetStatus(absl::InvalidArgumentError(absl::StrCat(
            name(), ": n must be a non-negative int32 scalar, got ",
            t.DebugString())));
        done();
        return;
      }
      n = t.scalar<int32_t>();
    }
    if (q.types().size() != static_cast<size_t>(c->num_outputs())) {
      c->SetStatus(absl::InvalidArgumentError(absl::StrCat(
          name(), " has ", c->num_outputs(), " outputs; ", q.DebugString(),
          " has ", q.types().size(), " components")));
      done();
      return;
    }
    q.Dequeue(n, up_to_, c->cancellation(),
              [c, done = std::move(done)](absl::StatusOr<Tuple> t) {
                if (t.ok()) {
                  for (size_t i = 0; i < t->size(); ++i) {
                    c->set_output(static_cast<int>(i), std::move((*t)[i]));
                  }
                } else {
                  c->SetStatus(t.status());
                }
                done();
              });
  }

 private:
  const bool many_;
  const bool up_to_;
};

class QueueSizeOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* c) override {
    absl::StatusOr<std::shared_ptr<FifoQueue>> q = LookupQueue(c);
    OP_REQUIRES_OK(c, q.status());
    c->set_output(0, Tensor::Scalar<int32_t>((*q)->size()));
  }
};

class QueueIsClosedOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* c) override {
    absl::StatusOr<std::shared_ptr<FifoQueue>> q = LookupQueue(c);
    OP_REQUIRES_OK(c, q.status());
    c->set_output(0, Tensor::Scalar<bool>((*q)->closed()));
  }
};

class QueueCloseOp : public OpKernel {
 public:
  explicit QueueCloseOp(OpKernelConstruction* c) : OpKernel(c) {
    c->SetStatus(c->GetAttr("cancel_pending_enqueues", &cancel_));
  }
  void Compute(OpKernelContext* c) override {
    absl::StatusOr<std::shared_ptr<FifoQueue>> q = LookupQueue(c);
    OP_REQUIRES_OK(c, q.status());
    (*q)->Close(cancel_);
  }

 private:
  bool cancel_ = false;
};

}  // namespace

// Dequeues one element of the queue that input `i` of `c` names (either
// handle form) and calls `done` with its components or the error: NOT_FOUND
// for no such queue, OUT_OF_RANGE once it is closed and empty, CANCELLED
// when the step is aborted; `done` may run on this thread. For the v1
// readers (ops/cpu/reader_kernels.cc), which take their work from a queue;
// declared there, not in a header, since every header of ops/cpu is an
// input of every kernel's compilation.
void DequeueOneFromInput(OpKernelContext* c, int i,
                         std::function<void(absl::StatusOr<std::vector<Tensor>>)> done) {
  absl::StatusOr<ResourceHandle> h = HandleFromInput(c, i, "queue");
  if (!h.ok()) {
    done(h.status());
    return;
  }
  absl::StatusOr<std::shared_ptr<FifoQueue>> q =
      c->resource_manager()->Lookup<FifoQueue>(h->container, h->name);
  if (!q.ok()) {
    done(MissingResource(c, *h, "queue", "FIFOQueueV2"));
    return;
  }
  (*q)->Dequeue(-1, false, c->cancellation(), std::move(done));
}

void RegisterQueueKernels(KernelRegistry* r) {
  // Each op in both forms: V2 (resource handles) and V1 (Ref(string)
  // handles of container and name; the verbs read either form).
  for (const std::string v : {"V2", ""}) {
    struct Kind {
      const char* op;
      QueueKind kind;
    };
    for (const Kind& k : {Kind{"FIFOQueue", QueueKind::kFifo},
                          Kind{"PaddingFIFOQueue", QueueKind::kPadding},
                          Kind{"RandomShuffleQueue", QueueKind::kRandomShuffle},
                          Kind{"PriorityQueue", QueueKind::kPriority}}) {
      const QueueKind kind = k.kind;
      r->Register(KernelDef(k.op + v, kDeviceTypeCpu),
                  [kind](OpKernelConstruction* c) -> std::unique_ptr<OpKernel> {
                    return std::make_unique<QueueOp>(c, kind);
                  });
    }
    struct Verb {
      const char* op;
      bool many, up_to;
    };
    for (const Verb& e : {Verb{"QueueEnqueue", false, false},
                          Verb{"QueueEnqueueMany", true, false}}) {
      const bool many = e.many;
      r->Register(KernelDef(e.op + v, kDeviceTypeCpu),
                  [many](OpKernelConstruction* c) -> std::unique_ptr<OpKernel> {
                    return std::make_unique<EnqueueOp>(c, many);
                  });
    }
    for (const Verb& d : {Verb{"QueueDequeue", false, false},
                          Verb{"QueueDequeueMany", true, false},
                          Verb{"QueueDequeueUpTo", true, true}}) {
      const bool many = d.many, up_to = d.up_to;
      r->Register(KernelDef(d.op + v, kDeviceTypeCpu),
                  [many, up_to](OpKernelConstruction* c) -> std::unique_ptr<OpKernel> {
                    return std::make_unique<DequeueOp>(c, many, up_to);
                  });
    }
    r->Register(KernelDef("QueueIsClosed" + v, kDeviceTypeCpu), MakeKernel<QueueIsClosedOp>);
    r->Register(KernelDef("QueueSize" + v, kDeviceTypeCpu), MakeKernel<QueueSizeOp>);
    r->Register(KernelDef("QueueClose" + v, kDeviceTypeCpu), MakeKernel<QueueCloseOp>);
  }
}

}  // namespace weft
