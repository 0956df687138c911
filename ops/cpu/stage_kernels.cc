// TensorFlow's staging area (data_flow_ops.StagingArea): Stage, Unstage,
// StagePeek, StageSize and StageClear on a buffer of tuples shared by name
// (the ops' container and shared_name attrs) on one device. Input
// pipelines stage a batch one step ahead of its use.
//
// Semantics, as TensorFlow's:
//   - Stage appends a tuple, waiting while the area is full: `capacity`
//     tuples (0: no bound), or `memory_limit` bytes (0: no bound; a tuple
//     larger than the whole limit is RESOURCE_EXHAUSTED at once).
//   - Unstage takes the oldest tuple, waiting while there is none.
//   - StagePeek(i) returns a copy of tuple i (0 the oldest), waiting until
//     there are more than i.
//   - StageSize counts the tuples; StageClear drops them all.
// Unlike TensorFlow's, every wait ends, CANCELLED, when its step is aborted
// (its deadline, Session.close(), a failed peer), and waiting holds no
// thread: waiters are served, in arrival order, as the area changes.
#include <cstdint>
#include <deque>
#include <functional>
#include <list>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "ops/cpu/shared_resource.h"
#include "ops/framework/op_kernel.h"
#include "ops/registration.h"
#include "runtime/core/cancellation.h"
#include "runtime/core/resource_mgr.h"
#include "runtime/core/status.h"

namespace weft {
namespace {

using Tuple = std::vector<Tensor>;

class StagingArea : public ResourceBase,
                    public std::enable_shared_from_this<StagingArea> {
 public:
  StagingArea(std::string name, int64_t capacity, int64_t memory_limit)
      : name_(std::move(name)), capacity_(capacity), memory_limit_(memory_limit) {}

  std::string DebugString() const override {
    return absl::StrCat("staging area '", name_, "'");
  }

  void Put(Tuple tuple, CancellationManager* cm, std::function<void(absl::Status)> done) {
    int64_t bytes = 0;
    for (const Tensor& t : tuple) bytes += static_cast<int64_t>(t.TotalBytes());
    if (memory_limit_ > 0 && bytes > memory_limit_) {
      done(absl::ResourceExhaustedError(absl::StrCat(
          "Attempted to insert tensors with combined size of '", bytes,
          "' bytes into Staging Area with a memory limit of '", memory_limit_,
          "' (", DebugString(), ")")));
      return;
    }
    Wait(cm, [&](Waiter* w) {
      w->tuple = std::move(tuple);
      w->bytes = bytes;
      w->put_done = std::move(done);
    });
  }

  // index < 0: take the oldest tuple; otherwise a copy of tuple `index`.
  void Get(int64_t index, CancellationManager* cm,
           std::function<void(absl::StatusOr<Tuple>)> done) {
    Wait(cm, [&](Waiter* w) {
      w->index = index;
      w->get_done = std::move(done);
    });
  }

  int64_t size() {
    absl::MutexLock lock(&mu_);
    return static_cast<int64_t>(buffer_.size());
  }

  void Clear() {
    std::vector<std::function<void()>> completions;
    {
      absl::MutexLock lock(&mu_);
      buffer_.clear();
      bytes_ = 0;
      PumpLocked(&completions);
    }
    for (auto& c : completions) c();
  }

 private:
  // A Stage (put_done set) or an Unstage/StagePeek (get_done set).
  struct Waiter {
    int64_t id = 0;
    CancellationManager* cm = nullptr;
    CancellationToken token = kInvalidToken;
    Tuple tuple;       // put
    int64_t bytes = 0;  // put
    std::function<void(absl::Status)> put_done;
    int64_t index = -1;  // get
    std::function<void(absl::StatusOr<Tuple>)> get_done;
  };

  // Queues a waiter made by `fill`, after registering its cancellation
  // (before it is visible: once queued, another thread may serve it and
  // end the step), then serves what can be served.
  void Wait(CancellationManager* cm, const std::function<void(Waiter*)>& fill) {
    Waiter w;
    fill(&w);
    {
      absl::MutexLock lock(&mu_);
      w.id = ids_.Begin();
    }
    bool cancelled;
    w.cm = cm;
    w.token = RegisterWaiter(cm, shared_from_this(), w.id, &StagingArea::Cancel,
                             &cancelled);
    std::vector<std::function<void()>> completions;
    {
      absl::MutexLock lock(&mu_);
      cancelled |= ids_.End(w.id);
      if (!cancelled) {
        waiters_.push_back(std::move(w));
        PumpLocked(&completions);
      }
    }
    if (cancelled) {
      Fail(&w, absl::CancelledError(absl::StrCat(
                   DebugString(), ": the step was aborted while it waited")));
      return;
    }
    for (auto& c : completions) c();
  }

  static void Fail(Waiter* w, const absl::Status& s) {
    if (w->put_done) {
      w->put_done(s);
    } else {
      w->get_done(s);
    }
  }

  bool Fits(const Waiter& w) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return (capacity_ <= 0 || static_cast<int64_t>(buffer_.size()) < capacity_) &&
           (memory_limit_ <= 0 || bytes_ + w.bytes <= memory_limit_);
  }

