// FIFOQueueV2 and the Queue*V2 ops on it: a bounded first-in first-out
// queue of tuples of tensors shared between graphs (by shared_name) on one
// device. Synchronous training's token queue is one: the chief enqueues one
// token per worker after each update and every worker dequeues one before
// its next step.
//
// Semantics, as TensorFlow's:
//   - Enqueue waits while the queue is full (capacity < 0: unbounded);
//     EnqueueMany enqueues the slices of its inputs along dimension 0, as
//     many at a time as fit. Waiters are served in arrival order.
//   - Dequeue waits for one element; DequeueMany(n) for n, returned stacked
//     along a new dimension 0.
//   - Close: later enqueues fail CANCELLED; dequeues are served from what
//     is left, then fail OUT_OF_RANGE. With cancel_pending_enqueues, waiting
//     enqueues fail CANCELLED too.
//   - Every wait ends early, CANCELLED, when its step is aborted (its
//     deadline, a failed peer), so a dead chief never hangs a worker.
// Components are plain-memory types (numbers, bool): what token and input
// queues carry.
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
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
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

class FifoQueue : public ResourceBase,
                  public std::enable_shared_from_this<FifoQueue> {
 public:
  FifoQueue(std::string name, DataTypeVector types,
            std::vector<PartialShape> shapes, int64_t capacity)
      : name_(std::move(name)), types_(std::move(types)),
        shapes_(std::move(shapes)), capacity_(capacity) {}

  const DataTypeVector& types() const { return types_; }
  std::string DebugString() const override {
    return absl::StrCat("queue '", name_, "'");
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

  // n < 0: one element, unstacked; otherwise n elements stacked.
  void Dequeue(int64_t n, CancellationManager* cm, DequeueDone done) {
    Wait(cm, [&](int64_t id, CancellationToken token) {
      dequeuers_.push_back(Dequeuer{id, n, std::move(done), cm, token});
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
          progress = true;
        }
        if (!e.elements.empty()) break;  // full
        completions->push_back(Complete(e.cm, e.token, std::move(e.done),
                                        absl::OkStatus()));
        enqueuers_.pop_front();
      }
      while (!dequeuers_.empty()) {
        Dequeuer& d = dequeuers_.front();
        const int64_t want = d.n < 0 ? 1 : d.n;
        if (static_cast<int64_t>(elements_.size()) < want) {
          if (!closed_ || !enqueuers_.empty()) break;  // more may come
          completions->push_back(Complete(
              d.cm, d.token, std::move(d.done),
              absl::StatusOr<Tuple>(absl::OutOfRangeError(absl::StrCat(
                  DebugString(), " is closed and has ", elements_.size(),
                  " elements; ", want, " were asked for")))));
          dequeuers_.pop_front();
          progress = true;
          continue;
        }
        absl::StatusOr<Tuple> out = TakeLocked(d.n);
        completions->push_back(
            Complete(d.cm, d.token, std::move(d.done), std::move(out)));
        dequeuers_.pop_front();
        progress = true;
      }
    }
  }

  // Pops one element, or n stacked along a new dimension 0.
  absl::StatusOr<Tuple> TakeLocked(int64_t n)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (n < 0) {
      Tuple t = std::move(elements_.front());
      elements_.pop_front();
      return t;
    }
    Tuple out(types_.size());
    for (size_t i = 0; i < types_.size(); ++i) {
      TensorShape shape = n > 0 ? elements_.front()[i].shape()
                                : TensorShape();
      for (int64_t k = 1; k < n; ++k) {
        if (elements_[k][i].shape() != shape) {
          return absl::InvalidArgumentError(absl::StrCat(
              DebugString(), ": DequeueMany needs elements of one shape; "
              "component ", i, " has ", shape.DebugString(), " and ",
              elements_[k][i].shape().DebugString()));
        }
      }
      shape.InsertDim(0, n);
      Tensor stacked(types_[i], shape);
      if (!stacked.IsInitialized() && shape.num_elements() > 0) {
        return absl::ResourceExhaustedError(absl::StrCat(
            DebugString(), ": no memory to stack ", n, " elements of shape ",
            shape.DebugString()));
      }
      char* dst = static_cast<char*>(stacked.raw_data());
      for (int64_t k = 0; k < n; ++k) {
        const Tensor& e = elements_[k][i];
        if (e.TotalBytes() > 0) std::memcpy(dst, e.raw_data(), e.TotalBytes());
        dst += e.TotalBytes();
      }
      out[i] = std::move(stacked);
    }
    elements_.erase(elements_.begin(), elements_.begin() + n);
    return out;
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
  const DataTypeVector types_;
  const std::vector<PartialShape> shapes_;
  const int64_t capacity_;
  absl::Mutex mu_;
  std::deque<Tuple> elements_ ABSL_GUARDED_BY(mu_);
  std::list<Enqueuer> enqueuers_ ABSL_GUARDED_BY(mu_);
  std::list<Dequeuer> dequeuers_ ABSL_GUARDED_BY(mu_);
  bool closed_ ABSL_GUARDED_BY(mu_) = false;
  bool cancel_enqueues_ ABSL_GUARDED_BY(mu_) = false;
  WaiterIds ids_ ABSL_GUARDED_BY(mu_);
};

