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
// SparseConditionalAccumulator takes IndexedSlices gradients (the
// Sparse* apply and take ops; NumAccumulated and SetGlobalStep serve both
// kinds); how it merges them is at SparseAccumulator below.
// Gradients are float or double (what optimizers produce).
#include <algorithm>
#include <cstdint>
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

// What a taker gets: the dense mean or sum, or the sparse one's indices,
// values and shape.
using Outputs = std::vector<Tensor>;
using TakeDone = std::function<void(absl::StatusOr<Outputs>)>;

// One gradient as the apply ops give it: dense (values only) or sparse
// (IndexedSlices: indices [n], values [n, ...], the dense shape if known).
struct Gradient {
  Tensor values;
  Tensor indices;             // sparse only
  std::vector<int64_t> shape;  // sparse, when known
  bool has_shape = false;
};

// The waiting, staleness and step logic both kinds share; how gradients
// add up and what a taker gets is the subclass's (AddLocked, TakeLocked).
class Accumulator : public ResourceBase,
                    public std::enable_shared_from_this<Accumulator> {
 public:
  Accumulator(std::string name, DataType dtype, PartialShape shape, bool mean,
              bool sparse)
      : name_(std::move(name)), dtype_(dtype), shape_(std::move(shape)),
        mean_(mean), sparse_(sparse) {}

  DataType dtype() const { return dtype_; }
  const PartialShape& shape() const { return shape_; }
  bool sparse() const { return sparse_; }
  bool mean() const { return mean_; }
  std::string DebugString() const override {
    return absl::StrCat(sparse_ ? "sparse accumulator '" : "accumulator '",
                        name_, "'");
  }

  absl::Status Apply(int64_t local_step, const Gradient& grad) {
    if (grad.values.dtype() != dtype_) {
      return absl::InvalidArgumentError(absl::StrCat(
          DebugString(), " accumulates ", DataTypeString(dtype_),
          " gradients, was given ", DataTypeString(grad.values.dtype())));
    }
    WEFT_RETURN_IF_ERROR(Check(grad));
    std::vector<Served> ready;
    {
      absl::MutexLock lock(&mu_);
      if (local_step < global_step_) {
        ++dropped_;  // stale: computed from variables older than this step
        return absl::OkStatus();
      }
      WEFT_RETURN_IF_ERROR(AddLocked(grad, count_ == 0));
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

 protected:
  // What can be checked of a gradient without the accumulated state.
  virtual absl::Status Check(const Gradient& grad) const = 0;
  // Adds `grad` (the first of a step when `first`).
  virtual absl::Status AddLocked(const Gradient& grad, bool first)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) = 0;
  // The aggregate of the `count` gradients in (their mean when mean()),
  // leaving the accumulator empty.
  virtual Outputs TakeLocked(int32_t count) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) = 0;

  absl::Mutex mu_;

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
    Outputs result;
  };

  // Hands the aggregate to the first taker if enough gradients are in.
  void ServeLocked(std::vector<Served>* ready)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (takers_.empty() || count_ < takers_.front().num_required) return;
    Served served{std::move(takers_.front()), TakeLocked(count_)};
    takers_.pop_front();
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
  const bool sparse_;
  int32_t count_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t global_step_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t dropped_ ABSL_GUARDED_BY(mu_) = 0;
  std::list<Taker> takers_ ABSL_GUARDED_BY(mu_);
  WaiterIds ids_ ABSL_GUARDED_BY(mu_);
};

// Multiplies each of `rows` rows of `row_size` elements by 1 / counts[row].
template <typename T>
void DivideRows(Tensor* t, int64_t row_size, const std::vector<int32_t>& counts) {
  T* v = t->data<T>();
  for (size_t r = 0; r < counts.size(); ++r) {
    if (counts[r] <= 1) continue;
    const T inv = T(1) / static_cast<T>(counts[r]);
    for (int64_t i = 0; i < row_size; ++i) v[r * row_size + i] *= inv;
  }
}