  // Serves every waiter that can be, oldest first, until none can; the
  // completions run outside mu_.
  void PumpLocked(std::vector<std::function<void()>>* completions)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    for (bool progress = true; progress;) {
      progress = false;
      for (auto it = waiters_.begin(); it != waiters_.end();) {
        Waiter& w = *it;
        std::function<void()> complete;
        if (w.put_done && Fits(w)) {
          bytes_ += w.bytes;
          buffer_.push_back(std::move(w.tuple));
          complete = [done = std::move(w.put_done)] { done(absl::OkStatus()); };
        } else if (w.get_done && w.index < 0 && !buffer_.empty()) {
          Tuple t = std::move(buffer_.front());
          buffer_.pop_front();
          for (const Tensor& x : t) bytes_ -= static_cast<int64_t>(x.TotalBytes());
          complete = [done = std::move(w.get_done), t = std::move(t)]() mutable {
            done(std::move(t));
          };
        } else if (w.get_done && w.index >= 0 &&
                   w.index < static_cast<int64_t>(buffer_.size())) {
          Tuple copy;
          for (const Tensor& x : buffer_[w.index]) copy.push_back(x.DeepCopy());
          complete = [done = std::move(w.get_done), t = std::move(copy)]() mutable {
            done(std::move(t));
          };
        }
        if (!complete) {
          ++it;
          continue;
        }
        CancellationManager* cm = w.cm;
        const CancellationToken token = w.token;
        completions->push_back([cm, token, complete = std::move(complete)] {
          if (token != kInvalidToken) cm->Deregister(token);
          complete();
        });
        it = waiters_.erase(it);
        progress = true;
      }
    }
  }

  void Cancel(int64_t id) {
    std::optional<Waiter> gone;
    {
      absl::MutexLock lock(&mu_);
      if (ids_.CancelIfNotQueued(id)) return;  // Wait sees it
      for (auto it = waiters_.begin(); it != waiters_.end(); ++it) {
        if (it->id != id) continue;
        gone = std::move(*it);
        waiters_.erase(it);
        break;
      }
    }
    if (gone.has_value()) {  // else: served already
      Fail(&*gone, absl::CancelledError(absl::StrCat(
                       DebugString(), ": the step was aborted while it waited")));
    }
  }

  const std::string name_;
  const int64_t capacity_;
  const int64_t memory_limit_;
  absl::Mutex mu_;
  std::deque<Tuple> buffer_ ABSL_GUARDED_BY(mu_);
  int64_t bytes_ ABSL_GUARDED_BY(mu_) = 0;
  std::list<Waiter> waiters_ ABSL_GUARDED_BY(mu_);
  WaiterIds ids_ ABSL_GUARDED_BY(mu_);
};

// What every staging op shares: the area its attrs name (made on first use).
class StageKernel : public OpKernel {
 public:
  explicit StageKernel(OpKernelConstruction* c) : OpKernel(c) {
    absl::Status s = c->GetAttr("capacity", &capacity_);
    if (s.ok()) s = c->GetAttr("memory_limit", &memory_limit_);
    if (s.ok() && (capacity_ < 0 || memory_limit_ < 0)) {
      s = absl::InvalidArgumentError(absl::StrCat(
          name(), ": capacity and memory_limit must not be negative"));
    }
    c->SetStatus(s);
    handle_ = SharedResourceName(c, DT_INVALID);
  }