class FifoQueueOp : public OpKernel {
 public:
  explicit FifoQueueOp(OpKernelConstruction* c) : OpKernel(c) {
    absl::Status s = c->GetAttr("component_types", &types_);
    if (s.ok()) s = c->GetAttr("capacity", &capacity_);
    if (auto it = c->def().attr().find("shapes"); it != c->def().attr().end()) {
      for (const auto& p : it->second.list().shape()) {
        shapes_.push_back(PartialShape::FromProto(p));
      }
    }
    if (s.ok() && !shapes_.empty() && shapes_.size() != types_.size()) {
      s = absl::InvalidArgumentError(absl::StrCat(
          "queue ", c->def().name(), ": ", shapes_.size(), " shapes for ",
          types_.size(), " component types"));
    }
    for (DataType t : types_) {
      if (s.ok() && DataTypeIsObject(t)) {
        s = absl::UnimplementedError(absl::StrCat(
            "queue ", c->def().name(), ": ", DataTypeString(t),
            " components are not supported (numbers and bool are)"));
      }
    }
    c->SetStatus(s);
    handle_ = SharedResourceName(c, DT_INVALID);
  }

  void Compute(OpKernelContext* c) override {
    absl::StatusOr<std::shared_ptr<FifoQueue>> q =
        c->resource_manager()->LookupOrCreate<FifoQueue>(
            handle_.container, handle_.name, [&] {
              return std::make_shared<FifoQueue>(handle_.name, types_,
                                                 shapes_, capacity_);
            });
    OP_REQUIRES_OK(c, q.status());
    OP_REQUIRES(c, (*q)->types() == types_,
                absl::InvalidArgumentError(absl::StrCat(
                    "queue '", handle_.name, "' exists already with other "
                    "component types than ", name(), " asks for")));
    c->set_output(0, ResourceHandleTensor(handle_));
  }

 private:
  DataTypeVector types_;
  std::vector<PartialShape> shapes_;
  int64_t capacity_ = -1;
  ResourceHandle handle_;
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
  DequeueOp(OpKernelConstruction* c, bool many)
      : AsyncQueueOp(c), many_(many) {}

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
    q.Dequeue(n, c->cancellation(),
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

void RegisterQueueKernels(KernelRegistry* r) {
  r->Register(KernelDef("FIFOQueueV2", kDeviceTypeCpu),
              MakeKernel<FifoQueueOp>);
  r->Register(KernelDef("QueueEnqueueV2", kDeviceTypeCpu),
              [](OpKernelConstruction* c) -> std::unique_ptr<OpKernel> {
                return std::make_unique<EnqueueOp>(c, false);
              });
  r->Register(KernelDef("QueueEnqueueManyV2", kDeviceTypeCpu),
              [](OpKernelConstruction* c) -> std::unique_ptr<OpKernel> {
                return std::make_unique<EnqueueOp>(c, true);
              });
  r->Register(KernelDef("QueueDequeueV2", kDeviceTypeCpu),
              [](OpKernelConstruction* c) -> std::unique_ptr<OpKernel> {
                return std::make_unique<DequeueOp>(c, false);
              });
  r->Register(KernelDef("QueueDequeueManyV2", kDeviceTypeCpu),
              [](OpKernelConstruction* c) -> std::unique_ptr<OpKernel> {
                return std::make_unique<DequeueOp>(c, true);
              });
  r->Register(KernelDef("QueueSizeV2", kDeviceTypeCpu),
              MakeKernel<QueueSizeOp>);
  r->Register(KernelDef("QueueCloseV2", kDeviceTypeCpu),
              MakeKernel<QueueCloseOp>);
}

}  // namespace weft