// ConditionalAccumulator: the element-wise sum of dense gradients.
class DenseAccumulator final : public Accumulator {
 public:
  DenseAccumulator(std::string name, DataType dtype, PartialShape shape, bool mean)
      : Accumulator(std::move(name), dtype, std::move(shape), mean, false) {}

 private:
  absl::Status Check(const Gradient& grad) const override {
    if (!shape().IsCompatibleWith(grad.values.shape())) {
      return absl::InvalidArgumentError(absl::StrCat(
          DebugString(), " has shape ", shape().DebugString(),
          ", was given a gradient of shape ", grad.values.shape().DebugString()));
    }
    return absl::OkStatus();
  }

  absl::Status AddLocked(const Gradient& grad, bool first) override
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    const Tensor& g = grad.values;
    if (first) {
      sum_ = g.DeepCopy();
      if (!sum_.IsInitialized()) {
        return absl::ResourceExhaustedError(absl::StrCat(
            DebugString(), ": no memory for a gradient of shape ",
            g.shape().DebugString()));
      }
    } else if (sum_.shape() != g.shape()) {
      return absl::InvalidArgumentError(absl::StrCat(
          DebugString(), " holds gradients of shape ", sum_.shape().DebugString(),
          ", was given one of shape ", g.shape().DebugString()));
    } else if (dtype() == DT_FLOAT) {
      AddInto<float>(g);
    } else {
      AddInto<double>(g);
    }
    return absl::OkStatus();
  }

  Outputs TakeLocked(int32_t count) override ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    Tensor result = std::move(sum_);
    sum_ = Tensor();
    if (mean() && count > 1) {
      const std::vector<int32_t> counts = {count};
      if (dtype() == DT_FLOAT) {
        DivideRows<float>(&result, result.NumElements(), counts);
      } else {
        DivideRows<double>(&result, result.NumElements(), counts);
      }
    }
    return {std::move(result)};
  }

  template <typename T>
  void AddInto(const Tensor& grad) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    T* sum = sum_.data<T>();
    const T* g = grad.data<T>();
    const int64_t n = grad.NumElements();
    for (int64_t i = 0; i < n; ++i) sum[i] += g[i];
  }

  Tensor sum_ ABSL_GUARDED_BY(mu_);
};

// SparseConditionalAccumulator: IndexedSlices gradients, merged as
// TensorFlow merges them. The rows in hold keep their order; a new
// gradient is walked beside them as if both were sorted by index: the
// smaller index goes first, equal indices are summed into one row (its
// count goes up), and what remains of either follows in its order. So
// duplicate indices within one gradient stay separate rows, as in
// TensorFlow, and its take gives the same rows in the same order. A mean
// divides each row by the number of gradients summed into it.
class SparseAccumulator final : public Accumulator {
 public:
  SparseAccumulator(std::string name, DataType dtype, PartialShape shape, bool mean)
      : Accumulator(std::move(name), dtype, std::move(shape), mean, true) {}

