// Conditional accumulators (ConditionalAccumulator / ResourceConditional-
// Accumulator and the Accumulator* ops on them): what synchronous training
// aggregates each variable's gradient in, on the variable's ps task.
//
// Semantics, as TensorFlow's:
//   - ApplyGradient(local_step, g): dropped if local_step is older than the
//     accumulator's global step (a stale gradient from a worker that fell
//     behind); otherwise added to the sum and counted.
//   - TakeGradient(n): waits until n gradients are in, then returns their
//     mean (reduction_type MEAN) or sum, empties the accumulator and
//     advances its global step by one. Takers are served in arrival order.
//     The wait ends early, with CANCELLED, when the step is aborted (its
//     deadline, a failed peer), so a dead worker never hangs the chief.
//   - SetGlobalStep(s): the global step becomes s (the chief calls it at
//     start-up with the real global step).
// Gradients are float or double (what optimizers produce).
#include <cstdint>
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
#include "runtime/core/cancellation.h"
#include "runtime/core/resource_mgr.h"
#include "runtime/core/status.h"

namespace weft {
namespace {

using TakeDone = std::function<void(absl::StatusOr<Tensor>)>;

class Accumulator : public ResourceBase,
                    public std::enable_shared_from_this<Accumulator> {
 public:
  Accumulator(std::string name, DataType dtype, PartialShape shape, bool mean)
      : name_(std::move(name)), dtype_(dtype), shape_(std::move(shape)),
        mean_(mean) {}

  DataType dtype() const { return dtype_; }
  const PartialShape& shape() const { return shape_; }
  std::string DebugString() const override {
    return absl::StrCat("accumulator '", name_, "'");
  }

  absl::Status Apply(int64_t local_step, const Tensor& grad) {
    if (grad.dtype() != dtype_) {
      return absl::InvalidArgumentError(absl::StrCat(
          DebugString(), " accumulates ", DataTypeString(dtype_),
          " gradients, was given ", DataTypeString(grad.dtype())));
    }
    if (!shape_.IsCompatibleWith(grad.shape())) {
      return absl::InvalidArgumentError(absl::StrCat(
          DebugString(), " has shape ", shape_.DebugString(),
          ", was given a gradient of shape ", grad.shape().DebugString()));
    }
    std::vector<Served> ready;
    {
      absl::MutexLock lock(&mu_);
      if (local_step < global_step_) {
        ++dropped_;  // stale: computed from variables older than this step
        return absl::OkStatus();
      }
      if (count_ == 0) {
        sum_ = grad.DeepCopy();
        if (!sum_.IsInitialized()) {
          return absl::ResourceExhaustedError(absl::StrCat(
              DebugString(), ": no memory for a gradient of shape ",
              grad.shape().DebugString()));
        }
      } else if (sum_.shape() != grad.shape()) {
        return absl::InvalidArgumentError(absl::StrCat(
            DebugString(), " holds gradients of shape ",
            sum_.shape().DebugString(), ", was given one of shape ",
            grad.shape().DebugString()));
      } else if (dtype_ == DT_FLOAT) {
        AddInto<float>(grad);
      } else {
        AddInto<double>(grad);
      }
      ++count_;
      ServeLocked(&ready);
    }
    Finish(&ready);
    return absl::OkStatus();
  }

  // Calls done (maybe on another thread, maybe before returning) with the
  // aggregate of num_required gradients, or an error. The cancellation
  // callback is registered before the taker becomes visible to Apply: once
  // it is, another thread may serve it and finish the step (destroying cm).
  void Take(int32_t num_required, CancellationManager* cm, TakeDone done) {
    if (num_required < 1) {
      done(absl::InvalidArgumentError(absl::StrCat(
          "Argument num_required must be positive, but was ", num_required,
          " (", DebugString(), ")")));
      return;
    }
    int64_t id;
    {
      absl::MutexLock lock(&mu_);
      id = ids_.Begin();
    }
    bool cancelled;
    const CancellationToken token = RegisterWaiter(
        cm, shared_from_this(), id, &Accumulator::Cancel, &cancelled);
    std::vector<Served> ready;
    {
      absl::MutexLock lock(&mu_);
      cancelled |= ids_.End(id);
      if (!cancelled) {
        takers_.push_back(
            Taker{id, num_required, std::move(done), cm, token});
        ServeLocked(&ready);
      }
    }
    if (cancelled) {
      done(CancelledWhileWaiting(num_required));
      return;
    }
    Finish(&ready);
  }

  void SetGlobalStep(int64_t step) {
    absl::MutexLock lock(&mu_);
    global_step_ = step;
  }

  int32_t num_accumulated() {
    absl::MutexLock lock(&mu_);
    return count_;
  }

 private:
  struct Taker {
    int64_t id;
    int32_t num_required;
    TakeDone done;
    CancellationManager* cm;
    CancellationToken token;
  };
  // A taker served under mu_, completed (token dropped, done called)
  // outside it by the thread that served it.
  struct Served {
    Taker taker;
    Tensor result;
  };

  template <typename T>
  void AddInto(const Tensor& grad) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    T* sum = sum_.data<T>();
    const T* g = grad.data<T>();
    const int64_t n = grad.NumElements();
    for (int64_t i = 0; i < n; ++i) sum[i] += g[i];
  }