 protected:
  absl::StatusOr<std::shared_ptr<StagingArea>> Area(OpKernelContext* c) const {
    return c->resource_manager()->LookupOrCreate<StagingArea>(
        handle_.container, handle_.name, [&] {
          return std::make_shared<StagingArea>(handle_.name, capacity_, memory_limit_);
        });
  }

 private:
  int64_t capacity_ = 0;
  int64_t memory_limit_ = 0;
  ResourceHandle handle_;
};

class StageOp : public StageKernel {
 public:
  using StageKernel::StageKernel;
  bool IsAsync() const override { return true; }
  void Compute(OpKernelContext* c) override {
    c->SetStatus(absl::InternalError("Stage is asynchronous"));
  }
  void ComputeAsync(OpKernelContext* c, std::function<void()> done) override {
    absl::StatusOr<std::shared_ptr<StagingArea>> area = Area(c);
    if (!area.ok()) {
      c->SetStatus(area.status());
      done();
      return;
    }
    Tuple tuple;
    for (int i = 0; i < c->num_inputs(); ++i) tuple.push_back(c->input(i));
    (*area)->Put(std::move(tuple), c->cancellation(),
                 [c, done = std::move(done)](absl::Status s) {
                   c->SetStatus(s);
                   done();
                 });
  }
};

// Unstage (no input) and StagePeek (the index).
class UnstageOp : public StageKernel {
 public:
  using StageKernel::StageKernel;
  bool IsAsync() const override { return true; }
  void Compute(OpKernelContext* c) override {
    c->SetStatus(absl::InternalError("Unstage is asynchronous"));
  }
  void ComputeAsync(OpKernelContext* c, std::function<void()> done) override {
    absl::StatusOr<std::shared_ptr<StagingArea>> area = Area(c);
    int64_t index = -1;
    if (area.ok() && c->num_inputs() == 1) {
      const Tensor& i = c->input(0);
      if (i.dtype() != DT_INT32 || i.NumElements() != 1 || i.scalar<int32_t>() < 0) {
        area = absl::InvalidArgumentError(absl::StrCat(
            "StagePeek's index must be a non-negative int32 scalar, got ",
            i.DebugString()));
      } else {
        index = i.scalar<int32_t>();
      }
    }
    if (!area.ok()) {
      c->SetStatus(area.status());
      done();
      return;
    }
    (*area)->Get(index, c->cancellation(),
                 [this, c, done = std::move(done)](absl::StatusOr<Tuple> t) {
                   if (t.ok() && static_cast<int>(t->size()) != c->num_outputs()) {
                     t = absl::InvalidArgumentError(absl::StrCat(
                         name(), " expects ", c->num_outputs(),
                         " tensors per staged tuple, the area holds ", t->size()));
                   }
                   if (!t.ok()) {
                     c->SetStatus(t.status());
                   } else {
                     for (size_t i = 0; i < t->size(); ++i) {
                       c->set_output(static_cast<int>(i), std::move((*t)[i]));
                     }
                   }
                   done();
                 });
  }
};

class StageSizeOp : public StageKernel {
 public:
  using StageKernel::StageKernel;
  void Compute(OpKernelContext* c) override {
    absl::StatusOr<std::shared_ptr<StagingArea>> area = Area(c);
    OP_REQUIRES_OK(c, area.status());
    c->set_output(0, Tensor::Scalar<int32_t>(static_cast<int32_t>((*area)->size())));
  }
};

class StageClearOp : public StageKernel {
 public:
  using StageKernel::StageKernel;
  void Compute(OpKernelContext* c) override {
    absl::StatusOr<std::shared_ptr<StagingArea>> area = Area(c);
    OP_REQUIRES_OK(c, area.status());
    (*area)->Clear();
  }
};

}  // namespace

void RegisterStageKernels(KernelRegistry* r) {
  r->Register(KernelDef("Stage", kDeviceTypeCpu), MakeKernel<StageOp>);
  r->Register(KernelDef("Unstage", kDeviceTypeCpu), MakeKernel<UnstageOp>);
  r->Register(KernelDef("StagePeek", kDeviceTypeCpu), MakeKernel<UnstageOp>);
  r->Register(KernelDef("StageSize", kDeviceTypeCpu), MakeKernel<StageSizeOp>);
  r->Register(KernelDef("StageClear", kDeviceTypeCpu), MakeKernel<StageClearOp>);
}

}  // namespace weft