 private:
  absl::Status Check(const Gradient& grad) const override {
    const Tensor& idx = grad.indices;
    const Tensor& val = grad.values;
    if (idx.dtype() != DT_INT64 || idx.dims() != 1) {
      return absl::InvalidArgumentError(absl::StrCat(
          DebugString(), ": gradient_indices must be an int64 vector, got ",
          idx.DebugString()));
    }
    if (val.dims() < 1 || val.dim_size(0) != idx.NumElements()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "Expected ", idx.NumElements(), " non-empty input values, got ",
          val.dims() < 1 ? 0 : val.dim_size(0), " (", DebugString(), ")"));
    }
    // As TensorFlow checks: the accumulator's shape bounds the gradient's
    // leading dimensions (a rank-0 or unknown shape bounds nothing).
    const PartialShape& s = shape();
    const int rank = s.known_rank() ? s.rank() : 0;
    if (grad.has_shape) {
      if (rank > static_cast<int>(grad.shape.size())) {
        return absl::InvalidArgumentError(absl::StrCat(
            "Shape mismatch: expected shape rank at least ", rank, ", got ",
            grad.shape.size(), " (", DebugString(), ")"));
      }
      for (int i = 0; i < rank; ++i) {
        if (s.dim(i) >= 0 && s.dim(i) != grad.shape[i]) {
          return absl::InvalidArgumentError(absl::StrCat(
              "Shape mismatch: expected shape dim ", i, " to be ", s.dim(i),
              ", got ", grad.shape[i], " (", DebugString(), ")"));
        }
      }
    }
    if (rank > 1 && val.dims() != rank) {
      return absl::InvalidArgumentError(absl::StrCat(
          "Shape mismatch: expected values rank to be ", rank, ", got ",
          val.dims(), " (", DebugString(), ")"));
    }
    for (int i = 1; i < rank && i < val.dims(); ++i) {
      if (s.dim(i) >= 0 && s.dim(i) != val.dim_size(i)) {
        return absl::InvalidArgumentError(absl::StrCat(
            "Shape mismatch: expected values dim ", i, " to be ", s.dim(i),
            ", got ", val.dim_size(i), " (", DebugString(), ")"));
      }
    }
    const int64_t limit = rank > 0 ? s.dim(0) : -1;
    const int64_t* ix = idx.data<int64_t>();
    for (int64_t i = 0; i < idx.NumElements(); ++i) {
      if (ix[i] < 0 || (limit >= 0 && ix[i] >= limit)) {
        return absl::InvalidArgumentError(absl::StrCat(
            "Shape mismatch: index of slice ", i, " exceeded limits of shape; "
            "index is ", ix[i], " exceeded ", limit, " (", DebugString(), ")"));
      }
    }
    return absl::OkStatus();
  }

  absl::Status AddLocked(const Gradient& grad, bool first) override
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    const Tensor& val = grad.values;
    const int64_t n = grad.indices.NumElements();
    const int64_t* gi = grad.indices.data<int64_t>();
    if (first) {
      values_ = val.DeepCopy();
      if (!values_.IsInitialized()) {
        return absl::ResourceExhaustedError(absl::StrCat(
            DebugString(), ": no memory for a gradient of shape ",
            val.shape().DebugString()));
      }
      indices_.assign(gi, gi + n);
      counts_.assign(n, 1);
      return absl::OkStatus();
    }
    if (val.dims() != values_.dims()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "Shape mismatch: expected values rank to be ", values_.dims(),
          " (as the gradients in), got ", val.dims(), " (", DebugString(), ")"));
    }
    for (int i = 1; i < val.dims(); ++i) {
      if (val.dim_size(i) != values_.dim_size(i)) {
        return absl::InvalidArgumentError(absl::StrCat(
            "Shape mismatch: expected values dim ", i, " to be ",
            values_.dim_size(i), " (as the gradients in), got ",
            val.dim_size(i), " (", DebugString(), ")"));
      }
    }
    return dtype() == DT_FLOAT ? Merge<float>(gi, n, val) : Merge<double>(gi, n, val);
  }

  template <typename T>
  absl::Status Merge(const int64_t* gi, int64_t n, const Tensor& val)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    int64_t row_size = 1;
    for (int d = 1; d < values_.dims(); ++d) row_size *= values_.dim_size(d);
    const int64_t have = static_cast<int64_t>(indices_.size());
    std::vector<int64_t> idx;
    std::vector<int32_t> counts;
    // (source, row): 0 = held, 1 = new, 2 = both summed.
    std::vector<std::pair<int, std::pair<int64_t, int64_t>>> plan;
    int64_t i = 0, j = 0;
    while (i < have && j < n) {
      if (indices_[i] == gi[j]) {
        plan.push_back({2, {i, j}});
        idx.push_back(indices_[i]);
        counts.push_back(counts_[i] + 1);
        ++i;
        ++j;
      } else if (indices_[i] < gi[j]) {
        plan.push_back({0, {i, 0}});
        idx.push_back(indices_[i]);
        counts.push_back(counts_[i]);
        ++i;
      } else {
        plan.push_back({1, {0, j}});
        idx.push_back(gi[j]);
        counts.push_back(1);
        ++j;
      }
    }
    for (; i < have; ++i) {
      plan.push_back({0, {i, 0}});
      idx.push_back(indices_[i]);
      counts.push_back(counts_[i]);
    }
    for (; j < n; ++j) {
      plan.push_back({1, {0, j}});
      idx.push_back(gi[j]);
      counts.push_back(1);
    }
    TensorShape shape = values_.shape();
    shape.set_dim(0, static_cast<int64_t>(idx.size()));
    Tensor merged(dtype(), shape);
    if (!merged.IsInitialized()) {
      return absl::ResourceExhaustedError(absl::StrCat(
          DebugString(), ": no memory for ", idx.size(), " gradient rows"));
    }
    const T* held = values_.data<T>();
    const T* added = val.data<T>();
    T* out = merged.data<T>();
    for (size_t r = 0; r < plan.size(); ++r) {
      const auto& [source, rows] = plan[r];
      T* dst = out + r * row_size;
      const T* a = held + rows.first * row_size;
      const T* b = added + rows.second * row_size;
      for (int64_t k = 0; k < row_size; ++k) {
        dst[k] = source == 0 ? a[k] : source == 1 ? b[k] : a[k] + b[k];
      }
    }
    values_ = std::move(merged);
    indices_ = std::move(idx);
    counts_ = std::move(counts);
    return absl::OkStatus();
  }

  Outputs TakeLocked(int32_t) override ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    const int64_t rows = static_cast<int64_t>(indices_.size());
    Tensor indices(DT_INT64, TensorShape({rows}));
    std::copy(indices_.begin(), indices_.end(), indices.data<int64_t>());
    Tensor values = std::move(values_);
    const int64_t row_size =
        rows > 0 ? values.NumElements() / rows : 0;
    if (mean()) {
      if (dtype() == DT_FLOAT) {
        DivideRows<float>(&values, row_size, counts_);
      } else {
        DivideRows<double>(&values, row_size, counts_);
      }
    }
    // The first dimension from the accumulator's shape (-1 unknown), the
    // others from the values.
    Tensor shape(DT_INT64, TensorShape({static_cast<int64_t>(values.dims())}));
    int64_t* s = shape.data<int64_t>();
    for (int i = 0; i < values.dims(); ++i) s[i] = values.dim_size(i);
    if (values.dims() > 0) {
      s[0] = this->shape().known_rank() && this->shape().rank() > 0
                 ? this->shape().dim(0)
                 : -1;  // TensorFlow's answer for a rank-0 or unknown shape
    }
    values_ = Tensor();
    indices_.clear();
    counts_.clear();
    return {std::move(indices), std::move(values), std::move(shape)};
  }

  std::vector<int64_t> indices_ ABSL_GUARDED_BY(mu_);
  Tensor values_ ABSL_GUARDED_BY(mu_);             // [rows, ...]
  std::vector<int32_t> counts_ ABSL_GUARDED_BY(mu_);  // per row
};