  template <typename T>
  void Scale(Tensor* t, int64_t count) {
    T* v = t->data<T>();
    const T inv = T(1) / static_cast<T>(count);
    for (int64_t i = 0, n = t->NumElements(); i < n; ++i) v[i] *= inv;
  }

  // Hands the aggregate to the first taker if enough gradients are in.
  void ServeLocked(std::vector<Served>* ready)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (takers_.empty() || count_ < takers_.front().num_required) return;
    Served served{std::move(takers_.front()), std::move(sum_)};
    takers_.pop_front();
    sum_ = Tensor();
    if (mean_ && count_ > 1) {
      if (dtype_ == DT_FLOAT) {
        Scale<float>(&served.result, count_);
      } else {
        Scale<double>(&served.result, count_);
      }
    }
    count_ = 0;
    ++global_step_;
    ready->push_back(std::move(served));
  }

  // Outside mu_: a cancellation callback running now waits on mu_, finds
  // its taker gone and does nothing; one not yet started is dropped here.
  static void Finish(std::vector<Served>* ready) {
    for (Served& s : *ready) {
      if (s.taker.token != kInvalidToken) s.taker.cm->Deregister(s.taker.token);
      s.taker.done(std::move(s.result));
    }
  }

  absl::Status CancelledWhileWaiting(int32_t required) {
    int32_t had;
    {
      absl::MutexLock lock(&mu_);
      had = count_;
    }
    return absl::CancelledError(absl::StrCat(
        DebugString(), " was waiting for ", required, " gradients (", had,
        " in) when the step was aborted"));
  }

  void Cancel(int64_t id) {
    TakeDone done;
    int32_t required = 0;
    {
      absl::MutexLock lock(&mu_);
      if (ids_.CancelIfNotQueued(id)) return;  // Take sees it
      for (auto it = takers_.begin(); it != takers_.end(); ++it) {
        if (it->id != id) continue;
        done = std::move(it->done);
        required = it->num_required;
        takers_.erase(it);
        break;
      }
    }
    if (done) done(CancelledWhileWaiting(required));  // else: served already
  }

  const std::string name_;
  const DataType dtype_;
  const PartialShape shape_;
  const bool mean_;
  absl::Mutex mu_;
  Tensor sum_ ABSL_GUARDED_BY(mu_);
  int32_t count_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t global_step_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t dropped_ ABSL_GUARDED_BY(mu_) = 0;
  std::list<Taker> takers_ ABSL_GUARDED_BY(mu_);
  WaiterIds ids_ ABSL_GUARDED_BY(mu_);
};

// ConditionalAccumulator (ref form) and ResourceConditionalAccumulator.
class AccumulatorOp : public OpKernel {
 public:
  explicit AccumulatorOp(OpKernelConstruction* c)
      : OpKernel(c), ref_(c->output_types()[0] != DT_RESOURCE) {
    std::string reduction;
    absl::Status s = c->GetAttr("dtype", &dtype_);
    if (s.ok()) s = c->GetAttr("shape", &shape_);
    if (s.ok()) s = c->GetAttr("reduction_type", &reduction);
    if (s.ok() && dtype_ != DT_FLOAT && dtype_ != DT_DOUBLE) {
      s = absl::UnimplementedError(absl::StrCat(
          "accumulator ", c->def().name(), ": ", DataTypeString(dtype_),
          " gradients are not supported (float and double are)"));
    }
    c->SetStatus(s);
    mean_ = reduction != "SUM";
    handle_ = SharedResourceName(c, dtype_);
    ref_handle_ = RefHandleTensor(handle_);
  }

  void Compute(OpKernelContext* c) override {
    const DataType dtype = dtype_;
    const PartialShape shape = shape_;
    const bool mean = mean_;
    const std::string name = handle_.name;
    absl::StatusOr<std::shared_ptr<Accumulator>> a =
        c->resource_manager()->LookupOrCreate<Accumulator>(
            handle_.container, handle_.name, [&] {
              return std::make_shared<Accumulator>(name, dtype, shape, mean);
            });
    OP_REQUIRES_OK(c, a.status());
    OP_REQUIRES(c, (*a)->dtype() == dtype_ && (*a)->shape() == shape_,
                absl::InvalidArgumentError(absl::StrCat(
                    "accumulator '", handle_.name, "' exists already with ",
                    DataTypeString((*a)->dtype()), " ",
                    (*a)->shape().DebugString(), "; ", name_of_node(),
                    " asks for ", DataTypeString(dtype_), " ",
                    shape_.DebugString())));
    if (ref_) {
      c->set_output_ref(0, &ref_mu_, &ref_handle_);
    } else {
      c->set_output(0, ResourceHandleTensor(handle_));
    }
  }