// ConditionalAccumulator (ref form), ResourceConditionalAccumulator and
// SparseConditionalAccumulator.
class AccumulatorOp : public OpKernel {
 public:
  explicit AccumulatorOp(OpKernelConstruction* c)
      : OpKernel(c),
        ref_(c->output_types()[0] != DT_RESOURCE),
        sparse_(c->def().op() == "SparseConditionalAccumulator") {
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
    const bool sparse = sparse_;
    absl::StatusOr<std::shared_ptr<Accumulator>> a =
        c->resource_manager()->LookupOrCreate<Accumulator>(
            handle_.container, handle_.name,
            [&]() -> std::shared_ptr<Accumulator> {
              if (sparse) {
                return std::make_shared<SparseAccumulator>(name, dtype, shape, mean);
              }
              return std::make_shared<DenseAccumulator>(name, dtype, shape, mean);
            });
    OP_REQUIRES_OK(c, a.status());
    OP_REQUIRES(c,
                (*a)->dtype() == dtype_ && (*a)->shape() == shape_ &&
                    (*a)->sparse() == sparse_,
                absl::InvalidArgumentError(absl::StrCat(
                    (*a)->DebugString(), " exists already with ",
                    DataTypeString((*a)->dtype()), " ",
                    (*a)->shape().DebugString(), "; ", name_of_node(), " (",
                    type_string(), ") asks for ", DataTypeString(dtype_), " ",
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
  const bool sparse_;
  DataType dtype_ = DT_INVALID;
  PartialShape shape_;
  bool mean_ = true;
  ResourceHandle handle_;
  absl::Mutex ref_mu_;
  Tensor ref_handle_;  // never written after construction
};

// The accumulator of input 0; with `sparse` set, it must be of that kind
// (the Sparse* ops on a dense one, or the dense ops on a sparse one, are
// INVALID_ARGUMENT).
absl::StatusOr<std::shared_ptr<Accumulator>> LookupAccumulator(
    OpKernelContext* c, std::optional<bool> sparse = std::nullopt) {
  absl::StatusOr<std::shared_ptr<Accumulator>> a = LookupSharedResource<Accumulator>(
      c, "accumulator", "ConditionalAccumulator");
  if (a.ok() && sparse.has_value() && (*a)->sparse() != *sparse) {
    return absl::InvalidArgumentError(absl::StrCat(
        (*a)->DebugString(), " is ", (*a)->sparse() ? "sparse" : "dense",
        "; ", c->op_kernel().type_string(), " takes ",
        *sparse ? "a SparseConditionalAccumulator's" : "a ConditionalAccumulator's"));
  }
  return a;
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

// AccumulatorApplyGradient (dense: values) and SparseAccumulatorApplyGradient
// (indices, values, and the dense shape when has_known_shape).
class ApplyGradientOp : public OpKernel {
 public:
  explicit ApplyGradientOp(OpKernelConstruction* c)
      : OpKernel(c), sparse_(c->def().op() == "SparseAccumulatorApplyGradient") {
    if (sparse_) c->SetStatus(c->GetAttr("has_known_shape", &has_known_shape_));
  }
  void Compute(OpKernelContext* c) override {
    absl::StatusOr<std::shared_ptr<Accumulator>> a = LookupAccumulator(c, sparse_);
    OP_REQUIRES_OK(c, a.status());
    absl::StatusOr<int64_t> step = Int64Scalar(c, 1, "local_step");
    OP_REQUIRES_OK(c, step.status());
    Gradient g;
    if (!sparse_) {
      g.values = c->input(2);
    } else {
      g.indices = c->input(2);
      g.values = c->input(3);
      if (has_known_shape_) {
        const Tensor& shape = c->input(4);
        OP_REQUIRES(c, shape.dtype() == DT_INT64 && shape.dims() == 1,
                    absl::InvalidArgumentError(absl::StrCat(
                        "gradient_shape must be an int64 vector, got ",
                        shape.DebugString())));
        g.shape.assign(shape.data<int64_t>(),
                       shape.data<int64_t>() + shape.NumElements());
        g.has_shape = true;
      }
    }
    OP_REQUIRES_OK(c, (*a)->Apply(*step, g));
  }

 private:
  const bool sparse_;
  bool has_known_shape_ = false;
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
    absl::StatusOr<std::shared_ptr<Accumulator>> a = LookupAccumulator(
        c, type_string() == "SparseAccumulatorTakeGradient");
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
               [c, done = std::move(done)](absl::StatusOr<Outputs> result) {
                 if (result.ok()) {
                   for (size_t i = 0; i < result->size(); ++i) {
                     c->set_output(static_cast<int>(i), std::move((*result)[i]));
                   }
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
  r->Register(KernelDef("SparseConditionalAccumulator", kDeviceTypeCpu),
              MakeKernel<AccumulatorOp>);
  r->Register(KernelDef("SparseAccumulatorApplyGradient", kDeviceTypeCpu),
              MakeKernel<ApplyGradientOp>);
  r->Register(KernelDef("SparseAccumulatorTakeGradient", kDeviceTypeCpu),
              MakeKernel<TakeGradientOp>);
}

}  // namespace weft