 private:
  const std::string& name_of_node() const { return name(); }

  const bool ref_;
  DataType dtype_ = DT_INVALID;
  PartialShape shape_;
  bool mean_ = true;
  ResourceHandle handle_;
  absl::Mutex ref_mu_;
  Tensor ref_handle_;  // never written after construction
};

absl::StatusOr<std::shared_ptr<Accumulator>> LookupAccumulator(
    OpKernelContext* c) {
  return LookupSharedResource<Accumulator>(c, "accumulator",
                                           "ConditionalAccumulator");
}

absl::StatusOr<int64_t> Int64Scalar(OpKernelContext* c, int i,
                                    const char* what) {
  const Tensor& t = c->input(i);
  if (t.dtype() != DT_INT64 || t.NumElements() != 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        what, " must be an int64 scalar, got ", t.DebugString()));
  }
  return t.scalar<int64_t>();
}

class ApplyGradientOp : public OpKernel {
 public:
  explicit ApplyGradientOp(OpKernelConstruction* c) : OpKernel(c) {}
  void Compute(OpKernelContext* c) override {
    absl::StatusOr<std::shared_ptr<Accumulator>> a = LookupAccumulator(c);
    OP_REQUIRES_OK(c, a.status());
    absl::StatusOr<int64_t> step = Int64Scalar(c, 1, "local_step");
    OP_REQUIRES_OK(c, step.status());
    OP_REQUIRES_OK(c, (*a)->Apply(*step, c->input(2)));
  }
};

class TakeGradientOp : public OpKernel {
 public:
  explicit TakeGradientOp(OpKernelConstruction* c) : OpKernel(c) {}
  bool IsAsync() const override { return true; }
  void Compute(OpKernelContext* c) override {
    c->SetStatus(absl::InternalError(absl::StrCat(
        name(), ": AccumulatorTakeGradient is asynchronous; use ComputeAsync")));
  }
  void ComputeAsync(OpKernelContext* c, std::function<void()> done) override {
    absl::StatusOr<std::shared_ptr<Accumulator>> a = LookupAccumulator(c);
    const Tensor& n = c->input(1);
    if (a.ok() && (n.dtype() != DT_INT32 || n.NumElements() != 1)) {
      a = absl::InvalidArgumentError(absl::StrCat(
          "num_required must be an int32 scalar, got ", n.DebugString()));
    }
    if (!a.ok()) {
      c->SetStatus(a.status());
      done();
      return;
    }
    (*a)->Take(n.scalar<int32_t>(), c->cancellation(),
               [c, done = std::move(done)](absl::StatusOr<Tensor> result) {
                 if (result.ok()) {
                   c->set_output(0, *std::move(result));
                 } else {
                   c->SetStatus(result.status());
                 }
                 done();
               });
  }
};

class SetGlobalStepOp : public OpKernel {
 public:
  explicit SetGlobalStepOp(OpKernelConstruction* c) : OpKernel(c) {}
  void Compute(OpKernelContext* c) override {
    absl::StatusOr<std::shared_ptr<Accumulator>> a = LookupAccumulator(c);
    OP_REQUIRES_OK(c, a.status());
    absl::StatusOr<int64_t> step = Int64Scalar(c, 1, "new_global_step");
    OP_REQUIRES_OK(c, step.status());
    (*a)->SetGlobalStep(*step);
  }
};

class NumAccumulatedOp : public OpKernel {
 public:
  explicit NumAccumulatedOp(OpKernelConstruction* c) : OpKernel(c) {}
  void Compute(OpKernelContext* c) override {
    absl::StatusOr<std::shared_ptr<Accumulator>> a = LookupAccumulator(c);
    OP_REQUIRES_OK(c, a.status());
    c->set_output(0, Tensor::Scalar<int32_t>((*a)->num_accumulated()));
  }
};

}  // namespace

void RegisterAccumulatorKernels(KernelRegistry* r) {
  for (const std::string p : {"", "Resource"}) {
    r->Register(KernelDef(p + "ConditionalAccumulator", kDeviceTypeCpu),
                MakeKernel<AccumulatorOp>);
    r->Register(KernelDef(p + "AccumulatorApplyGradient", kDeviceTypeCpu),
                MakeKernel<ApplyGradientOp>);
    r->Register(KernelDef(p + "AccumulatorTakeGradient", kDeviceTypeCpu),
                MakeKernel<TakeGradientOp>);
    r->Register(KernelDef(p + "AccumulatorSetGlobalStep", kDeviceTypeCpu),
                MakeKernel<SetGlobalStepOp>);
    r->Register(KernelDef(p + "AccumulatorNumAccumulated", kDeviceTypeCpu),
                MakeKernel<NumAccumulatedOp>);
  }
}

}  // namespace weft
